"""Held-out, second part: a gradient bug of a kind reported against JAX ``custom_vjp``
functions with ``nondiff_argnums``, beside its fix (``bug_<name>`` and ``fix_<name>``)."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

import gradcheck

jax.config.update("jax_enable_x64", True)


# 1. A soft clip t * tanh(x / t) with the threshold t a non-differentiable argument
#    (``nondiff_argnums``, handed to bwd first): the bwd keeps the inner 1 / t of the
#    chain rule and forgets that the outer factor t cancels it.
def _soft_clip(cancels: bool):
    @partial(jax.custom_vjp, nondiff_argnums=(0,))
    def soft_clip(t, x):
        return t * jnp.tanh(x / t)

    def fwd(t, x):
        y = jnp.tanh(x / t)
        return t * y, y

    def bwd(t, y, g):
        d = 1 - y * y
        return (g * d if cancels else g * d / t,)

    soft_clip.defvjp(fwd, bwd)
    return gradcheck.describe(kwargs={"t": 3.0})(soft_clip)


bug_nondiff_soft_clip = _soft_clip(cancels=False)
fix_nondiff_soft_clip = _soft_clip(cancels=True)
