"""Small ops for the checker's tests, written here so that the checker's tests do not
depend on the library's ops (which are written in parallel).

``Elementwise`` makes an op from a forward ``f`` and its derivative ``df``; ``scale``
multiplies the gradient (a deliberately wrong op for ``scale != 1``). The kink ops
(relu, clip, max) pick a subgradient at their kinks, like the library's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck import Operation


def elementwise(name: str, f: Any, df: Any, scale: float = 1.0) -> type[Operation]:
    """An ``Operation`` subclass computing ``f`` elementwise with gradient
    ``scale * grad * df(x)``."""

    def __call__(self: Any, a: Any) -> np.ndarray:
        self.variables = (a,)
        return f(a.data)

    def backward_var(self: Any, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0].data
        g = grad * df(x)
        return g * np.asarray(scale, dtype=g.dtype) if scale != 1.0 else g

    return type(name, (Operation,), {"__call__": __call__, "backward_var": backward_var})


def _sin25(x: np.ndarray) -> np.ndarray:
    return np.sin(25 * x)


def _dsin25(x: np.ndarray) -> np.ndarray:
    return 25 * np.cos(25 * x)


def _cancel(x: np.ndarray) -> np.ndarray:
    return (x + 1e6) - 1e6


def _one(x: np.ndarray) -> np.ndarray:
    return np.ones_like(x)


#: name -> (f, df), smooth everywhere on the reals.
SMOOTH: dict[str, tuple[Any, Any]] = {
    "sin": (np.sin, np.cos),
    "tanh": (np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    "square": (np.square, lambda x: 2 * x),
    "sin25": (_sin25, _dsin25),
    "cancel": (_cancel, _one),
    "cube": (lambda x: x**3, lambda x: 3 * x**2),
}


class Mul(Operation):
    def __call__(self, a, b):
        self.variables = (a, b)
        return a.data * b.data

    def backward_var(self, grad, index, **kwargs):
        a, b = self.variables
        return grad * (b.data if index == 0 else a.data)


class MatMul(Operation):
    def __call__(self, a, b):
        self.variables = (a, b)
        return a.data @ b.data

    def backward_var(self, grad, index, **kwargs):
        a, b = self.variables
        return grad @ b.data.T if index == 0 else a.data.T @ grad


class Relu(Operation):
    def __call__(self, a):
        self.variables = (a,)
        return np.maximum(a.data, 0)

    def backward_var(self, grad, index, **kwargs):
        return grad * (self.variables[0].data > 0)


class Abs(Operation):
    def __call__(self, a):
        self.variables = (a,)
        return np.abs(a.data)

    def backward_var(self, grad, index, **kwargs):
        return grad * np.sign(self.variables[0].data)


class Clip(Operation):
    def __call__(self, a, lo=-1.0, hi=1.0):
        self.variables = (a,)
        self.lo, self.hi = lo, hi
        return np.clip(a.data, lo, hi)

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        return grad * ((x >= self.lo) & (x <= self.hi))


class Max(Operation):
    """max over all elements; ties share the gradient equally."""

    def __call__(self, a):
        self.variables = (a,)
        self.out = np.max(a.data)
        return self.out

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        winners = x == self.out
        return grad * winners / np.count_nonzero(winners).astype(grad.dtype)


class SortValues(Operation):
    """np.sort along the last axis: not differentiable at ties, where a search that
    shrinks towards 0 goes (0 next to 2e-308 is a tie to every step)."""

    def __call__(self, x):
        self.variables = (x,)
        self.order = np.argsort(x.data, axis=-1, kind="stable")
        return np.take_along_axis(x.data, self.order, axis=-1)

    def backward_var(self, grad, index, **kwargs):
        out = np.zeros_like(grad)
        np.put_along_axis(out, self.order, grad, axis=-1)
        return out


class WrongSortValues(SortValues):
    """The same, with the gradient of the largest value doubled."""

    def backward_var(self, grad, index, **kwargs):
        grad = grad.copy()
        grad[..., -1] *= 2
        return super().backward_var(grad, index, **kwargs)
