"""The flags of issue 20 on the command line, in describe() and in verify()."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

import gradcheck  # noqa: E402
from gradcheck.cli import main  # noqa: E402
from gradcheck.errors import InvalidDescription  # noqa: E402
from tests.frontend.test_schemas import errors  # noqa: E402
from tests.support import torch_beyond_ops as ops  # noqa: E402

OPS = "tests.support.torch_beyond_ops"


def verify(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(
        main, ["verify", *args, "--max-examples", "5", "--seed", "0", "--format", "json"]
    )
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else {}


@pytest.mark.parametrize(
    "target, flags, code, kind",
    [
        ("SavesIntermediate", ["--order", "2"], 1, "mismatch"),
        ("RecomputesIntermediate", ["--order", "2"], 0, None),
        ("ExpWrongJvpAboveOne", ["--forward-mode", "--domain", "1.5:3"], 1, "mismatch"),
        ("ExpJvp", ["--modes", "rev,fwd"], 0, None),
        ("ComplexSquareNoConj", ["--dtype", "complex128"], 1, "mismatch"),
        ("ComplexSquare", ["--dtype", "complex128"], 0, None),
        ("SoftplusInItsDtype", ["--dtype", "bfloat16"], 0, None),
        ("NudgesSaved", [], 1, "not_reentrant"),
        ("NudgesSaved", ["--nondet-tol", "1e-9"], 0, None),
        ("SquareScalesUpstream", ["--device", "cpu"], 1, "mutated_upstream"),
    ],
)
def test_flags(target, flags, code, kind):
    exit_code, doc = verify(f"{OPS}:{target}", *flags)
    assert exit_code == code, doc
    failure = doc["targets"][0]["failure"]
    assert (failure or {}).get("kind") == kind


@pytest.mark.parametrize("seed", ["0", "1", "2"])
def test_order_2_on_the_command_line_checks_order_1_first(seed):
    # the wrong op and its right twin in one run (one worker to start)
    targets = [f"{OPS}:CubeWrongBelowZero", f"{OPS}:Cube"]
    args = ["verify", *targets, "--order", "2", "--max-examples", "30", "--format", "json"]
    result = CliRunner().invoke(main, [*args, "--seed", seed])
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert errors("verify", document) == []
    wrong, twin = document["targets"]
    failure = wrong["failure"]
    assert (failure["order"], failure["ad_mode"]) == (1, "rev")
    assert failure["message"].startswith("the backward (order 1, reverse mode)")
    assert twin["verdict"] == "passed", twin


def test_describe_order_2_checks_order_1_first():
    # (a subclass: describe() marks the class it is given)
    described = gradcheck.describe(order=2)(type("Cube2", (ops.CubeWrongBelowZero,), {}))
    result = gradcheck.verify(described, max_examples=20, seed=0)
    assert result.verdict == "failed" and result.failure.failure.order == 1


def test_a_bad_modes_value_is_a_usage_error():
    result = CliRunner().invoke(main, ["verify", f"{OPS}:ExpJvp", "--modes", "sideways"])
    assert result.exit_code == 2
    assert "modes must be rev, fwd or rev,fwd" in result.output


def test_describe_takes_the_keys_and_verify_uses_them():
    described = gradcheck.describe(order=2, modes="rev,fwd", nondet_tol=0.0)(ops.ExpJvp)
    assert gradcheck.verify(described, max_examples=3, seed=0).verdict == "passed"
    with pytest.raises(InvalidDescription, match="order must be an integer from 1 to 4"):
        gradcheck.describe(order=5)
    result = gradcheck.verify(ops.SavesIntermediate, order=2, max_examples=5, seed=0)
    assert result.verdict == "failed"


def test_verify_draws_complex_inputs_with_imaginary_parts():
    seen = []
    gradcheck.verify(
        ops.ComplexSquare,
        dtype="complex128",
        max_examples=5,
        seed=0,
        on_example=lambda arrays, seed: seen.append(arrays[0]),
    )
    assert seen and all(a.dtype == np.complex128 for a in seen)
    assert any(np.any(a.imag != 0) for a in seen)
