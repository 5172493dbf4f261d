"""JAX targets beyond first-order reverse mode (issue 20): complex inputs in JAX's
convention (its vjp conjugates neither side), forward mode from jax.jvp."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from gradcheck.checking.checker import check  # noqa: E402
from gradcheck.errors import CheckUsageError  # noqa: E402

Z = np.array([0.3 + 0.2j, -1.1 + 0.7j, 0.5 - 1.3j])


def square(z):
    return jnp.multiply(z, z)


def abs_squared_times(z):
    return jnp.real(z * jnp.conj(z)) * z


@jax.custom_vjp
def square_torch_convention(z):
    return z * z


# torch's formula, g · conj(2z), is wrong in JAX's convention (g · 2z)
square_torch_convention.defvjp(lambda z: (z * z, z), lambda z, g: (g * 2 * jnp.conj(z),))


@jax.custom_jvp
def sin_wrong_jvp(x):
    return jnp.sin(x)


sin_wrong_jvp.defjvp(lambda p, t: (jnp.sin(p[0]), -jnp.cos(p[0]) * t[0]))


@pytest.mark.parametrize("f", [square, abs_squared_times, lambda z: jnp.abs(z) ** 2])
def test_right_complex_jax_functions_pass(f):
    assert check(f, Z).verdict == "passed"


def test_a_vjp_in_the_wrong_complex_convention_is_a_mismatch():
    assert check(square_torch_convention, Z).failure.kind == "mismatch"


def test_forward_mode_of_a_jax_function():
    x = np.array([0.3, 1.2, -0.7])
    assert check(jnp.sin, x, modes=("rev", "fwd")).verdict == "passed"
    result = check(sin_wrong_jvp, x, modes=("fwd",))
    assert result.failure.kind == "mismatch"
    assert result.failure.message.startswith("forward mode (jvp)")


def test_a_device_is_torchs_only():
    with pytest.raises(CheckUsageError, match="on cuda is torch's only"):
        check(jnp.sin, np.array([0.3]), device="cuda")
