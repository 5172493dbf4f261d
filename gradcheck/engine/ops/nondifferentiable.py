"""NumPy's index and truth reductions, which have no derivative, under MyGrad's names
(``mg.argmax``, ``mg.argmin``, ``mg.any``): they take tensors or arrays and return
NumPy arrays (or NumPy scalars), never tensors.

Not an op family (``gradcheck.ops.__all__`` lists the differentiable functions):
``gradcheck`` exports these names itself. On a tensor, ``np.argmax(t)`` gives the same
(see :mod:`gradcheck.interop`), and so do the methods ``Tensor.argmax``...
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.engine.tensor_base import Tensor

__all__ = ["any", "argmax", "argmin"]


def _array(a: Any) -> Any:

    return a._data if isinstance(a, Tensor) else a


def argmax(a: Any, axis: int | None = None, out: np.ndarray | None = None) -> Any:
    """The indices of the maximum values along ``axis`` (of the flattened array by
    default), as :func:`numpy.argmax`; an array of integers, not a tensor.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.argmax(mg.Tensor([[1.0, 5.0], [7.0, 0.0]]), axis=1)
    array([1, 0])
    """
    return np.argmax(_array(a), axis=axis, out=out)


def argmin(a: Any, axis: int | None = None, out: np.ndarray | None = None) -> Any:
    """The indices of the minimum values along ``axis`` (of the flattened array by
    default), as :func:`numpy.argmin`; an array of integers, not a tensor.

    Examples
    --------
    >>> import gradcheck as mg
    >>> int(mg.argmin(mg.Tensor([3.0, -1.0, 2.0])))
    1
    """
    return np.argmin(_array(a), axis=axis, out=out)


def any(  # (NumPy's and MyGrad's name)
    a: Any,
    axis: int | tuple[int, ...] | None = None,
    out: np.ndarray | None = None,
    keepdims: bool = False,
) -> Any:
    """Whether any element along ``axis`` (of all elements by default) is true, as
    :func:`numpy.any`; booleans, not a tensor.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.any(mg.Tensor([[0.0, 1.0], [0.0, 0.0]]), axis=1)
    array([ True, False])
    """
    return np.any(_array(a), axis=axis, out=out, keepdims=keepdims)
