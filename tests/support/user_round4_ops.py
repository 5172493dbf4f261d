"""Ops a new user wrote following only README.md and docs/ (the fourth user round of
issue 34): each bug beside its correct twin, of kinds the earlier rounds and the bug
corpora did not hold. `tests/users/test_round4.py` checks them through the documented
paths; `benchmarks/user_round4.py` runs every path on seeds 0, 1, 2.

The pairs, and the settings each needs (given on every path: flags, config keys,
``check``'s and the marker's keywords; or here, by ``describe``):

* ``bad_affine``/``good_affine``: ``nn.Module`` instances whose bias gradient is
  averaged over the batch instead of summed (right only for one row); ``--shape n,3``.
* ``bad_elu``/``good_elu``: a ``jax.custom_jvp`` whose tangent is wrong for x < 0 only.
* ``bad_sinh_cosh``/``good_sinh_cosh``: a function of MyGrad tensors with two outputs,
  each from a MyGrad ``Operation``; the second output's backward has the wrong sign.
* ``BadSoftplusO2``/``GoodSoftplusO2``: a torch Function whose first derivative is
  right and whose second is not (its backward calls a sigmoid Function whose own
  backward is wrong); ``--order 2``.
* ``BadTanhHalf``/``GoodTanhHalf``: a torch Function whose backward computes in
  float16 (mixed precision gone wrong), checked in float32; ``--dtype float32``.
* ``BadCheckedSqrt``/``GoodCheckedSqrt``: gradcheck ops that raise ``NegativeInput``
  outside their domain (``describe(skip_on=...)``); the bug drops the 1/2.
* ``BadLogMix``/``GoodLogMix``: a torch Function of ``x`` and a weight in (0, 1)
  (``describe(domain=[None, (0.0, 1.0)])``), the weight's gradient missing its -1.
* ``bad_scaled_softsign``/``good_scaled_softsign``: module-level functions with a
  parameter (``describe(kwargs={"scale": 3.0})``) around a gradcheck op whose backward
  forgets to square.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mygrad
import numpy as np
import torch
from mygrad.operation_base import Operation as MyGradOperation
from torch import nn

import gradcheck
from gradcheck import Operation, execute_op

# --- 1. an nn.Module instance: the bias gradient under broadcasting ------------------


class _AffineFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, sums):
        ctx.save_for_backward(x, weight)
        ctx.sums = sums
        return x * weight + bias

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        k = weight.shape[-1]
        rows = g.reshape(-1, k)
        grad_bias = rows.sum(0) if ctx.sums else rows.mean(0)  # the bug: a mean
        grad_x = (g * weight).sum_to_size(x.shape)
        grad_weight = (g * x).reshape(-1, k).sum(0)
        return grad_x, grad_weight, grad_bias, None


class _Affine(nn.Module):
    def __init__(self, sums: bool) -> None:
        super().__init__()
        self.sums = sums
        self.weight = nn.Parameter(torch.tensor([0.5, -1.25, 2.0], dtype=torch.float64))
        self.bias = nn.Parameter(torch.tensor([0.1, -0.2, 0.3], dtype=torch.float64))

    def forward(self, x):
        return _AffineFunction.apply(x, self.weight, self.bias, self.sums)


bad_affine = _Affine(sums=False)
good_affine = _Affine(sums=True)


# --- 2. a jax.custom_jvp whose tangent is wrong for negative inputs only -------------


@jax.custom_jvp
def bad_elu(x):
    return jnp.where(x > 0, x, jnp.expm1(x))


@bad_elu.defjvp
def _bad_elu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = bad_elu(x)
    return y, jnp.where(x > 0, 1.0, y) * t  # the bug: expm1(x), not exp(x)


@jax.custom_jvp
def good_elu(x):
    return jnp.where(x > 0, x, jnp.expm1(x))


@good_elu.defjvp
def _good_elu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return good_elu(x), jnp.where(x > 0, 1.0, jnp.exp(jnp.minimum(x, 0.0))) * t


# --- 3. a function of MyGrad tensors with two outputs --------------------------------


class _MgSinh(MyGradOperation):
    def __call__(self, x):
        self.variables = (x,)
        return np.sinh(x.data)

    def backward_var(self, grad, index, **kwargs):
        return grad * np.cosh(self.variables[0].data)


class _MgCoshBad(MyGradOperation):
    def __call__(self, x):
        self.variables = (x,)
        return np.cosh(x.data)

    def backward_var(self, grad, index, **kwargs):
        return -grad * np.sinh(self.variables[0].data)  # the bug: the sign


class _MgCosh(MyGradOperation):
    def __call__(self, x):
        self.variables = (x,)
        return np.cosh(x.data)

    def backward_var(self, grad, index, **kwargs):
        return grad * np.sinh(self.variables[0].data)


def bad_sinh_cosh(x):
    return mygrad.execute_op(_MgSinh, x), mygrad.execute_op(_MgCoshBad, x)


def good_sinh_cosh(x):
    return mygrad.execute_op(_MgSinh, x), mygrad.execute_op(_MgCosh, x)


# --- 4. order 2: the first derivative right, the second wrong ------------------------


class _SigmoidBad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, g):
        (s,) = ctx.saved_tensors
        return g * s * (1 + s)  # the bug: 1 + s, not 1 - s


class _Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, g):
        (s,) = ctx.saved_tensors
        return g * s * (1 - s)


class BadSoftplusO2(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * _SigmoidBad.apply(x)


class GoodSoftplusO2(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * _Sigmoid.apply(x)


# --- 5. a float32 op whose backward computes in float16 ------------------------------


class BadTanhHalf(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (1 - y.half() ** 2).to(y.dtype)  # the bug: float16 in between


class GoodTanhHalf(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (1 - y**2)


# --- 6. an op that raises outside its domain: skip_on --------------------------------


class NegativeInput(ArithmeticError):
    """The square root of a negative number was asked for."""


def _checked(x):
    if np.any(x.data < 0):
        raise NegativeInput("CheckedSqrt is defined for x >= 0 only")
    return np.sqrt(x.data)


@gradcheck.describe(skip_on=NegativeInput)
class BadCheckedSqrt(Operation):
    def __call__(self, x):
        self.variables = (x,)
        self.root = _checked(x)
        return self.root

    def backward_var(self, grad, index, **kwargs):
        return grad / self.root  # the bug: the 1/2 dropped


@gradcheck.describe(skip_on=NegativeInput)
class GoodCheckedSqrt(Operation):
    def __call__(self, x):
        self.variables = (x,)
        self.root = _checked(x)
        return self.root

    def backward_var(self, grad, index, **kwargs):
        return grad / (2 * self.root)


# --- 7. per-input domains, None for an unbounded input -------------------------------


def _log_mix_backward(ctx, g, minus_one):
    x, w = ctx.saved_tensors
    e = torch.exp(x)
    m = w * e + 1 - w
    grad_w = (e - 1) / m if minus_one else e / m  # the bug: e, not e - 1
    return (g * w * e / m).sum_to_size(x.shape), (g * grad_w).sum_to_size(w.shape)


@gradcheck.describe(domain=[None, (0.0, 1.0)])
class BadLogMix(torch.autograd.Function):
    """log(w·eˣ + 1 - w), a mixture weight w in (0, 1)."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return torch.log(w * torch.exp(x) + 1 - w)

    @staticmethod
    def backward(ctx, g):
        return _log_mix_backward(ctx, g, minus_one=False)


@gradcheck.describe(domain=[None, (0.0, 1.0)])
class GoodLogMix(torch.autograd.Function):
    """log(w·eˣ + 1 - w), a mixture weight w in (0, 1)."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return torch.log(w * torch.exp(x) + 1 - w)

    @staticmethod
    def backward(ctx, g):
        return _log_mix_backward(ctx, g, minus_one=True)


# --- 8. module-level functions with a parameter, described ---------------------------


class _SoftsignBad(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data / (1 + np.abs(x.data))

    def backward_var(self, grad, index, **kwargs):
        return grad / (1 + np.abs(self.variables[0].data))  # the bug: not squared


class _Softsign(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data / (1 + np.abs(x.data))

    def backward_var(self, grad, index, **kwargs):
        return grad / (1 + np.abs(self.variables[0].data)) ** 2


@gradcheck.describe(kwargs={"scale": 3.0})
def bad_scaled_softsign(x, scale):
    return scale * execute_op(_SoftsignBad, x / scale)


@gradcheck.describe(kwargs={"scale": 3.0})
def good_scaled_softsign(x, scale):
    return scale * execute_op(_Softsign, x / scale)
