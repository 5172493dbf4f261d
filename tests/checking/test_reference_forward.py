"""A reference forward (issue 38 item 7): the op's forward agrees with a NumPy
function of the same inputs, on every path that asks for a check."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import gradcheck
from gradcheck.cli import main
from gradcheck.errors import CheckUsageError, InvalidDescription
from tests.frontend.test_schemas import errors
from tests.support import reference_ops as ops

OPS = "tests.support.reference_ops"
SIGMOID = {"domain": (-5.0, 5.0), "max_examples": 10}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_wrong_forward_with_a_consistent_backward_is_caught(seed):
    # The gradient check alone passes it: the backward is right for what it computes.
    assert gradcheck.verify(ops.sigmoid_sign_flipped, seed=seed, **SIGMOID).verdict == "passed"
    wrong = gradcheck.verify(
        ops.sigmoid_sign_flipped, reference_forward=ops.sigmoid_reference, seed=seed, **SIGMOID
    )
    assert wrong.verdict == "failed"
    failure = wrong.failure.failure
    assert failure.kind == "forward_mismatch"
    assert "tests.support.reference_ops:sigmoid_reference" in failure.message
    assert "the op gives" in failure.message and "the reference" in failure.message
    twin = gradcheck.verify(
        ops.sigmoid, reference_forward=ops.sigmoid_reference, seed=seed, **SIGMOID
    )
    assert twin.verdict == "passed"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_keyword_parameters_reach_the_reference(seed):
    given = {"kwargs": {"ddof": 1}, "shapes": ["5"], "max_examples": 5, "seed": seed}
    reference = f"{OPS}:var_reference"
    wrong = gradcheck.verify(ops.var_ignores_ddof, reference_forward=reference, **given)
    assert wrong.failure.failure.kind == "forward_mismatch"
    assert gradcheck.verify(ops.var, reference_forward=reference, **given).verdict == "passed"


def test_several_outputs_name_the_output():
    x = np.array([0.5, -1.0, 2.0])
    wrong = gradcheck.check(ops.min_max_swapped, x, reference_forward=ops.min_max_reference)
    assert wrong.failure.kind == "forward_mismatch"
    assert "worst at output 0 ()" in wrong.failure.message
    assert (wrong.failure.mismatched, wrong.failure.size) == (2, 2)
    right = gradcheck.check(ops.min_max, x, reference_forward=ops.min_max_reference)
    assert right.verdict == "passed"


def test_a_float32_op_agrees_within_its_dtype():
    x = np.linspace(-4, 4, 9, dtype=np.float32)
    result = gradcheck.check(ops.sigmoid, x, reference_forward=ops.sigmoid_reference)
    assert result.verdict == "passed"
    assert result.settings["reference_forward"] == f"{OPS}:sigmoid_reference"


def test_the_report_shows_both_outputs_and_the_worst_elements():
    x = np.array([1.0, 2.0])
    result = gradcheck.check(ops.sigmoid_sign_flipped, x, reference_forward=ops.sigmoid_reference)
    message = result.failure.message
    assert "Mismatched elements: 2 / 2" in message
    assert "Index | Op" in message
    assert "\nthe op       : " in message and "\nthe reference: " in message


def test_a_shape_disagreement_is_a_forward_mismatch():
    result = gradcheck.check(ops.sigmoid, np.ones(3), reference_forward=lambda x: x[:2])
    assert result.failure.kind == "forward_mismatch"
    assert "not the shape" in result.failure.message


def test_bad_references_are_usage_errors():
    with pytest.raises(CheckUsageError, match="cannot be loaded"):
        gradcheck.check(ops.sigmoid, np.ones(2), reference_forward=f"{OPS}:nope")
    with pytest.raises(CheckUsageError, match="raised on the op's inputs"):
        gradcheck.check(ops.sigmoid, np.ones(2), reference_forward=lambda x, y: x)
    with pytest.raises(InvalidDescription, match="reference_forward must be"):
        gradcheck.describe(reference_forward="no colon")


def test_describe_declares_the_reference():
    described = gradcheck.describe(reference_forward=ops.sigmoid_reference, domain=(-5.0, 5.0))(
        lambda x: ops.sigmoid_sign_flipped(x)
    )
    result = gradcheck.verify(described, max_examples=5, seed=0)
    assert result.failure.failure.kind == "forward_mismatch"


def _verify(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(
        main, ["verify", *args, "--max-examples", "5", "--seed", "0", "--format", "json"]
    )
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else {}


def test_the_command_line_flag():
    flags = ["--reference-forward", f"{OPS}:sigmoid_reference", "--domain", "-5:5"]
    code, doc = _verify(f"{OPS}:sigmoid_sign_flipped", f"{OPS}:sigmoid", *flags)
    assert code == 1
    assert errors("verify", doc) == []
    wrong, twin = doc["targets"]
    assert wrong["failure"]["kind"] == "forward_mismatch"
    assert twin["verdict"] == "passed"


def test_the_command_line_refuses_a_malformed_reference():
    result = CliRunner().invoke(
        main, ["verify", f"{OPS}:sigmoid", "--reference-forward", "sigmoid_reference"]
    )
    assert result.exit_code == 2
    assert "reference_forward must be" in result.output
