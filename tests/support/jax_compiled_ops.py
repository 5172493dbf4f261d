"""JAX functions that compute something else under jax.jit than eagerly (a fallback
for values jit cannot make concrete, written wrong), and their twins."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def _under_jit(x):
    """Whether ``x`` is abstract (jit traces it); eagerly, grad and vjp keep it
    concrete."""
    try:
        return not bool(jnp.all(x == x))
    except jax.errors.ConcretizationTypeError:
        return True


def softplus_jit_fallback_wrong(x):
    if _under_jit(x):
        # the "stable" form for the compiled graph, off by a factor
        return jnp.logaddexp(x, 0.0) * 1.001
    return jnp.log1p(jnp.exp(x))


def softplus_jit_fallback(x):
    if _under_jit(x):
        return jnp.logaddexp(x, 0.0)
    return jnp.log1p(jnp.exp(x))
