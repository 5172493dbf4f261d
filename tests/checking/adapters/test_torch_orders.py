"""torch targets at any order, complex inputs at order 2 and in forward mode (issue 38
item 4)."""

from __future__ import annotations

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gradcheck.checking.checker import check  # noqa: E402
from tests.support import torch_order_ops as ops  # noqa: E402

X = np.array([0.3, 1.2, -0.7])
Z = np.array([0.3 + 0.2j, -1.1 + 0.7j])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_wrong_third_derivative_fails_at_order_3_only(seed):
    assert check(ops.CubeThirdWrong, X, order=2, seed=seed).verdict == "passed"
    failure = check(ops.CubeThirdWrong, X, order=3, seed=seed).failure
    assert (failure.kind, failure.order) == ("mismatch", 3)
    assert failure.message.startswith("the gradient of the order 2 backward (order 3)")
    assert check(ops.CubeRight, X, order=3, seed=seed).verdict == "passed"
    assert check(ops.CubeRight, X, order=4, seed=seed).verdict == "passed"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_complex_inputs_at_order_2(seed):
    assert check(ops.ComplexSquareDetached, Z, seed=seed).verdict == "passed"
    failure = check(ops.ComplexSquareDetached, Z, order=2, seed=seed).failure
    assert (failure.kind, failure.order) == ("mismatch", 2)
    # (the part named by the input's name: z.real, z.imag)
    assert re.search(r"input \w+\.(real|imag)\b", failure.message)
    assert check(ops.ComplexSquare, Z, order=2, seed=seed).verdict == "passed"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_complex_inputs_in_forward_mode(seed):
    failure = check(ops.ComplexSquareConjugatedJvp, Z, modes="rev,fwd", seed=seed).failure
    assert (failure.kind, failure.ad_mode) == ("mismatch", "fwd")
    assert check(ops.ComplexSquare, Z, modes="rev,fwd", seed=seed).verdict == "passed"


def test_a_function_of_complex_tensors_at_order_2_in_both_modes():
    def f(z):
        return z * torch.sin(z) + torch.conj(z) * z

    assert check(f, Z, order=2, modes="rev,fwd").verdict == "passed"


class _Cis(torch.autograd.Function):
    """exp(i·x) of a real x: one complex output. ``detach``: the backward detaches
    the saved output, right at order 1 and wrong at order 2."""

    @staticmethod
    def forward(ctx, x, detach):
        y = torch.polar(torch.ones_like(x), x)
        ctx.save_for_backward(y)
        ctx.detach = detach
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        y = y.detach() if ctx.detach else y
        return (grad * (1j * y).conj()).real, None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_order_2_of_a_real_op_with_a_complex_output(seed):
    # (issue 34, user round 6: `--order 2` on such an op, correct or not, failed with
    # "forward_error: order 2 of an op with complex outputs is not supported", though
    # docs/torch.md documents complex outputs at order 2)
    x = np.array([0.3, -1.2]) + 0.1 * seed
    right = check(_Cis, x, order=2, seed=seed, params={"detach": False})
    assert right.verdict == "passed", right
    wrong = check(_Cis, x, order=2, seed=seed, params={"detach": True})
    assert wrong.failure.kind == "mismatch" and wrong.failure.order == 2, wrong
