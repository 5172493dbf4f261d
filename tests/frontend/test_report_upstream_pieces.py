"""The report of an op of several outputs shows the upstream gradient ``v`` piece by
piece, each under the label its failure names (``output 1 of 2 (float64[3])``): it was
one joined vector (``float64[6]`` beside outputs of ``float64[3]``), which a reader
could not map to the output the failure names."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradcheck  # noqa: E402


class ProdSumWrongSecond(torch.autograd.Function):
    """(x * y, x + y**2), whose second output's gradient for y lacks its factor 2."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y, x + y * y

    @staticmethod
    def backward(ctx, ga, gb):
        x, y = ctx.saved_tensors
        return ga * y + gb, ga * x + gb * y


def test_v_is_shown_per_output_and_replays_joined():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    result = gradcheck.check(ProdSumWrongSecond, x, y)
    assert result.failure.kind == "mismatch"
    text = str(result)
    assert "output 1 of 2 (float64[3]): the gradient of input y" in text
    assert "v, the upstream gradient (float64[6]: the outputs' pieces" in text
    v = result.upstream
    shown = text.split("v, the upstream gradient")[1]
    first, second = shown.split("output 0 of 2 (float64[3]):")[1].split(
        "output 1 of 2 (float64[3]):"
    )
    # (output 0's piece is zero: the failure's numbers are output 1's alone)
    assert "[0., 0., 0.]" in first and str(float(v[3]))[:10] in second
    # the joined v replays the check, as the report says
    again = gradcheck.check(ProdSumWrongSecond, x, y, upstream=v)
    assert np.array_equal(again.upstream, v) and again.failure.kind == "mismatch"


def test_one_output_keeps_one_v():
    result = gradcheck.check(lambda x: gradcheck.tanh(x), np.array([0.1, 0.2]))
    assert result.upstream_outputs == []


def test_the_numbers_are_those_of_the_output_the_label_names():
    # "output 1 of 2" above vᵀJ summed over both outputs (issue 34): the numbers must
    # be output 1's alone, v^T J with v zero on output 0, and v shown so
    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    result = gradcheck.check(ProdSumWrongSecond, x, y)
    assert result.failure.output == 1
    v = result.upstream
    assert np.all(v[:3] == 0.0) and np.all(v[3:] != 0.0)
    worst = result.failure.worst[0]
    i = worst.index[0]
    # output 1 is x + y**2: its true v^T J for y is 2 y v_1, the bug's y v_1
    assert np.isclose(worst.numeric, 2 * y[i] * v[3 + i], rtol=1e-6)
    assert np.isclose(worst.analytic, y[i] * v[3 + i], rtol=1e-12)


class CisNoConj(torch.autograd.Function):
    """exp(i·x) of a real x, one complex output; the backward forgets the conjugate."""

    @staticmethod
    def forward(ctx, x):
        y = torch.polar(torch.ones_like(x), x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return (grad * (1j * y)).real


def test_one_complex_output_is_named_as_one_output_and_its_part():
    # (issue 34: a complex output was labelled "output 1 of 2 (float64[2])", its
    # imaginary part, as if the op had two real outputs)
    result = gradcheck.check(CisNoConj, np.array([0.3, -1.2]))
    assert result.failure.kind == "mismatch"
    text = str(result)
    assert "of 2" not in text
    assert "the imaginary part of the output (complex128[2]): the gradient of input x" in text
    assert "v, the upstream gradient (float64[4]: the output's real and imaginary parts" in text
    assert "  the real part of the output (complex128[2]):" in text
    again = gradcheck.check(CisNoConj, np.array([0.3, -1.2]), upstream=result.upstream)
    assert again.failure.kind == "mismatch"
