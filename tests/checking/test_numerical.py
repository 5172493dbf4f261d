"""Finite differences: steps, Richardson accuracy and error estimates, kink detection,
the float64 reference, complex step."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg
from gradcheck import Operation, numerical_gradient
from gradcheck.checking.numerical import Evaluator, full_estimate, step_sizes
from gradcheck.checking.resolve import resolve_target
from tests.support.checker_ops import SMOOTH, Abs, Clip, Max, Relu, elementwise

EPS = np.finfo(np.float64).eps


@given(st.floats(-1e12, 1e12, allow_nan=False))
def test_steps_are_powers_of_two_near_the_optimum(x):
    (h,) = step_sizes(np.array([x]), EPS)
    mantissa, _ = np.frexp(h)
    assert mantissa == 0.5  # a power of two
    ideal = np.cbrt(EPS) * max(abs(x), 1.0)
    assert ideal / np.sqrt(2) <= h <= ideal * np.sqrt(2)


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_richardson_is_accurate_and_its_error_estimate_covers_it(name):
    f, df = SMOOTH[name]
    x = np.linspace(-0.9, 0.9, 7)
    v = np.random.default_rng(0).standard_normal(7)
    ev = Evaluator(resolve_target(elementwise(name, f, df)).forward, [x], {}, v)
    est = full_estimate(ev, 0)  # every element refined
    exact = v * df(x)
    err = np.abs(est.value - exact)
    assert np.all(err <= 1e-9 * np.abs(exact).max())
    assert np.all(err <= 3 * est.error + 1e-15)
    assert not est.kink.any()
    assert est.calls == ev.calls - 1  # all but the evaluation at the point


def test_numerical_gradient_public_api():
    (g,) = numerical_gradient(lambda x: mg.tanh(x) * x, np.array([0.5, -1.0]))
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(g, np.tanh(x) + x * (1 - np.tanh(x) ** 2), rtol=1e-10)
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    ga, gb = numerical_gradient(lambda x, y: x * y, a, b, v=np.array([1.0, -1.0]))
    np.testing.assert_allclose(ga, [3.0, -4.0], rtol=1e-10)
    np.testing.assert_allclose(gb, [1.0, -2.0], rtol=1e-10)
    ga, gb = numerical_gradient(lambda x, y: x * y, a, b, inputs=[1])
    assert ga is None


def test_complex_step_is_exact_to_rounding():
    (g,) = numerical_gradient(
        elementwise("sin", np.sin, np.cos), np.array([0.3, 2.0]), complex_step=True
    )
    np.testing.assert_allclose(g, np.cos([0.3, 2.0]), rtol=1e-15)


@pytest.mark.parametrize(
    ("op", "x", "kinks"),
    [
        (Relu, [0.0, 1.0, -1.0], [True, False, False]),
        (Abs, [2.0, 0.0, -0.5], [False, True, False]),
        (Clip, [-1.0, 0.0, 1.0, 3.0], [True, False, True, False]),
        (Max, [1.0, 3.0, 3.0, 2.0], [False, True, True, False]),
    ],
)
def test_kinks_are_flagged_exactly_where_they_are(op, x, kinks):
    x = np.array(x)
    v = np.ones(()) if op is Max else np.ones(x.shape)
    ev = Evaluator(resolve_target(op).forward, [x], {}, v)
    est = full_estimate(ev, 0)
    np.testing.assert_array_equal(est.kink, kinks)


def test_a_jump_of_the_function_within_the_steps_reach_is_not_differentiable():
    # arctan(1/x) jumps by pi at 0: at 1e-45 every step (the smallest 3e-37) straddles
    # it and D(h) ~ pi / 2h
    def f(t):
        return np.arctan(1 / t)

    def df(t):
        return -1 / (1 + t * t)

    x = np.array([1e-45, -3e-46, 0.8, -2.0])
    ev = Evaluator(resolve_target(elementwise("arccot", f, df)).forward, [x], {}, np.ones(4))
    np.testing.assert_array_equal(full_estimate(ev, 0).kink, [True, True, False, False])


def test_steps_reach_below_a_small_x_where_the_function_varies_on_its_scale():
    # arctan(1/x) at 1e-7 is smooth on a scale of |x|: the levels reach down to the
    # relative step eps**(1/3)·|x|, below the jump at 0 (once, every level straddled it
    # and the point was called not differentiable)
    def f(t):
        return np.arctan(1 / t)

    def df(t):
        return -1 / (1 + t * t)

    x = np.array([1e-7, -3e-8, -5.96e-8])
    ev = Evaluator(resolve_target(elementwise("arccot", f, df)).forward, [x], {}, np.ones(3))
    est = full_estimate(ev, 0)
    assert not est.kink.any()
    assert np.all(np.abs(est.value - df(x)) <= 3 * est.error + 1e-12)
    assert np.all(np.abs(est.value - df(x)) < 1e-4)


def test_a_large_smooth_derivative_is_not_a_jump():
    def f(t):
        return 1e8 * t

    def df(t):
        return np.full_like(t, 1e8)

    x = np.array([1e-9, 0.0, 3.0])
    ev = Evaluator(resolve_target(elementwise("steep", f, df)).forward, [x], {}, np.ones(3))
    est = full_estimate(ev, 0)
    assert not est.kink.any()
    np.testing.assert_allclose(est.value, 1e8, rtol=1e-12)


def test_smooth_but_very_curved_is_not_a_kink():
    x = np.linspace(-1, 1, 9)
    ev = Evaluator(resolve_target(elementwise("s", *SMOOTH["sin25"])).forward, [x], {}, np.ones(9))
    assert not full_estimate(ev, 0).kink.any()


def test_float32_op_is_referenced_in_float64():
    x = np.array([0.1, 0.2], dtype=np.float32)
    ev = Evaluator(resolve_target(lambda t: mg.tanh(t)).forward, [x], {}, np.ones(2))
    assert ev.eval_dtype == np.float64 and ev.work[0].dtype == np.float64


def test_op_that_insists_on_float32_is_evaluated_in_float32():
    class Float32Only(Operation):
        def __call__(self, a):
            self.variables = (a,)
            return np.sin(a.data.astype(np.float32))

        def backward_var(self, grad, index, **kw):
            return grad * np.cos(self.variables[0].data)

    x = np.array([0.1, 0.2], dtype=np.float32)
    ev = Evaluator(resolve_target(Float32Only).forward, [x], {}, np.ones(2))
    assert ev.eval_dtype == np.float32
    assert mg.check(Float32Only, x).verdict == "passed"
    native = Evaluator(
        resolve_target(lambda t: mg.tanh(t)).forward, [x], {}, np.ones(2), reference="native"
    )
    assert native.eval_dtype == np.float32


def test_boundary_of_the_domain_is_not_differentiable_not_a_failure():
    sqrt = elementwise("sqrt", np.sqrt, lambda x: 0.5 / np.sqrt(x))
    with np.errstate(all="ignore"):
        result = mg.check(sqrt, np.array([1.0, 4.0, 1e-300]))
    assert result.verdict != "failed"


def test_forward_calls_are_counted():
    x = np.linspace(-1, 1, 10)
    ev = Evaluator(resolve_target(lambda t: mg.sin(t)).forward, [x], {}, np.ones(10))
    assert ev.calls == 1
    full_estimate(ev, 0, settled=lambda first: np.ones(first.shape, dtype=bool))
    assert ev.calls == 1 + 2 * x.size


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("out_dtype", [None, np.float32, np.int64])
def test_first_pass_is_the_central_difference_of_each_element(dtype, out_dtype):
    # The first pass computes its differences for all elements at once after the
    # loop; each must be the central difference of s = <v, f> at that element's
    # step, with f(x +- h) - f0 in float64, and the input must come back unchanged.
    class Op(Operation):
        def __call__(self, a):
            self.variables = (a,)
            out = np.sin(3 * a.data) * a.data
            return out if out_dtype is None else (100 * out).astype(out_dtype)

        def backward_var(self, grad, index, **kw):
            raise NotImplementedError

    x = np.linspace(-1.3, 2.1, 7).astype(dtype).reshape(7, 1)
    v = np.random.default_rng(0).standard_normal((7, 1))
    ev = Evaluator(resolve_target(Op).forward, [x], {}, v, reference="native")
    before = ev.work[0].copy()
    values, jumps, steps = ev.first_pass(0)
    np.testing.assert_array_equal(ev.work[0], before)
    f0 = ev.f0
    for j in range(x.size):
        h = steps.flat[j]
        moved = before.copy()
        moved.flat[j] = before.flat[j] + h
        up = np.vdot(v, np.asarray(ev.call([moved]), dtype=np.float64) - f0)
        moved.flat[j] = before.flat[j] - h
        down = np.vdot(v, np.asarray(ev.call([moved]), dtype=np.float64) - f0)
        assert values.flat[j] == (up - down) / (2 * h)
        assert jumps.flat[j] == (up + down) / h


@pytest.mark.parametrize(
    "name, f",
    [
        ("smooth", lambda x: mg.tanh(x) * x),
        ("kink", lambda x: mg.abs(x) * 3.0),
        ("coarse", lambda x: (x + 1e6) - 1e6),
        ("view", lambda x: x.reshape(-1)[::-1]),  # returns a view of its (perturbed) input
    ],
)
def test_refinement_levels_scored_together_or_one_by_one_agree_exactly(name, f, monkeypatch):
    # refine scores all levels at once on small outputs and each as it comes on large
    # ones: the same numbers either way, to the last bit
    import gradcheck.checking.level_scores as levels

    x = np.array([0.0, 1e-7, -0.3, 2.0, 5e5])
    v = np.random.default_rng(1).standard_normal(5)
    direction = np.array([1.0, -0.5, 2.0, 0.25, -1.0])
    target = resolve_target(f)
    results = []
    for limit in (levels._BATCHED_LEVELS_MAX_SIZE, 0):
        monkeypatch.setattr(levels, "_BATCHED_LEVELS_MAX_SIZE", limit)
        ev = Evaluator(target.forward, [x], {}, v, bind=target.bind)
        results.append(
            [ev.refine(0, j, 1e-5, 1e-6, max(abs(x[j]), 1.0)) for j in range(5)]
            + [ev.refine(0, direction, 1e-5, 1e-6, 5e5)]
        )
    assert repr(results[0]) == repr(results[1])
    est = results[0][0]
    value, error, kink = est.value, est.error, est.kink
    if name == "kink":
        assert kink  # |x| at 0
    elif name == "smooth":
        assert abs(value - v[0] * 0.0) <= error + 1e-12  # d/dx tanh(x)·x = 0 at 0


def test_refine_gives_an_estimate_whose_richardson_value_cancels_the_h2_term():
    import gradcheck.checking.numerical as numerical
    from gradcheck.checking import thresholds

    assert thresholds.TRUNCATION_GROWTH == thresholds.LEVEL_RATIO**2 == 16
    x = np.array([0.7])
    ev = Evaluator(resolve_target(lambda t: t**3).forward, [x], {}, np.ones(1))
    est = ev.refine(0, 0, 2.0**-17, 0.0, 1.0)
    assert isinstance(est, numerical.Estimate)
    # x³: D(h) = 3x² + h², which one Richardson step makes exact (to rounding).
    assert abs(est.value - 3 * 0.49) <= 1e-12 and est.error < 1e-9 and not est.kink
    assert abs(est.curvature - 6 * 0.7) < 1e-3


@pytest.mark.parametrize("x0", [1.0396757987831514e-216, 2.0**-150])
def test_no_lower_levels_beyond_their_reach_where_they_cannot_reach_x(x0):
    """Issue 40 item 2: an element 0 < |x| < 4**-40·h0, whose base ladder leaves it
    unresolved only because its steps are longer than |x| (sum(x²) beside elements of
    1: a derivative of 2e-216 read as 0 within 1e-10), runs no levels below the base
    ladder: each of them is longer than |x| too (the library's norm, var, sinc, std:
    80 calls each, 24,160 at seed 0). The element's own relative step decides there
    (``below_small_x_levels``), where its largest step moves some output or the
    outputs' rounding over it is within the threshold: here neither (steps of 1e-221
    beside outputs of 1), 2 calls. The estimate is the one the 40 levels gave."""
    x = np.array([x0, 1.0, 2.0, -0.5, 3.0])
    ev = Evaluator(resolve_target(lambda t: mg.sum(t * t)).forward, [x], {}, np.float64(1.0))
    est = ev.refine(0, 0, 2.0**-17, 1e-6, x0)
    assert est.value == 0.0 and est.error < 1e-9 and not est.kink
    assert ev.calls <= 30  # (167 with the 40 levels; 87 without, the relative step's 64 in)
