"""`op_inputs()`: arity, shapes, domains, avoided points, uniqueness, conditioning."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

import gradcheck as mg
from gradcheck.ops.arithmetic import Add, Multiply
from gradcheck.ops.exp_log import Log
from gradcheck.strategies import op_inputs
from tests.support.helpers import assert_grads_match


def _well_conditioned(x: np.ndarray, bound: float = 10.0) -> bool:
    nonzero = np.abs(x[x != 0])
    return bool(
        np.isfinite(x).all()
        and (np.abs(x) <= bound).all()
        and (nonzero >= np.finfo(x.dtype).tiny).all()
    )


@pytest.mark.parametrize(
    "target, arity",
    [(Multiply, 2), (Log, 1), (lambda a, b, c, *, axis=None: a, 3), (4, 4)],
)
@settings(max_examples=5)
@given(data=st.data())
def test_arity_comes_from_the_target(target, arity, data):
    assert len(data.draw(op_inputs(target))) == arity


@given(op_inputs(Add, dtype=np.float32, max_dims=2, max_side=3))
def test_inputs_share_a_shape_and_are_well_conditioned_by_default(xs):
    a, b = xs
    assert a.shape == b.shape and a.ndim <= 2 and all(n <= 3 for n in a.shape)
    assert a.dtype == b.dtype == np.float32
    assert _well_conditioned(a) and _well_conditioned(b)


@given(op_inputs(3, broadcast=True, min_dims=1, max_dims=3))
def test_broadcast_draws_mutually_broadcastable_shapes(xs):
    np.broadcast_shapes(*(x.shape for x in xs))
    assert all(1 <= x.ndim <= 3 for x in xs)


def test_broadcast_reaches_different_shapes():
    xs = find(op_inputs(2, broadcast=True), lambda xs: xs[0].shape != xs[1].shape)
    assert xs[0].shape != xs[1].shape


@given(op_inputs(mg.matmul, shapes=["n,k", ("k", 2)], min_side=2, max_side=3))
def test_named_shapes_fit_the_op(xs):
    a, b = xs
    assert a.shape[1] == b.shape[0] and b.shape[1] == 2 and 2 <= a.shape[0] <= 3
    assert_grads_match(mg.matmul, a, b)


@given(op_inputs(2, domain=(0.0, 2.0)))
def test_values_lie_inside_the_domain_away_from_its_edges(xs):
    for x in xs:
        assert ((x >= 0.01) & (x <= 1.99)).all()


@given(op_inputs(2, domain=[(0, None), (None, -5.0)]))
def test_one_domain_per_input_and_open_bounds(xs):
    a, b = xs
    assert ((a >= 0.01) & (a <= 10)).all()
    assert ((b >= -10) & (b <= -5.01)).all()


@given(op_inputs(1, avoid=[0.0, 1.0], margin=0.1))
def test_values_keep_away_from_avoided_points(xs):
    (x,) = xs
    assert (np.abs(x) >= 0.1).all() and (np.abs(x - 1) >= 0.1).all()


@given(op_inputs(2, unique=True, margin=1e-3, max_side=3))
def test_unique_values_are_distinct_across_inputs(xs):
    flat = np.sort(np.concatenate([x.ravel() for x in xs]))
    assert flat.size < 2 or np.diff(flat).min() >= 1e-3


@given(op_inputs(mg.multiply, elements=st.just(2.0)))
def test_elements_replace_the_values(xs):
    assert all((x == 2.0).all() for x in xs)


def test_shrinks_to_zero_dimensional_simple_values():
    a, b = find(op_inputs(Multiply), lambda xs: xs[1].size >= 2)
    assert a.shape == b.shape == (2,) and (a == 0).all() and (b == 0).all()
    (x,) = find(op_inputs(1), lambda xs: xs[0].size >= 3)
    assert x.shape == (3,) and (x == 0).all()
    (x,) = find(op_inputs(1, domain=(0, None)), lambda xs: xs[0].size >= 2)
    assert x.shape == (2,) and (x == 1.0).all()


@given(op_inputs(mg.multiply, broadcast=True))
def test_drawn_inputs_feed_a_gradient_check(xs):
    assert_grads_match(mg.multiply, *xs)


@pytest.mark.parametrize(
    "target, kwargs, message",
    [
        ("not an op", {}, "target"),
        (lambda: 1, {}, "no tensor inputs"),
        (0, {}, "no tensor inputs"),
        (2, {"domain": (1.0, 0.0)}, "lower bound"),
        (2, {"domain": 5.0}, "pair"),
        (2, {"domain": [(0, 1)] * 3}, "one"),
        (2, {"domain": ("a", 1)}, "real number"),
        (1, {"domain": (0, 1), "avoid": [0.5], "margin": 0.5}, "no float64 value"),
        (2, {"dtype": np.int32}, "floating-point"),
        (2, {"shapes": [("n",)]}, "one shape spec per input"),
        (2, {"shapes": ["n,,k", "k"]}, "shape spec"),
        (2, {"min_side": 3, "max_side": 2}, "max_side"),
        (2, {"min_dims": 2, "max_dims": 1}, "max_dims"),
        (2, {"margin": 0}, "margin"),
        (2, {"avoid": "0"}, "avoid"),
        (2, {"unique": 1}, "unique"),
        (2, {"broadcast": None}, "broadcast"),
        (2, {"elements": [1.0]}, "elements"),
    ],
)
def test_invalid_arguments_are_refused(target, kwargs, message):
    with pytest.raises(InvalidArgument, match=message):
        op_inputs(target, **kwargs)


@given(op_inputs(1, dtype=np.float16, domain=(-1, 1), avoid=[0.0], margin=0.1))
def test_half_precision_values_respect_domain_and_avoid(xs):
    (x,) = xs
    assert x.dtype == np.float16 and _well_conditioned(x)
    assert ((np.abs(x) >= 0.1) & (np.abs(x) <= 0.9)).all()


# -- arrays of more than SPARSE_LIMIT elements: a bulk and a few drawn elements ------------
@given(op_inputs(2, shapes=["20,10", "300"], domain=(0.0, 2.0), avoid=[1.0], margin=0.05))
def test_large_arrays_respect_the_domain_and_the_avoided_points(xs):
    for x in xs:
        assert _well_conditioned(x) and x.dtype == np.float64
        assert ((x >= 0.05) & (x <= 1.95) & (np.abs(x - 1.0) >= 0.05)).all()


@given(op_inputs(1, shapes=["500"], dtype=np.float16, domain=(-1, 1), avoid=[0.0], margin=0.1))
def test_large_half_precision_arrays_respect_domain_and_avoid(xs):
    (x,) = xs
    assert x.dtype == np.float16 and _well_conditioned(x)
    assert ((np.abs(x) >= 0.1) & (np.abs(x) <= 0.9)).all()


def test_large_arrays_reach_every_element_different_and_shrink_to_one_value():
    (x,) = find(op_inputs(1, shapes=["300"]), lambda xs: np.unique(xs[0]).size == 300)
    assert x.shape == (300,) and _well_conditioned(x)
    (x,) = find(op_inputs(1, shapes=["300"]), lambda xs: True)
    assert (x == 0).all()
    # a failure that values above 5 show: the spread narrows to one such value
    (x,) = find(op_inputs(1, shapes=["300"]), lambda xs: (xs[0] > 5).sum() > 20)
    assert np.unique(x).size == 1 and x[0] > 5
    # a value only a marked element takes (the domain's edge): the bulk one value, and
    # the marked elements (picked from a drawn seed, not drawn one by one) lowered to
    # the fewest of 1, 3, 7... that still hold it
    (x,) = find(op_inputs(1, shapes=["300"]), lambda xs: (xs[0] == 10.0).any())
    bulk = np.median(x)
    assert x.max() == 10.0 and np.count_nonzero(x != bulk) <= 7


class _Stub:
    """A ``draw`` for the large array's functions that answers each labelled draw from
    a table and records the labels it was asked for."""

    def __init__(self, answers: dict[str, object]) -> None:
        self.answers, self.asked = answers, []

    def __call__(self, strategy: object, label: str | None = None) -> object:
        self.asked.append(label)
        return self.answers[label]


@pytest.mark.parametrize("shape", [(300,), (40, 50), (1000, 200)])
def test_a_large_array_costs_four_draws_at_any_size(shape):
    """Issue 40: the marked elements of a large array come from the bulk seed (NumPy),
    not one Hypothesis draw per position and value (0.9 ms an example at 40x50)."""
    from gradcheck.strategies._floats import marked_values
    from gradcheck.strategies.inputs import MARKED_POWERS, _large_array

    spread = [(-10.0, 10.0)]
    answers = {"bulk spread": 0, "marked elements": MARKED_POWERS, "bulk value": 2.5}
    draw = _Stub({**answers, "bulk seed": 7})
    x = _large_array(draw, np.float64, shape, None, spread)
    assert draw.asked == ["bulk spread", "marked elements", "bulk value", "bulk seed"]
    marked = x[x != 2.5]
    assert x.shape == shape and 0 < marked.size <= 2**MARKED_POWERS - 1
    assert (np.abs(x) <= 10).all()
    # about half of them take a marked value, the others any value in the interval
    assert np.isin(marked, marked_values(spread, np.dtype(np.float64))).any()
    # the same seed, the same elements; no spread and no marked elements: no seed drawn
    again = _large_array(_Stub({**answers, "bulk seed": 7}), np.float64, shape, None, spread)
    assert np.array_equal(x, again)
    plain = _Stub({**answers, "marked elements": 0})
    assert (_large_array(plain, np.float64, shape, None, spread) == 2.5).all()
    assert "bulk seed" not in plain.asked


def test_a_lower_count_keeps_the_first_marked_elements():
    from gradcheck.strategies.inputs import _large_array

    spread = [(-10.0, 10.0)]
    answers = {"bulk spread": 0, "bulk value": 0.5, "bulk seed": 3}
    arrays = [
        _large_array(_Stub({**answers, "marked elements": k}), np.float64, (400,), None, spread)
        for k in (1, 2, 3)
    ]
    for fewer, more in itertools.pairwise(arrays):
        changed = fewer != 0.5
        assert np.array_equal(fewer[changed], more[changed])


def test_a_large_arrays_reach_elements_cost_two_draws():
    from gradcheck.strategies.inputs import REACH_ELEMENTS, _Draws, _with_sampled_reach

    # one input in [0, inf), its bound closed
    spec = _Draws(
        shapes=st.nothing(),
        per_input=[None],
        dtypes=[np.float64],
        discrete={},
        floats=[0],
        grid=None,
        margin=0.01,
        domains=[(0.0, np.inf)],
        closed=[(True, False)],
    )
    x = np.full(300, 2.0)
    draw = _Stub({"reach count": REACH_ELEMENTS, "reach seed": 11})
    out = _with_sampled_reach(draw, x, spec, 0)
    assert draw.asked == ["reach count", "reach seed"]
    moved = out[out != 2.0]
    assert 0 < moved.size <= REACH_ELEMENTS and (moved >= 0).all()
    assert (x == 2.0).all()  # (a copy)
    none = _Stub({"reach count": 0})
    assert _with_sampled_reach(none, x, spec, 0) is x and none.asked == ["reach count"]


def test_large_arrays_keep_to_the_side_of_an_undeclared_domain():
    """An op defined for x > 0 only, its domain not declared: a spread bulk stays
    near its drawn value, so that draws are all positive, spread ones among them (a
    spread across the whole +-10 never is). Measured over 5 x 200 draws: 90 all
    positive, 55 of them spread; element by element (hypothesis.extra.numpy.arrays)
    31, none spread."""
    from hypothesis import HealthCheck, given, settings

    seen = {"positive": 0, "spread": 0}

    @settings(max_examples=200, database=None, suppress_health_check=list(HealthCheck))
    @given(op_inputs(1, shapes=["300"]))
    def draws(xs):
        (x,) = xs
        if (x > 0).all():
            seen["positive"] += 1
            seen["spread"] += np.unique(x).size > 100

    draws()
    assert seen["spread"] >= 5 and seen["positive"] >= 10


@settings(max_examples=20)
@given(op_inputs(1, shapes=["16,16"], domain=(-3, 3), reach=True))
def test_large_arrays_with_the_reach_stay_in_a_bounded_domain(xs):
    (x,) = xs
    assert x.shape == (16, 16) and np.isfinite(x).all() and (np.abs(x) <= 3).all()


def test_large_arrays_take_the_reach_values_somewhere():
    (x,) = find(op_inputs(1, shapes=["300"], reach=True), lambda xs: np.abs(xs[0]).max() > 100)
    assert np.count_nonzero(np.abs(x) > 10) <= 4


@given(op_inputs(2, shapes=["20,10", "100"], unique=True, margin=1e-2, domain=(-5, 5)))
def test_large_unique_draws_are_distinct_a_margin_apart_across_inputs(xs):
    flat = np.sort(np.concatenate([x.ravel() for x in xs]))
    assert flat.size == 300 and np.all(np.diff(flat) >= 1e-2)
    assert (np.abs(flat) < 5).all()


def test_large_unique_draws_spread_out_and_take_a_few_reach_values():
    (x,) = find(op_inputs(1, shapes=["300"], unique=True), lambda xs: np.ptp(xs[0]) > 15)
    assert np.unique(x).size == 300
    (x,) = find(
        op_inputs(1, shapes=["300"], unique=True, reach=True),
        lambda xs: np.abs(xs[0]).max() > 100,
    )
    assert 1 <= np.count_nonzero(np.abs(x) > 10) <= 4
    # shrinks to the values nearest 0
    (x,) = find(op_inputs(1, shapes=["300"], unique=True), lambda xs: True)
    assert np.abs(x).max() < 3.1


@pytest.mark.parametrize("extra", [0, 2])
def test_large_unique_draws_of_nearly_every_grid_value(extra):
    """More elements than the grid's well-conditioned values: the reach's make up the
    rest, every value still once."""
    from gradcheck.strategies._floats import spaced_values

    bulk = spaced_values(np.dtype(np.float64), -2, 2, avoid=(-2, 2), margin=1e-2).size
    strategy = op_inputs(1, shapes=[str(bulk + extra)], unique=True, domain=(-2, 2), reach=True)

    @settings(max_examples=20, database=None)
    @given(strategy)
    def draws(xs):
        (x,) = xs
        assert x.size == bulk + extra and np.unique(x).size == x.size
        assert ((x >= -2) & (x <= 2)).all()

    draws()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_marked_values_lie_in_the_intervals_and_are_normal(dtype):
    from gradcheck.strategies._floats import marked_values, representable_intervals

    kind = np.dtype(dtype)
    spread = representable_intervals(kind, -1.0, 3.0, avoid=[0.0, 1.0], margin=0.1)
    values = marked_values(spread, kind)
    assert values.dtype == kind and values.size == len(set(values.tolist()))
    assert all(any(a <= v <= b for a, b in spread) for v in values.tolist())
    assert (np.abs(values) >= np.finfo(kind).tiny).all()
    assert {float(kind.type(2.0)), float(kind.type(0.5))} <= set(values.tolist())
    assert {a for a, _ in spread} | {b for _, b in spread} <= set(values.tolist())


def test_sampled_reach_values_are_the_reach_values():
    from gradcheck.strategies._floats import sample_reach_values, special_values

    rng = np.random.default_rng(0)
    f64 = np.dtype(np.float64)
    values = sample_reach_values(rng, 400, f64, 0.0, np.inf, (True, False), avoid=[100.0])
    specials = special_values(f64, 0.0, np.inf, (True, False), avoid=[100.0])
    assert values.size <= 400 and (values >= 0).all() and 0.0 in values
    magnitudes = values[~np.isin(values, specials)]
    assert magnitudes.size > 100 and (magnitudes >= 10).all() and (magnitudes <= 750).all()
    assert (np.abs(magnitudes - 100.0) >= 0.0).all()
    # a bounded domain has no magnitudes: only its special values
    bounded = sample_reach_values(rng, 50, f64, -1.0, 1.0, margin=0.01)
    assert set(bounded.tolist()) <= set(special_values(f64, -1.0, 1.0, margin=0.01))


# -- a domain on any scale (issue 34 item 7) ----------------------------------------------
@settings(max_examples=30)
@given(op_inputs(2, domain=(-2e-9, 2e-9), reach=True))
def test_a_domain_narrower_than_the_default_margin_is_drawn_from(xs):
    # values keep a hundredth of the width from the open bounds (0.01 left nothing)
    for x in xs:
        assert (np.abs(x) <= 2e-9 - 4e-11).all()


def test_an_explicit_margin_is_kept_as_given():
    with pytest.raises(InvalidArgument, match="no float64 value"):
        find(op_inputs(1, domain=(-2e-9, 2e-9), margin=0.01), lambda xs: True)


@pytest.mark.parametrize(
    "p", [[1.0], [0.25, 0.75], [0.5, 0.0, 0.5], [0.1, 0.2, 0.3, 0.4], [1 / 3, 1 / 3, 1 / 3]]
)
def test_weighted_choice_is_numpys_choice_from_the_same_stream(p) -> None:
    """A large array's marked elements pick their intervals as ``rng.choice(..., p=)``
    would, at a quarter of its cost: the same picks, and the stream left where it
    leaves it (what the array draws next is the same too)."""
    from gradcheck.strategies._floats import weighted_choice

    weights = np.array(p)
    for seed in range(40):
        for n in (1, 7, 31):
            ours, numpys = np.random.default_rng(seed), np.random.default_rng(seed)
            got = weighted_choice(ours, weights, n)
            want = numpys.choice(weights.size, size=n, p=weights)
            assert got.tolist() == want.tolist()
            assert ours.bit_generator.state == numpys.bit_generator.state
