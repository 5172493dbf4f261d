"""Ops a user might write, for the README's walk-through of ``gradcheck verify``.

Run from this directory::

    gradcheck verify my_ops:Cube            # passes
    gradcheck verify my_ops:WrongSoftplus   # fails: shows the input and the element
    gradcheck verify my_ops                 # every op in the module
    gradcheck list my_ops
"""

from __future__ import annotations

import numpy as np

import gradcheck
from gradcheck import Operation, Tensor


class Cube(Operation):
    """x**3, elementwise: correct."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data**3

    def backward_var(self, grad, index, **kwargs):
        return grad * 3 * self.variables[0].data ** 2


@gradcheck.describe(domain=(-20.0, 20.0))
class Softplus(Operation):
    """log(1 + e**x), elementwise, computed stably: correct."""

    def __call__(self, x):
        self.variables = (x,)
        return np.logaddexp(0.0, x.data)

    def backward_var(self, grad, index, **kwargs):
        return grad / (1 + np.exp(-self.variables[0].data))  # the logistic sigmoid


@gradcheck.describe(domain=(-20.0, 20.0))
class WrongSoftplus(Operation):
    """Softplus whose backward forgot a minus sign: wrong for every x != 0."""

    def __call__(self, x):
        self.variables = (x,)
        return np.logaddexp(0.0, x.data)

    def backward_var(self, grad, index, **kwargs):
        return grad / (1 + np.exp(self.variables[0].data))


@gradcheck.describe(shapes=["n,k", "k,m"])
class MatMul(Operation):
    """A matrix product (n, k) @ (k, m): correct."""

    def __call__(self, a, b):
        self.variables = (a, b)
        return a.data @ b.data

    def backward_var(self, grad, index, **kwargs):
        a, b = (v.data for v in self.variables)
        return grad @ b.T if index == 0 else a.T @ grad


@gradcheck.describe(shapes=["n,k", "k,m"])
class WrongMatMul(Operation):
    """A matrix product whose backward for ``b`` transposes the wrong factor: right
    only when the inputs are square."""

    def __call__(self, a, b):
        self.variables = (a, b)
        return a.data @ b.data

    def backward_var(self, grad, index, **kwargs):
        a, b = (v.data for v in self.variables)
        if index == 0:
            return grad @ b.T
        return (grad.T @ a).T if a.shape[0] == a.shape[1] else np.zeros_like(b)


@gradcheck.describe(domain=(0.1, 10.0))
def log_cosh_ratio(x: Tensor) -> Tensor:
    """A function of tensors built from gradcheck's ops: its gradient is right by
    construction, and ``gradcheck verify`` confirms it."""
    return gradcheck.log(x) * gradcheck.tanh(x) / x
