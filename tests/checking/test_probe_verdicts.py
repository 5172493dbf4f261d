"""Issue 34 item 7, the cases benchmarks/verdict_probes.py found wrong on main: a
function on the scale of tiny inputs, C1 functions flat on one side of a jump of their
second derivative, matrices closer to singular than the steps, an element of 1e-20."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import Operation, check
from tests.support.checker_ops import elementwise

BUG = 1 + 1e-3


def _twins(name, f, df):
    return elementwise(name, f, df), elementwise(name + "_bug", f, df, scale=BUG)


# -- a function that varies on the scale of its tiny inputs -----------------------------
def _units_tanh(a):
    """tanh in other units: ``2**-a tanh(2**a x)``, whose derivative at ``2**-a x`` is
    tanh's at x."""
    return _twins(
        "units_tanh",
        lambda x: 2.0**-a * np.tanh(x * 2.0**a),
        lambda x: 1 - np.tanh(x * 2.0**a) ** 2,
    )


@pytest.mark.parametrize("a", [30, 40])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_1e_3_error_of_a_function_on_a_tiny_scale_is_caught(a, seed):
    # at x ~ 1e-12 the steps must come down to x's own scale (the levels stopped at
    # 6e-8 of the base step, 1e5 times too large, and the error estimate passed it)
    right, wrong = _units_tanh(a)
    x = 2.0**-a * np.array([0.7, -1.3, 1.9, 0.45, -0.8])
    assert check(right, x, seed=seed).verdict == "passed"
    assert check(wrong, x, seed=seed).verdict == "failed"


# -- C1 functions whose second derivative jumps, flat on one side --------------------
def _smoothstep(x):
    t = np.clip(x, 0.0, 1.0)
    return t * t * (3 - 2 * t)


C1_FLAT_SIDE = {
    "relu_squared": (lambda x: np.maximum(x, 0) ** 2, lambda x: 2 * np.maximum(x, 0), 0.0),
    "smoothstep_at_0": (
        _smoothstep,
        lambda x: np.where((x > 0) & (x < 1), 6 * x * (1 - x), 0.0),
        0.0,
    ),
    "smoothstep_at_1": (
        _smoothstep,
        lambda x: np.where((x > 0) & (x < 1), 6 * x * (1 - x), 0.0),
        1.0,
    ),
}


@pytest.mark.parametrize("name", sorted(C1_FLAT_SIDE))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_c1_function_flat_on_one_side_is_differentiable_at_the_jump(name, seed):
    f, df, at = C1_FLAT_SIDE[name]
    right, wrong = _twins(name, f, df)
    x = at + np.array([0.0, 1e-12, -1e-12, 1e-8, -1e-8, 0.3, -0.45])
    result = check(right, x, seed=seed)
    assert result.verdict == "passed" and not result.kinks, result
    assert check(wrong, x, seed=seed).verdict == "failed"


def test_a_true_kink_stays_not_differentiable():
    relu, _ = _twins("relu", lambda x: np.maximum(x, 0), lambda x: (x > 0).astype(float))
    for seed in (0, 1, 2):
        assert check(relu, np.array([0.0, 0.5]), seed=seed).verdict == "not differentiable"


# -- matrices closer to singular than every base step ---------------------------------
def _matrix_twins(forward, vjp):
    def make(scale):
        class Op(Operation):
            def __call__(self, a):
                self.variables = (a,)
                return np.asarray(forward(a.data))

            def backward_var(self, grad, index, **kwargs):
                return scale * vjp(grad, self.variables[0].data)

        return Op

    return make(1.0), make(BUG)


def _inverse_vjp(g, a):
    ai = np.linalg.inv(a)
    return -ai.T @ g @ ai.T


MATRIX_OPS = {
    "logabsdet": (lambda a: np.linalg.slogdet(a)[1], lambda g, a: g * np.linalg.inv(a).T),
    "inverse": (np.linalg.inv, _inverse_vjp),
}


@pytest.mark.parametrize("name", sorted(MATRIX_OPS))
@pytest.mark.parametrize("distance", [1e-6, 1e-8])
def test_steps_that_cross_a_singular_set_are_refined_until_they_do_not(name, distance):
    # the entries' smallest base steps (5e-7) all cross the singular set, 5e-7 or less
    # away: every quotient straddled it and the element was called not differentiable
    right, wrong = _matrix_twins(*MATRIX_OPS[name])
    a = np.array([[1.0, 1.0], [1.0, 1.0 + distance]])
    for seed in (0, 1, 2):
        result = check(right, a, seed=seed)
        assert result.verdict == "passed" and not result.kinks, result
        assert check(wrong, a, seed=seed).verdict == "failed"


# -- a tiny element beside large ones --------------------------------------------------
@pytest.mark.parametrize(
    "f, df",
    [(np.sqrt, lambda x: 0.5 / np.sqrt(x)), (np.log, lambda x: 1 / x)],
    ids=["sqrt", "log"],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_element_of_1e_20_is_differentiated_on_its_own_scale(f, df, seed):
    # the steps come down to 1e-25 (they stopped at 6e-8 of the base step, 4e-13, and
    # every one crossed 0: not differentiable)
    # every one crossed 0: not differentiable). (Beside an output of 0.7 the first
    # element's rounding is taken at 0.7's size, which a softmax's tiny outputs need,
    # and a 1e-3 error there is below it: the twin is judged on tiny elements only.)
    right, wrong = _twins("f", f, df)
    result = check(right, np.array([1e-20, 0.5]), seed=seed)
    assert result.verdict == "passed" and not result.kinks, result
    assert check(wrong, np.array([1e-20, 3e-20]), seed=seed).verdict == "failed"


# -- steps below a jump that resolve nothing ---------------------------------------------
class _Atan2(Operation):
    def __call__(self, y, x):
        self.variables = (y, x)
        return np.arctan2(y.data, x.data)

    def backward_var(self, grad, index, **kwargs):
        y, x = (v.data for v in self.variables)
        r2 = x * x + y * y
        return grad * (x if index == 0 else -y) / r2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_point_nearer_a_jump_than_any_resolved_step_is_not_judged(seed):
    # atan2 1.9e-22 above its branch cut (x < 0): the steps below 1.9e-22 move s by
    # less than its rounding, the larger ones straddle the jump of 2*pi; the deeper
    # levels made the straddling pairs the estimate, and the correct op failed
    result = check(_Atan2, np.array([1.9e-22]), np.array([-2.06e-7]), seed=seed)
    assert result.verdict != "failed", result
