"""Ops whose kinks are ties (sort, median): a check at tied values costs forward calls
in proportion to the input, not twenty more per tied element, and a subgradient there
(torch's median spreads the gradient over the tied elements, whose partial
derivatives are each 0) is not differentiable, not a failure; a wrong gradient still
fails, at ties (of a differentiable op) and away from them (issue 34; issue 40 item 3)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import check

torch = pytest.importorskip("torch")

from tests.support.torch_tie_ops import Sort, SortGathered  # noqa: E402


def _median(factor: float):
    class Median(torch.autograd.Function):
        """torch's median, its gradient spread over the tied elements (torch's own
        choice), times ``factor`` (1: correct)."""

        @staticmethod
        def forward(ctx, x):
            m = torch.median(x)
            ctx.save_for_backward(x, m)
            return m

        @staticmethod
        def backward(ctx, g):
            x, m = ctx.saved_tensors
            mask = (x == m).to(x.dtype)
            return g * mask / mask.sum() * factor

    return Median


class ProductOff(torch.autograd.Function):
    """x * y, both gradients 1% too large: at x == y the mismatch is along a direction
    where the op is smooth."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y * 1.01, g * x * 1.01


def _tied(size: int, seed: int = 0) -> np.ndarray:
    return np.round(np.random.default_rng(seed).normal(size=size) * 2) / 2


def test_a_sort_at_ties_costs_few_forward_calls_per_element():
    # 38 of its 40 elements are tied; each was refined with the rounding at its step
    # points measured (20 calls), 1,437 forward calls in all
    x = _tied(40)
    result = check(Sort, x)
    assert result.verdict == "not differentiable", result
    assert result.forward_calls < 20 * x.size, result.forward_calls


_MEDIAN_FALSE_ALARM = pytest.mark.xfail(
    strict=True,
    reason="a known false alarm: the tie's joint-direction stage (i34-sort) was taken out "
    "again, as it let a float32 mutant pass and failed torch's solve at a near-singular "
    "matrix of tied entries (benchmarks/RESULTS.md, the seventh stop)",
)


@pytest.mark.parametrize(
    "x",
    [
        pytest.param(np.zeros(3), id="zeros3", marks=_MEDIAN_FALSE_ALARM),
        pytest.param(_tied(8), id="8"),
        pytest.param(_tied(40), id="40", marks=_MEDIAN_FALSE_ALARM),
    ],
)
def test_torchs_median_at_ties_is_not_differentiable_not_failed(x):
    # each tied element moved alone leaves the median (partial 0); all together move it
    assert check(_median(1.0), x).verdict != "failed"
    assert check(lambda t: torch.median(t), x).verdict != "failed"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wrong_gradients_still_fail_beside_ties(seed):
    distinct = np.random.default_rng(seed).normal(size=7)
    assert check(SortGathered, distinct, seed=seed).verdict == "failed"
    assert check(_median(1.01), distinct, seed=seed).verdict == "failed"
    same = np.full(3, 0.5)  # x == y: the product is smooth there
    assert check(ProductOff, same, same.copy(), seed=seed).verdict == "failed"
