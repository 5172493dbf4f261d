"""What torch.autograd.gradcheck and gradgradcheck check, and more (issue 20), for
torch targets: the upstream gradient watched, reentrancy, second order, forward mode,
complex and bfloat16 inputs, the device."""

from __future__ import annotations

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gradcheck.checking.checker import check  # noqa: E402
from gradcheck.errors import CheckUsageError  # noqa: E402
from tests.support import torch_beyond_ops as ops  # noqa: E402

X = np.random.default_rng(0).normal(size=(3, 4))


@pytest.mark.parametrize(
    "op, n_inputs",
    [
        (ops.SquareScalesUpstream, 1),
        (ops.ProductZeroesUpstream, 2),
        (ops.ExpAddsToUpstream, 1),
        (ops.TwoOutputsClampsUpstream, 1),
        (ops.DoubleInPlace, 1),
    ],
)
def test_a_backward_that_changes_its_upstream_gradient_in_place_fails(op, n_inputs):
    result = check(op, *[X + k for k in range(n_inputs)])
    assert result.verdict == "failed"
    assert result.failure.kind == "mutated_upstream", result.failure.message


def test_a_backward_that_leaves_its_upstream_gradient_alone_passes():
    assert check(ops.Tanh, X).verdict == "passed"


# --- reentrancy: a second backward on the same graph, compared bit for bit ------------
def test_a_saved_tensor_changed_by_one_ulp_is_not_reentrant():
    result = check(ops.NudgesSaved, X)
    assert result.failure is not None and result.failure.kind == "not_reentrant"


def test_nondet_tol_allows_a_documented_nondeterministic_backward():
    assert check(ops.NudgesSaved, X, nondet_tol=1e-12).verdict == "passed"
    with pytest.raises(CheckUsageError, match="nondet_tol"):
        check(ops.NudgesSaved, X, nondet_tol=-1.0)


def test_the_second_backward_gets_the_first_ones_memory_layout():
    """A share of checks hands the backward a non-contiguous upstream gradient; the
    second backward on the same graph must get the same layout: torch's kernels for
    another layout round otherwise (softplus at order 2, seed 1: 5.55e-17 apart, which
    was reported as not reentrant)."""
    x = np.zeros((4, 4))
    x[0, 0] = 9.5
    u = np.random.default_rng(3).standard_normal((4, 4))

    def softplus(t):
        return torch.nn.functional.softplus(t)

    for seed in range(4):
        result = check(softplus, x, order=2, upstream=u, seed=seed)
        assert result.verdict == "passed", (seed, result.failure)


# --- second order -------------------------------------------------------------------
def test_order_2_catches_an_intermediate_saved_without_its_graph():
    assert check(ops.SavesIntermediate, X).verdict == "passed"  # first order is right
    result = check(ops.SavesIntermediate, X, order=2)
    assert result.verdict == "failed" and result.failure.kind == "mismatch"
    assert result.failure.input == 0
    assert result.failure.message.startswith("the gradient of the backward (order 2)")
    # the double backward misses the whole 18·v·w term (its analytic value is 0)
    assert all(e.analytic == 0 and e.numeric != 0 for e in result.worst)


def test_order_2_passes_a_twice_differentiable_function():
    result = check(ops.RecomputesIntermediate, X, order=2)
    assert result.verdict == "passed"
    assert result.settings["order"] == 2
    assert len(result.inputs) == 2  # the input and the upstream gradient


def test_order_2_checks_the_gradient_with_respect_to_the_upstream_gradient():
    assert check(ops.DetachesUpstream, X).verdict == "passed"
    result = check(ops.DetachesUpstream, X, order=2)
    assert result.verdict == "failed"
    assert result.failure.input == 1  # the upstream gradient
    assert "with respect to the upstream gradient" in result.failure.message


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_order_2_checks_order_1_first(seed):
    # a first derivative wrong for x < 0 whose double backward agrees with the finite
    # differences of that (wrong) backward: order 2 alone passed it (issue 34)
    result = check(ops.CubeWrongBelowZero, X, order=2, seed=seed)
    assert result.verdict == "failed" and result.failure.kind == "mismatch"
    assert (result.failure.order, result.failure.ad_mode) == (1, "rev")
    assert result.failure.message.startswith("the backward (order 1, reverse mode)")
    assert result.settings["order"] == 2
    assert check(ops.Cube, X, order=2, seed=seed).verdict == "passed"


def test_modes_may_be_spelled_as_everywhere_else():
    # "rev,fwd", as describe(), [tool.gradcheck] and the pytest marker take it
    result = check(ops.ExpWrongJvpAboveOne, np.array([1.5, 2.0]), modes="rev, fwd")
    assert result.verdict == "failed" and result.failure.ad_mode == "fwd"
    assert result.settings["modes"] == ["rev", "fwd"]


def test_forward_mode_checks_the_backward_too():
    # modes=("rev", "fwd") (--forward-mode) is the plain check and the jvp's: a wrong
    # backward fails in reverse mode, and says so
    result = check(ops.CubeWrongBelowZero, X, modes=("rev", "fwd"))
    assert result.verdict == "failed"
    assert (result.failure.order, result.failure.ad_mode) == (1, "rev")


def test_order_2_of_a_torch_function_of_tensors():
    assert check(lambda x, y: torch.sin(x) * y, X, X + 1, order=2).verdict == "passed"


def test_order_2_of_gradchecks_own_op_says_what_it_needs():
    import gradcheck as mg

    with pytest.raises(CheckUsageError, match="torch or JAX target"):
        check(lambda x: mg.tanh(x), X, order=2)


# --- forward mode -------------------------------------------------------------------
def test_forward_mode_catches_a_wrong_jvp_at_its_elements():
    x = np.array([[0.5, 1.5], [-0.3, 2.0]])
    assert check(ops.ExpWrongJvpAboveOne, x).verdict == "passed"  # the backward is right
    result = check(ops.ExpWrongJvpAboveOne, x, modes=("rev", "fwd"))
    assert result.verdict == "failed" and result.failure.kind == "mismatch"
    assert result.failure.message.startswith("forward mode (jvp)")
    assert result.failure.mismatched == 2
    assert {e.index for e in result.worst if e.ratio > 1} == {(0, 1), (1, 1)}  # where x > 1


def test_forward_mode_passes_a_right_jvp_and_says_when_there_is_none():
    assert check(ops.ExpJvp, X, modes=("rev", "fwd")).verdict == "passed"
    assert check(ops.ExpJvp, X, modes=("fwd",)).verdict == "passed"
    result = check(ops.Tanh, X, modes=("fwd",))  # no jvp staticmethod
    assert result.failure.kind == "backward_error" and "jvp" in result.failure.message


# --- complex ------------------------------------------------------------------------
Z = X + 1j * np.random.default_rng(1).normal(size=X.shape)


@pytest.mark.parametrize("op", [ops.ComplexSquare, ops.AbsSquared, ops.RealToComplex])
def test_right_complex_functions_pass(op):
    x = X if op is ops.RealToComplex else Z
    assert check(op, x).verdict == "passed"


def test_a_non_holomorphic_function_of_two_complex_inputs_passes():
    assert check(ops.TimesConj, Z, Z[::-1].copy()).verdict == "passed"
    assert check(lambda z: torch.abs(z) ** 2 * z, Z).verdict == "passed"


def test_a_forgotten_conjugation_is_a_mismatch():
    result = check(ops.ComplexSquareNoConj, Z)
    assert result.verdict == "failed" and result.failure.kind == "mismatch"
    # (the part named by the input's name: z.real, z.imag)
    assert re.search(r"input \w+\.(real|imag)\b", result.failure.message)


def test_dtype_complex128_makes_real_inputs_complex():
    assert check(ops.ComplexSquare, X, dtype="complex128").verdict == "passed"


# --- bfloat16 -----------------------------------------------------------------------
def test_bfloat16_runs_in_bfloat16_against_a_float64_reference():
    ops.SoftplusInItsDtype.ran_in.clear()
    result = check(ops.SoftplusInItsDtype, X, dtype="bfloat16")
    assert result.verdict == "passed", result.failure and result.failure.message
    assert torch.bfloat16 in ops.SoftplusInItsDtype.ran_in
    assert torch.float64 in ops.SoftplusInItsDtype.ran_in  # the reference
    assert result.settings["dtype"] == "bfloat16"


def test_bfloat16_still_catches_a_wrong_gradient():
    result = check(ops.SoftplusWrongBy20Percent, X, dtype="bfloat16")
    assert result.verdict == "failed" and result.failure.kind == "mismatch"


# --- a device -----------------------------------------------------------------------
def test_on_copies_of_the_inputs_changes_still_show():
    # device="cpu": the op runs on copies (as on a GPU); the upstream gradient changed
    # in place is copied back and caught, a right op passes.
    result = check(ops.SquareScalesUpstream, X, device="cpu")
    assert result.failure.kind == "mutated_upstream"
    assert check(ops.Tanh, X, device="cpu").verdict == "passed"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_on_cuda():
    assert check(ops.Tanh, X, device="cuda").verdict == "passed"
    assert check(ops.ComplexSquareNoConj, Z, device="cuda").failure.kind == "mismatch"
    assert check(ops.SavesIntermediate, X, device="cuda", order=2).verdict == "failed"
    assert check(ops.SquareScalesUpstream, X, device="cuda").failure.kind == "mutated_upstream"
