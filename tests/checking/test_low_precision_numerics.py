"""Issue 34 items 9 and 11: a forward (and backward) that computes in float16 inside a
float64 op is judged by float16's numerics, at shift-symmetric points and where an
output rounds to a constant.

softmax(x.half()) at [0, 0] moved by one step everywhere stays [0.5, 0.5], so it was
taken for a float64 forward whose steps float16 rounds away (numeric 0 against a right
gradient); where p1 rounds to 1 in float16 at every level, x0's share in it was lost;
and torch's own backward through it rounds in float16's subnormal steps, which scaling
by -2 does not commute with (read as a backward not linear in ``v``)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import check
from gradcheck.checking.numerical import Evaluator

torch = pytest.importorskip("torch")


def _half_softmax(factor: float = 1.0):
    class HalfSoftmax(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.softmax(x.half(), -1).double()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return y * (g - (g * y).sum(-1, keepdim=True)) * factor

    return HalfSoftmax


def _torch_half_softmax(x):
    """torch's own softmax and its backward, both in float16."""
    return torch.softmax(x.half(), -1).double()


V = np.array([0.3, -0.7])


def test_a_shift_invariant_forward_in_float16_is_evaluated_in_float16():
    def forward(arrays, params):
        return _torch_half_softmax(torch.from_numpy(arrays[0])).numpy()

    ev = Evaluator(forward, [np.zeros(2)], None, V)
    assert ev.inner == np.float16 and ev.eval_dtype == np.float16


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("x", [[0.0, 0.0], [-8.8, 5.3], [-6.0, 5.0]])
@pytest.mark.parametrize("op", [_half_softmax(), _torch_half_softmax], ids=["function", "torch"])
def test_a_softmax_computed_in_float16_passes(op, x, seed):
    result = check(op, np.array(x), upstream=V, seed=seed)
    assert result.verdict == "passed", result


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("x", [[0.0, 0.0], [0.5, -1.0, 2.0], [1.3, -0.4]])
def test_a_softmax_computed_in_float16_with_a_backward_off_by_10_percent_fails(x, seed):
    assert check(_half_softmax(1.1), np.array(x), seed=seed).verdict == "failed"


def _nonlinear_half_softmax(x):
    """A backward in float16 that is not linear in ``v`` (it scales by 1 + |v|)."""

    class Squared(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.softmax(x.half(), -1)
            ctx.save_for_backward(y)
            return y.double()

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            g = g.half()
            return (y * (g - (g * y).sum(-1, keepdim=True)) * (1 + g.abs())).double()

    return Squared.apply(x)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_backward_in_float16_not_linear_in_v_still_fails(seed):
    result = check(_nonlinear_half_softmax, np.array([0.5, -1.0, 2.0]), seed=seed)
    assert result.verdict == "failed" and "nonlinear" in str(result), result


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_torchs_backward_in_float16_subnormals_is_linear(seed):
    # p2 = 1.5e-5 is a float16 subnormal: backward(-2v) and -2·backward(v) differ by
    # one subnormal step, 6e-8 (it was "nonlinear" on seed 0)
    result = check(_torch_half_softmax, np.array([2.7, -4.6, -9.2]), seed=seed)
    assert result.verdict == "passed", result


def _torch_half_expm1(x):
    """exp(x.half()) - 1, in float16: -1 exactly at x = -10, and up to moves of 4."""
    return (torch.exp(x.half()) - 1).double()


def _half_expm1(factor: float):
    class HalfExpm1(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (torch.exp(x.half()) - 1).double()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * torch.exp(x.half()).double() * factor

    return HalfExpm1


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("x", [[-10.0], [-12.0], [-10.0, 0.5, 3.0]])
def test_a_saturated_expm1_computed_in_float16_passes(x, seed):
    # its float16 output stands still at -1 under float16's steps: taken for a float64
    # forward, it was differenced with float64's steps (numeric 0 against 5.7e-6·v)
    assert check(_torch_half_expm1, np.array(x), seed=seed).verdict == "passed"
    assert check(_half_expm1(1.0), np.array(x), seed=seed).verdict == "passed"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_saturated_expm1_computed_in_float16_off_by_10_percent_fails(seed):
    result = check(_half_expm1(1.1), np.array([-10.0, 0.5, 3.0]), seed=seed)
    assert result.verdict == "failed", result


def _torch_half_tanh(x):
    """torch's tanh and its backward, both in float16: the backward rounds ``v``."""
    return torch.tanh(x.half()).double()


def _half_tanh_off(x):
    class HalfTanhOff(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.tanh(x.half())
            ctx.save_for_backward(y)
            return y.double()

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return (g.half() * (1 - y * y) * 1.01).double()

    return HalfTanhOff.apply(x)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_backward_in_float16_may_round_the_upstream_gradient_to_float16(seed):
    # at 0 its gradient is v rounded to float16 (0.640625 against 0.64042): it was a
    # mismatch of 3e-4 with float64's tolerance, which allows no rounding of v
    x = np.array([10.0, 10.0, 0.0])
    assert check(_torch_half_tanh, x, seed=seed).verdict == "passed"
    assert check(_half_tanh_off, x, seed=seed).verdict == "failed"
