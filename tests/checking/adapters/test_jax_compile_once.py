"""A JAX target's programs are compiled once per target and shape, not run op by op
for every example (issue 40: op by op, JAX compiles each operation again for each new
shape, and the checker's higher-order targets were made anew for each example); an op
jax.jit cannot trace still runs, and fails, as it does when called eagerly."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import gradcheck  # noqa: E402
from gradcheck.checking.checker import check  # noqa: E402
from tests.support import jax_counting_ops as ops  # noqa: E402

X = np.array([0.3, 1.2, -0.7])


@pytest.mark.parametrize("order", [1, 2])
def test_the_body_of_a_function_runs_a_few_times_per_shape(order):
    ops.RUNS.clear()
    result = gradcheck.verify(ops.xtanh, shapes=["3"], max_examples=15, seed=0, order=order)
    assert result.verdict == "passed"
    # traced once for the forward and once per gradient program (op by op: once
    # per forward, backward and finite difference of every example, hundreds)
    assert ops.RUNS["xtanh"] <= 12


@pytest.mark.parametrize("order", [1, 2])
def test_a_custom_vjp_is_traced_not_run_per_example(order):
    ops.RUNS.clear()
    result = gradcheck.verify(ops.cube, shapes=["2,3"], max_examples=15, seed=0, order=order)
    assert result.verdict == "passed"
    assert ops.RUNS["cube"] <= 12 and ops.RUNS["cube backward"] <= 12


def test_rules_that_cannot_be_traced_run_op_by_op():
    assert check(ops.branchy_square, X).verdict == "passed"
    result = gradcheck.verify(ops.branchy_square, max_examples=10, seed=0)
    assert result.verdict == "passed"


def test_a_wrong_backward_that_cannot_be_traced_is_still_caught():
    failure = check(ops.branchy_square_wrong, X).failure
    assert failure is not None and failure.kind == "mismatch"
    result = gradcheck.verify(ops.branchy_square_wrong, max_examples=10, seed=0)
    assert result.verdict == "failed"
