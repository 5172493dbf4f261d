"""Issue 34, items 2 and 10: a search draws broadcast shapes by default for an op of
several inputs (and learns when the op refuses them), says which shapes it drew, and
reaches 3-d inputs with size-1 axes whatever shapes Hypothesis repeats."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck
from gradcheck.frontend.render import render_table
from gradcheck.search.verifier import size_one_shapes
from gradcheck.strategies import op_inputs
from gradcheck.testing.suite import draw_examples
from tests.support import broadcast_ops

SEEDS = [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    "bug", ["AffineBiasUnsummed", "AffineScaleLeadingOnly", "AffineBiasAveraged"]
)
def test_an_unreduced_broadcast_gradient_is_caught_by_default(bug: str, seed: int) -> None:
    wrong = gradcheck.verify(getattr(broadcast_ops, bug), seed=seed)
    assert wrong.verdict == "failed", (bug, seed)
    shapes = {np.shape(a) for a in wrong.failure.inputs}
    assert len(shapes) > 1, shapes  # shrunk to inputs that still broadcast


@pytest.mark.parametrize("seed", SEEDS)
def test_the_correct_op_passes_and_the_report_counts_its_broadcast_examples(seed: int) -> None:
    right = gradcheck.verify(broadcast_ops.Affine, seed=seed)
    assert right.verdict == "passed", (seed, right.failure)
    assert right.examples == 100
    assert right.shapes.startswith("inputs drawn with broadcasting: ")
    assert right.shapes.endswith(" of 100 examples")
    assert right.to_dict()["shapes"] == right.shapes
    n = int(right.shapes.split(": ")[1].split(" of ")[0])
    assert 10 <= n <= 30


@pytest.mark.parametrize("seed", SEEDS)
def test_an_op_that_refuses_broadcast_shapes_passes_on_equal_ones(seed: int) -> None:
    result = gradcheck.verify(broadcast_ops.EqualShapesOnly, seed=seed)
    assert result.verdict == "passed", (seed, result.failure, result.note)
    assert result.examples == 100  # the broadcast share given back to equal shapes
    assert result.shapes.startswith("broadcast shapes: rejected by the op (ValueError: a and b")
    assert "every input had the same shape in the 100 examples" in result.shapes
    # learnt from a few rejections, not one per draw; not reported as a domain to give
    assert result.skipped.get("the op does not run at the shape", 0) <= 3
    assert "outside the op's domain" not in result.note


def test_the_report_says_when_every_input_had_one_shape() -> None:
    off = gradcheck.verify(broadcast_ops.Affine, seed=0, broadcast=False, max_examples=20)
    expected = "every input had the same shape in the 20 examples checked: broadcasting is off"
    assert off.shapes == expected
    text = render_table([off], seed=0, replay=lambda r: "")
    assert f"{off.target}: {off.shapes}" in text
    single = gradcheck.verify(lambda x: x * x, seed=0, max_examples=5)
    given = gradcheck.verify(broadcast_ops.Affine, seed=0, shapes=["n", "n", "n"], max_examples=5)
    assert single.shapes == given.shapes == ""
    assert single.to_dict()["shapes"] is None


def test_broadcast_draws_are_the_same_for_a_seed() -> None:
    a = gradcheck.verify(broadcast_ops.Affine, seed=5, max_examples=40)
    b = gradcheck.verify(broadcast_ops.Affine, seed=5, max_examples=40)
    assert a.shapes == b.shapes and a.max_abs_error == b.max_abs_error


def test_explicit_broadcast_on_an_op_that_refuses_it_fails_with_a_hint() -> None:
    # it ran at no shape drawn: its forward's error is the failure (as for any op)
    result = gradcheck.verify(broadcast_ops.EqualShapesOnly, seed=0, broadcast=True)
    assert result.verdict == "failed" and result.failure.failure.kind == "forward_error"
    assert "the op rejects broadcast shapes" in result.note and "--broadcast" in result.note


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("bug, twin", [("SumLast", "SumLastRight"), ("sum_last", "sum_last_right")])
def test_a_reduction_bug_at_a_size_one_middle_axis_is_caught(bug: str, twin: str, seed: int):
    wrong = gradcheck.verify(getattr(broadcast_ops, bug), seed=seed)
    assert wrong.verdict == "failed", (bug, seed)
    (x,) = wrong.failure.inputs
    assert x.ndim == 3 and x.shape[1] == 1
    right = gradcheck.verify(getattr(broadcast_ops, twin), seed=seed)
    assert right.verdict == "passed", (twin, seed, right.failure)


def test_size_one_shapes_put_a_size_one_axis_at_every_axis() -> None:
    shapes, each = size_one_shapes({"max_examples": 100}, seed=0)
    assert each == 3 and len(shapes) == 3
    assert [[a for a, n in enumerate(s) if n == 1] for s in shapes] == [[0], [1], [2]]
    assert all(n in (2, 3, 4) for s in shapes for n in s if n != 1)
    four, each = size_one_shapes({"max_examples": 100, "min_dims": 4}, seed=0)
    assert each == 2 and [len(s) for s in four] == [4] * 4 and four[3][3] == 1
    assert size_one_shapes({"max_examples": 20}, seed=0) == ([], 0)
    assert size_one_shapes({"max_examples": 100, "shapes": ("n",)}, seed=0) == ([], 0)


def test_few_scalars_are_drawn_for_a_reduction() -> None:
    # (over three seeds: one seed's 200 draws can put the two within a few of each other)
    def zero_d(reduces: bool) -> int:
        strategy = op_inputs(1, reach=True, reduces=reduces)
        return sum(x.ndim == 0 for seed in (0, 1, 2) for (x,) in draw_examples(strategy, 200, seed))

    assert zero_d(True) <= 30
    assert zero_d(True) < zero_d(False) <= 90


def test_broadcast_draws_under_reach_always_differ() -> None:
    strategy = op_inputs(3, reach=True, broadcast=True)
    for arrays in draw_examples(strategy, 60, 1):
        shapes = [a.shape for a in arrays]
        assert len(set(shapes)) > 1, shapes
        np.broadcast_shapes(*shapes)  # and they broadcast
