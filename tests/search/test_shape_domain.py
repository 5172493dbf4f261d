"""Shapes an op does not run at (issue 19, item 4): a forward that raises at a drawn
shape whatever the values skips the example as outside the op's domain, and the run
says which shapes and what to give; one that raises at some values only still fails."""

from __future__ import annotations

import gradcheck
import gradcheck as mg


def row_norms(x):
    if x.ndim < 2:
        raise ValueError(f"x must be a matrix, got {x.ndim} dimensions")
    return mg.sum(x * x, axis=-1)


def never_runs(x):
    raise RuntimeError("this op is broken")


def breaks_below_zero(x):
    if (x.data < 0).any():
        raise ValueError("negative input")
    return mg.sqrt(x + 1.0)


def test_shapes_the_op_rejects_are_skipped_and_named():
    result = gradcheck.verify(row_norms, max_examples=20, seed=0)
    assert result.verdict == "passed", result.note
    assert result.examples == 20 and result.skipped["the op does not run at the shape"] > 0
    assert "ValueError: x must be a matrix, got 0 dimensions at ()" in result.note
    assert "--min-dims 2" in result.note and "describe(min_dims=2)" in result.note
    declared = gradcheck.verify(row_norms, min_dims=2, max_examples=20, seed=0)
    assert declared.verdict == "passed" and not declared.skipped


def test_an_op_that_runs_at_no_shape_fails_with_its_error_and_the_shapes():
    result = gradcheck.verify(never_runs, max_examples=10, seed=0)
    assert result.verdict == "failed" and result.failure.failure.kind == "forward_error"
    assert "RuntimeError: this op is broken" in result.failure.failure.message
    assert "at every value of every shape drawn" in result.note and "--shape" in result.note


def test_a_forward_that_raises_at_some_values_still_fails():
    result = gradcheck.verify(breaks_below_zero, max_examples=20, seed=0)
    assert result.verdict == "failed"
    assert result.failure.failure.kind == "forward_error"


def log_raises_below_zero(x):
    if (x.data < 0).any():
        raise ValueError("log of a negative number")
    return mg.log(x) * 2


def test_a_forward_that_raises_at_most_values_of_a_shape_is_not_a_shape_the_op_rejects():
    # Over -1..1, four elements are all positive once in 16 draws: three draws at (4,)
    # raising read as "the op does not run at the shape", skipped, while the op runs
    # at every shape (at 0, where its output is -inf, first). Its error is the values'.
    for seed in (0, 1, 2):
        result = gradcheck.verify(
            log_raises_below_zero, domain=(-1.0, 1.0), max_examples=30, seed=seed
        )
        assert result.verdict == "failed"
        assert "the op does not run at the shape" not in result.skipped, result.skipped
        assert "ValueError: log of a negative number" in result.failure.failure.message
        assert "outside the op's domain" not in result.note


def test_a_search_on_a_domain_at_the_scale_of_1e_9_catches_a_1e_3_error():
    # a domain of (-2e-9, 2e-9) was a usage error (no value 0.01 from both bounds)
    import numpy as np

    from tests.support.checker_ops import elementwise

    def f(x):
        return 1e-9 * np.tanh(x / 1e-9)

    def df(x):
        return 1 - np.tanh(x / 1e-9) ** 2

    right, wrong = elementwise("tanh", f, df), elementwise("tanh", f, df, scale=1 + 1e-3)
    for seed in (0, 1, 2):
        found = gradcheck.verify(right, domain=(-2e-9, 2e-9), seed=seed, max_examples=30)
        assert found.verdict == "passed", found
        found = gradcheck.verify(wrong, domain=(-2e-9, 2e-9), seed=seed, max_examples=30)
        assert found.verdict == "failed", found


def scaled_sum(x, scale, axis):
    # (a function with positional parameters that are no tensors, drawn as tensors
    # for want of a value: issue 34, user round 6's torch Function with a float
    # temperature and an int dim said only "--shape ... --integers ...")
    if isinstance(axis, mg.Tensor):
        raise TypeError("sum(): argument 'axis' must be int, not Tensor")
    return mg.sum(x * scale, axis=axis)


def test_an_input_the_error_names_is_said_to_be_maybe_a_parameter():
    result = gradcheck.verify(scaled_sum, max_examples=5, seed=0)
    assert result.verdict == "failed"
    assert (
        "axis, named in the error, may be a parameter and not a tensor: give its value "
        "with --kwargs '{\"axis\": ...}' (describe(kwargs=...))"
    ) in result.note
    # (the first input is the op's tensor, never suggested as a parameter)
    assert "x, named" not in result.note
    given = gradcheck.verify(scaled_sum, kwargs={"axis": 0}, min_dims=1, max_examples=5, seed=0)
    assert "named in the error" not in (given.note or "")


def correlate_2d(x, k):
    """A valid 2-d correlation (user round 7): it raises where x is smaller than the
    kernel, whose shape the user gave ("h,w" and "2,3": different shapes by design)."""
    if x.shape[0] < k.shape[0] or x.shape[1] < k.shape[1]:
        raise ValueError("window shape cannot be larger than input array shape")
    rows, cols = x.shape[0] - k.shape[0] + 1, x.shape[1] - k.shape[1] + 1
    out = 0.0
    for a in range(k.shape[0]):
        for b in range(k.shape[1]):
            out = out + x[a : a + rows, b : b + cols] * k[a, b]
    return out


def test_given_shapes_that_differ_are_not_broadcast_shapes_the_op_refuses():
    # Two rejections of (h, w) too small for the (2, 3) kernel were read as the op
    # refusing broadcast shapes: the search ended there, 0 examples, forward_error
    # (and a hint to draw equal shapes), though the shapes were the user's own.
    for seed in (0, 1, 2):
        result = gradcheck.verify(correlate_2d, shapes=["h,w", "2,3"], max_examples=15, seed=seed)
        assert result.verdict == "passed", (seed, result.note)
        assert result.examples == 15 and "broadcast" not in result.note
        assert "window shape cannot be larger" in result.note  # (the shapes it skipped)
