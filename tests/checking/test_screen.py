"""Auto mode's screen (gradcheck.checking.screen): two directional derivatives stand
for full mode's element-by-element comparison of a float64 input where they agree
within what one wrong element would exceed; what full mode finds, auto mode finds."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as mg
from gradcheck import Operation


def x_sin_x(x):
    return mg.sin(x) * x


def one_wrong(j: int, relative: float) -> type[Operation]:
    """x·sin(x) whose gradient is wrong by ``relative`` at flat element ``j``."""

    class Wrong(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return np.sin(x.data) * x.data

        def backward_var(self, grad, index, **kwargs):
            x = self.variables[0].data
            g = np.array(grad * (np.cos(x) * x + np.sin(x)), dtype=np.float64)
            g.reshape(-1)[j] *= 1 + relative
            return g

    return Wrong


def swapped(j: int, k: int) -> type[Operation]:
    """x·sin(x) whose gradient has elements ``j`` and ``k`` exchanged: errors equal and
    opposite, which a direction with equal factors there would not see."""

    class Swapped(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return np.sin(x.data) * x.data

        def backward_var(self, grad, index, **kwargs):
            x = self.variables[0].data
            g = np.array(grad * (np.cos(x) * x + np.sin(x)), dtype=np.float64).reshape(-1)
            g[[j, k]] = g[[k, j]]
            return g.reshape(x.shape)

    return Swapped


@pytest.mark.parametrize("n", [20, 64, 300])
def test_auto_mode_settles_a_right_gradient_in_a_few_forward_calls(n):
    x = np.random.default_rng(n).uniform(-3, 3, n)
    auto = mg.check(x_sin_x, x, seed=1)
    full = mg.check(x_sin_x, x, seed=1, mode="full")
    assert auto.verdict == full.verdict == "passed"
    # the structure's runs and the evaluator's, and at most 8 along the directions
    assert auto.forward_calls <= 16 < 2 * n <= full.forward_calls
    assert auto.settings["mode"] == "full" and "screen" not in auto.settings
    assert auto.per_input[0].mismatched == 0 and auto.per_input[0].size == n
    # its error ratio on fast mode's scale (a direction's usual tolerance): small, as a
    # right gradient's is in full mode (a regression baseline compares them)
    assert auto.per_input[0].error_ratio < 0.05


@pytest.mark.parametrize(("n", "relative"), [(20, 1e-6), (64, 3e-7), (300, 1e-6), (64, 1e-2)])
def test_one_wrong_element_is_found_as_full_mode_finds_it(n, relative):
    rng = np.random.default_rng(n)
    for seed in range(4):
        x = rng.uniform(-3, 3, n)
        # (an element whose gradient is not small: an error relative to a gradient
        # near 0 is within the atol, in full mode too)
        j = int(rng.choice(np.flatnonzero(np.abs(np.cos(x) * x + np.sin(x)) > 1)))
        op = one_wrong(j, relative)
        auto = mg.check(op, x, seed=seed)
        full = mg.check(op, x, seed=seed, mode="full")
        assert auto.verdict == full.verdict == "failed"
        assert auto.failure.worst[0].index == full.failure.worst[0].index == (j,)


def test_swapped_elements_are_found():
    x = np.random.default_rng(3).uniform(0.5, 2.0, 40)
    for seed in range(8):
        result = mg.check(swapped(5, 6), x, seed=seed)
        assert result.verdict == "failed"
        assert {e.index for e in result.failure.worst} == {(5,), (6,)}


def test_a_kink_at_one_element_is_not_differentiable_as_in_full_mode():
    x = np.random.default_rng(4).uniform(0.5, 2.0, 50)
    x[17] = 0.0
    auto = mg.check(lambda t: mg.abs(t) * t + mg.abs(t), x, seed=0)
    full = mg.check(lambda t: mg.abs(t) * t + mg.abs(t), x, seed=0, mode="full")
    assert auto.verdict == full.verdict == "not differentiable"
    assert auto.kinks == full.kinks == [(0, (17,))]


def test_full_mode_asked_for_is_never_screened():
    x = np.random.default_rng(5).uniform(-3, 3, 30)
    assert mg.check(x_sin_x, x, mode="full").forward_calls >= 60


def test_float32_inputs_and_small_inputs_are_compared_element_by_element():
    x = np.random.default_rng(6).uniform(-3, 3, 30)
    assert mg.check(x_sin_x, x.astype(np.float32)).forward_calls >= 60
    assert mg.check(x_sin_x, x[:4]).forward_calls >= 8
