"""Hyperbolic functions: tanh."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.operation import Operation
from gradcheck.tensor import Tensor, execute_op

__all__ = ["tanh"]


class Tanh(Operation):
    def __call__(self, a: Tensor) -> np.ndarray:
        self.variables = (a,)
        self.out = np.tanh(a.data)
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad * (1 - self.out**2)


def tanh(a: Any, *, constant: bool | None = None) -> Tensor:
    """The hyperbolic tangent, elementwise.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.tanh(mg.Tensor([0.0]))
    Tensor([0.])
    """
    return execute_op(Tanh, a, constant=constant)
