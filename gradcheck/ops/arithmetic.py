"""Arithmetic: add, subtract, multiply, divide, power, negative, square.

Every binary op here broadcasts like NumPy; :class:`BroadcastableOp` sums each
gradient back down to its input's shape, so no rule below repeats that.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.operation import BroadcastableOp, Operation
from gradcheck.tensor import Tensor, execute_op

__all__ = ["add", "subtract", "multiply", "divide", "true_divide", "power", "negative", "square"]


class Add(BroadcastableOp):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        return a.data + b.data

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad


class Subtract(BroadcastableOp):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        return a.data - b.data

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad if index == 0 else -grad


class Multiply(BroadcastableOp):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        return a.data * b.data

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a, b = self.variables
        return grad * (b.data if index == 0 else a.data)


class Divide(BroadcastableOp):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        return a.data / b.data

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a, b = self.variables
        if index == 0:
            return grad / b.data
        return -grad * a.data / b.data**2


class Power(BroadcastableOp):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        self.out = a.data**b.data
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a, b = self.variables
        if index == 0:
            return grad * b.data * a.data ** (b.data - 1)
        # d(a**b)/db = a**b * log(a); where a**b == 0 (a == 0, b > 0) the limit is 0,
        # not 0 * log(0) = nan.
        with np.errstate(divide="ignore", invalid="ignore"):
            dout_db = self.out * np.log(a.data)
        return grad * np.where(self.out == 0, 0.0, dout_db)


class Negative(Operation):
    def __call__(self, a: Tensor) -> np.ndarray:
        self.variables = (a,)
        return -a.data

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return -grad


class Square(Operation):
    def __call__(self, a: Tensor) -> np.ndarray:
        self.variables = (a,)
        return np.square(a.data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad * 2 * self.variables[0].data


def add(a: Any, b: Any, *, constant: bool | None = None) -> Tensor:
    """Add ``a`` and ``b`` elementwise, with broadcasting.

    Parameters
    ----------
    a, b : array_like
    constant : bool, optional
        Make the result a constant (see :class:`gradcheck.Tensor`).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.add(mg.Tensor([1.0, 2.0]), 3.0)
    Tensor([4., 5.])
    """
    return execute_op(Add, a, b, constant=constant)


def subtract(a: Any, b: Any, *, constant: bool | None = None) -> Tensor:
    """Subtract ``b`` from ``a`` elementwise, with broadcasting.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.subtract(mg.Tensor([1.0, 2.0]), 3.0)
    Tensor([-2., -1.])
    """
    return execute_op(Subtract, a, b, constant=constant)


def multiply(a: Any, b: Any, *, constant: bool | None = None) -> Tensor:
    """Multiply ``a`` and ``b`` elementwise, with broadcasting.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.multiply(mg.Tensor([1.0, 2.0]), 3.0)
    Tensor([3., 6.])
    """
    return execute_op(Multiply, a, b, constant=constant)


def divide(a: Any, b: Any, *, constant: bool | None = None) -> Tensor:
    """Divide ``a`` by ``b`` elementwise (true division), with broadcasting.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.divide(mg.Tensor([1.0, 2.0]), 4.0)
    Tensor([0.25, 0.5 ])
    """
    return execute_op(Divide, a, b, constant=constant)


true_divide = divide


def power(a: Any, b: Any, *, constant: bool | None = None) -> Tensor:
    """Raise ``a`` to the power ``b`` elementwise, with broadcasting.

    The derivative with respect to ``b`` is ``a**b * log(a)``, taken as 0 where
    ``a**b`` is 0; it is not real for negative ``a``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([1.0, 2.0])
    >>> y = mg.power(x, 3)
    >>> y.backward()
    >>> x.grad
    array([ 3., 12.])
    """
    return execute_op(Power, a, b, constant=constant)


def negative(a: Any, *, constant: bool | None = None) -> Tensor:
    """Negate ``a`` elementwise.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.negative(mg.Tensor([1.0, -2.0]))
    Tensor([-1.,  2.])
    """
    return execute_op(Negative, a, constant=constant)


def square(a: Any, *, constant: bool | None = None) -> Tensor:
    """Square ``a`` elementwise.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.square(mg.Tensor([1.0, -2.0]))
    Tensor([1., 4.])
    """
    return execute_op(Square, a, constant=constant)
