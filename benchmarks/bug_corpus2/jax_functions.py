"""Held-out: gradient bugs of the kinds reported against JAX ``custom_vjp`` and
``custom_jvp`` functions, each beside its fix (``bug_<name>`` and ``fix_<name>``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

import gradcheck

jax.config.update("jax_enable_x64", True)


# 1. A custom_jvp of x * exp(y) whose rule ignores the tangent of y.
def _xexpy(both: bool):
    @jax.custom_jvp
    def xexpy(x, y):
        return x * jnp.exp(y)

    @xexpy.defjvp
    def _jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = x * jnp.exp(y)
        tan = tx * jnp.exp(y)
        if both:
            tan = tan + out * ty
        return out, tan

    return gradcheck.describe(broadcast=False)(xexpy)


bug_jvp_missing_tangent = _xexpy(both=False)
fix_jvp_missing_tangent = _xexpy(both=True)


# 2. A custom_vjp of tanh(2x) whose fwd saves the input where bwd expects the output.
def _tanh2(saves_output: bool):
    @jax.custom_vjp
    def tanh2(x):
        return jnp.tanh(2 * x)

    def fwd(x):
        y = jnp.tanh(2 * x)
        return y, (y if saves_output else x)

    def bwd(y, g):
        return (2 * g * (1 - y * y),)

    tanh2.defvjp(fwd, bwd)
    return tanh2


bug_residual_is_input = _tanh2(saves_output=False)
fix_residual_is_input = _tanh2(saves_output=True)


# 3. The tanh approximation of GELU whose jvp forgets the factor 3 of d(x^3)/dx.
def _gelu(three: float):
    c = (2 / jnp.pi) ** 0.5

    @jax.custom_jvp
    def gelu(x):
        return 0.5 * x * (1 + jnp.tanh(c * (x + 0.044715 * x**3)))

    @gelu.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        th = jnp.tanh(c * (x + 0.044715 * x**3))
        d = 0.5 * (1 + th) + 0.5 * x * (1 - th**2) * c * (1 + three * 0.044715 * x**2)
        return gelu(x), d * t

    return gelu


bug_gelu_tanh_cubic = _gelu(1.0)
fix_gelu_tanh_cubic = _gelu(3.0)


# 4. softsign x / (1 + |x|) whose derivative forgets the absolute value: right for
#    x >= 0 only.
def _softsign(uses_abs: bool):
    @jax.custom_jvp
    def softsign(x):
        return x / (1 + jnp.abs(x))

    @softsign.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        a = jnp.abs(x) if uses_abs else x
        return softsign(x), t / (1 + a) ** 2

    return gradcheck.describe(avoid=[-1.0])(softsign)


bug_softsign_abs = _softsign(uses_abs=False)
fix_softsign_abs = _softsign(uses_abs=True)


# 5. A Huber loss with a learnable threshold delta whose bwd returns zero for delta.
def _huber(delta_grad: bool):
    @jax.custom_vjp
    def huber(r, delta):
        a = jnp.abs(r)
        return jnp.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))

    def fwd(r, delta):
        return huber(r, delta), (r, delta)

    def bwd(res, g):
        r, delta = res
        inside = jnp.abs(r) <= delta
        gr = g * jnp.where(inside, r, delta * jnp.sign(r))
        gd = g * jnp.where(inside, 0.0, jnp.abs(r) - delta)
        return gr, (gd if delta_grad else jnp.zeros_like(delta))

    huber.defvjp(fwd, bwd)
    return gradcheck.describe(domain=[(-4.0, 4.0), (0.2, 2.0)], broadcast=False)(huber)


bug_huber_delta = _huber(delta_grad=False)
fix_huber_delta = _huber(delta_grad=True)


# 6. A normalisation x / ||x|| (last axis) whose bwd keeps g / ||x|| and drops the
#    projection term.
def _normalize(projects: bool):
    @jax.custom_vjp
    def normalize(x):
        return x / jnp.linalg.norm(x, axis=-1, keepdims=True)

    def fwd(x):
        n = jnp.linalg.norm(x, axis=-1, keepdims=True)
        return x / n, (x / n, n)

    def bwd(res, g):
        u, n = res
        out = g / n
        if projects:
            out = out - u * (g * u).sum(-1, keepdims=True) / n
        return (out,)

    normalize.defvjp(fwd, bwd)
    return gradcheck.describe(min_dims=1)(normalize)


bug_normalize_projection = _normalize(projects=False)
fix_normalize_projection = _normalize(projects=True)


# 7. A cosine similarity of two vectors (last axis) whose bwd for y reuses x's formula
#    with the roles not swapped.
def _cosine(swapped_ok: bool):
    @jax.custom_vjp
    def cosine(x, y):
        return (x * y).sum(-1) / (jnp.linalg.norm(x, axis=-1) * jnp.linalg.norm(y, axis=-1))

    def fwd(x, y):
        return cosine(x, y), (x, y)

    def bwd(res, g):
        x, y = res
        nx = jnp.linalg.norm(x, axis=-1, keepdims=True)
        ny = jnp.linalg.norm(y, axis=-1, keepdims=True)
        c = (x * y).sum(-1, keepdims=True) / (nx * ny)
        gx = g[..., None] * (y / (nx * ny) - c * x / nx**2)
        if swapped_ok:
            gy = g[..., None] * (x / (nx * ny) - c * y / ny**2)
        else:
            gy = g[..., None] * (x / (nx * ny) - c * x / nx**2)
        return gx, gy

    cosine.defvjp(fwd, bwd)
    return gradcheck.describe(shapes=["n,4", "n,4"])(cosine)


bug_cosine_roles = _cosine(swapped_ok=False)
fix_cosine_roles = _cosine(swapped_ok=True)
