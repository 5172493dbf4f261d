"""Ops a new user wrote following only README.md and docs/ (the fifth user round of
issue 34): each bug beside its correct twin, of kinds the earlier rounds
(`user_ops.py`, `holdout_ops.py`, `user_round4_ops.py`) and the bug corpora did not
hold. `tests/users/test_round5_users.py` checks them through the documented paths;
`benchmarks/user_round5.py` runs every path on seeds 0, 1, 2.

The pairs, and the settings each needs (here, by ``describe``, or given on every path
as flags, config keys, ``check``'s and the marker's keywords):

* ``BadCubeArgmax``/``GoodCubeArgmax``: a ``torch.autograd.Function`` with two
  outputs, ``x**3`` and the int64 argmax of each row (marked non-differentiable);
  the bug's backward takes ``x·|x|`` for ``x²``, wrong for x < 0 only.
* ``bad_gate``/``good_gate``: ``nn.Module`` instances with a submodule (an
  ``nn.Linear``) and a buffer (a temperature) around a sigmoid Function; the bug
  forgets to divide by the temperature; ``--shape n,3``.
* ``bad_shift_scale``/``good_shift_scale``: a ``jax.custom_vjp`` of a dict of
  parameters and an array (``describe(shapes=[{"scale": "n", "shift": "n"}, "n"])``);
  the bug's cotangent for ``params['shift']`` is copied from ``scale``'s.
* ``BadScaleExp``/``GoodScaleExp``: MyGrad ``Operation`` subclasses ``x·exp(b)`` with
  ``b`` a row broadcast over ``x``'s rows (``describe(shapes=["n,3", "3"])``); the bug
  averages ``b``'s gradient over the rows instead of summing it.
* ``BadNormalize``/``GoodNormalize``: gradcheck ``Operation``s that normalise along
  an ``axis`` keyword (``describe(kwargs={"axis": 0}, shapes=["n,m"], domain=(0.5,
  2.0))``); the bug's backward sums along the last axis whatever ``axis`` is.
* ``bad_pow_log``/``good_pow_log``: described functions of ``x`` in (0.1, 5), an
  unbounded ``y`` and an integer power ``n`` in 1..3 (``describe(domain=[(0.1, 5.0),
  None, None], integers={2: (1, 4)}, broadcast=False)``: an elementwise op of
  inputs of one shape; without ``broadcast=False`` the twin fails, rightly, with
  ``wrong_shape`` at broadcast draws) around a gradcheck op; the bug drops ``n`` from
  ``x``'s gradient.
* ``bad_softplus2``/``good_softplus2``: a ``jax.custom_vjp`` softplus whose first
  derivative is right and whose second is not (its backward calls a sigmoid
  ``custom_jvp`` whose tangent is wrong); ``--order 2``.
* ``BadComplexSquare``/``GoodComplexSquare``: a ``torch.autograd.Function`` of a
  complex input, ``z²``; the bug forgets the conjugate torch's convention asks for;
  ``--dtype complex128``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import torch
from mygrad.operation_base import Operation as MyGradOperation
from torch import nn

import gradcheck
from gradcheck import Operation, execute_op

# --- 1. a torch Function with two outputs, one of them integer -----------------------


class BadCubeArgmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        index = x.argmax(-1) if x.dim() else torch.zeros((), dtype=torch.int64)
        ctx.mark_non_differentiable(index)
        return x**3, index

    @staticmethod
    def backward(ctx, grad, grad_index):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x.abs()  # the bug: x·|x| for x², wrong for x < 0


class GoodCubeArgmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        index = x.argmax(-1) if x.dim() else torch.zeros((), dtype=torch.int64)
        ctx.mark_non_differentiable(index)
        return x**3, index

    @staticmethod
    def backward(ctx, grad, grad_index):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x


# --- 2. an nn.Module with a submodule and a buffer -----------------------------------


class _TemperedSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z, temperature, divides):
        s = torch.sigmoid(z / temperature)
        ctx.save_for_backward(s, temperature)
        ctx.divides = divides
        return s

    @staticmethod
    def backward(ctx, grad):
        s, temperature = ctx.saved_tensors
        slope = s * (1 - s)
        if ctx.divides:
            slope = slope / temperature
        return grad * slope, None, None  # (the bug: not divided by the temperature)


class _Gate(nn.Module):
    def __init__(self, divides: bool) -> None:
        super().__init__()
        self.divides = divides
        self.proj = nn.Linear(3, 2, dtype=torch.float64)
        with torch.no_grad():
            self.proj.weight.copy_(torch.tensor([[0.5, -1.0, 0.25], [1.5, 0.75, -0.5]]))
            self.proj.bias.copy_(torch.tensor([0.1, -0.3]))
        self.register_buffer("temperature", torch.tensor(2.5, dtype=torch.float64))

    def forward(self, x):
        return _TemperedSigmoid.apply(self.proj(x), self.temperature, self.divides)


bad_gate = _Gate(divides=False)
good_gate = _Gate(divides=True)


# --- 3. a jax.custom_vjp of a dict of parameters -------------------------------------


def _shift_scale(params, x):
    return params["scale"] * jnp.tanh(x) + params["shift"]


@gradcheck.describe(shapes=[{"scale": "n", "shift": "n"}, "n"])
@jax.custom_vjp
def bad_shift_scale(params, x):
    return _shift_scale(params, x)


def _bad_fwd(params, x):
    return _shift_scale(params, x), (params["scale"], jnp.tanh(x))


def _bad_bwd(res, g):
    scale, t = res
    # the bug: shift's cotangent copied from scale's line
    return {"scale": g * t, "shift": g * t}, g * scale * (1 - t * t)


bad_shift_scale.defvjp(_bad_fwd, _bad_bwd)


@gradcheck.describe(shapes=[{"scale": "n", "shift": "n"}, "n"])
@jax.custom_vjp
def good_shift_scale(params, x):
    return _shift_scale(params, x)


def _good_bwd(res, g):
    scale, t = res
    return {"scale": g * t, "shift": g}, g * scale * (1 - t * t)


good_shift_scale.defvjp(_bad_fwd, _good_bwd)


# --- 4. a MyGrad Operation with a broadcast parameter --------------------------------


@gradcheck.describe(shapes=["n,3", "3"])
class BadScaleExp(MyGradOperation):
    def __call__(self, x, b):
        self.variables = (x, b)
        self.scale = np.exp(b.data)
        return x.data * self.scale

    def backward_var(self, grad, index, **kwargs):
        x, b = self.variables
        if index == 0:
            return grad * self.scale
        rows = tuple(range(grad.ndim - b.ndim))
        return np.mean(grad * x.data * self.scale, axis=rows)  # the bug: a mean


@gradcheck.describe(shapes=["n,3", "3"])
class GoodScaleExp(MyGradOperation):
    def __call__(self, x, b):
        self.variables = (x, b)
        self.scale = np.exp(b.data)
        return x.data * self.scale

    def backward_var(self, grad, index, **kwargs):
        x, _ = self.variables
        if index == 0:
            return grad * self.scale
        return grad * x.data * self.scale  # (MyGrad sums it over the broadcast rows)


# --- 5. a gradcheck Operation with an axis keyword -----------------------------------


@gradcheck.describe(kwargs={"axis": 0}, shapes=["n,m"], domain=(0.5, 2.0))
class BadNormalize(Operation):
    def __call__(self, x, axis=-1):
        self.variables = (x,)
        self.axis = axis
        self.total = x.data.sum(axis=axis, keepdims=True)
        self.y = x.data / self.total
        return self.y

    def backward_var(self, grad, index, **kwargs):
        # the bug: summed along the last axis, whatever self.axis is
        return (grad - (grad * self.y).sum(axis=-1, keepdims=True)) / self.total


@gradcheck.describe(kwargs={"axis": 0}, shapes=["n,m"], domain=(0.5, 2.0))
class GoodNormalize(Operation):
    def __call__(self, x, axis=-1):
        self.variables = (x,)
        self.axis = axis
        self.total = x.data.sum(axis=axis, keepdims=True)
        self.y = x.data / self.total
        return self.y

    def backward_var(self, grad, index, **kwargs):
        return (grad - (grad * self.y).sum(axis=self.axis, keepdims=True)) / self.total


# --- 6. per-input domains and an integer input ---------------------------------------


class _PowLogBad(Operation):
    def __call__(self, x, y, n):
        self.variables = (x, y, n)
        return n.data * np.log(x.data) + y.data**2

    def backward_var(self, grad, index, **kwargs):
        x, y, _ = self.variables
        if index == 0:
            return grad / x.data  # the bug: n dropped (right only where n is 1)
        return grad * 2 * y.data


class _PowLog(Operation):
    def __call__(self, x, y, n):
        self.variables = (x, y, n)
        return n.data * np.log(x.data) + y.data**2

    def backward_var(self, grad, index, **kwargs):
        x, y, n = self.variables
        if index == 0:
            return grad * n.data / x.data
        return grad * 2 * y.data


@gradcheck.describe(domain=[(0.1, 5.0), None, None], integers={2: (1, 4)}, broadcast=False)
def bad_pow_log(x, y, n):
    return execute_op(_PowLogBad, x, y, n)


@gradcheck.describe(domain=[(0.1, 5.0), None, None], integers={2: (1, 4)}, broadcast=False)
def good_pow_log(x, y, n):
    return execute_op(_PowLog, x, y, n)


# --- 7. order 2 in JAX: the first derivative right, the second wrong -----------------


@jax.custom_jvp
def _sigmoid_bad(x):
    return jax.nn.sigmoid(x)


@_sigmoid_bad.defjvp
def _sigmoid_bad_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    s = jax.nn.sigmoid(x)
    return s, s * t  # the bug: s(1 - s) is the derivative of a sigmoid


@jax.custom_vjp
def bad_softplus2(x):
    return jnp.logaddexp(0.0, x)


bad_softplus2.defvjp(lambda x: (jnp.logaddexp(0.0, x), x), lambda x, g: (g * _sigmoid_bad(x),))


@jax.custom_vjp
def good_softplus2(x):
    return jnp.logaddexp(0.0, x)


good_softplus2.defvjp(lambda x: (jnp.logaddexp(0.0, x), x), lambda x, g: (g * jax.nn.sigmoid(x),))


# --- 8. a complex op -----------------------------------------------------------------


class BadComplexSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        return grad * 2 * z  # the bug: torch wants grad · conj(dz²/dz)


class GoodComplexSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        return grad * (2 * z).conj()
