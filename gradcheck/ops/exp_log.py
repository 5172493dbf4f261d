"""Exponents and logarithms: exp, exp2, expm1, log, log2, log10, log1p, logaddexp,
logaddexp2."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradcheck.operation import BroadcastableOp
from gradcheck.ops._unary import UnaryOp
from gradcheck.tensor_base import Tensor, execute_op

__all__ = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2"]

# Python floats, not NumPy scalars: they keep a float32 gradient float32 (NEP 50).
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


class Exp(UnaryOp):
    func = staticmethod(np.exp)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return out


class Exp2(UnaryOp):
    func = staticmethod(np.exp2)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return out * _LN2


class Expm1(UnaryOp):
    func = staticmethod(np.expm1)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return np.exp(x)


class Log(UnaryOp):
    func = staticmethod(np.log)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / x


class Log2(UnaryOp):
    func = staticmethod(np.log2)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / (x * _LN2)


class Log10(UnaryOp):
    func = staticmethod(np.log10)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / (x * _LN10)


class Log1p(UnaryOp):
    func = staticmethod(np.log1p)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / (1 + x)


class LogAddExp(BroadcastableOp):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        self.out = np.logaddexp(a.data, b.data)
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        # d/da log(e**a + e**b) = e**a / (e**a + e**b) = e**(a - out): never overflows.
        return grad * np.exp(self.variables[index].data - self.out)


class LogAddExp2(BroadcastableOp):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        self.out = np.logaddexp2(a.data, b.data)
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad * np.exp2(self.variables[index].data - self.out)


def exp(x: Any, *, constant: bool | None = None) -> Tensor:
    """The exponential ``e**x``, elementwise.

    Parameters
    ----------
    x : array_like
    constant : bool, optional
        Make the result a constant (see :class:`gradcheck.Tensor`).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.exp(mg.Tensor([0.0, 1.0]))
    Tensor([1.        , 2.71828183])
    """
    return execute_op(Exp, x, constant=constant)


def exp2(x: Any, *, constant: bool | None = None) -> Tensor:
    """``2**x``, elementwise.

    Parameters
    ----------
    x : array_like
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.exp2(mg.Tensor([0.0, 3.0]))
    Tensor([1., 8.])
    """
    return execute_op(Exp2, x, constant=constant)


def expm1(x: Any, *, constant: bool | None = None) -> Tensor:
    """``exp(x) - 1``, elementwise, accurate for small ``x``.

    Parameters
    ----------
    x : array_like
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.expm1(mg.Tensor([0.0]))
    Tensor([0.])
    """
    return execute_op(Expm1, x, constant=constant)


def log(x: Any, *, constant: bool | None = None) -> Tensor:
    """The natural logarithm, elementwise (defined for ``x > 0``).

    Parameters
    ----------
    x : array_like
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.log(mg.Tensor([1.0]))
    Tensor([0.])
    """
    return execute_op(Log, x, constant=constant)


def log2(x: Any, *, constant: bool | None = None) -> Tensor:
    """The base-2 logarithm, elementwise (defined for ``x > 0``).

    Parameters
    ----------
    x : array_like
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.log2(mg.Tensor([8.0]))
    Tensor([3.])
    """
    return execute_op(Log2, x, constant=constant)


def log10(x: Any, *, constant: bool | None = None) -> Tensor:
    """The base-10 logarithm, elementwise (defined for ``x > 0``).

    Parameters
    ----------
    x : array_like
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.log10(mg.Tensor([100.0]))
    Tensor([2.])
    """
    return execute_op(Log10, x, constant=constant)


def log1p(x: Any, *, constant: bool | None = None) -> Tensor:
    """``log(1 + x)``, elementwise, accurate for small ``x`` (defined for ``x > -1``).

    Parameters
    ----------
    x : array_like
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.log1p(mg.Tensor([0.0]))
    Tensor([0.])
    """
    return execute_op(Log1p, x, constant=constant)


def logaddexp(x1: Any, x2: Any, *, constant: bool | None = None) -> Tensor:
    """``log(exp(x1) + exp(x2))``, elementwise, without overflow; broadcasts.

    Parameters
    ----------
    x1, x2 : array_like
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([0.0])
    >>> mg.logaddexp(x, 0.0).backward()
    >>> x.grad
    array([0.5])
    """
    return execute_op(LogAddExp, x1, x2, constant=constant)


def logaddexp2(x1: Any, x2: Any, *, constant: bool | None = None) -> Tensor:
    """``log2(2**x1 + 2**x2)``, elementwise, without overflow; broadcasts.

    Parameters
    ----------
    x1, x2 : array_like
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.logaddexp2(mg.Tensor([1.0]), 1.0)
    Tensor([2.])
    """
    return execute_op(LogAddExp2, x1, x2, constant=constant)
