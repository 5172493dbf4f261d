"""Shape manipulation: reshape, transpose."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.operation import Operation
from gradcheck.tensor import Tensor, execute_op

__all__ = ["reshape", "transpose"]


class Reshape(Operation):
    def __call__(self, a: Tensor, newshape: Any) -> np.ndarray:
        self.variables = (a,)
        return np.reshape(a.data, newshape)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return np.reshape(grad, self.variables[0].shape)


class Transpose(Operation):
    def __call__(self, a: Tensor, axes: Any = None) -> np.ndarray:
        self.variables = (a,)
        if axes is None:
            axes = tuple(range(a.ndim))[::-1]
        self.axes = tuple(ax % a.ndim for ax in axes) if a.ndim else ()
        return np.transpose(a.data, self.axes)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return np.transpose(grad, np.argsort(self.axes))


def reshape(a: Any, newshape: Any, *, constant: bool | None = None) -> Tensor:
    """Give ``a`` a new shape with the same number of elements.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.reshape(mg.Tensor([1.0, 2.0, 3.0, 4.0]), (2, 2))
    Tensor([[1., 2.],
            [3., 4.]])
    """
    return execute_op(Reshape, a, op_args=(newshape,), constant=constant)


def transpose(a: Any, axes: Any = None, *, constant: bool | None = None) -> Tensor:
    """Permute the axes of ``a`` (reverse them by default).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.transpose(mg.Tensor([[1.0, 2.0]]))
    Tensor([[1.],
            [2.]])
    """
    return execute_op(Transpose, a, op_args=(axes,), constant=constant)
