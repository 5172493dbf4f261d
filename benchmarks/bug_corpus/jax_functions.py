"""Gradient bugs of the kind reported against public projects' JAX ``custom_vjp`` and
``custom_jvp`` functions, each beside its fix (``bug_<name>`` and ``fix_<name>``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

import gradcheck

jax.config.update("jax_enable_x64", True)


# 1. sqrt made safe at 0 with a where on the tangent: the where's transpose multiplies
#    a zero cotangent by inf/nan for x <= 0 (JAX's FAQ on where and NaN gradients).
def _safe_sqrt(where_on_tangent: bool):
    @jax.custom_jvp
    def safe_sqrt(x):
        return jnp.sqrt(jnp.maximum(x, 0.0))

    @safe_sqrt.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y = jnp.sqrt(jnp.maximum(x, 0.0))
        if where_on_tangent:
            return y, jnp.where(x > 0, t * 0.5 / jnp.sqrt(x), 0.0)
        safe = jnp.where(x > 0, x, 1.0)
        return y, t * jnp.where(x > 0, 0.5 / jnp.sqrt(safe), 0.0)

    return gradcheck.describe(avoid=[0.0])(safe_sqrt)


bug_safe_sqrt = _safe_sqrt(where_on_tangent=True)
fix_safe_sqrt = _safe_sqrt(where_on_tangent=False)


# 2. sinc with a where for x = 0 (and a series near it) whose derivative branch has
#    the wrong sign.
def _sinc(sign: float):
    @jax.custom_jvp
    def sinc(x):
        safe = jnp.where(x == 0, 1.0, x)
        return jnp.where(x == 0, 1.0, jnp.sin(safe) / safe)

    @sinc.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        small = jnp.abs(x) < 1e-4
        safe = jnp.where(small, 1.0, x)
        d = sign * (safe * jnp.cos(safe) - jnp.sin(safe)) / safe**2
        return sinc(x), t * jnp.where(small, -x / 3, d)

    return sinc


bug_sinc_branch = _sinc(-1.0)
fix_sinc_branch = _sinc(1.0)


# 3. Softmax over the last axis whose backward sums over the first.
def _softmax(axis: int):
    @jax.custom_vjp
    def softmax(x):
        return jax.nn.softmax(x, axis=-1)

    def fwd(x):
        y = jax.nn.softmax(x, axis=-1)
        return y, y

    def bwd(y, g):
        return (y * (g - (g * y).sum(axis=axis, keepdims=True)),)

    softmax.defvjp(fwd, bwd)
    return softmax


bug_softmax_axis = _softmax(0)
fix_softmax_axis = _softmax(-1)


# 4. A mean over the last axis whose backward forgets 1/n.
def _mean(scale: bool):
    @jax.custom_vjp
    def mean_last(x):
        return x.mean(-1)

    def fwd(x):
        return x.mean(-1), x.shape

    def bwd(shape, g):
        out = jnp.broadcast_to(g[..., None], shape)
        return (out / shape[-1] if scale else out,)

    mean_last.defvjp(fwd, bwd)
    return mean_last


bug_mean_missing_n = _mean(scale=False)
fix_mean_missing_n = _mean(scale=True)


# 5. logaddexp whose second input gets the first input's weight.
def _logaddexp(swapped: bool):
    @jax.custom_vjp
    def logaddexp(x, y):
        return jnp.logaddexp(x, y)

    def fwd(x, y):
        return jnp.logaddexp(x, y), (x, y)

    def bwd(res, g):
        x, y = res
        wx = jax.nn.sigmoid(x - y)
        wy = wx if swapped else jax.nn.sigmoid(y - x)
        return g * wx, g * wy

    logaddexp.defvjp(fwd, bwd)
    return gradcheck.describe(broadcast=False)(logaddexp)


bug_logaddexp_weights = _logaddexp(swapped=True)
fix_logaddexp_weights = _logaddexp(swapped=False)


# 6. A stable logsumexp whose backward uses the max-shifted sum without adding back the
#    shift: exp(x - m) / sum(exp(x - m)) is right, exp(x) / sum(exp(x - m)) is not.
def _logsumexp(shift_back: bool):
    @jax.custom_vjp
    def logsumexp(x):
        m = jax.lax.stop_gradient(x.max(-1, keepdims=True))
        return (m + jnp.log(jnp.exp(x - m).sum(-1, keepdims=True)))[..., 0]

    def fwd(x):
        return logsumexp(x), x

    def bwd(x, g):
        m = x.max(-1, keepdims=True)
        e = jnp.exp(x - m) if shift_back else jnp.exp(x)
        return (g[..., None] * e / jnp.exp(x - m).sum(-1, keepdims=True),)

    logsumexp.defvjp(fwd, bwd)
    return logsumexp


bug_logsumexp_shift = _logsumexp(shift_back=False)
fix_logsumexp_shift = _logsumexp(shift_back=True)


# 7. softplus with a jvp whose sigmoid has the wrong sign of its argument.
def _softplus(sign: float):
    @jax.custom_jvp
    def softplus(x):
        return jnp.logaddexp(x, 0.0)

    @softplus.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t * jax.nn.sigmoid(sign * x)

    return softplus


bug_softplus_jvp_sign = _softplus(-1.0)
fix_softplus_jvp_sign = _softplus(1.0)


# 8. A backward whose factor is stopped: the first derivative is right, the second is
#    not (a rule written for first order and used under a gradient penalty).
def _tanh(stopped: bool):
    @jax.custom_vjp
    def tanh(x):
        return jnp.tanh(x)

    def fwd(x):
        y = jnp.tanh(x)
        return y, y

    def bwd(y, g):
        y = jax.lax.stop_gradient(y) if stopped else y
        return (g * (1 - y * y),)

    tanh.defvjp(fwd, bwd)
    return gradcheck.describe(order=2)(tanh)


bug_tanh_second_order = _tanh(stopped=True)
fix_tanh_second_order = _tanh(stopped=False)


# 9. A layer norm over the last axis whose backward leaves out the term of the mean.
def _layer_norm(mean_term: bool):
    eps = 1e-5

    @jax.custom_vjp
    def layer_norm(x):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / jnp.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)

    def fwd(x):
        mu = x.mean(-1, keepdims=True)
        r = 1 / jnp.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)
        xhat = (x - mu) * r
        return xhat, (xhat, r)

    def bwd(res, g):
        xhat, r = res
        out = g - (g * xhat).mean(-1, keepdims=True) * xhat
        if mean_term:
            out = out - g.mean(-1, keepdims=True)
        return (r * out,)

    layer_norm.defvjp(fwd, bwd)
    return layer_norm


bug_layer_norm_mean = _layer_norm(mean_term=False)
fix_layer_norm_mean = _layer_norm(mean_term=True)
