"""The rules of exponents and logarithms: Exp, Exp2, Expm1, Log, Log2, Log10, Log1p,
LogAddExp, LogAddExp2.

The documented functions that apply them are in :mod:`gradcheck.ops.exp_log`, which
re-exports every name defined here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine.operation import BroadcastableOp
from gradcheck.engine.ops._rules.unary import UnaryOp

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor

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
    numpy_ufunc = np.logaddexp

    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        self.out = np.logaddexp(a._data, b._data)
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        # d/da log(e**a + e**b) = e**a / (e**a + e**b) = e**(a - out): never overflows.
        return grad * np.exp(self.variables[index]._data - self.out)


class LogAddExp2(BroadcastableOp):
    numpy_ufunc = np.logaddexp2

    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        self.out = np.logaddexp2(a._data, b._data)
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad * np.exp2(self.variables[index]._data - self.out)
