"""The rules of the trigonometric functions: Sin, Cos, Tan, their inverses, Arctan2,
Sinc, and the reciprocal functions Csc, Sec, Cot with their inverses.

The documented functions that apply them are in :mod:`gradcheck.ops.trigonometric`, which
re-exports every name defined here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine.operation import BroadcastableOp
from gradcheck.engine.ops._rules.unary import UnaryOp

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor

# The derivatives of sin and cos as globals: an attribute of the numpy module is never
# a specialized lookup (it defines a module ``__getattr__``; see
# gradcheck.engine.operation._ndarray), ~300 instructions per backward on a small op.
_cos = np.cos
_sin = np.sin


class Sin(UnaryOp):
    func = staticmethod(np.sin)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return _cos(x)


class Cos(UnaryOp):
    func = staticmethod(np.cos)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -_sin(x)


class Tan(UnaryOp):
    func = staticmethod(np.tan)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 + out**2


class Arcsin(UnaryOp):
    func = staticmethod(np.arcsin)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / np.sqrt(1 - x**2)


class Arccos(UnaryOp):
    func = staticmethod(np.arccos)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -1 / np.sqrt(1 - x**2)


class Arctan(UnaryOp):
    func = staticmethod(np.arctan)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / (1 + x**2)


def _sinc(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.sinc(x))


class Sinc(UnaryOp):
    func = staticmethod(_sinc)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        # d/dx sin(pi x)/(pi x) = (cos(pi x) - sinc(x)) / x. NOTE: near 0 the two terms
        # cancel catastrophically (at x = 1e-9 both round to 1.0 and the quotient is 0
        # instead of -pi^2 x / 3), so for |pi x| < 0.1 the Taylor series is used:
        # pi * (-y/3 + y^3/30 - y^5/840 + y^7/45360), y = pi x, accurate to ~1e-16 there.
        y = np.pi * x
        small = np.abs(y) < 0.1
        y2 = y * y
        series = np.pi * y * (-1 / 3 + y2 * (1 / 30 + y2 * (-1 / 840 + y2 / 45360)))
        safe = np.where(small, 1.0, x)
        return np.where(small, series, (np.cos(y) - out) / safe).astype(out.dtype, copy=False)


def _csc(x: np.ndarray) -> np.ndarray:
    return 1 / np.sin(x)


def _sec(x: np.ndarray) -> np.ndarray:
    return 1 / np.cos(x)


def _cot(x: np.ndarray) -> np.ndarray:
    return 1 / np.tan(x)


def _arccsc(x: np.ndarray) -> np.ndarray:
    return np.arcsin(1 / x)


def _arcsec(x: np.ndarray) -> np.ndarray:
    return np.arccos(1 / x)


def _arccot(x: np.ndarray) -> np.ndarray:
    return np.arctan(1 / x)


class Csc(UnaryOp):
    func = staticmethod(_csc)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -out / np.tan(x)  # -csc(x) cot(x)


class Sec(UnaryOp):
    func = staticmethod(_sec)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return out * np.tan(x)


class Cot(UnaryOp):
    func = staticmethod(_cot)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -(1 + out**2)  # -csc(x)**2


class Arccsc(UnaryOp):
    func = staticmethod(_arccsc)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -1 / (np.abs(x) * np.sqrt(x**2 - 1))


class Arcsec(UnaryOp):
    func = staticmethod(_arcsec)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / (np.abs(x) * np.sqrt(x**2 - 1))


class Arccot(UnaryOp):
    func = staticmethod(_arccot)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -1 / (1 + x**2)


class Arctan2(BroadcastableOp):
    numpy_ufunc = np.arctan2

    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        return np.arctan2(a._data, b._data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        y, x = (t._data for t in self.variables)
        return grad * (x if index == 0 else -y) / (x**2 + y**2)
