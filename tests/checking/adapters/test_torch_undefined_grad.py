"""Undefined upstream gradients (issue 38 item 2): a torch op with several outputs is
also backpropagated with no gradient (None) for some of its outputs, as torch does
for outputs a loss does not use."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

import gradcheck  # noqa: E402
from gradcheck.cli import main  # noqa: E402
from tests.frontend.test_schemas import errors  # noqa: E402
from tests.support import torch_undefined_ops as ops  # noqa: E402

X = np.array([0.3, 1.2, -0.5, 2.0])


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "wrong, said",
    [
        # native_group_norm's: nothing at all when only mean or rstd get a gradient
        (ops.NormalizeNothingWithoutY, "received no gradient (None)"),
        (ops.NormalizeAssumesTensors, "the backward raised AttributeError"),
        (ops.NormalizeOnlyY, "received another gradient than with zeros there"),
    ],
)
def test_a_backward_that_mishandles_none_fails(wrong, said, seed):
    result = gradcheck.verify(wrong, seed=seed, max_examples=10)
    assert result.verdict == "failed"
    failure = result.failure.failure
    assert failure.kind == "undefined_grad"
    assert "with no upstream gradient (undefined: None in torch) for output" in failure.message
    assert said in failure.message


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("right", [ops.Normalize, ops.NormalizeMaterialized, ops.normalize])
def test_the_twins_pass(right, seed):
    # handling None, torch's default materialized zeros, and torch's own backward
    assert gradcheck.verify(right, seed=seed, max_examples=10).verdict == "passed"


def test_zeros_pass_where_none_does_not():
    # gradcheck's own upstream gradients are zeros on the outputs not asked about:
    # the bug shows with None only
    result = gradcheck.check(ops.NormalizeNothingWithoutY, X)
    assert result.failure.kind == "undefined_grad"
    assert result.failure.input == 0
    assert "output 0 of 3" in result.failure.message


def test_each_output_undefined_in_turn_and_each_alone():
    seen = []

    class Records(ops._Normalize):
        @staticmethod
        def backward(ctx, gy, gmean, grstd):
            seen.append(tuple(g is None for g in (gy, gmean, grstd)))
            return ops.Normalize.backward(ctx, gy, gmean, grstd)

    assert gradcheck.check(Records, X).verdict == "passed"
    undefined = {s for s in seen if any(s)}
    assert undefined == {
        (True, False, False),
        (False, True, False),
        (False, False, True),
        (False, True, True),
        (True, False, True),
        (True, True, False),
    }


def test_the_command_line_and_the_schema():
    ops_module = "tests.support.torch_undefined_ops"
    result = CliRunner().invoke(
        main,
        [
            "verify",
            f"{ops_module}:NormalizeNothingWithoutY",
            f"{ops_module}:Normalize",
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
    assert wrong["failure"]["kind"] == "undefined_grad"
    assert twin["verdict"] == "passed"
