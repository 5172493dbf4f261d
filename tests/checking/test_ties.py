"""Ops whose kinks are ties (sort, median): a check at tied values costs forward calls
in proportion to the input, not twenty more per tied element, and a subgradient there
(torch's median spreads the gradient over the tied elements, whose partial
derivatives are each 0) is not differentiable, not a failure; a wrong gradient still
fails, at ties (of a differentiable op) and away from them (issue 34; issue 40 item 3)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import Operation, check

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


@pytest.mark.parametrize(
    "x",
    [
        pytest.param(np.zeros(3), id="zeros3"),
        pytest.param(_tied(8), id="8"),
        pytest.param(_tied(40), id="40"),
        pytest.param(_tied(40) * 2.0**-30, id="40-tiny"),
        pytest.param(_tied(40) * 2.0**30, id="40-huge"),
        pytest.param(_tied(40).astype(np.float32), id="40-float32"),
    ],
)
def test_torchs_median_at_ties_is_not_differentiable_not_failed(x):
    # each tied element moved alone leaves the median (partial 0); all together move it
    assert check(_median(1.0), x).verdict != "failed"
    assert check(lambda t: torch.median(t), x).verdict != "failed"


def test_a_median_over_an_axis_at_ties_beside_a_tiny_value_is_not_failed():
    # `gradcheck verify` of torch.median(x, dim=-1) at --shape 3,4 failed seeds 0-2,
    # each shrunk to this: the tie stage's steps are below a quarter of the gap to
    # x[0, 0], and the rounding it allowed there was that of the neighbourhood the
    # largest steps reach (eps·1 over a step of 1e-22), which hid every level
    x = np.zeros((3, 4))
    x[0, 0] = 4.848513252141582e-293
    upstream = np.array([0.1257302210933933, -0.1321048632913019, 0.6404226504432821])
    result = check(lambda t: torch.median(t, dim=-1).values, x, upstream=upstream)
    assert result.verdict != "failed", result.failure


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wrong_gradients_still_fail_beside_ties(seed):
    distinct = np.random.default_rng(seed).normal(size=7)
    assert check(SortGathered, distinct, seed=seed).verdict == "failed"
    assert check(_median(1.01), distinct, seed=seed).verdict == "failed"
    same = np.full(3, 0.5)  # x == y: the product is smooth there
    assert check(ProductOff, same, same.copy(), seed=seed).verdict == "failed"


class SquaresTilted(torch.autograd.Function):
    """sum(x²), its gradient 1% too large on element 0 and 1% too small on element 1:
    at a tie of the two, right along the direction that keeps the tie (the op is
    differentiable there: its partials add up along it)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x * x).sum()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        tilt = torch.ones_like(x)
        tilt[0], tilt[1] = 1.01, 0.99
        return g * 2 * x * tilt


class AbsOff(torch.autograd.Function):
    """abs, its gradient 1e-3 too large: differentiable at tied inputs away from 0."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.abs()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.sign() * 1.001


@pytest.mark.parametrize(
    "op, x",
    [
        pytest.param(_median(1.01), np.zeros(3), id="median-zeros3"),
        pytest.param(_median(1.001), _tied(40), id="median-40"),
        pytest.param(_median(1.01), _tied(40) * 2.0**-30, id="median-40-tiny"),
        pytest.param(_median(1.01), _tied(40).astype(np.float32), id="median-40-float32"),
        pytest.param(SquaresTilted, np.full(3, 0.5), id="tilted-within-the-tie"),
        pytest.param(AbsOff, np.full(3, 2.0**-20), id="abs-tied-at-2^-20"),
        pytest.param(AbsOff, np.full(3, 2.0**-30), id="abs-tied-at-2^-30"),
        pytest.param(AbsOff, np.full(3, 2.0**30), id="abs-tied-at-2^30"),
    ],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wrong_gradients_at_ties_still_fail(op, x, seed):
    # the tie's joint direction declares kinks only where the analytic gradient is
    # right along the tie and the partials there add up to something else at every
    # step: a median off by 1% disagrees along the tie, a smooth op's partials add up
    # (a gradient tilted within the tie), and abs's kink at 0, which steps of 1e-5
    # reach across at 2^-20, is no tie
    assert check(op, x, seed=seed).verdict == "failed"


@pytest.mark.parametrize("tiny", [1e-20, 1e-200, 4.848513252141582e-293])
def test_a_wrong_median_over_an_axis_beside_a_tiny_value_still_fails(tiny):
    class MedianOff(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            values, idx = torch.median(x, dim=-1)
            ctx.save_for_backward(idx)
            ctx.shape = x.shape
            return values

        @staticmethod
        def backward(ctx, g):
            (idx,) = ctx.saved_tensors
            gx = torch.zeros(ctx.shape, dtype=g.dtype)
            return gx.scatter_(-1, idx.unsqueeze(-1), (1.01 * g).unsqueeze(-1))

    x = np.zeros((3, 4))
    x[0, 0] = tiny
    assert check(lambda t: torch.median(t, dim=-1).values, x).verdict != "failed"
    assert check(MedianOff.apply, x).verdict == "failed"


def _median_rows_off(factor: float):
    class MedianRowsOff(torch.autograd.Function):
        """torch's median over the last axis, its gradient (to the element torch picks)
        times ``factor``."""

        @staticmethod
        def forward(ctx, x):
            values, idx = torch.median(x, dim=-1)
            ctx.save_for_backward(idx)
            ctx.shape = x.shape
            return values

        @staticmethod
        def backward(ctx, g):
            (idx,) = ctx.saved_tensors
            gx = torch.zeros(ctx.shape, dtype=g.dtype)
            return gx.scatter_(-1, idx.unsqueeze(-1), (factor * g).unsqueeze(-1))

    return MedianRowsOff.apply


_A = 1.924230662502621e-270
_T = 2.5702046825221922e-26
_V = np.array([0.1257302210933933, -0.1321048632913019, 0.6404226504432821])
#: The forms `gradcheck verify medops:median_rows --shape 3,4` shrank to on seeds 0-2,
#: one after another, as each was fixed: each element whose steps (absolute for an
#: element at 0, relative below 8e-25) reach across a value far closer than they are
#: long, and ties of values far apart from each other in size.
_MEDIAN_ROWS_FORMS = {
    "a-tied-pair-of-zeros-beside-1.9e-270": [[0, 0, _A, _A], [_A] * 4, [_A] * 4],
    "zeros-beside-7e-19": [[7.072170158686208e-19, -1, -1, 0], [0] * 4, [0] * 4],
    "a-middle-of-8.9e-73": [
        [1.1754943508222875e-38, 8.895232197280361e-73, 0, 1],
        [1] * 4,
        [1] * 4,
    ],
    "zeros-beside-4.8e-92": [
        [-4.7952645052753157e-92, -1.1754943508222875e-38, 0, 0],
        [0] * 4,
        [0] * 4,
    ],
    "a-middle-1.8e-48-from-its-neighbour": [
        [-1.175494351e-38] * 4,
        [-1.175494351e-38] * 4,
        [0, -1.1754943508222875e-38, 0, -1.175494351e-38],
    ],
    "a-middle-zero-beside-3e-206": [
        [1.401298464324817e-45] * 4,
        [1.401298464324817e-45] * 4,
        [-3.107513497480305e-206, 0, 1.401298464324817e-45, 1.401298464324817e-45],
    ],
    "a-middle-zero-beside-4.8e-289": [
        [0, 4.829657853445544e-289, -1.6965447060463444e-174, 1],
        [1] * 4,
        [1] * 4,
    ],
    "a-value-tied-across-rows": [[10, 1, 1, _T], [1, 7.072170158686208e-19, 0, _T], [0, 0, _T, _T]],
}


@pytest.mark.parametrize("form", sorted(_MEDIAN_ROWS_FORMS))
def test_a_median_over_an_axis_where_its_steps_reach_across_tiny_values(form):
    # the correct op is differentiable at each of these elements, or not at a tie,
    # on the scale of the values beside it: steps below that scale show it (the same
    # input in other units, at 1, needs no such steps), and its 1% wrong twin fails
    x = np.array(_MEDIAN_ROWS_FORMS[form], dtype=np.float64)
    result = check(lambda t: torch.median(t, dim=-1).values, x, upstream=_V)
    assert result.verdict != "failed", result.failure
    for seed in (0, 1, 2):
        assert check(_median_rows_off(1.01), x, seed=seed).verdict == "failed", seed
    assert check(_median_rows_off(1.01), x, upstream=_V).verdict == "failed"


@pytest.mark.parametrize("form", sorted(_MEDIAN_ROWS_FORMS))
def test_a_median_over_an_axis_off_by_1e_3_fails_where_its_steps_reach_across_tiny_values(form):
    # (at the middle 1.8e-48 from its neighbour, the steps that keep it the middle lie
    # below 1.5e-10 of x: the smallest of them resolves the median to 2e-3, and a
    # factor 1.001 read "not differentiable"; the largest, 16 times as long, to 1.2e-4)
    x = np.array(_MEDIAN_ROWS_FORMS[form], dtype=np.float64)
    for seed in (0, 1, 2):
        assert check(_median_rows_off(1.001), x, seed=seed).verdict == "failed", seed


def test_a_median_over_an_axis_with_a_tied_pair_of_zeros_below_tiny_values():
    x = np.full((3, 4), 1.924230662502621e-270)
    x[0, :2] = 0.0
    upstream = np.array([0.1257302210933933, -0.1321048632913019, 0.6404226504432821])
    result = check(lambda t: torch.median(t, dim=-1).values, x, upstream=upstream)
    assert result.verdict != "failed", result.failure


def test_a_wrong_gradient_at_a_tie_is_reported_along_the_tie():
    # at all-zero rows each element moved alone leaves the median (numeric 0 in the
    # table), which reads as a gradient that should be missing; the report says what
    # the evidence is: along the tie, vᵀf changes at sum(v) and the gradient sums to 1.01x
    result = check(_median_rows_off(1.01), np.zeros((3, 4)), upstream=_V)
    assert result.verdict == "failed"
    message = result.failure.message
    assert "At a tie: index (2, 1) and 11 other element(s) share the value 0" in message
    assert f"vᵀf changes at {_V.sum():.10g} per unit" in message
    assert f"the analytic gradient sums to {1.01 * _V.sum():.10g}" in message
    assert "relative error 0.01" in message


def test_a_wrong_gradient_away_from_ties_is_reported_without_a_tie():
    x = np.arange(12.0).reshape(3, 4)
    result = check(_median_rows_off(1.01), x, upstream=_V)
    assert result.verdict == "failed"
    assert "At a tie" not in result.failure.message


class _TimesItsSumForgetful(Operation):
    """x·sum(x), smooth everywhere, whose backward forgets sum(g·x): wrong at a tie too."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data * x.data.sum()

    def backward_var(self, grad, index, **kwargs):
        return grad * self.variables[0].data.sum()


def test_a_smooth_op_s_failure_at_a_tie_says_nothing_of_a_kink():
    # an op with no kink anywhere, failing at equal inputs, was told "the numeric
    # column there is each one's derivative moved alone (a partial derivative at a
    # kink, which the gradient there need not equal)": its partials add up along the
    # tie, and the numeric column is its gradient
    result = check(_TimesItsSumForgetful, np.ones((2, 3)), upstream=np.full((2, 3), 0.5))
    assert result.verdict == "failed"
    assert "At a tie" not in result.failure.message, result.failure.message
