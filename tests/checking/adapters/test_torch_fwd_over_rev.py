"""``--order 2`` in forward mode for torch targets is forward-over-reverse (torch's
``gradgradcheck(check_fwd_over_rev=True)``): the jvp of the backward, against finite
differences of the backward (issue 38 item 3)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gradcheck.checking.checker import check  # noqa: E402
from tests.support import torch_fwd_over_rev_ops as ops  # noqa: E402

X = np.array([0.3, 1.2, -0.7])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_wrong_jvp_of_the_backward_fails_at_order_2_in_forward_mode(seed):
    # reverse over reverse runs the backward's backward, which is right
    assert check(ops.SinBackwardJvpWrong, X, order=2, seed=seed).verdict == "passed"
    result = check(ops.SinBackwardJvpWrong, X, order=2, modes="rev,fwd", seed=seed)
    failure = result.failure
    assert (failure.kind, failure.order, failure.ad_mode) == ("mismatch", 2, "fwd")
    assert failure.message.startswith(
        "the gradient of the backward (order 2) in forward mode (the jvp of the backward: "
        "fwd-over-rev)"
    )
    assert check(ops.SinBackwardJvpRight, X, order=2, modes="rev,fwd", seed=seed).verdict == (
        "passed"
    )


def test_fwd_alone_at_order_2_checks_the_jvp_of_the_backward():
    failure = check(ops.SinBackwardJvpWrong, X, order=2, modes="fwd").failure
    assert (failure.kind, failure.order, failure.ad_mode) == ("mismatch", 2, "fwd")


def test_a_backward_without_forward_mode_fails_at_order_2_in_forward_mode_only():
    assert check(ops.SinBackwardWithoutJvp, X, order=2, modes="rev").verdict == "passed"
    failure = check(ops.SinBackwardWithoutJvp, X, order=2, modes="rev,fwd").failure
    assert (failure.kind, failure.order, failure.ad_mode) == ("backward_error", 2, "fwd")
    assert "jvp" in failure.message


def test_the_jvp_of_the_backward_with_respect_to_the_upstream_gradient():
    # the tangent of v (the order 2 target's last input) runs the backward's jvp in g
    class WrongInG(torch.autograd.Function):
        @staticmethod
        def forward(x, g):
            return g * torch.cos(x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)
            ctx.save_for_forward(*inputs)

        @staticmethod
        def backward(ctx, w):
            x, g = ctx.saved_tensors
            return -w * g * torch.sin(x), w * torch.cos(x)

        @staticmethod
        def jvp(ctx, tx, tg):
            x, g = ctx.saved_tensors
            return -tx * g * torch.sin(x) + tg * torch.sin(x)  # sin for cos

    failure = check(ops._sin(WrongInG), X, order=2, modes="fwd").failure
    assert (failure.kind, failure.order, failure.ad_mode) == ("mismatch", 2, "fwd")
    assert "with respect to the upstream gradient" in failure.message


@pytest.mark.parametrize("seed", [0, 1])
def test_order_3_in_forward_mode_is_the_jvp_of_the_order_2_backward(seed):
    assert check(ops.SinBackwardJvpRight, X, order=3, modes="fwd", seed=seed).verdict == "passed"
    failure = check(ops.SinBackwardJvpWrong, X, order=3, modes="fwd", seed=seed).failure
    # (found at order 2 already: orders are supersets)
    assert (failure.order, failure.ad_mode) == (2, "fwd")


def test_a_function_of_torch_tensors_in_forward_over_reverse():
    def f(x, y):
        return torch.tanh(x) * y + x**3

    assert check(f, X, X[::-1].copy(), order=2, modes="fwd").verdict == "passed"
