"""Issue 34 item 9: the rounding floor covers a forward that cancels.

A cross-entropy at a large logit is ``log(1 + δ)`` with δ = 2e-15 (or ``35 + δ - 35``):
its output rounds to a constant at every finite-difference step, and its true
gradient, ~1e-15, is far below what those steps resolve. It passes, in full and in fast
mode; an error the steps do resolve still fails."""

from __future__ import annotations

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
