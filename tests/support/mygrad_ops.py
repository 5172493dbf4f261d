"""MyGrad ops for the adapter tests (imported only where MyGrad is installed)."""

from __future__ import annotations

import mygrad as mg
import numpy as np
from mygrad.operation_base import Operation


class Mul(Operation):
    def __call__(self, a, b):
        self.variables = (a, b)
        return a.data * b.data

    def backward_var(self, grad, index, **kwargs):
        a, b = self.variables
        return grad * (b.data if index == 0 else a.data)


class WrongMul(Operation):
    """The gradient of the second input is twice what it should be."""

    def __call__(self, a, b):
        self.variables = (a, b)
        return a.data * b.data

    def backward_var(self, grad, index, **kwargs):
        a, b = self.variables
        return grad * (b.data if index == 0 else 2 * a.data)


class Power(Operation):
    """x ** p with a keyword parameter."""

    def __call__(self, x, p=2.0):
        self.variables = (x,)
        self.p = p
        return x.data**p

    def backward_var(self, grad, index, **kwargs):
        (x,) = self.variables
        return grad * self.p * x.data ** (self.p - 1)


class MutatesInput(Operation):
    def __call__(self, x):
        self.variables = (x,)
        out = x.data * 2
        x.data[...] = 0.0  # a bug: changes the caller's input
        return out

    def backward_var(self, grad, index, **kwargs):
        return 2 * grad


def tanh_times(x):
    return mg.tanh(x) * x


def abs_op(x):
    return mg.abs(x)


__all__ = ["Mul", "WrongMul", "Power", "MutatesInput", "tanh_times", "abs_op", "np"]


class Leaky(Operation):
    """A MyGrad op with a positional parameter that has no default (`slope`)."""

    def __call__(self, x, slope):
        self.variables = (x,)
        self.slope = slope
        return np.where(x.data > 0, x.data, slope * x.data)

    def backward_var(self, grad, index, **kwargs):
        (x,) = self.variables
        return grad * np.where(x.data > 0, 1.0, self.slope)


__all__ += ["Leaky"]


class Ranking(Operation):
    """sum(max(0, margin - y * (a - b))), y in {-1, 1} an array (as MyGrad's
    margin_ranking_loss passes it): arithmetic with a Tensor y would not do."""

    def __call__(self, a, b, y, margin=0.5):
        if not isinstance(y, np.ndarray):
            raise TypeError(f"y must be an ndarray, got {type(y).__name__}")
        self.variables = (a, b)
        self.y = np.where(y >= 0, 1.0, -1.0)
        m = margin - self.y * (a.data - b.data)
        self.on = m > 0
        return np.sum(np.where(self.on, m, 0.0))

    def backward_var(self, grad, index, **kwargs):
        sign = -1.0 if index == 0 else 1.0
        return grad * sign * self.y * self.on


__all__ += ["Ranking"]
