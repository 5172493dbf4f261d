"""JAX targets at any order, in both modes, complex inputs too (issue 38 item 4): order
N compares the vjp (or jvp) of the order N - 1 backward with its finite differences,
after every lower order passed."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from click.testing import CliRunner  # noqa: E402

from gradcheck.checking.checker import check  # noqa: E402
from gradcheck.cli import main  # noqa: E402
from gradcheck.errors import CheckUsageError  # noqa: E402
from tests.support import jax_order_ops as ops  # noqa: E402

X = np.array([0.3, 1.2, -0.7])
Z = np.array([0.3 + 0.2j, -1.1 + 0.7j])


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("modes", ["rev", "fwd"])
def test_a_wrong_third_derivative_fails_at_order_3_only(seed, modes):
    assert check(ops.sin_third_wrong, X, order=2, modes=modes, seed=seed).verdict == "passed"
    failure = check(ops.sin_third_wrong, X, order=3, modes=modes, seed=seed).failure
    assert (failure.kind, failure.order, failure.ad_mode) == ("mismatch", 3, modes)
    assert failure.message.startswith("the gradient of the order 2 backward (order 3)")
    assert check(ops.sin_third_right, X, order=3, modes=modes, seed=seed).verdict == "passed"


def test_order_4_in_both_modes():
    assert check(jnp.tanh, X, order=4, modes="rev,fwd").verdict == "passed"
    assert check(ops.sin_third_wrong, X, order=4).failure.order == 3


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_complex_inputs_at_order_2(seed):
    failure = check(ops.complex_square_second_wrong, Z, order=2, seed=seed).failure
    assert (failure.kind, failure.order) == ("mismatch", 2)
    # (the part named by the input's name: z.real, z.imag)
    assert re.search(r"input \w+\.(real|imag)\b", failure.message)
    assert check(ops.complex_square_second_wrong, Z, seed=seed).verdict == "passed"
    assert check(ops.complex_square, Z, order=2, modes="rev,fwd", seed=seed).verdict == "passed"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_complex_inputs_in_forward_mode(seed):
    failure = check(ops.complex_square_conjugated_jvp, Z, modes="fwd", seed=seed).failure
    assert (failure.kind, failure.ad_mode) == ("mismatch", "fwd")
    assert check(ops.complex_square, Z, modes="fwd", seed=seed).verdict == "passed"


def test_beyond_the_highest_order_is_a_usage_error():
    with pytest.raises(CheckUsageError, match="order must be an integer from 1 to 4"):
        check(jnp.sin, X, order=5)
    result = CliRunner().invoke(main, ["verify", "jax.numpy:sin", "--order", "5"])
    assert result.exit_code == 2


def test_verify_order_3_on_the_command_line():
    def run(name: str) -> tuple[int, dict]:
        result = CliRunner().invoke(
            main,
            [
                "verify",
                f"tests.support.jax_order_ops:{name}",
                "--order",
                "3",
                "--max-examples",
                "3",
                "--seed",
                "0",
                "--format",
                "json",
            ],
        )
        return result.exit_code, json.loads(result.stdout)

    code, report = run("sin_third_wrong")
    assert code == 1
    assert report["targets"][0]["failure"]["order"] == 3
    assert run("sin_third_right")[0] == 0
