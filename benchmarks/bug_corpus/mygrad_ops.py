"""Gradient bugs of the kind reported against MyGrad ``Operation``s written by users,
each beside its fix (``Bug<Name>`` and ``Fix<Name>``), run through MyGrad itself."""

from __future__ import annotations

import numpy as np
from mygrad.operation_base import Operation

import gradcheck


# 1. x ** p whose backward forgets to lower the power.
class BugPowerExponent(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data**3

    def backward_var(self, grad, index, **kwargs):
        (x,) = self.variables
        return grad * 3 * x.data**3


class FixPowerExponent(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data**3

    def backward_var(self, grad, index, **kwargs):
        (x,) = self.variables
        return grad * 3 * x.data**2


# 2. A matrix product whose backward for the right factor multiplies on the wrong side
#    (right for a shape, wrong for the values).
def _matmul(right_side: bool):
    class MatMul(Operation):
        def __call__(self, a, b):
            self.variables = (a, b)
            return a.data @ b.data

        def backward_var(self, grad, index, **kwargs):
            a, b = self.variables
            if index == 0:
                return grad @ b.data.T
            return a.data.T @ grad if right_side else grad @ a.data.T

    return gradcheck.describe(shapes=["n,n", "n,n"])(MatMul)


BugMatmulSide = _matmul(right_side=False)
FixMatmulSide = _matmul(right_side=True)


# 3. Softmax over the last axis whose backward sums over the first.
def _softmax(axis: int):
    class Softmax(Operation):
        def __call__(self, x):
            self.variables = (x,)
            e = np.exp(x.data - x.data.max(-1, keepdims=True))
            self.y = e / e.sum(-1, keepdims=True)
            return self.y

        def backward_var(self, grad, index, **kwargs):
            y = self.y
            return y * (grad - (grad * y).sum(axis, keepdims=True))

    return Softmax


BugSoftmaxAxis = _softmax(0)
FixSoftmaxAxis = _softmax(-1)


# 4. A variance over the last axis (ddof=1) whose backward divides by n, not n - 1.
def _var(ddof_in_backward: bool):
    class Var(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return x.data.var(-1, ddof=1)

        def backward_var(self, grad, index, **kwargs):
            (x,) = self.variables
            n = x.data.shape[-1]
            d = x.data - x.data.mean(-1, keepdims=True)
            return 2 * grad[..., None] * d / (n - 1 if ddof_in_backward else n)

    return Var


BugVarianceDdof = _var(ddof_in_backward=False)
FixVarianceDdof = _var(ddof_in_backward=True)


# 5. A clip whose backward passes the gradient outside the bounds too (the
#    straight-through estimator left in by mistake).
def _clip(masks: bool):
    class Clip(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return np.clip(x.data, -1.0, 1.0)

        def backward_var(self, grad, index, **kwargs):
            (x,) = self.variables
            return grad * (np.abs(x.data) < 1.0) if masks else grad

    return gradcheck.describe(avoid=[-1.0, 1.0])(Clip)


BugClipStraightThrough = _clip(masks=False)
FixClipStraightThrough = _clip(masks=True)
