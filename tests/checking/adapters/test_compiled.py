"""Compiled against eager (issue 38 item 6): ``compiled=`` / ``--compiled`` runs a
torch op under torch.compile, a JAX op under jax.jit, on the same example with the
same upstream gradient as the eager op; a disagreement is ``compiled_mismatch``,
naming its side."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import gradcheck
from gradcheck.cli import main
from gradcheck.errors import CheckUsageError, InvalidDescription
from tests.frontend.test_schemas import errors

SMALL = {"shapes": ["5"], "max_examples": 5, "domain": (-3.0, 3.0)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_torch_backward_that_differs_when_compiled(seed):
    pytest.importorskip("torch")
    from tests.support import torch_compiled_ops as ops

    # the eager check alone passes it
    assert gradcheck.verify(ops.SinBackwardOffWhenCompiled, seed=seed, **SMALL).verdict == (
        "passed"
    )
    wrong = gradcheck.verify(ops.SinBackwardOffWhenCompiled, compiled=True, seed=seed, **SMALL)
    failure = wrong.failure.failure
    assert failure.kind == "compiled_mismatch"
    assert failure.message.startswith("backward: input x's gradient from the compiled op")
    assert "torch.compile, backend aot_eager" in failure.message
    assert failure.input == 0
    assert gradcheck.verify(ops.Sin, compiled=True, seed=seed, **SMALL).verdict == "passed"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_torch_forward_that_differs_when_compiled(seed):
    pytest.importorskip("torch")
    from tests.support import torch_compiled_ops as ops

    wrong = gradcheck.verify(
        ops.tanh_approximated_when_compiled, compiled="eager", seed=seed, **SMALL
    )
    failure = wrong.failure.failure
    assert failure.kind == "compiled_mismatch"
    assert failure.message.startswith("forward: the output of the compiled op")
    assert "compiled gives" in failure.message and "Compiled" in failure.message
    assert gradcheck.verify(ops.tanh, compiled="eager", seed=seed, **SMALL).verdict == "passed"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_jax_jit_against_eager(seed):
    pytest.importorskip("jax")
    from tests.support import jax_compiled_ops as ops

    wrong = gradcheck.verify(ops.softplus_jit_fallback_wrong, compiled=True, seed=seed, **SMALL)
    failure = wrong.failure.failure
    assert failure.kind == "compiled_mismatch"
    assert "(jax.jit)" in failure.message and failure.message.startswith("forward:")
    twin = gradcheck.verify(ops.softplus_jit_fallback, compiled=True, seed=seed, **SMALL)
    assert twin.verdict == "passed"


def test_the_setting_is_recorded_and_validated():
    pytest.importorskip("torch")
    from tests.support import torch_compiled_ops as ops

    result = gradcheck.check(ops.Sin, np.linspace(-1, 1, 4), compiled=True)
    assert result.verdict == "passed"
    assert result.settings["compiled"] == "aot_eager"
    with pytest.raises(CheckUsageError, match="compiled must be"):
        gradcheck.check(ops.Sin, np.ones(2), compiled="tvm")
    with pytest.raises(InvalidDescription, match="compiled must be"):
        gradcheck.describe(compiled="fast")


def test_gradcheck_own_ops_have_no_compiler():
    import gradcheck as mg

    with pytest.raises(CheckUsageError, match=r"checking its compiled \(aot_eager\) needs a torch"):
        gradcheck.check(lambda x: mg.sin(x), np.ones(2), compiled=True)


def test_the_command_line_flag_alone_means_aot_eager():
    pytest.importorskip("torch")
    module = "tests.support.torch_compiled_ops"
    result = CliRunner().invoke(
        main,
        [
            "verify",
            f"{module}:SinBackwardOffWhenCompiled",
            f"{module}:Sin",
            "--compiled",
            "--shape",
            "5",
            "--max-examples",
            "5",
            "--seed",
            "0",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert errors("verify", document) == []
    wrong, twin = document["targets"]
    assert wrong["failure"]["kind"] == "compiled_mismatch"
    assert "backend aot_eager" in wrong["failure"]["message"]
    assert twin["verdict"] == "passed"
