"""A jax.custom_jvp/custom_vjp's ``nondiff_argnums`` are parameters of the op, not
tensor inputs: JAX gives them no gradient, so drawing one as an input compared a
gradient JAX never computes (a correct op failed as ``mismatch (input beta)``)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402
from click.testing import CliRunner  # noqa: E402

import gradcheck  # noqa: E402
from gradcheck.checking.checker import check  # noqa: E402
from gradcheck.checking.signature import op_signature  # noqa: E402
from gradcheck.cli import main  # noqa: E402

SOURCE = """
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.custom_jvp, nondiff_argnums=(1,))
def softplus_beta(x, beta):
    return jnp.logaddexp(beta * x, 0.0) / beta


@softplus_beta.defjvp
def _jvp(beta, primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus_beta(x, beta), jax.nn.sigmoid(beta * x) * t
"""


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def scaled(c, x):
    return c * jnp.sin(x)


scaled.defvjp(lambda c, x: (scaled(c, x), x), lambda c, x, g: (c * jnp.cos(x) * g,))


def test_nondiff_argnums_are_parameters():
    sig = op_signature(scaled)
    assert sig.input_names == ("x",)
    assert sig.parameters == ("c",) and sig.required == ("c",)
    x = np.array([0.3, -1.2])
    assert check(scaled, x, c=2.0).passed
    with pytest.raises(gradcheck.errors.CheckUsageError, match="needs its parameter 'c'"):
        check(scaled, x)


def test_verify_asks_for_a_nondiff_argument_and_checks_the_op_with_it(tmp_path, monkeypatch):
    (tmp_path / "jaxnd_ops.py").write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    listed = runner.invoke(main, ["list", "jaxnd_ops"])
    assert listed.exit_code == 0, listed.output
    row = next(line for line in listed.output.splitlines() if "softplus_beta" in line)
    assert "1 (x)" in row and "beta" in row.split("1 (x)")[1]
    refused = runner.invoke(main, ["verify", "jaxnd_ops:softplus_beta", "--seed", "0"])
    assert refused.exit_code == 2, refused.output
    assert "needs its parameter 'beta'" in refused.output
    args = ["verify", "jaxnd_ops:softplus_beta", "--kwargs", '{"beta": 2.0}']
    ran = runner.invoke(main, [*args, "--seed", "0", "--max-examples", "10"])
    assert ran.exit_code == 0, ran.output
