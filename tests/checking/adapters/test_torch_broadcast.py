"""Issue 34, item 2, for torch Functions: a bias or scale gradient reduced wrongly
over the broadcast axes is caught by a default search; the correct Function passes."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import gradcheck  # noqa: E402
from tests.support import torch_broadcast_ops as ops  # noqa: E402

SEEDS = [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("bug", ["AffineBiasSummedOverFirstAxis", "AffineScaleAveraged"])
def test_a_wrong_broadcast_reduction_is_caught_by_default(bug: str, seed: int) -> None:
    result = gradcheck.verify(getattr(ops, bug), seed=seed)
    assert result.verdict == "failed", (bug, seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_correct_function_passes_with_broadcast_examples(seed: int) -> None:
    result = gradcheck.verify(ops.Affine, seed=seed)
    assert result.verdict == "passed", (seed, result.failure)
    assert result.shapes.startswith("inputs drawn with broadcasting: ")
