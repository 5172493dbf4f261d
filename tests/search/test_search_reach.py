"""The search goes where gradient bugs hide (issue 18): large inputs, large magnitudes,
closed domain bounds and values just inside bounds, special values, near-ties; and it
says where it found a failure. The bugs of ``tests/support/reach_ops.py`` are caught and their
correct twins pass."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

import gradcheck
from gradcheck.checking.vocabulary import Skip
from gradcheck.errors import InvalidDescription
from gradcheck.search.description import Interval, normalize_domain
from gradcheck.search.verifier import found_at
from gradcheck.strategies import op_inputs
from gradcheck.strategies._floats import REACH, reach_floats, special_values
from tests.support import reach_ops

F64, F32 = np.dtype(np.float64), np.dtype(np.float32)


# -- the domain's closed bounds -------------------------------------------------------
@pytest.mark.parametrize(
    "text, pair, closed",
    [
        ("[0:", (0.0, math.inf), (True, False)),
        ("[0:)", (0.0, math.inf), (True, False)),
        ("(0:1]", (0.0, 1.0), (False, True)),
        ("[-1:1]", (-1.0, 1.0), (True, True)),
        ("0:1", (0.0, 1.0), (False, False)),
        (":", (-math.inf, math.inf), (False, False)),
    ],
)
def test_domain_brackets_close_bounds(text: str, pair: tuple, closed: tuple) -> None:
    domain = normalize_domain(text)
    assert tuple(domain) == pair
    assert getattr(domain, "closed", (False, False)) == closed


@pytest.mark.parametrize("text", ["[:1", "0:]", "[0:1]]", "[(0:1"])
def test_a_bracket_on_no_bound_is_a_usage_error(text: str) -> None:
    with pytest.raises(InvalidDescription, match="domain"):
        normalize_domain(text)


def test_an_interval_survives_describe_and_pickling() -> None:
    import pickle

    @gradcheck.describe(domain="[0:1)")
    def op(x):  # pragma: no cover - never called
        return x

    from gradcheck.search.description import description_of

    domain = description_of(op).domain
    assert domain.closed == (True, False)
    assert pickle.loads(pickle.dumps(domain)).closed == (True, False)
    assert Interval(0.0, 1.0, closed=(True, True)).text == "[0:1]"


def test_an_unbounded_side_is_never_closed() -> None:
    assert Interval(0.0, math.inf, closed=(True, True)).closed == (True, False)


# -- the values ------------------------------------------------------------------------
def test_special_values_respect_open_bounds_and_avoided_points() -> None:
    values = special_values(F64, -1.0, 1.0, margin=0.01)
    assert 1.0 not in values and -1.0 not in values and 0.0 in values
    assert any(0 < 1 - v < 1e-5 for v in values)  # just inside the bound
    assert special_values(F64, -math.inf, math.inf, avoid=[0.0], margin=0.01)[:2] == [1.0, -1.0]
    closed = special_values(F64, 0.0, 1.0, (True, True), margin=0.01)
    assert 0.0 in closed and 1.0 in closed


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_magnitudes_reach_past_where_exp_overflows(dtype) -> None:
    dt = np.dtype(dtype)
    overflow = math.log(float(np.finfo(dt).max))
    big = find(reach_floats(dt), lambda x: x > overflow)
    assert overflow < big <= REACH[dt.itemsize * 8]
    assert find(reach_floats(dt), lambda x: x < -overflow) >= -REACH[dt.itemsize * 8]


def test_a_bounded_domain_draws_no_large_magnitudes_and_stays_inside() -> None:
    @settings(max_examples=300, suppress_health_check=list(HealthCheck))
    @given(reach_floats(F64, 0.0, 1.0, (True, False), margin=0.01))
    def inside(x: float) -> None:
        assert 0.0 <= x < 1.0

    inside()
    assert find(reach_floats(F64, 0.0, 1.0, (True, False)), lambda x: x == 0.0) == 0.0
    assert find(reach_floats(F64, 0.0, 1.0), lambda x: 0 < x < 1e-4) > 0


def test_op_inputs_draws_large_inputs_and_shrinks_them() -> None:
    arrays = find(op_inputs(1, total_size=(65, 128)), lambda xs: xs[0].size > 0)
    assert arrays[0].shape == (65,)
    shapes = find(
        op_inputs(2, total_size=(65, 128), broadcast=True, min_dims=2),
        lambda xs: xs[1].size < xs[0].size,
    )
    assert np.broadcast_shapes(shapes[0].shape, shapes[1].shape) == shapes[0].shape


def test_unique_draws_reach_near_ties_but_no_exact_ties() -> None:
    strategy = op_inputs(1, shapes=["4"], unique=True, reach=True)

    def near_tie(xs) -> bool:
        gaps = np.diff(np.sort(xs[0]))
        return bool(np.any(gaps < 1e-3))

    (x,) = find(strategy, near_tie, settings=settings(max_examples=2000))
    assert np.min(np.diff(np.sort(x))) > 0

    @settings(max_examples=200, suppress_health_check=list(HealthCheck))
    @given(op_inputs(1, shapes=["6"], unique=True))
    def apart(xs) -> None:  # without reach: a margin apart, as documented
        assert np.min(np.diff(np.sort(xs[0]))) >= 0.01

    apart()


@given(st.data())
@settings(max_examples=20, suppress_health_check=list(HealthCheck))
def test_reach_values_keep_away_from_avoided_points(data) -> None:
    (x,) = data.draw(op_inputs(1, shapes=["5"], avoid=[0.0, 2.0], reach=True))
    assert np.all(np.abs(x) >= 0.01) and np.all(np.abs(x - 2.0) >= 0.01)


# -- where a failure was found --------------------------------------------------------
def test_found_names_the_reach() -> None:
    assert found_at([np.zeros(70)], {}, large=True) == "at a large input (70 elements)"
    closed = {"domain": normalize_domain("[0:")}
    assert found_at([np.array([0.0, 3.0])], closed, False) == "at the domain bound 0"
    assert found_at([np.array([1e-6])], {"domain": (0.0, 1.0)}, False).startswith(
        "just inside the domain bound 0"
    )
    assert found_at([np.array([1.0, 23.5])], {}, False) == "at a large magnitude (|x| = 23.5)"
    tie = found_at([np.array([1.0, 1.00003])], {"unique": True}, False)
    assert tie.startswith("at a near-tie")
    assert found_at([np.array([0.5, -2.0])], {}, False) == ""


# -- the checker at the edges the search now reaches ------------------------------------
class _Huge(gradcheck.Operation):
    """3e38 * x in float32: right, and its gradient v * 3e38 overflows for |v| > 1.13."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data * np.float32(3e38)

    def backward_var(self, grad, index, **kwargs):
        with np.errstate(over="ignore"):
            return grad * np.float32(3e38)


def test_a_gradient_that_overflows_its_dtype_is_skipped_not_failed() -> None:
    x = np.array([0.5, -0.25], dtype=np.float32)
    results = [gradcheck.check(_Huge, x, seed=seed) for seed in range(6)]
    assert all(r.verdict != "failed" for r in results), [r.failure for r in results]
    assert any(r.note == Skip.OVERFLOW for r in results)


def test_a_nan_backward_at_large_inputs_still_fails() -> None:
    x = np.array([89.5, 1.0], dtype=np.float32)
    result = gradcheck.check(reach_ops.SigmoidF32Overflow, x, seed=0)
    assert result.verdict == "failed" and result.failure.kind == "nonfinite_gradient"


def test_linearity_is_not_judged_where_scaling_overflows() -> None:
    x = np.array([1.0, 1.0, 1.0, 2.2250738585072014e-308])  # log's gradient: 4.5e307
    result = gradcheck.check(lambda t: gradcheck.log(t), x, seed=2)
    assert result.failure is None or result.failure.kind != "nonlinear"


# -- the acceptance pairs ---------------------------------------------------------------
PAIRS = [
    ("SinPastElement64", "Sin", {}, "at a large input"),
    ("SoftplusBranchBug", "Softplus", {}, "at a large magnitude"),
    # (the search may reach its large magnitudes inside its large input: either names it)
    (
        "SigmoidF32Overflow",
        "Sigmoid",
        {"dtype": "float32"},
        ("at a large magnitude", "at a large input"),
    ),
    ("Pow15AtZero", "Pow15", {"domain": "[0:"}, "at the domain bound 0"),
    ("WeightedSquareAtZero", "WeightedSquare", {"domain": [":", "[0:"]}, "at the domain bound 0"),
    ("MulBroadcastBug", "MulBroadcast", {"broadcast": True}, ""),
]
SEEDS = [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("bug, twin, options, found", PAIRS, ids=[p[0] for p in PAIRS])
def test_the_search_catches_the_bug_and_passes_its_twin(bug, twin, options, found, seed) -> None:
    options = dict(options)
    if "domain" in options:
        options["domain"] = normalize_domain(options["domain"])
    wrong = gradcheck.verify(getattr(reach_ops, bug), seed=seed, **options)
    assert wrong.verdict == "failed", (bug, seed)
    assert wrong.found.startswith(found if isinstance(found, tuple) else (found,)), wrong.found
    assert wrong.to_dict()["found"] == (wrong.found or None)
    right = gradcheck.verify(getattr(reach_ops, twin), seed=seed, **options)
    assert right.verdict == "passed", (twin, seed, right.failure, right.note)


# -- float32 precision, not a wrong formula ---------------------------------------------
def _gelu_tanh(x):
    c, k = np.float32(0.7978845608), np.float32(0.044715)
    return 0.5 * x * (1 + gradcheck.tanh(c * (x + k * x**3)))


def test_a_float32_gradient_right_to_its_precision_is_no_mismatch() -> None:
    # tanh rounds to -1 in float32: every term of the backward cancels to its rounding
    # (analytic -1.4e-7, the exact derivative -3.6e-8), which no move of the input's
    # last bits shows; the same backward in float64 agrees with finite differences.
    x = np.array(-5.25, dtype=np.float32)
    for seed in range(3):
        assert gradcheck.check(_gelu_tanh, x, seed=seed).verdict == "passed"


class _SigmoidOff(gradcheck.Operation):
    """sigmoid whose float32 backward is 1% off (a formula bug, in float64 too)."""

    def __call__(self, a):
        self.variables = (a,)
        return (1 / (1 + np.exp(-a.data))).astype(a.data.dtype)

    def backward_var(self, grad, index, **kwargs):
        s = 1 / (1 + np.exp(-self.variables[0].data))
        return (grad * s * (1 - s) * 1.01).astype(grad.dtype)


def test_a_float32_formula_bug_still_fails() -> None:
    x = np.array([0.3, -1.2], dtype=np.float32)
    assert gradcheck.check(_SigmoidOff, x, seed=0).verdict == "failed"


def test_a_nan_gradient_at_a_domain_edge_with_a_finite_one_sided_derivative_fails() -> None:
    # x**1.5 is not defined left of 0; from the right its derivative at 0 is 0
    result = gradcheck.check(reach_ops.Pow15AtZero, np.array([0.0, 1.0]), seed=0)
    assert result.verdict == "failed" and result.failure.kind == "nonfinite_gradient"
    # an infinite one-sided derivative (sqrt at 0) is still no failure
    result = gradcheck.check(lambda t: gradcheck.sqrt(t), np.array([0.0, 1.0]), seed=0)
    assert result.verdict != "failed"
