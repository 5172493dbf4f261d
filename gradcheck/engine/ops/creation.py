"""Array creation: arange, empty, eye, full, identity, linspace, logspace, geomspace,
ones, zeros and the ``_like`` forms.

MyGrad's signatures: each returns a :class:`Tensor` (a leaf of the graph) and takes a
keyword-only ``constant=``. As in MyGrad, ``empty``, ``ones`` and ``zeros`` default to
``float32``; the others default to NumPy's dtype. Tensors given as arguments count by
their data (creation is not differentiated).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.engine._utils.overrides import register_family
from gradcheck.engine.tensor_base import Tensor

__all__ = [
    "arange",
    "empty",
    "empty_like",
    "eye",
    "full",
    "full_like",
    "identity",
    "linspace",
    "logspace",
    "geomspace",
    "ones",
    "ones_like",
    "zeros",
    "zeros_like",
]

Shape = int | Sequence[int]


def _leaf(data: np.ndarray, constant: bool | None) -> Tensor:
    return Tensor(data, constant=constant, copy=False)


def _plain(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


def _like_constant(other: Any, constant: bool | None) -> bool | None:
    """The ``constant`` of a ``*_like(other)`` tensor: as given, else inferred from
    ``other`` as MyGrad does: a tensor that takes a gradient gives one that does
    too if its dtype allows (None: the dtype decides), anything else (an array, a
    constant) a constant."""
    if constant is not None:
        return constant
    return None if isinstance(other, Tensor) and not other._constant else True


def _like(maker: Any, other: Any, dtype: Any, shape: Shape | None, *fill: Any) -> np.ndarray:
    other = np.asarray(_plain(other))
    return maker(other, *fill, dtype=dtype, shape=shape)


def arange(*args: Any, constant: bool | None = None, **kwargs: Any) -> Tensor:
    """Evenly spaced values in a half-open interval, as :func:`numpy.arange`.

    Parameters
    ----------
    *args, **kwargs
        ``[start,] stop[, step][, dtype]``, passed to :func:`numpy.arange`.
    constant : bool, optional
        Make the tensor a constant (integer tensors always are).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.arange(3)
    Tensor([0, 1, 2])
    >>> mg.arange(0.0, 1.0, 0.5).constant
    False
    """
    return _leaf(np.arange(*args, **kwargs), constant)


def empty(shape: Shape, dtype: Any = np.float32, *, constant: bool | None = None) -> Tensor:
    """A tensor of ``shape`` with uninitialized values (float32 by default, as MyGrad).

    Parameters
    ----------
    shape : int or sequence of ints
    dtype : data-type, default float32
    constant : bool, optional

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.empty((2, 3)).shape
    (2, 3)
    """
    return _leaf(np.empty(shape, dtype=dtype), constant)


def empty_like(
    other: Any, dtype: Any = None, shape: Shape | None = None, *, constant: bool | None = None
) -> Tensor:
    """An uninitialized tensor with the shape and dtype of ``other``.

    Parameters
    ----------
    other : array_like
    dtype : data-type, optional
        Override the dtype.
    shape : int or sequence of ints, optional
        Override the shape.
    constant : bool, optional
        Default: constant unless ``other`` is a tensor that takes a gradient.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.empty_like(mg.Tensor([1.0, 2.0])).shape
    (2,)
    """
    return _leaf(_like(np.empty_like, other, dtype, shape), _like_constant(other, constant))


def eye(
    N: int, M: int | None = None, k: int = 0, dtype: Any = float, *, constant: bool | None = None
) -> Tensor:
    """A 2-D tensor with ones on the ``k``-th diagonal and zeros elsewhere.

    Parameters
    ----------
    N : int
        Rows.
    M : int, optional
        Columns (default ``N``).
    k : int, default 0
        The diagonal: 0 the main one, positive above, negative below.
    dtype : data-type, default float
    constant : bool, optional

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.eye(2, 3, k=1)
    Tensor([[0., 1., 0.],
            [0., 0., 1.]])
    """
    return _leaf(np.eye(N, M, k=k, dtype=dtype), constant)


def identity(n: int, dtype: Any = float, *, constant: bool | None = None) -> Tensor:
    """The ``n`` by ``n`` identity matrix.

    Parameters
    ----------
    n : int
    dtype : data-type, default float
    constant : bool, optional

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.identity(2)
    Tensor([[1., 0.],
            [0., 1.]])
    """
    return _leaf(np.identity(n, dtype=dtype), constant)


def full(
    shape: Shape, fill_value: Any, dtype: Any = None, *, constant: bool | None = None
) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value``.

    Parameters
    ----------
    shape : int or sequence of ints
    fill_value : array_like
    dtype : data-type, optional
        Default: the dtype of ``fill_value``.
    constant : bool, optional

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.full(2, 7.0)
    Tensor([7., 7.])
    """
    return _leaf(np.full(shape, _plain(fill_value), dtype=dtype), constant)


def full_like(
    other: Any,
    fill_value: Any,
    dtype: Any = None,
    shape: Shape | None = None,
    *,
    constant: bool | None = None,
) -> Tensor:
    """A tensor with the shape and dtype of ``other``, filled with ``fill_value``.

    Parameters
    ----------
    other : array_like
    fill_value : scalar
    dtype : data-type, optional
    shape : int or sequence of ints, optional
    constant : bool, optional
        Default: constant unless ``other`` is a tensor that takes a gradient.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.full_like(mg.Tensor([1.0, 2.0]), 3)
    Tensor([3., 3.])
    """
    fill = _plain(fill_value)
    return _leaf(_like(np.full_like, other, dtype, shape, fill), _like_constant(other, constant))


def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    dtype: Any = None,
    axis: int = 0,
    *,
    constant: bool | None = None,
) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop``.

    Parameters
    ----------
    start, stop : array_like
    num : int, default 50
    endpoint : bool, default True
        Include ``stop``.
    dtype : data-type, optional
    axis : int, default 0
        The axis of the samples when ``start``/``stop`` are arrays.
    constant : bool, optional

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.linspace(0, 1, 5)
    Tensor([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    data = np.linspace(_plain(start), _plain(stop), num, endpoint=endpoint, dtype=dtype, axis=axis)
    return _leaf(data, constant)


def logspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    base: float = 10,
    dtype: Any = None,
    axis: int = 0,
    *,
    constant: bool | None = None,
) -> Tensor:
    """``num`` values evenly spaced on a log scale, from ``base**start`` to
    ``base**stop``.

    Parameters
    ----------
    start, stop : array_like
    num : int, default 50
    endpoint : bool, default True
    base : float, default 10
    dtype : data-type, optional
    axis : int, default 0
    constant : bool, optional

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.logspace(0, 2, 3)
    Tensor([  1.,  10., 100.])
    """
    data = np.logspace(
        _plain(start), _plain(stop), num, endpoint=endpoint, base=base, dtype=dtype, axis=axis
    )
    return _leaf(data, constant)


def geomspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    dtype: Any = None,
    axis: int = 0,
    *,
    constant: bool | None = None,
) -> Tensor:
    """``num`` values in a geometric progression from ``start`` to ``stop``.

    Parameters
    ----------
    start, stop : array_like
        Non-zero endpoints.
    num : int, default 50
    endpoint : bool, default True
    dtype : data-type, optional
    axis : int, default 0
    constant : bool, optional

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.geomspace(1, 8, 4)
    Tensor([1., 2., 4., 8.])
    """
    data = np.geomspace(_plain(start), _plain(stop), num, endpoint=endpoint, dtype=dtype, axis=axis)
    return _leaf(data, constant)


def ones(shape: Shape, dtype: Any = np.float32, *, constant: bool | None = None) -> Tensor:
    """A tensor of ``shape`` filled with ones (float32 by default, as MyGrad).

    Parameters
    ----------
    shape : int or sequence of ints
    dtype : data-type, default float32
    constant : bool, optional

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.ones(2)
    Tensor([1., 1.], dtype=float32)
    """
    return _leaf(np.ones(shape, dtype=dtype), constant)


def ones_like(
    other: Any, dtype: Any = None, shape: Shape | None = None, *, constant: bool | None = None
) -> Tensor:
    """A tensor of ones with the shape and dtype of ``other``.

    Parameters
    ----------
    other : array_like
    dtype : data-type, optional
    shape : int or sequence of ints, optional
    constant : bool, optional
        Default: constant unless ``other`` is a tensor that takes a gradient.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.ones_like(mg.Tensor([[5.0, 6.0]]))
    Tensor([[1., 1.]])
    """
    return _leaf(_like(np.ones_like, other, dtype, shape), _like_constant(other, constant))


def zeros(shape: Shape, dtype: Any = np.float32, *, constant: bool | None = None) -> Tensor:
    """A tensor of ``shape`` filled with zeros (float32 by default, as MyGrad).

    Parameters
    ----------
    shape : int or sequence of ints
    dtype : data-type, default float32
    constant : bool, optional

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.zeros((1, 2), dtype=float)
    Tensor([[0., 0.]])
    """
    return _leaf(np.zeros(shape, dtype=dtype), constant)


def zeros_like(
    other: Any, dtype: Any = None, shape: Shape | None = None, *, constant: bool | None = None
) -> Tensor:
    """A tensor of zeros with the shape and dtype of ``other``.

    Parameters
    ----------
    other : array_like
    dtype : data-type, optional
    shape : int or sequence of ints, optional
    constant : bool, optional
        Default: constant unless ``other`` is a tensor that takes a gradient.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.zeros_like([1, 2])
    Tensor([0, 0])
    """
    return _leaf(_like(np.zeros_like, other, dtype, shape), _like_constant(other, constant))


# NumPy's functions of these names run these on tensors (see gradcheck.interop).
register_family(globals())
