"""Ops a user might write, used by the CLI tests (copied into a temporary working
directory, so that they are loaded the way a user's module is)."""

from __future__ import annotations

import numpy as np

import gradcheck
from gradcheck import Operation


class Square(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data**2

    def backward_var(self, grad, index, **kwargs):
        return grad * 2 * self.variables[0].data


class WrongSquare(Operation):
    """Gradient 3x instead of 2x."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data**2

    def backward_var(self, grad, index, **kwargs):
        return grad * 3 * self.variables[0].data


@gradcheck.describe(domain=(0.1, 10.0))
class Log(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return np.log(x.data)

    def backward_var(self, grad, index, **kwargs):
        return grad / self.variables[0].data


@gradcheck.describe(shapes=["n,k", "k,m"])
class MatMul(Operation):
    def __call__(self, a, b):
        self.variables = (a, b)
        return a.data @ b.data

    def backward_var(self, grad, index, **kwargs):
        a, b = (v.data for v in self.variables)
        return grad @ b.T if index == 0 else a.T @ grad


class Sum(Operation):
    def __call__(self, x, axis=None):
        self.variables = (x,)
        self.axis = axis
        return np.asarray(x.data.sum(axis=axis))

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        if self.axis is not None:
            grad = np.expand_dims(grad, self.axis)
        return np.broadcast_to(grad, x.shape).copy()


class Raises(Operation):
    def __call__(self, x):
        self.variables = (x,)
        raise ValueError("the forward is broken")

    def backward_var(self, grad, index, **kwargs):
        return grad


class ReturnsNan(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data * np.nan

    def backward_var(self, grad, index, **kwargs):
        return grad


class Absolute(Operation):
    """Correct, with a kink at 0 (examples there are skipped, not failed)."""

    def __call__(self, x):
        self.variables = (x,)
        return np.abs(x.data)

    def backward_var(self, grad, index, **kwargs):
        return grad * np.sign(self.variables[0].data)


@gradcheck.describe(domain=(0.5, 2.0))
def cube_function(x):
    return x * x * x


@gradcheck.describe(shapes=["n,k", "k,m", "n"])
def wrong_shape_count(a, b):
    return a @ b


def needs_factor(x, *, factor):
    return x * factor


NOT_AN_OP = 42
