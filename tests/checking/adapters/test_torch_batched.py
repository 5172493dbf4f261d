"""Batched (issue 38 item 1): a torch op, its backward and its jvp under
``torch.func.vmap`` against a loop over the batch; on by default for Functions that
declare a vmap rule."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

import gradcheck  # noqa: E402
from gradcheck.cli import main  # noqa: E402
from gradcheck.errors import CheckUsageError, InvalidDescription  # noqa: E402
from tests.frontend.test_schemas import errors  # noqa: E402
from tests.support import torch_batched_ops as ops  # noqa: E402

X = np.array([[0.3, 1.2, -0.5], [2.0, -1.1, 0.7]])
MODULE = "tests.support.torch_batched_ops"

WRONG = [
    # (op, kind, what is said of the computation and of the rule)
    (ops.MulOutDims, "batched_forward", "forward under torch.func.vmap", "vmap staticmethod"),
    (ops.SumSquares, "batched_forward", "forward under torch.func.vmap", "vmap staticmethod"),
    (ops.MulAssumesFirst, "batched_forward", "forward (batch dimension last)", "vmap static"),
    (ops.MulAllBatched, "batched_forward", "forward (only input x batched)", "vmap static"),
    (ops.AddBias, "batched_grad", "backward under torch.func.vmap", "generate_vmap_rule"),
    (ops.CumsumAll, "batched_grad", "backward under torch.func.vmap", "vmap staticmethod"),
    (ops.Centered, "batched_grad", "forward mode under torch.func.vmap", "generate_vmap_rule"),
]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("wrong, kind, what, rule", WRONG, ids=[w[0].__name__ for w in WRONG])
def test_a_wrong_vmap_rule_is_caught_by_default(wrong, kind, what, rule, seed):
    result = gradcheck.verify(wrong, seed=seed, max_examples=20)
    assert result.verdict == "failed"
    failure = result.failure.failure
    assert failure.kind == kind
    assert failure.message.startswith(what)
    assert rule in failure.message
    # the element that differs, or the exception the rule raised under vmap
    said = ("batch element", "raised where a loop over the batch did not")
    assert any(words in failure.message for words in said)


TWINS = [
    ops.MulOutDimsFixed,
    ops.SumSquaresFixed,
    ops.AddBiasFixed,
    ops.CumsumAllFixed,
    ops.CenteredFixed,
]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("right", TWINS, ids=[t.__name__ for t in TWINS])
def test_the_twins_pass(right, seed):
    assert gradcheck.verify(right, seed=seed, max_examples=10).verdict == "passed"


def test_the_failure_names_the_batch_element():
    class FirstOnly(ops._SumSquares):
        """Every batch member given the first one's value."""

        @staticmethod
        def vmap(info, in_dims, x):
            x = x.movedim(in_dims[0], 0)
            first = (x[:1] * x[:1]).reshape(1, -1).sum(1)
            return first.expand(info.batch_size), 0

    result = gradcheck.check(FirstOnly, X)
    assert result.failure.kind == "batched_forward"
    # the example itself is element 0, right; the copies moved from it are not
    assert "batch element 1 of 3" in result.failure.message
    assert "vmap gives" in result.failure.message and "the loop" in result.failure.message


def test_on_by_default_only_where_a_vmap_rule_is_declared():
    assert gradcheck.check(ops.SumSquares, X).failure.kind == "batched_forward"
    assert gradcheck.check(ops.SumSquares, X, batched=False).verdict == "passed"
    # a Function without a rule, and a function of torch ops: off unless asked
    assert gradcheck.check(ops._SumSquares, X).verdict == "passed"
    result = gradcheck.check(lambda x: torch.tanh(x).sum(), X, batched=True)
    assert result.verdict == "passed"
    assert result.settings["batched"] is True


def test_batched_is_refused_where_there_is_no_vmap():
    import gradcheck as mg

    with pytest.raises(CheckUsageError, match="declares no vmap rule"):
        gradcheck.check(ops._SumSquares, X, batched=True)
    with pytest.raises(CheckUsageError, match="not a torch op"):
        gradcheck.check(lambda x: mg.tanh(x), X, batched=True)
    with pytest.raises(CheckUsageError, match="batched must be"):
        gradcheck.check(ops.SumSquaresFixed, X, batched="yes")
    with pytest.raises(InvalidDescription, match="batched must be"):
        gradcheck.describe(batched="yes")


def test_forward_mode_is_batched_with_fwd_in_modes():
    # the jvp's helper is wrong under vmap; the backward is plain torch
    assert gradcheck.check(ops.Centered, X, modes="rev").verdict == "passed"
    failure = gradcheck.check(ops.Centered, X, modes="rev,fwd").failure
    assert failure.kind == "batched_grad"
    assert failure.ad_mode == "fwd"
    assert "output's tangent" in failure.message


def test_describe_turns_it_off():
    @gradcheck.describe(batched=False)
    class Quiet(ops.SumSquares):
        pass

    assert gradcheck.verify(Quiet, seed=0, max_examples=5).verdict == "passed"
    assert gradcheck.verify(Quiet, seed=0, max_examples=5, batched=True).verdict == "failed"


def test_the_command_line_flags_and_the_schema():
    args = ["--max-examples", "5", "--seed", "0", "--format", "json"]
    result = CliRunner().invoke(
        main, ["verify", f"{MODULE}:CumsumAll", f"{MODULE}:CumsumAllFixed", *args]
    )
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert errors("verify", document) == []
    wrong, twin = document["targets"]
    assert wrong["failure"]["kind"] == "batched_grad"
    assert "batch element" in wrong["failure"]["message"]
    assert twin["verdict"] == "passed"
    off = CliRunner().invoke(main, ["verify", f"{MODULE}:CumsumAll", "--no-batched", *args])
    assert off.exit_code == 0, off.output
    asked = CliRunner().invoke(main, ["verify", f"{MODULE}:_SumSquares", "--batched", *args])
    assert asked.exit_code == 2, asked.output
    assert "declares no vmap rule" in asked.output


def test_the_configuration_file_key(tmp_path):
    args = ["verify", f"{MODULE}:CumsumAll", "--max-examples", "5", "--seed", "0"]
    config = tmp_path / "pyproject.toml"
    config.write_text("[tool.gradcheck]\nbatched = false\n")
    off = CliRunner().invoke(main, [*args, "--config", str(config)])
    assert off.exit_code == 0, off.output
    # the option overrides the file
    on = CliRunner().invoke(main, [*args, "--config", str(config), "--batched"])
    assert on.exit_code == 1, on.output
    config.write_text('[tool.gradcheck]\nbatched = "yes"\n')
    wrong = CliRunner().invoke(main, [*args, "--config", str(config)])
    assert wrong.exit_code == 2
    assert "key 'batched' must be true or false" in wrong.output
