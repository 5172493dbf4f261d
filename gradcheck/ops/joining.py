"""Joining arrays: concatenate, stack."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.operation import Operation
from gradcheck.tensor_base import Tensor, execute_op

__all__ = ["concatenate", "stack"]


class Concatenate(Operation):
    def __call__(self, *tensors: Tensor, axis: int | None = 0) -> np.ndarray:
        self.variables = tensors
        self.axis = axis
        return np.concatenate([t.data for t in tensors], axis=axis)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        shapes = [t.shape for t in self.variables]
        if self.axis is None:  # the inputs were flattened first
            start = sum(int(np.prod(s)) for s in shapes[:index])
            return grad[start : start + int(np.prod(shapes[index]))].reshape(shapes[index])
        axis = self.axis % grad.ndim
        start = sum(s[axis] for s in shapes[:index])
        where = (slice(None),) * axis + (slice(start, start + shapes[index][axis]),)
        return grad[where]


def concatenate(
    tensors: Sequence[Any], axis: int | None = 0, *, constant: bool | None = None
) -> Tensor:
    """Join a sequence of tensors along an existing axis (of the flattened inputs when
    ``axis`` is None).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.concatenate([mg.Tensor([1.0]), mg.Tensor([2.0, 3.0])])
    Tensor([1., 2., 3.])
    """
    return execute_op(Concatenate, *tensors, op_kwargs={"axis": axis}, constant=constant)


class Stack(Operation):
    def __call__(self, *tensors: Tensor, axis: int = 0) -> np.ndarray:
        self.variables = tensors
        self.axis = axis
        return np.stack([t.data for t in tensors], axis=axis)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return np.take(grad, index, axis=self.axis)


def stack(tensors: Sequence[Any], axis: int = 0, *, constant: bool | None = None) -> Tensor:
    """Join a sequence of tensors of one shape along a new axis.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.stack([mg.Tensor([1.0, 2.0]), mg.Tensor([3.0, 4.0])], axis=1)
    Tensor([[1., 3.],
            [2., 4.]])
    """
    return execute_op(Stack, *tensors, op_kwargs={"axis": axis}, constant=constant)
