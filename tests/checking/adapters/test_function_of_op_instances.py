"""A function whose code names no framework attribute but calls an op instance made in
its module (a ``jax.custom_vjp``, whose ``__module__`` is the user's, an ``nn.Module``
instance) is that framework's function: it was run on gradcheck's own tensors and
failed with ``forward_error`` ("Tensor ... is not a valid JAX type"), a correct op
(issue 34, the sixth user round: a JAX function with a keyword-only parameter)."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

import gradcheck  # noqa: E402
from gradcheck.checking.adapters import framework_of  # noqa: E402


def _value(x, beta):
    return jnp.tanh(beta * x) / beta


def _bwd(beta, x, g):
    t = jnp.tanh(beta * x)
    return (g * (1 - t * t),)


_clip = jax.custom_vjp(_value, nondiff_argnums=(1,))
_clip.defvjp(lambda x, beta: (_value(x, beta), x), _bwd)


def soft_clip(x, *, beta=1.0):
    return _clip(x, beta)


def test_a_function_calling_a_custom_vjp_of_its_module_is_a_jax_function():
    assert framework_of(soft_clip) == "jax"
    result = gradcheck.check(soft_clip, np.array([0.3, -0.8]), beta=2.0)
    assert result.verdict == "passed", result


def test_a_function_calling_an_nn_module_instance_is_a_torch_function():
    torch = pytest.importorskip("torch")
    layer = torch.nn.Linear(3, 2, dtype=torch.float64)

    def head(x):
        return layer(x)

    assert framework_of(head) == "torch"


def test_a_plain_function_stays_gradcheck_s():
    assert framework_of(lambda x: x * x) is None
