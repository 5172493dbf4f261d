"""Initializers: tensors of given shape for weights, with MyGrad's names and
arguments (``*shape``, ``dtype=``, ``constant=``).

Random ones draw from ``rng=`` (a ``numpy.random.Generator`` or a seed; by default a
fresh ``default_rng()``), never from NumPy's global random state.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.engine.tensor_base import Tensor

__all__ = [
    "constant",
    "dirac",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "identity",
    "normal",
    "uniform",
]

_Rng = np.random.Generator | int | None


def _shape(shape: tuple[Any, ...]) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _tensor(data: np.ndarray, dtype: Any, constant: bool | None) -> Tensor:
    return Tensor(data, dtype=dtype, constant=constant, copy=False)


def _floating(dtype: Any) -> None:
    """Samples of a continuous distribution need a floating-point dtype."""
    if np.dtype(dtype).kind != "f":
        raise ValueError(f"`dtype` must be a floating-point type; got {np.dtype(dtype)}")


def _fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """(fan_in, fan_out) with MyGrad's convention: a weight of shape
    ``(out, in, *kernel)`` (a filter bank ``(F, C, *kernel)``, or a 2-D matrix), so
    fan_in is ``shape[1] * prod(kernel)`` and fan_out ``shape[0] * prod(kernel)``."""
    if len(shape) < 2:
        raise ValueError(f"a weight needs at least 2 dimensions to have fans; got shape {shape}")
    field = int(np.prod(shape[2:]))
    return shape[1] * field, shape[0] * field


def normal(
    *shape: int,
    mean: float = 0,
    std: float = 1,
    dtype: Any = np.float32,
    rng: _Rng = None,
    constant: bool | None = None,
) -> Tensor:
    """Samples of ``N(mean, std**2)``.

    Examples
    --------
    >>> from gradcheck.nnet.initializers import normal
    >>> normal(2, 3, rng=0).shape
    (2, 3)
    """
    _floating(dtype)
    if std < 0:
        raise ValueError(f"`std` must be non-negative; got {std}")
    data = np.random.default_rng(rng).normal(mean, std, size=_shape(shape))
    return _tensor(data, dtype, constant)


def uniform(
    *shape: int,
    lower_bound: float = 0,
    upper_bound: float = 1,
    dtype: Any = np.float32,
    rng: _Rng = None,
    constant: bool | None = None,
) -> Tensor:
    """Samples of the uniform distribution on ``[lower_bound, upper_bound)``.

    Examples
    --------
    >>> from gradcheck.nnet.initializers import uniform
    >>> bool((uniform(100, rng=0).data < 1).all())
    True
    """
    _floating(dtype)
    if lower_bound >= upper_bound:
        raise ValueError("`lower_bound` must be less than `upper_bound`")
    data = np.random.default_rng(rng).uniform(lower_bound, upper_bound, size=_shape(shape))
    return _tensor(data, dtype, constant)


def constant(
    *shape: int, value: float = 0.0, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """A tensor filled with ``value``.

    Examples
    --------
    >>> from gradcheck.nnet.initializers import constant
    >>> constant(2, value=3.0)
    Tensor([3., 3.])
    """
    return _tensor(np.full(_shape(shape), value, dtype=dtype), dtype, constant)


def identity(n: int, dtype: Any = float, *, constant: bool | None = None) -> Tensor:
    """The ``n × n`` identity matrix.

    Examples
    --------
    >>> from gradcheck.nnet.initializers import identity
    >>> identity(2)
    Tensor([[1., 0.],
            [0., 1.]])
    """
    return _tensor(np.eye(n), dtype, constant)


def dirac(*shape: int, dtype: Any = np.float32, constant: bool | None = None) -> Tensor:
    """A filter bank ``(F, C, *kernel)`` that makes a convolution (with 'same'
    padding) pass input channel ``i`` to output channel ``i`` unchanged: a 1 at the
    kernel's centre of ``[i, i]`` for ``i < min(F, C)``, zeros elsewhere.

    Examples
    --------
    >>> from gradcheck.nnet.initializers import dirac
    >>> dirac(1, 1, 3).data
    array([[[0., 1., 0.]]], dtype=float32)
    """
    shape = _shape(shape)
    if len(shape) < 2:
        raise ValueError(f"dirac needs a shape (F, C, *kernel); got {shape}")
    data = np.zeros(shape)
    centre = tuple(k // 2 for k in shape[2:])
    for i in range(min(shape[0], shape[1])):
        data[(i, i, *centre)] = 1
    return _tensor(data, dtype, constant)


def glorot_normal(
    *shape: int,
    gain: float = 1,
    dtype: Any = np.float32,
    rng: _Rng = None,
    constant: bool | None = None,
) -> Tensor:
    """Glorot & Bengio (2010) normal: std ``gain * sqrt(2 / (fan_in + fan_out))``.

    The fans are MyGrad's for this initializer: for a weight of 3 or more
    dimensions only its last axis counts as the receptive field (``fan_in =
    shape[1] * shape[-1]``, ``fan_out = shape[0] * shape[-1]``), unlike the other
    initializers here, which count every axis after the second.

    Examples
    --------
    >>> from gradcheck.nnet.initializers import glorot_normal
    >>> glorot_normal(4, 5, rng=0).shape
    (4, 5)
    """
    dims = _shape(shape)
    _fans(dims)  # (validates: at least 2 dimensions)
    field = dims[-1] if len(dims) > 2 else 1
    fan_in, fan_out = dims[1] * field, dims[0] * field
    std = gain * np.sqrt(2 / (fan_in + fan_out))
    return normal(*shape, std=std, dtype=dtype, rng=rng, constant=constant)


def glorot_uniform(
    *shape: int,
    gain: float = 1,
    dtype: Any = np.float32,
    rng: _Rng = None,
    constant: bool | None = None,
) -> Tensor:
    """Glorot & Bengio (2010) uniform on ``±gain * sqrt(6 / (fan_in + fan_out))``.

    Examples
    --------
    >>> from gradcheck.nnet.initializers import glorot_uniform
    >>> bool((abs(glorot_uniform(4, 5, rng=0).data) <= 1).all())
    True
    """
    fan_in, fan_out = _fans(_shape(shape))
    bound = gain * np.sqrt(6 / (fan_in + fan_out))
    return uniform(
        *shape, lower_bound=-bound, upper_bound=bound, dtype=dtype, rng=rng, constant=constant
    )


def he_normal(
    *shape: int,
    gain: float = 1,
    dtype: Any = np.float32,
    rng: _Rng = None,
    constant: bool | None = None,
) -> Tensor:
    """He et al. (2015) normal: std ``gain / sqrt(fan_in)``, as MyGrad (pass
    ``gain=sqrt(2)`` for ReLU layers).

    Examples
    --------
    >>> from gradcheck.nnet.initializers import he_normal
    >>> he_normal(4, 5, rng=0).dtype
    dtype('float32')
    """
    fan_in, _ = _fans(_shape(shape))
    return normal(*shape, std=gain / np.sqrt(fan_in), dtype=dtype, rng=rng, constant=constant)


def he_uniform(
    *shape: int,
    gain: float = 1,
    dtype: Any = np.float32,
    rng: _Rng = None,
    constant: bool | None = None,
) -> Tensor:
    """He et al. (2015) uniform on ``±gain * sqrt(3 / fan_in)``, as MyGrad.

    Examples
    --------
    >>> from gradcheck.nnet.initializers import he_uniform
    >>> he_uniform(4, 5, rng=0).shape
    (4, 5)
    """
    fan_in, _ = _fans(_shape(shape))
    bound = gain * np.sqrt(3 / fan_in)
    return uniform(
        *shape, lower_bound=-bound, upper_bound=bound, dtype=dtype, rng=rng, constant=constant
    )
