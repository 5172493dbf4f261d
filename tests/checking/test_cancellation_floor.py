"""Issue 34 item 9: the rounding floor covers a forward that cancels.

A cross-entropy at a large logit is ``log(1 + δ)`` with δ = 2e-15 (or ``35 + δ - 35``):
its output rounds to a constant at every finite-difference step, and its true
gradient, ~1e-15, is far below what those steps resolve. It passes, in full and in fast
mode; an error the steps do resolve still fails."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradcheck import check

torch = pytest.importorskip("torch")


def _cross_entropy(z):
    """torch's own cross-entropy, label 0: ``-log_softmax(z)[0]``, which rounds at
    ulps of 1 (the sum of exponentials)."""
    return torch.nn.functional.cross_entropy(z, torch.zeros(z.shape[0], dtype=torch.long))


def _shifted_cross_entropy(factor: float):
    """``m + log(sum exp(z - m)) - z[0]`` (m the largest logit), which rounds at ulps
    of m, with its own backward ``softmax - onehot`` times ``factor`` (1: correct)."""

    class ShiftedCrossEntropy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            m = z.max(dim=-1, keepdim=True).values
            lse = m + torch.log(torch.exp(z - m).sum(-1, keepdim=True))
            ctx.save_for_backward(z, lse)
            return (lse[..., 0] - z[..., 0]).sum()

        @staticmethod
        def backward(ctx, g):
            z, lse = ctx.saved_tensors
            p = torch.exp(z - lse)
            p[..., 0] -= 1
            return g * p * factor

    return ShiftedCrossEntropy


@pytest.mark.parametrize("logit", [30.0, 35.0, 40.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_torchs_cross_entropy_at_a_large_label_logit_passes(logit, seed):
    # at 35 every output is exactly 1.33e-15 at every step (numeric 0) and the true
    # gradient of the label's logit is -1.3e-15·v; at 30 the output moves by one ulp of
    # 1 at the larger steps, a staircase whose second differences shrink like 1/h
    # (J·h of one quantum): rounding, not a pole
    x = np.array([[logit, 0.0, 0.0]])
    result = check(_cross_entropy, x, seed=seed)
    assert result.verdict == "passed", result


@pytest.mark.parametrize("logit", [35.0, 40.0, 60.0, 100.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_cancelling_forward_in_fast_mode_passes(logit, seed):
    # fast mode judges directional derivatives, which never saw full mode's allowance
    # for an element whose forward never moved: the floor is the numerics' own now
    x = np.array([[logit, 0.0, -1.0]])
    result = check(_shifted_cross_entropy(1.0), x, seed=seed, mode="fast")
    assert result.verdict == "passed", result


@pytest.mark.parametrize("mode", ["full", "fast"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_gradient_off_by_2_still_fails_where_the_steps_resolve_it(mode, seed):
    # near logits of 0 every element resolves; at [35, 0, 0] with the label at the
    # small logit the gradient is of order v, and so is the error
    for x in (np.array([[0.3, 0.0, -1.0]]), np.array([[0.0, 35.0, 0.0]])):
        result = check(_shifted_cross_entropy(2.0), x, seed=seed, mode=mode)
        assert result.verdict == "failed", result


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_error_above_the_floor_of_a_still_forward_fails(seed):
    # at [35, 0, 0] the floor of the elements that never moved is eps·|v| over the
    # steps, about 1e-13·|v|: a gradient off by 1e-8 is far above it
    class Offset(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return _cross_entropy(z)

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            onehot = torch.zeros_like(z)
            onehot[0, 0] = 1
            return g * (torch.softmax(z, dim=1) - onehot + 1e-8)

    x = np.array([[35.0, 0.0, 0.0]])
    assert check(Offset, x, seed=seed).verdict == "failed"


# -- order 2, and what the levels alone do not show (issue 34 item 9, continued) -------
def _nll_of_log_softmax(z):
    """A cross-entropy as users write it: log_softmax, then the label's entry."""
    return -torch.nn.functional.log_softmax(z, dim=-1)[..., 0].sum()


def _shifted_max(z):
    """``x = z - max(z)``, then ``log(sum exp x) - x[0]``: rounds at ulps of the sum,
    where the output is 5.6e-9 at logits [29, 10, -6]."""
    x = z - z.max(dim=-1, keepdim=True).values
    return (torch.log(torch.exp(x).sum(-1)) - x[..., 0]).sum()


def _plus_max(z):
    """``m + log(sum exp(z - m)) - z[0]``, m the largest logit."""
    m = z.max(dim=-1, keepdim=True).values
    return (m[..., 0] + torch.log(torch.exp(z - m).sum(-1)) - z[..., 0]).sum()


class _CrossEntropyLayer(torch.nn.Module):
    def forward(self, z):
        return torch.nn.functional.cross_entropy(z[None], torch.zeros(1, dtype=torch.long))


def _twin(scale_first: float = 1.0, scale_second: float = 1.0):
    """A cross-entropy Function whose backward is differentiable: ``g·(softmax -
    onehot)`` times ``scale_first``, the softmax's own derivative times
    ``scale_second`` (its value unchanged): 1, 1 is the correct op."""

    class CrossEntropy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return _nll_of_log_softmax(z)

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            still = z.detach()
            p = torch.softmax(still + scale_second * (z - still), dim=-1)
            onehot = torch.zeros_like(z)
            onehot[..., 0] = 1
            return g * (p - onehot) * scale_first

    return CrossEntropy


_LARGE_LOGITS = [[30.0, 0.0, -1.0], [35.0, 0.0, -1.0], [30.0, 0.0, 0.0], [34.7, 0.3, -0.4]]


@pytest.mark.parametrize("logits", _LARGE_LOGITS)
@pytest.mark.parametrize("op", ["nll", "shifted", "plus_max", "layer", "function"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_cross_entropy_at_a_large_logit_passes_at_order_2(logits, op, seed):
    # the backward softmax - onehot has p0 - 1 = -1e-13 (at 30) or -9e-16 (at 35),
    # which rounds at the ulps of p0: it stands still at the smaller steps (or at every
    # step) while the other outputs move, and no level as a whole stands still; the
    # double backward, right, false-alarmed at 'numeric' values that had lost it
    target = {
        "nll": _nll_of_log_softmax,
        "shifted": _shifted_max,
        "plus_max": _plus_max,
        "layer": _CrossEntropyLayer(),
        "function": _twin(),
    }[op]
    result = check(target, np.array(logits), order=2, seed=seed)
    assert result.verdict == "passed", result


@pytest.mark.parametrize("op", [_nll_of_log_softmax, _shifted_max, _CrossEntropyLayer()])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_cross_entropy_whose_output_is_a_staircase_passes_at_order_1(op, seed):
    # at [29, 10, -6] the output, 5.6e-9, moves in ulps of its sum of exponentials (1),
    # a staircase whose steps may be symmetric about x (J = 0 at every level, and the
    # smallest levels agree exactly): the torch op has no wider dtype to show its
    # rounding, which is measured in its own dtype now (the numeric was off by 3e-3)
    result = check(op, np.array([29.0, 10.0, -6.0]), seed=seed)
    assert result.verdict == "passed", result


@pytest.mark.parametrize(
    "logits", [[20.0, 7.0, 10.0], [24.0, 9.0, -3.0], [31.0, 14.0, 2.0], [30.5, -1.2, 0.7]]
)
@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_cross_entropy_away_from_ties_is_never_not_differentiable(logits, order, seed):
    # max(z) has a kink where two logits tie, and none here: a staircase of rounding
    # quanta (J·h of one quantum, shrinking like 1/h) is no pole
    for op in (_plus_max, _shifted_max, _nll_of_log_softmax):
        result = check(op, np.array(logits), order=order, seed=seed)
        assert result.verdict == "passed", (op.__name__, result)


@pytest.mark.parametrize("logits", [[0.3, 0.0, -1.0], [2.0, 0.0, -1.0]])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_twins_of_the_cross_entropy_still_fail_where_the_steps_resolve(logits, seed):
    x = np.array(logits)
    assert check(_twin(), x, order=2, seed=seed).verdict == "passed"
    assert check(_twin(scale_first=1.001), x, seed=seed).verdict == "failed"
    assert check(_twin(scale_second=1.01), x, order=2, seed=seed).verdict == "failed"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_double_backward_that_drops_a_dependence_still_fails_at_order_2(seed):
    # the shifted cross-entropy of this module keeps its log-sum-exp as a constant in
    # its backward: its first order is right, its second is not
    x = np.array([[3.0, 0.0, -1.0]])
    assert check(_shifted_cross_entropy(1.0), x, seed=seed).verdict == "passed"
    assert check(_shifted_cross_entropy(1.0), x, order=2, seed=seed).verdict == "failed"


def test_a_rounding_measured_without_a_wider_dtype_does_not_loosen_a_smooth_op():
    # sin at 1e9 varies on a scale of 1, 6e3 below its base step: the move that
    # measures the rounding is that of the smallest steps, where sin is a polynomial
    def sine(factor):
        class Sin(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return torch.sin(x)

            @staticmethod
            def backward(ctx, g):
                return g * torch.cos(ctx.saved_tensors[0]) * factor

        return Sin

    x = np.array([1.3e9, -0.7e9, 2.1e9])
    for factor, verdict in ((1.0, "passed"), (1.001, "failed")):
        assert [check(sine(factor), x, seed=s).verdict for s in (0, 1, 2)] == [verdict] * 3


# -- order 2: the rounding of the backward that is differenced (issue 34 items 7, 9) ----
# At order 2 the forward is the backward B(x, v) = vᵀJ, linear in v, whose outputs at a
# cancellation (p - onehot of a cross-entropy at logits 24 apart: -7.5e-11·v) round at
# eps of terms of the size of v. Along v its differences B(x, v ± h) round at eps·h of
# those terms, which power-of-two steps never show; along a logit that moves another
# output below its quantum, that output's share is lost. Both are measured now.
CE_OPS = "tests.support.torch_cross_entropy_ops"


def _ce_ops():
    from tests.support import torch_cross_entropy_ops

    return torch_cross_entropy_ops


@pytest.mark.parametrize(
    "logits", [[0.0, 24.0, 0.0], [24.0, 0.0, 0.0], [-2.0, 38.0, 16.0], [0.0, 34.0, 0.0]]
)
@pytest.mark.parametrize("op", ["nll_ce", "nll_ce_plus_max"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_cross_entropy_at_a_zero_upstream_gradient_passes_at_order_2(logits, op, seed):
    # v = 0, where the search shrinks it: the double backward's -u1 + u·p errs by
    # eps·|u1|, as the backward's p1·v - v does along v (analytic 3.101197e-11 against
    # numeric 3.101201e-11 at [0, 24, 0], true 3.101199e-11), and the floor was that
    # of the outputs' own size
    target = getattr(_ce_ops(), op)
    result = check(target, np.array(logits), order=2, upstream=0.0, seed=seed)
    assert result.verdict == "passed", result


@pytest.mark.parametrize("logits", [[38.0, -2.0, 16.0], [-2.0, 38.0, 16.0]])
@pytest.mark.parametrize("upstream", [1.0, None])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_logits_40_apart_pass_at_order_2(logits, upstream, seed):
    # the output p_big - 1 = -2.8e-10 of the backward rounds at ulps of p_big, which the
    # logit 16 moves by many quanta and the logit -2 by 1e-18 per unit, below one: the
    # differences along -2 lost -p_big·p_small, and its element false-alarmed
    ops = _ce_ops()
    for target in (ops.nll_ce_plus_max, ops.CrossEntropy):
        if target is ops.CrossEntropy and logits[0] != 38.0:
            continue  # (its label is 0)
        result = check(target, np.array(logits), order=2, upstream=upstream, seed=seed)
        assert result.verdict == "passed", (target, result)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_cross_entropy_check_passes_from_the_command_line_at_order_2(seed):
    from click.testing import CliRunner

    from gradcheck.cli import main

    # (it failed on seed 0 at [0, 34, 0] with v = 0: analytic 1.776e-15, numeric
    # 1.753e-15, where both round at eps·|u1|)
    target = f"{CE_OPS}:nll_ce_plus_max"
    args = ["verify", target, "--shape", "3", "--domain=-5:40", "--order", "2"]
    result = CliRunner().invoke(main, [*args, "--seed", str(seed)])
    assert result.exit_code == 0, result.output


def test_a_cross_entropy_whose_backward_rounds_to_a_constant_passes_at_order_2():
    # (where `verify --seed 0` of nll_ce with --domain=-5:40 shrinks to) at logits 40
    # apart p1 rounds to exactly 1 and the backward's p1·v - v is 0 at every step and
    # probe, its rounding (eps·|v|) shown by no measurement in float64; the double
    # backward's -u1 + u·p rounds to -0 likewise: that exact zero counts as resolved to
    # eps of terms of v's size only (LevelScores.floor_cancelled)
    x = np.array([0.0, 39.99996, 0.0])
    result = check(_ce_ops().nll_ce, x, order=2, upstream=2.0**-52, seed=0)
    assert result.verdict == "passed", result


@pytest.mark.parametrize(
    "logits",
    [[0.0, 39.99996, 0.0], [0.0, 40.0, 0.0], [0.0, 45.0, 0.0], [-3.0, 50.0, 2.0], [1.0, 38.5, 0.0]],
)
@pytest.mark.parametrize("upstream", [2.0**-52, 1.0, None])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cross_entropies_whose_backward_rounds_to_a_constant_pass_at_order_2(
    logits, upstream, seed
):
    ops = _ce_ops()
    for target in (ops.nll_ce, ops.nll_ce_plus_max):
        result = check(target, np.array(logits), order=2, upstream=upstream, seed=seed)
        assert result.verdict == "passed", (target, result)


def _ce_with_a_term(term: float):
    """A cross-entropy (label 1) whose backward's value is right and whose derivative
    has a term ``term·g`` too many (``term·g·(z - z)``: 0, of derivative term·g)."""

    class CrossEntropyTerm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return -torch.nn.functional.log_softmax(z, dim=-1)[1]

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            still = z.detach()
            onehot = torch.zeros_like(z)
            onehot[1] = 1
            return g * (torch.softmax(z, dim=-1) - onehot) + term * g * (z - still)

    return CrossEntropyTerm.apply


@pytest.mark.parametrize("logits", [[0.0, 39.99996, 0.0], [0.0, 45.0, 0.0], [0.3, 1.0, -1.0]])
@pytest.mark.parametrize("upstream", [2.0**-52, 1.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_cross_entropy_with_a_second_derivative_term_too_many_fails_where_it_rounds(
    logits, upstream, seed
):
    # a term of 1e-6·g in the double backward: above the exact zero's eps·|v| / 2h
    x = np.array(logits)
    wrong = check(_ce_with_a_term(1e-6), x, order=2, upstream=upstream, seed=seed)
    assert wrong.verdict == "failed", wrong
    assert check(_ce_with_a_term(0.0), x, order=2, upstream=upstream, seed=seed).passed


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wrong_cross_entropies_still_fail_at_order_1_and_2(seed):
    # at ordinary logits, and at wide ones where float64 resolves the error (the
    # label's logit, 0, is not the largest: the gradient is of the size of v); at v = 0
    # the double backward's part that depends on x is 0, and the second derivative is
    # not seen there, so v is drawn or 1
    ops = _ce_ops()
    for logits in ([0.3, 0.0, -1.0], [2.0, 0.0, -1.0], [10.0, 30.0, -5.0]):
        for upstream in (None, 1.0):
            x = np.array(logits)
            second = check(ops.CrossEntropySecondOff, x, order=2, upstream=upstream, seed=seed)
            assert second.verdict == "failed", (logits, upstream, second)
    for logits in ([0.3, 0.0, -1.0], [0.0, 24.0, 0.0], [10.0, 30.0, -5.0], [0.0, 40.0, 0.0]):
        for order in (1, 2):
            first = check(ops.CrossEntropyFirstOff, np.array(logits), order=order, seed=seed)
            assert first.verdict == "failed", (logits, order, first)


# -- a forward whose intermediates round at the step points (issue 34 audit) -----------
_GELU_C = math.sqrt(2 / math.pi)


def _tanh_gelu(cubic: float):
    """``0.5·x·(1 + tanh(c·(x + 0.044715·x³)))`` with its own backward, whose cubic
    term's factor is ``cubic`` (3: correct)."""

    class Gelu(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 0.5 * x * (1 + torch.tanh(_GELU_C * (x + 0.044715 * x**3)))

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            t = torch.tanh(_GELU_C * (x + 0.044715 * x**3))
            du = _GELU_C * (1 + cubic * 0.044715 * x**2)
            return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du)

    return Gelu


def _x_minus_sin(cosine_form: bool):
    """``x - sin(x)``, with the backward ``2·sin(x/2)²`` (correct in every precision)
    or ``1 - cos(x)`` (``cosine_form``: cancels to 0 below x ~ 1e-8, a real bug)."""

    class XMinusSin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x - torch.sin(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            d = 1 - torch.cos(x) if cosine_form else 2 * torch.sin(x / 2) ** 2
            return g * d

    return XMinusSin


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("x", [-7.0, -7.123456789, -6.5])
def test_a_tanh_gelu_in_its_saturated_tail_passes(x, seed):
    # (-7: where `verify aud_gelu --max-examples 50` shrank to on seeds 1 and 2) 1 +
    # tanh(u) is a few ulps of 1 and the same number over every level's steps, so s is
    # exactly 0.5·q·x there: D = 0.5·q·v at every level, J = 0, while the derivative
    # is -2.3e-14·v; the probes above the levels see s leave that line by a quantum,
    # 0.5·|x|·eps·|v|, at steps ~0.05 (at -6.5, where `verify` shrinks to once -7
    # passes, q moves by it at the levels of 3e-5 and up, and the four below see a line)
    result = check(_tanh_gelu(3.0), np.array(x), seed=seed)
    assert result.verdict == "passed", result


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_x_minus_sin_at_the_smallest_normal_passes(seed):
    # (where `verify aud_f32cancel` shrank to on seeds 0, 1 and 2) x ± h is ±h, where
    # the forward h - sin(h) rounds at eps·h, the terms it cancels, while x's outputs
    # and their neighbourhood are exactly 0: the rounding measured around x ± h bounds
    # what the numeric -4.7e-18·v is
    result = check(_x_minus_sin(False), np.array(2.2250738585072014e-308), seed=seed)
    assert result.verdict == "passed", result


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_gelu_missing_its_factor_3_fails(seed):
    # the floors above stay where they belong: away from the saturated tail the cubic
    # term's factor is resolved
    result = check(_tanh_gelu(1.0), np.array([0.5, -1.5]), seed=seed)
    assert result.verdict == "failed", result


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_exact_line_still_fails_with_a_wrong_slope(seed):
    # s is exactly a line at every level and every probe (2·x at small integers, and
    # x + 1 at 3): no quantum, and a slope off by 1e-6 fails
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return 2 * x + 1

        @staticmethod
        def backward(ctx, g):
            return g * (2 + 1e-6)

    for x in (np.array(3.0), np.array([-2.0, 5.0])):
        assert check(Twice, x, seed=seed).verdict == "failed"
