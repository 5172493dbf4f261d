"""Miscellaneous elementwise functions: sqrt, absolute."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.operation import Operation
from gradcheck.tensor import Tensor, execute_op

__all__ = ["sqrt", "absolute", "abs"]


class Sqrt(Operation):
    def __call__(self, a: Tensor) -> np.ndarray:
        self.variables = (a,)
        self.out = np.sqrt(a.data)
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad / (2 * self.out)


class Absolute(Operation):
    def __call__(self, a: Tensor, nan_to_num: bool = True) -> np.ndarray:
        self.variables = (a,)
        self.nan_to_num = nan_to_num
        return np.abs(a.data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0].data
        # NOTE: |x| has no derivative at 0. np.sign(0) == 0 picks the subgradient 0;
        # with nan_to_num=False the gradient there is nan instead.
        slope = np.sign(x)
        if not self.nan_to_num:
            slope = np.where(x == 0, np.nan, slope)
        return grad * slope


def sqrt(a: Any, *, constant: bool | None = None) -> Tensor:
    """The non-negative square root, elementwise (differentiable for ``a > 0``).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.sqrt(mg.Tensor([4.0]))
    Tensor([2.])
    """
    return execute_op(Sqrt, a, constant=constant)


def absolute(a: Any, *, nan_to_num: bool = True, constant: bool | None = None) -> Tensor:
    """The absolute value, elementwise.

    Non-differentiable point: at ``a == 0`` the gradient is 0 (a subgradient), or
    nan with ``nan_to_num=False``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([-2.0, 0.0, 3.0])
    >>> mg.absolute(x).backward()
    >>> x.grad
    array([-1.,  0.,  1.])
    """
    return execute_op(Absolute, a, op_kwargs={"nan_to_num": nan_to_num}, constant=constant)


abs = absolute
