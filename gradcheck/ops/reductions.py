"""Reductions: sum, mean."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.operation import Operation
from gradcheck.tensor import Tensor, execute_op

__all__ = ["sum", "mean"]


def _normalize_axis(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple of ints) as a sorted tuple of non-negative
    axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    return tuple(sorted(ax % ndim for ax in axis))


def _expand_reduced(
    grad: np.ndarray, shape: tuple[int, ...], axis: Any, keepdims: bool
) -> np.ndarray:
    """Broadcast the gradient of a reduction over ``axis`` back to the input's
    ``shape`` (a read-only view)."""
    if not keepdims:
        grad = np.expand_dims(grad, _normalize_axis(axis, len(shape)))
    return np.broadcast_to(grad, shape)


class Sum(Operation):
    def __call__(self, a: Tensor, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        self.variables = (a,)
        self.axis, self.keepdims = axis, keepdims
        return np.asarray(np.sum(a.data, axis=axis, keepdims=keepdims))

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return _expand_reduced(grad, self.variables[0].shape, self.axis, self.keepdims)


class Mean(Operation):
    def __call__(self, a: Tensor, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        self.variables = (a,)
        self.axis, self.keepdims = axis, keepdims
        out = np.asarray(np.mean(a.data, axis=axis, keepdims=keepdims))
        self.count = a.data.size // max(out.size, 1) if a.data.size else 1
        return out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        grad = _expand_reduced(grad, self.variables[0].shape, self.axis, self.keepdims)
        return grad / self.count


def sum(
    a: Any, axis: Any = None, keepdims: bool = False, *, constant: bool | None = None
) -> Tensor:
    """Sum of the elements over ``axis`` (None: all; an int or a tuple of ints).

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> mg.sum(x, axis=0)
    Tensor([4., 6.])
    """
    return execute_op(Sum, a, op_kwargs={"axis": axis, "keepdims": keepdims}, constant=constant)


def mean(
    a: Any, axis: Any = None, keepdims: bool = False, *, constant: bool | None = None
) -> Tensor:
    """Arithmetic mean of the elements over ``axis`` (None: all; an int or a tuple).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.mean(mg.Tensor([1.0, 2.0, 6.0]))
    Tensor(3.)
    """
    return execute_op(Mean, a, op_kwargs={"axis": axis, "keepdims": keepdims}, constant=constant)
