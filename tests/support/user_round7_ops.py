"""Ops a new user wrote following only README.md and docs/ (the seventh user round of
issue 34): each bug beside its correct twin, ops the earlier rounds (`user_ops.py`,
`holdout_ops.py`, `user_round4_ops.py` to `user_round6_ops.py`) did not write.
`benchmarks/user_round7.py` runs every documented path on seeds 0, 1, 2.

The pairs, and the settings each needs beyond its ``describe`` (given on every path as
flags, config keys, ``check``'s and the marker's keywords):

* ``BadLayerNorm``/``GoodLayerNorm``: a gradcheck ``Operation`` of three inputs (x,
  gamma, beta; ``describe(shapes=["n,k", "k", "k"])``); the bug's x gradient forgets
  the term through the variance.
* ``bad_huber``/``good_huber``: a described function (``describe(kwargs={"delta":
  0.5})``) of a prediction and a target, the mean Huber loss; the bug leaves the
  target's gradient unreduced where the target was broadcast.
* ``BadCumprod``/``GoodCumprod``: a ``torch.autograd.Function`` with an int ``dim``
  (``describe(kwargs={"dim": 0})``); the bug's backward divides by x: wrong (not
  finite) only where an element is exactly 0.
* ``BadGRU``/``GoodGRU``: ``nn.Module`` classes (no constructor argument), a GRU cell
  whose gates use a Function of the user's, a piecewise "stable" sigmoid; the bug's
  backward has a typo in the branch for negative inputs
  (``describe(shapes=["n,3", "n,4"])``).
* ``bad_cosine``/``good_cosine``: a JAX ``custom_vjp`` cosine similarity along an
  ``axis`` (``nondiff_argnums``; a described wrapper, ``kwargs={"axis": 0}``); the
  bug's backward takes its sums along the last axis whatever ``axis`` says.
* ``BadMaskedMean``/``GoodMaskedMean``: a MyGrad ``Operation`` of x and a boolean mask
  (``describe(booleans=[1])``); the bug's backward builds its gradient as float32.
* ``BadConv2d``/``GoodConv2d``: a gradcheck ``Operation``, a valid 2-d correlation via
  ``einsum`` (``describe(shapes=["h,w", "2,3"])``); the bug's x gradient correlates
  with the kernel unflipped.
* ``bad_log_cosh``/``good_log_cosh``: JAX ``custom_jvp`` functions,
  ``describe(order=2)``; the bug's jvp rule stops the gradient through x: right at
  order 1, its second derivative 0.
* ``BadMish``/``GoodMish``: a ``torch.autograd.Function``; the bug multiplies the
  upstream gradient in place (``grad.mul_``) and returns it.
* ``BadAbs2``/``GoodAbs2``: a ``torch.autograd.Function`` of a complex input, |z|²
  (``--dtype complex128``); the bug returns ``2·grad·conj(z)`` for torch's ``2·grad·z``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import torch
import torch.nn.functional as F
from mygrad.operation_base import Operation as MyGradOperation
from numpy.lib.stride_tricks import sliding_window_view
from torch import nn

import gradcheck
from gradcheck import Operation, execute_op

# --- 1. layer norm, a gradcheck Operation of three inputs -------------------------------


class _LayerNormBase(Operation):
    eps = 1e-5

    def __call__(self, x, gamma, beta):
        self.variables = (x, gamma, beta)
        mu = x.data.mean(axis=-1, keepdims=True)
        var = ((x.data - mu) ** 2).mean(axis=-1, keepdims=True)
        self.rstd = 1.0 / np.sqrt(var + self.eps)
        self.xhat = (x.data - mu) * self.rstd
        return self.xhat * gamma.data + beta.data

    def backward_var(self, grad, index, **kwargs):
        k = self.xhat.shape[-1]
        if index == 1:
            return (grad * self.xhat).reshape(-1, k).sum(axis=0)
        if index == 2:
            return np.asarray(grad).reshape(-1, k).sum(axis=0)
        gxhat = grad * self.variables[1].data
        return self._x_grad(gxhat)


@gradcheck.describe(shapes=["n,k", "k", "k"])
class BadLayerNorm(_LayerNormBase):
    def _x_grad(self, gxhat):
        # the bug: the term through the variance, - xhat * mean(gxhat * xhat), left out
        return self.rstd * (gxhat - gxhat.mean(axis=-1, keepdims=True))


@gradcheck.describe(shapes=["n,k", "k", "k"])
class GoodLayerNorm(_LayerNormBase):
    def _x_grad(self, gxhat):
        m1 = gxhat.mean(axis=-1, keepdims=True)
        m2 = (gxhat * self.xhat).mean(axis=-1, keepdims=True)
        return self.rstd * (gxhat - m1 - self.xhat * m2)


# --- 2. Huber loss, a described function; the target may be broadcast ------------------


def _unbroadcast(g, shape):
    g = np.asarray(g)
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(axis=i, keepdims=True)
    return g


class _HuberBase(Operation):
    def __call__(self, pred, target, delta):
        self.variables = (pred, target)
        r = pred.data - target.data
        self.d = np.clip(r, -delta, delta) / r.size
        quad = 0.5 * r * r
        lin = delta * (np.abs(r) - 0.5 * delta)
        return np.mean(np.where(np.abs(r) <= delta, quad, lin))

    def backward_var(self, grad, index, **kwargs):
        g = grad * self.d
        if index == 0:
            return _unbroadcast(g, self.variables[0].shape)
        return self._target_grad(g)


class _HuberBad(_HuberBase):
    def _target_grad(self, g):
        return -g  # the bug: not summed back to the target's shape


class _Huber(_HuberBase):
    def _target_grad(self, g):
        return _unbroadcast(-g, self.variables[1].shape)


@gradcheck.describe(kwargs={"delta": 0.5})
def bad_huber(pred, target, delta=1.0):
    return execute_op(_HuberBad, pred, target, op_kwargs={"delta": delta})


@gradcheck.describe(kwargs={"delta": 0.5})
def good_huber(pred, target, delta=1.0):
    return execute_op(_Huber, pred, target, op_kwargs={"delta": delta})


# --- 3. cumprod, a torch Function with an int dim ---------------------------------------


@gradcheck.describe(kwargs={"dim": 0})
class BadCumprod(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim):
        y = torch.cumprod(x, dim=dim)
        ctx.save_for_backward(x, y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        d = ctx.dim
        # the bug: the textbook shortcut, divided by x (inf or nan where x has a 0)
        return (grad * y).flip(d).cumsum(d).flip(d) / x, None


@gradcheck.describe(kwargs={"dim": 0})
class GoodCumprod(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim):
        ctx.save_for_backward(x)
        ctx.dim = dim
        return torch.cumprod(x, dim=dim)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if x.dim() == 0:
            return grad, None
        xt, gt = x.movedim(ctx.dim, -1), grad.movedim(ctx.dim, -1)
        n = xt.shape[-1]
        eye = torch.eye(n, dtype=torch.bool)
        rows = xt.unsqueeze(-2).expand(*xt.shape[:-1], n, n)
        # P[..., i, j] = prod of x[k] for k <= j, k != i: no division
        prods = torch.cumprod(torch.where(eye, torch.ones_like(rows), rows), dim=-1)
        upper = torch.triu(torch.ones(n, n, dtype=x.dtype))
        gx = (prods * upper * gt.unsqueeze(-2)).sum(-1)
        return gx.movedim(-1, ctx.dim), None


# --- 4. a GRU cell, nn.Module classes with a Function of the user's ---------------------


class _StableSigmoidBad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        e = torch.exp(-x.abs())
        # the bug: the branch for x < 0 should be e / (1 + e)
        s = torch.where(x >= 0, 1 / (1 + e), e / (1 - e + 2 * e * e))
        return grad * s * (1 - s)


class _StableSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        e = torch.exp(-x.abs())
        s = torch.where(x >= 0, 1 / (1 + e), e / (1 + e))
        return grad * s * (1 - s)


class _GRUCell(nn.Module):
    sigmoid: type = _StableSigmoid

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.x2h = nn.Linear(3, 12, dtype=torch.float64)
        self.h2h = nn.Linear(4, 12, dtype=torch.float64)

    def forward(self, x, h):
        xr, xz, xn = self.x2h(x).chunk(3, dim=-1)
        hr, hz, hn = self.h2h(h).chunk(3, dim=-1)
        r = self.sigmoid.apply(xr + hr)
        z = self.sigmoid.apply(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1 - z) * n + z * h


@gradcheck.describe(shapes=["n,3", "n,4"])
class BadGRU(_GRUCell):
    sigmoid = _StableSigmoidBad


@gradcheck.describe(shapes=["n,3", "n,4"])
class GoodGRU(_GRUCell):
    sigmoid = _StableSigmoid


# --- 5. JAX cosine similarity along an axis (custom_vjp, nondiff_argnums) ---------------

_EPS = 1e-8


def _jax_unbroadcast(g, shape):
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(axis=i, keepdims=True)
    return g


def _cosine_value(x, y, axis):
    # (broadcast first, as torch's cosine_similarity does: the first version summed
    # each input along its own axis, and its backward, which broadcasts, failed
    # gradcheck at x of (2,) and y of (1, 2), rightly)
    x, y = jnp.broadcast_arrays(x, y)
    p = jnp.sum(x * x, axis=axis) + _EPS
    q = jnp.sum(y * y, axis=axis) + _EPS
    return jnp.sum(x * y, axis=axis) / jnp.sqrt(p * q)


def _cosine_fwd(x, y, axis):
    return _cosine_value(x, y, axis), (x, y)


def _cosine_bwd_with(x, y, g, axis):
    x, y = jnp.broadcast_arrays(x, y)
    p = jnp.sum(x * x, axis=axis, keepdims=True) + _EPS
    q = jnp.sum(y * y, axis=axis, keepdims=True) + _EPS
    a = jnp.sum(x * y, axis=axis, keepdims=True)
    d = jnp.sqrt(p * q)
    c = a / d
    return g * (y / d - c * x / p), g * (x / d - c * y / q)


def _bad_cosine_bwd(axis, res, g):
    x, y = res
    g = jnp.expand_dims(g, axis)
    gx, gy = _cosine_bwd_with(x, y, g, -1)  # the bug: the sums along -1, not axis
    return _jax_unbroadcast(gx, x.shape), _jax_unbroadcast(gy, y.shape)


def _good_cosine_bwd(axis, res, g):
    x, y = res
    g = jnp.expand_dims(g, axis)
    gx, gy = _cosine_bwd_with(x, y, g, axis)
    return _jax_unbroadcast(gx, x.shape), _jax_unbroadcast(gy, y.shape)


_bad_cosine = jax.custom_vjp(_cosine_value, nondiff_argnums=(2,))
_bad_cosine.defvjp(_cosine_fwd, _bad_cosine_bwd)
_good_cosine = jax.custom_vjp(_cosine_value, nondiff_argnums=(2,))
_good_cosine.defvjp(_cosine_fwd, _good_cosine_bwd)


@gradcheck.describe(kwargs={"axis": 0})
def bad_cosine(x, y, axis=-1):
    return _bad_cosine(x, y, axis)


@gradcheck.describe(kwargs={"axis": 0})
def good_cosine(x, y, axis=-1):
    return _good_cosine(x, y, axis)


# --- 6. a MyGrad masked mean, its gradient's dtype --------------------------------------


class _MaskedMeanBase(MyGradOperation):
    def __call__(self, x, mask):
        self.variables = (x,)
        self.mask = np.broadcast_to(np.asarray(getattr(mask, "data", mask), dtype=bool), x.shape)
        self.count = max(int(self.mask.sum()), 1)
        return np.sum(np.where(self.mask, x.data, 0.0)) / self.count


@gradcheck.describe(booleans=[1])
class BadMaskedMean(_MaskedMeanBase):
    def backward_var(self, grad, index, **kwargs):
        out = np.zeros(self.mask.shape, dtype=np.float32)  # the bug: float32
        out[self.mask] = grad / self.count
        return out


@gradcheck.describe(booleans=[1])
class GoodMaskedMean(_MaskedMeanBase):
    def backward_var(self, grad, index, **kwargs):
        out = np.zeros(self.mask.shape, dtype=self.variables[0].data.dtype)
        out[self.mask] = grad / self.count
        return out


# --- 7. a 2-d valid correlation via einsum ----------------------------------------------


class _Conv2dBase(Operation):
    def __call__(self, x, k):
        self.variables = (x, k)
        return np.einsum("ijab,ab->ij", sliding_window_view(x.data, k.shape), k.data)

    def backward_var(self, grad, index, **kwargs):
        x, k = self.variables
        if index == 1:
            return np.einsum("ijab,ij->ab", sliding_window_view(x.data, k.shape), grad)
        a, b = k.shape
        padded = np.pad(grad, ((a - 1, a - 1), (b - 1, b - 1)))
        windows = sliding_window_view(padded, k.shape)
        return np.einsum("ijab,ab->ij", windows, self._kernel(k.data))


@gradcheck.describe(shapes=["h,w", "2,3"])
class BadConv2d(_Conv2dBase):
    def _kernel(self, k):
        return k  # the bug: the x gradient needs the kernel flipped


@gradcheck.describe(shapes=["h,w", "2,3"])
class GoodConv2d(_Conv2dBase):
    def _kernel(self, k):
        return k[::-1, ::-1]


# --- 8. JAX custom_jvp, the second derivative ------------------------------------------


def _log_cosh_value(x):
    return jnp.logaddexp(x, -x) - jnp.log(2.0)


bad_log_cosh = jax.custom_jvp(_log_cosh_value)


@bad_log_cosh.defjvp
def _bad_log_cosh_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    # the bug: "no need to differentiate the rule": its second derivative is 0
    return bad_log_cosh(x), t * jnp.tanh(jax.lax.stop_gradient(x))


good_log_cosh = jax.custom_jvp(_log_cosh_value)


@good_log_cosh.defjvp
def _good_log_cosh_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return good_log_cosh(x), t * jnp.tanh(x)


gradcheck.describe(order=2)(bad_log_cosh)
gradcheck.describe(order=2)(good_log_cosh)


# --- 9. mish, the upstream gradient changed in place ------------------------------------


def _mish_slope(x):
    t = torch.tanh(F.softplus(x))
    return t + x * torch.sigmoid(x) * (1 - t * t)


class BadMish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.tanh(F.softplus(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad.mul_(_mish_slope(x))  # the bug: in place, on torch's upstream gradient


class GoodMish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.tanh(F.softplus(x))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * _mish_slope(x)


# --- 10. |z|² of a complex input ----------------------------------------------------------


class BadAbs2(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return (z * z.conj()).real

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        return 2 * grad * z.conj()  # the bug: torch's gradient of a real loss is 2·grad·z


class GoodAbs2(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return (z * z.conj()).real

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        return 2 * grad * z
