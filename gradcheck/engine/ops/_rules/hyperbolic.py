"""The rules of the hyperbolic functions: Sinh, Cosh, Tanh, their inverses, and the
reciprocal functions Csch, Sech, Coth with Arccsch and Arccoth.

The documented functions that apply them are in :mod:`gradcheck.ops.hyperbolic`, which
re-exports every name defined here.
"""

from __future__ import annotations

import numpy as np

from gradcheck.engine.ops._rules.unary import UnaryOp


class Sinh(UnaryOp):
    func = staticmethod(np.sinh)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return np.cosh(x)


class Cosh(UnaryOp):
    func = staticmethod(np.cosh)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return np.sinh(x)


class Tanh(UnaryOp):
    func = staticmethod(np.tanh)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 - out**2


class Arcsinh(UnaryOp):
    func = staticmethod(np.arcsinh)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / np.sqrt(1 + x**2)


class Arccosh(UnaryOp):
    func = staticmethod(np.arccosh)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / np.sqrt(x**2 - 1)


class Arctanh(UnaryOp):
    func = staticmethod(np.arctanh)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / (1 - x**2)


def _csch(x: np.ndarray) -> np.ndarray:
    return 1 / np.sinh(x)


def _sech(x: np.ndarray) -> np.ndarray:
    return 1 / np.cosh(x)


def _coth(x: np.ndarray) -> np.ndarray:
    return 1 / np.tanh(x)


def _arccsch(x: np.ndarray) -> np.ndarray:
    return np.arcsinh(1 / x)


def _arccoth(x: np.ndarray) -> np.ndarray:
    return np.arctanh(1 / x)


class Csch(UnaryOp):
    func = staticmethod(_csch)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -out / np.tanh(x)  # -csch(x) coth(x)


class Sech(UnaryOp):
    func = staticmethod(_sech)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -out * np.tanh(x)


class Coth(UnaryOp):
    func = staticmethod(_coth)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 - out**2  # -csch(x)**2


class Arccsch(UnaryOp):
    func = staticmethod(_arccsch)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -1 / (np.abs(x) * np.sqrt(1 + x**2))


class Arccoth(UnaryOp):
    func = staticmethod(_arccoth)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / (1 - x**2)
