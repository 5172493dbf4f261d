"""Backprop through ``stack`` and ``concatenate`` of n inputs does work linear in n:
counted in calls (Python and C functions entered) and in the arrays it allocates, never
timed (speed is measured by ``benchmarks/joining_backward.py``)."""

from __future__ import annotations

import sys
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcheck as mg

JOINS: dict[str, Callable[[list[Any]], Any]] = {
    "stack": lambda xs: mg.stack(xs),
    "stack_last_axis": lambda xs: mg.stack(xs, axis=-1),
    "concatenate": lambda xs: mg.concatenate(xs),
    "concatenate_axis_1": lambda xs: mg.concatenate(xs, axis=1),
    "concatenate_flat": lambda xs: mg.concatenate(xs, axis=None),
}


def _calls_during(action: Callable[[], None]) -> int:
    """Python and C functions entered while ``action`` runs."""
    calls = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(profile)
    try:
        action()
    finally:
        sys.setprofile(None)
    return calls


def _backward_calls(join: Callable[[list[Any]], Any], n: int) -> int:
    xs = [mg.Tensor(np.ones((2, 3))) for _ in range(n)]
    total = join(xs).sum()
    calls = _calls_during(total.backward)
    np.testing.assert_array_equal(xs[n // 2].grad, np.ones((2, 3)))
    return calls


@pytest.mark.parametrize("name", sorted(JOINS))
def test_backward_calls_grow_linearly_with_the_number_of_inputs(name):
    # (concatenate summed the lengths of the inputs before each input, per input:
    # 4x the inputs made 16x the calls)
    small, large = _backward_calls(JOINS[name], 250), _backward_calls(JOINS[name], 1000)
    assert small > 250  # (the profile sees the per-input work)
    assert large <= 4.2 * small, (small, large)


@pytest.mark.parametrize("name", sorted(JOINS))
def test_backward_copies_no_part_of_the_gradient_per_input(name):
    # The gradient reaching the join from `sum` is a broadcast view; np.take made a
    # contiguous copy of all of it for each input (n inputs: n copies of n parts).
    # Each input now gets a view of its part, copied only when its .grad is read.
    m = 1 << 17  # one input's gradient: 1 MiB
    xs = [mg.Tensor(np.ones((1, m))) for _ in range(4)]
    total = JOINS[name](xs).sum()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        total.backward()
        allocated = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert allocated < m * 8 // 8, f"{allocated} bytes allocated at once"
    for x in xs:
        np.testing.assert_array_equal(x.grad, np.ones((1, m)))


@pytest.mark.parametrize("axis", [0, -1])
def test_stacking_zero_d_tensors_gives_zero_d_gradients(axis):
    xs = [mg.Tensor(float(i)) for i in range(3)]
    (mg.stack(xs, axis=axis) * np.array([1.0, 2.0, 3.0])).sum().backward()
    assert [type(x.grad) for x in xs] == [np.ndarray] * 3
    assert [x.grad.shape for x in xs] == [()] * 3
    assert [float(x.grad) for x in xs] == [1.0, 2.0, 3.0]


def test_each_input_reads_a_gradient_of_its_own():
    xs = [mg.Tensor(np.ones(2)) for _ in range(3)]
    ys = [mg.Tensor(np.ones((2, 2))) for _ in range(2)]
    mg.stack(xs).sum().backward()
    mg.concatenate(ys, axis=None).sum().backward()
    grads = [x.grad for x in xs] + [y.grad for y in ys]
    for i, g in enumerate(grads):
        assert g.flags.writeable
        for h in grads[i + 1 :]:
            assert not np.shares_memory(g, h)
    grads[0][0] = 5.0  # the user's own array: nobody else sees the change
    assert xs[1].grad[0] == 1.0
