"""The graph is released: no memory growth over repeated backprops and checks.

Measured with ``tracemalloc`` (bytes allocated by Python and NumPy and still alive),
not timed: after a warm-up (caches filled, first-call imports done) the traced memory
must stay flat while the loop goes on. A leak of one small graph per iteration (a few
hundred bytes at least) would grow by far more than the bound over the iterations
that follow.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable

import numpy as np
import pytest

import gradcheck as mg
from gradcheck import Operation

# Bytes the traced memory may move between the two measurements: allocator and
# interpreter noise (free lists, a dict resizing once), far below one leaked graph
# per iteration.
BOUND = 64 * 1024


class SinTimesX(Operation):
    """x * sin(x): a small op of the user's, with a correct backward."""

    def __call__(self, x: mg.Tensor) -> np.ndarray:
        self.variables = (x,)
        return x.data * np.sin(x.data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs) -> np.ndarray:
        x = self.variables[0].data
        return grad * (np.sin(x) + x * np.cos(x))


def traced_growth(step: Callable[[], object], first: int, total: int) -> int:
    """Traced bytes after ``total`` calls of ``step`` minus after the first ``first``."""
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(first):
            step()
        gc.collect()
        at_first = tracemalloc.get_traced_memory()[0]
        for _ in range(total - first):
            step()
        gc.collect()
        at_total = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return at_total - at_first


_RNG = np.random.default_rng(0)
X0, W0 = _RNG.standard_normal(8), _RNG.standard_normal((8, 8))


def forward_backward() -> None:
    x, w = mg.Tensor(X0), mg.Tensor(W0)
    y = mg.tanh(x @ w) * 2.0 + mg.execute_op(SinTimesX, x)
    y.sum().backward()
    assert x.grad is not None and y.creator is None  # the graph was cleared


def one_check() -> None:
    result = mg.check(SinTimesX, np.array([0.5, -1.25, 2.0]), seed=0)
    assert result.verdict == "passed"


def test_a_leak_of_one_graph_per_iteration_exceeds_the_bound() -> None:
    kept = []  # what a leaking engine would hold on to

    def leaky() -> None:
        x = mg.Tensor(X0)
        kept.append(mg.sin(x) * x)

    assert traced_growth(leaky, 100, 600) > BOUND


def test_graph_is_cleared_by_backward() -> None:
    x = mg.Tensor([1.0, 2.0])
    y = mg.sin(x) * x
    z = y.sum()
    z.backward()
    assert z.creator is None and y.creator is None
    assert x.grad is not None


def test_no_growth_over_repeated_forward_backward() -> None:
    assert abs(traced_growth(forward_backward, 100, 600)) < BOUND


def test_no_growth_over_repeated_checks() -> None:
    assert abs(traced_growth(one_check, 20, 100)) < BOUND


@pytest.mark.slow
def test_no_growth_over_10000_forward_backward() -> None:
    assert abs(traced_growth(forward_backward, 1_000, 10_000)) < BOUND


@pytest.mark.slow
def test_no_growth_over_10000_checks() -> None:
    assert abs(traced_growth(one_check, 1_000, 10_000)) < BOUND
