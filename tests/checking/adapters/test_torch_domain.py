"""torch targets (issue 34): a LinAlgError is a domain error; a complex target whose
forward raises at some shapes is searched like a real one; the re-runs with an input
made a constant fit their upstream gradient to the outputs that take part; torch's
ZeroTensor gradient is zeros; a backward that assumes a contiguous upstream gradient
is caught (the upstream gradient's layout)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

import gradcheck  # noqa: E402
from gradcheck.checking.checker import check  # noqa: E402
from gradcheck.checking.vocabulary import Skip  # noqa: E402
from gradcheck.cli import main  # noqa: E402
from tests.support import torch_domain_ops as ops  # noqa: E402

RNG = np.random.default_rng(0)


def test_torch_linalg_error_is_a_domain_error():
    for x in (np.zeros((2, 2)), np.zeros((2, 2), complex)):
        result = check(ops.inverse, x)
        assert (result.verdict, result.note) == ("inconclusive", Skip.DOMAIN_ERROR)
    result = gradcheck.verify(ops.inverse, shapes=["2,2"], max_examples=30, seed=1)
    assert result.verdict == "passed", result


def test_a_complex_target_that_runs_at_some_shapes_only_is_searched():
    out = CliRunner().invoke(
        main,
        [
            "verify",
            "tests.support.torch_domain_ops:sine_of_arrays",
            "--dtype",
            "complex128",
            *("--max-examples", "30", "--seed", "0"),
        ],
    )
    assert out.exit_code == 0, out.output
    assert "the op does not run at the shape" in out.output


@pytest.mark.parametrize(
    "op, shapes",
    [
        (ops.scaled_pair, [(3,), (4,)]),
        (ops.broadcast_pair, [(3, 1), (4,)]),
        (ops.meshgrid_pair, [(3,), (4,)]),
    ],
)
def test_outputs_of_one_input_each_pass_the_constant_input_rerun(op, shapes):
    result = check(op, *(RNG.normal(size=s) for s in shapes))
    assert result.verdict == "passed", result.failure


def test_a_zero_tensor_gradient_is_zeros():
    for order in (1, 2):
        result = check(ops.sign, np.array([1.0, -2.0, 0.5]), order=order)
        assert result.verdict == "passed", result.failure


@pytest.mark.parametrize("order", [1, 2])
def test_an_undefined_gradient_is_zeros(order):
    result = check(ops.zeros_of, RNG.normal(size=(3, 2)), order=order)
    assert result.verdict == "passed", result.failure


@pytest.mark.parametrize("op", [ops.ViewsUpstream, ops.StridesUpstream])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_backward_that_assumes_a_contiguous_upstream_gradient_fails(op, seed):
    result = gradcheck.verify(op, seed=seed, max_examples=100)
    assert result.verdict == "failed"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_its_correct_twin_passes(seed):
    assert gradcheck.verify(ops.ReshapesUpstream, seed=seed, max_examples=100).passed
