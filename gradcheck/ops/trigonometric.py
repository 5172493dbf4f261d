"""Trigonometric functions: sin, cos."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.operation import Operation
from gradcheck.tensor import Tensor, execute_op

__all__ = ["sin", "cos"]


class Sin(Operation):
    def __call__(self, a: Tensor) -> np.ndarray:
        self.variables = (a,)
        return np.sin(a.data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad * np.cos(self.variables[0].data)


class Cos(Operation):
    def __call__(self, a: Tensor) -> np.ndarray:
        self.variables = (a,)
        return np.cos(a.data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return -grad * np.sin(self.variables[0].data)


def sin(a: Any, *, constant: bool | None = None) -> Tensor:
    """The sine of ``a`` (radians), elementwise.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.sin(mg.Tensor([0.0]))
    Tensor([0.])
    """
    return execute_op(Sin, a, constant=constant)


def cos(a: Any, *, constant: bool | None = None) -> Tensor:
    """The cosine of ``a`` (radians), elementwise.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.cos(mg.Tensor([0.0]))
    Tensor([1.])
    """
    return execute_op(Cos, a, constant=constant)
