"""The engine's own ops, described for ``gradcheck verify`` with no target.

``gradcheck verify`` with no argument checks every function here, so that the first
command a new user runs shows the tool working on ops it knows are right. Each function
applies one public op and carries, with :func:`gradcheck.describe`, the inputs it is
meant for: a domain where the op is differentiable, shapes that fit it, parameters.

To add an op: write a small function of tensors that applies it and decorate it with
``@describe(...)`` (``@describe`` alone when the defaults fit: same-shape float64 inputs
in [-10, 10]). ``gradcheck list`` shows what is here.
"""

from __future__ import annotations

import gradcheck as gc
from gradcheck.description import describe
from gradcheck.tensor_base import Tensor

# --- arithmetic (broadcasting binary ops) ---


@describe(broadcast=True)
def add(a: Tensor, b: Tensor) -> Tensor:
    return gc.add(a, b)


@describe(broadcast=True)
def subtract(a: Tensor, b: Tensor) -> Tensor:
    return gc.subtract(a, b)


@describe(broadcast=True)
def multiply(a: Tensor, b: Tensor) -> Tensor:
    return gc.multiply(a, b)


# The divisor stays away from 0, where the quotient blows up.
@describe(broadcast=True, domain=[(-10.0, 10.0), (0.5, 10.0)])
def divide(a: Tensor, b: Tensor) -> Tensor:
    return gc.divide(a, b)


# A positive base: a**b is not real for a < 0 and b fractional.
@describe(broadcast=True, domain=[(0.5, 3.0), (-2.0, 2.0)])
def power(a: Tensor, b: Tensor) -> Tensor:
    return gc.power(a, b)


@describe
def negative(a: Tensor) -> Tensor:
    return gc.negative(a)


@describe
def square(a: Tensor) -> Tensor:
    return gc.square(a)


# --- exponents, logarithms, roots, trigonometric and hyperbolic functions ---


@describe(domain=(-5.0, 5.0))
def exp(a: Tensor) -> Tensor:
    return gc.exp(a)


@describe(domain=(0.1, 10.0))
def log(a: Tensor) -> Tensor:
    return gc.log(a)


@describe(domain=(0.1, 10.0))
def sqrt(a: Tensor) -> Tensor:
    return gc.sqrt(a)


# Not differentiable at 0: values keep a margin from it. (Without `avoid`, examples
# that hit the kink are skipped and counted, never failed.)
@describe(avoid=[0.0])
def absolute(a: Tensor) -> Tensor:
    return gc.absolute(a)


@describe
def sin(a: Tensor) -> Tensor:
    return gc.sin(a)


@describe
def cos(a: Tensor) -> Tensor:
    return gc.cos(a)


@describe
def tanh(a: Tensor) -> Tensor:
    return gc.tanh(a)


# --- reductions ---


@describe
def sum_all(a: Tensor) -> Tensor:
    return gc.sum(a)


@describe(shapes=["n,k"], kwargs={"axis": 0, "keepdims": True})
def sum_axis(a: Tensor, axis: int = 0, keepdims: bool = False) -> Tensor:
    return gc.sum(a, axis=axis, keepdims=keepdims)


@describe
def mean_all(a: Tensor) -> Tensor:
    return gc.mean(a)


@describe(shapes=["n,k"], kwargs={"axis": -1})
def mean_axis(a: Tensor, axis: int = -1) -> Tensor:
    return gc.mean(a, axis=axis)


# --- linear algebra, shape and indexing ---


@describe(shapes=["n,k", "k,m"])
def matmul(a: Tensor, b: Tensor) -> Tensor:
    return gc.matmul(a, b)


@describe(shapes=["k", "k,m"])
def vecmat(a: Tensor, b: Tensor) -> Tensor:
    return gc.matmul(a, b)


@describe(shapes=["2,3"])
def reshape(a: Tensor) -> Tensor:
    return gc.reshape(a, (3, 2))


@describe(shapes=["n,k,m"])
def transpose(a: Tensor) -> Tensor:
    return gc.transpose(a, (2, 0, 1))


@describe(shapes=["n,k"])
def get_item(a: Tensor) -> Tensor:
    return a[..., ::-1][0]
