"""Exponents and logarithms: exp, log."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.operation import Operation
from gradcheck.tensor import Tensor, execute_op

__all__ = ["exp", "log"]


class Exp(Operation):
    def __call__(self, a: Tensor) -> np.ndarray:
        self.variables = (a,)
        self.out = np.exp(a.data)
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad * self.out


class Log(Operation):
    def __call__(self, a: Tensor) -> np.ndarray:
        self.variables = (a,)
        return np.log(a.data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad / self.variables[0].data


def exp(a: Any, *, constant: bool | None = None) -> Tensor:
    """The exponential ``e**a``, elementwise.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.exp(mg.Tensor([0.0, 1.0]))
    Tensor([1.        , 2.71828183])
    """
    return execute_op(Exp, a, constant=constant)


def log(a: Any, *, constant: bool | None = None) -> Tensor:
    """The natural logarithm, elementwise (defined for ``a > 0``).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.log(mg.Tensor([1.0]))
    Tensor([0.])
    """
    return execute_op(Log, a, constant=constant)
