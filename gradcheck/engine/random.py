"""Random tensors, MyGrad-like (``gradcheck.random.rand(2, 3)``), reproducible.

Every function draws from one module-level :class:`numpy.random.Generator`;
:func:`seed` replaces it with a freshly seeded one. The global NumPy random state is
never read or changed. The generator is shared by all threads (NumPy locks each draw,
so threads may draw at once, but their draws interleave: a seeded sequence is
reproducible in one thread; give each thread its own ``numpy.random.default_rng``
for reproducible streams per thread).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.engine.tensor_base import Tensor

__all__ = [
    "seed",
    "rand",
    "randn",
    "randint",
    "random",
    "random_sample",
    "ranf",
    "sample",
    "uniform",
    "normal",
]

_rng: np.random.Generator = np.random.default_rng()


def seed(seed_number: int | None = None) -> None:
    """Reset the module's generator: the same seed gives the same tensors after it.

    Parameters
    ----------
    seed_number : int, optional
        None seeds from the operating system's entropy.

    Examples
    --------
    >>> from gradcheck import random
    >>> random.seed(0); a = random.rand(3)
    >>> random.seed(0); b = random.rand(3)
    >>> bool((a == b).all())
    True
    """
    global _rng
    _rng = np.random.default_rng(seed_number)


def _leaf(data: Any, constant: bool | None) -> Tensor:
    return Tensor(np.asarray(data), constant=constant, copy=False)


def rand(*shape: int, constant: bool | None = None) -> Tensor:
    """Samples from the uniform distribution over ``[0, 1)``, of shape ``shape``.

    Parameters
    ----------
    *shape : int
        The dimensions (none: a 0-d tensor).
    constant : bool, optional
        Make the tensor a constant (see :class:`gradcheck.Tensor`).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> from gradcheck import random
    >>> random.rand(2, 3).shape
    (2, 3)
    """
    return _leaf(_rng.random(shape), constant)


def randn(*shape: int, constant: bool | None = None) -> Tensor:
    """Samples from the standard normal distribution, of shape ``shape``.

    Parameters
    ----------
    *shape : int
    constant : bool, optional

    Returns
    -------
    Tensor

    Examples
    --------
    >>> from gradcheck import random
    >>> random.randn(4).dtype
    dtype('float64')
    """
    return _leaf(_rng.standard_normal(shape), constant)


def randint(low: int, high: int | None = None, shape: Any = None, dtype: Any = int) -> Tensor:
    """Random integers from ``[low, high)`` (from ``[0, low)`` without ``high``); a
    constant tensor.

    Parameters
    ----------
    low, high : int
    shape : int or tuple of ints, optional
        None: a 0-d tensor.
    dtype : data-type, default int

    Returns
    -------
    Tensor

    Examples
    --------
    >>> from gradcheck import random
    >>> x = random.randint(5, shape=(3,))
    >>> bool(((0 <= x.data) & (x.data < 5)).all()), x.constant
    (True, True)
    """
    if high is None:
        low, high = 0, low
    return _leaf(_rng.integers(low, high, size=shape, dtype=dtype), None)


def random(shape: Any = None, *, constant: bool | None = None) -> Tensor:
    """Samples from the uniform distribution over ``[0, 1)``.

    Parameters
    ----------
    shape : int or tuple of ints, optional
        None: a 0-d tensor.
    constant : bool, optional

    Returns
    -------
    Tensor

    Examples
    --------
    >>> from gradcheck import random
    >>> random.random((2, 2)).shape
    (2, 2)
    """
    return _leaf(_rng.random(shape), constant)


random_sample = random
ranf = random
sample = random


def uniform(
    low: float = 0.0, high: float = 1.0, shape: Any = None, *, constant: bool | None = None
) -> Tensor:
    """Samples from the uniform distribution over ``[low, high)``.

    Parameters
    ----------
    low, high : float or array_like
    shape : int or tuple of ints, optional
    constant : bool, optional

    Returns
    -------
    Tensor

    Examples
    --------
    >>> from gradcheck import random
    >>> x = random.uniform(-1.0, 1.0, shape=(100,))
    >>> bool(((-1 <= x.data) & (x.data < 1)).all())
    True
    """
    return _leaf(_rng.uniform(low, high, size=shape), constant)


def normal(
    loc: float = 0.0, scale: float = 1.0, shape: Any = None, *, constant: bool | None = None
) -> Tensor:
    """Samples from the normal distribution with mean ``loc`` and standard deviation
    ``scale``.

    Parameters
    ----------
    loc, scale : float or array_like
    shape : int or tuple of ints, optional
    constant : bool, optional

    Returns
    -------
    Tensor

    Examples
    --------
    >>> from gradcheck import random
    >>> random.normal(5.0, 0.1, shape=(2,)).shape
    (2,)
    """
    return _leaf(_rng.normal(loc, scale, size=shape), constant)
