"""The "Largest error seen" block shows an example whose relative error is larger than
the reported one's, as the report prints them: a bug off by a constant factor has the
same relative error everywhere, and an example that barely failed (error ratio 1.3,
errors of 5e-14) was shown as the run's largest beside a shrunk example of ratio 5e6."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import gradcheck  # noqa: E402


class _TanhGradHalf(torch.autograd.Function):
    """tanh's backward, whose own derivative with respect to y lacks its factor 2."""

    @staticmethod
    def forward(ctx, y, g):
        ctx.save_for_backward(y, g)
        return g * (1 - y * y)

    @staticmethod
    def backward(ctx, gg):
        y, g = ctx.saved_tensors
        return -y * g * gg, gg * (1 - y * y)


class TanhWrongSecond(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return _TanhGradHalf.apply(y, g)


def test_relative_errors_equal_as_printed_are_no_larger():
    from gradcheck.search.results import _larger

    assert not _larger(0.5000004, 0.4999999)
    assert _larger(0.6, 0.5) and _larger(0.5, float("nan"))
    assert not _larger(float("nan"), 0.5)


def test_a_tie_with_the_shrunk_example_shows_no_largest_error_block():
    result = gradcheck.verify(TanhWrongSecond, order=2, seed=0)
    assert not result.passed and result.failure.failure.order == 2
    text = gradcheck.report(result)
    assert "Largest error seen" not in text, text
    assert result.max_rel_error_at == "the reported example"
    assert result.worst is result.failure
