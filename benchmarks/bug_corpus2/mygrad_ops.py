"""Held-out: gradient bugs of the kinds reported against MyGrad ``Operation``s written
by users, each beside its fix (``Bug<Name>`` and ``Fix<Name>``)."""

from __future__ import annotations

import numpy as np
from mygrad.operation_base import Operation

import gradcheck


# 1. A product over the last axis whose backward is grad * prod / x: nan at a zero.
def _prod(divides: bool):
    class Prod(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return np.prod(x.data, axis=-1)

        def backward_var(self, grad, index, **kwargs):
            (x,) = self.variables
            a = x.data
            g = np.expand_dims(grad, -1)
            if divides:
                return g * np.prod(a, axis=-1, keepdims=True) / a
            out = np.empty_like(a)
            for i in range(a.shape[-1]):
                others = np.delete(a, i, axis=-1)
                out[..., i] = np.prod(others, axis=-1)
            return g * out

    return gradcheck.describe(min_dims=1)(Prod)


BugProdZeros = _prod(divides=True)
FixProdZeros = _prod(divides=False)


# 2. A sum over axis 1 whose backward broadcasts the gradient without restoring the
#    summed axis (silent when the two sizes agree, a broadcast error otherwise).
def _sum1(keepdims: bool):
    class SumAxis1(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return x.data.sum(axis=1)

        def backward_var(self, grad, index, **kwargs):
            (x,) = self.variables
            g = np.expand_dims(grad, 1) if keepdims else grad
            return np.broadcast_to(g, x.data.shape).copy()

    return gradcheck.describe(shapes=["n,m"])(SumAxis1)


BugSumKeepdims = _sum1(keepdims=False)
FixSumKeepdims = _sum1(keepdims=True)


# 3. A matrix product by einsum whose gradient for the right factor comes out
#    transposed (a wrong output spec: silent for square factors).
def _einsum(right_spec: str):
    class MatMul(Operation):
        def __call__(self, a, b):
            self.variables = (a, b)
            return np.einsum("ij,jk->ik", a.data, b.data)

        def backward_var(self, grad, index, **kwargs):
            a, b = self.variables
            if index == 0:
                return np.einsum("ik,jk->ij", grad, b.data)
            return np.einsum(f"ij,ik->{right_spec}", a.data, grad)

    return gradcheck.describe(shapes=["n,k", "k,m"])(MatMul)


BugEinsumTranspose = _einsum("kj")
FixEinsumTranspose = _einsum("jk")


# 4. np.repeat(x, 3, axis=0) whose backward folds the gradient as (3, n).
def _repeat(layout_ok: bool):
    class Repeat3(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return np.repeat(x.data, 3, axis=0)

        def backward_var(self, grad, index, **kwargs):
            (x,) = self.variables
            n, rest = x.data.shape[0], x.data.shape[1:]
            if layout_ok:
                return grad.reshape(n, 3, *rest).sum(1)
            return grad.reshape(3, n, *rest).sum(0)

    return gradcheck.describe(min_dims=1)(Repeat3)


BugRepeatFold = _repeat(layout_ok=False)
FixRepeatFold = _repeat(layout_ok=True)


# 5. A standard deviation (last axis, ddof=0) whose backward leaves out the mean's term:
#    (x - mean) / (n std) written as x / (n std). (Where std is 0, a single element or
#    equal ones, both give 0: a size-1 axis's std is the constant 0.)
def _std(centred: bool):
    class Std(Operation):
        def __call__(self, x):
            self.variables = (x,)
            self.s = x.data.std(axis=-1)
            return self.s

        def backward_var(self, grad, index, **kwargs):
            (x,) = self.variables
            a = x.data
            n = a.shape[-1]
            d = a - a.mean(-1, keepdims=True) if centred else a
            s = np.expand_dims(self.s, -1)
            scale = np.expand_dims(grad, -1) / (n * np.where(s > 0, s, 1.0))
            return np.where(s > 0, scale * d, 0.0)

    return gradcheck.describe(min_dims=1)(Std)


BugStdCentring = _std(centred=False)
FixStdCentring = _std(centred=True)
