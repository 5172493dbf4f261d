import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg
from tests.support.elementwise_support import (
    arrays_in,
    assert_float32_gradients,
    assert_forward_matches,
    check_gradients,
    check_unary,
    offset_grid,
)

UNARY = {
    "sqrt": (np.sqrt, [(0.1, 9)]),
    "cbrt": (np.cbrt, [(0.1, 9), (-9, -0.1)]),
    "abs": (np.abs, [(0.1, 4), (-4, -0.1)]),
    "absolute": (np.absolute, [(0.1, 4), (-4, -0.1)]),
}

broadcastable_pairs = hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3)
broadcastable_triples = hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3)


@pytest.mark.parametrize("name", sorted(UNARY))
@given(data=st.data())
def test_unary(name, data):
    reference, domain = UNARY[name]
    check_unary(getattr(mg, name), reference, domain, data)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
@given(shapes=broadcastable_pairs, data=st.data())
def test_maximum_minimum_away_from_ties(name, shapes, data):
    shape_a, shape_b = shapes.input_shapes
    a = data.draw(hnp.arrays(np.float64, shape_a, elements=offset_grid(0.1)), label="a")
    b = data.draw(hnp.arrays(np.float64, shape_b, elements=offset_grid(0.35)), label="b")
    assert_forward_matches(getattr(mg, name), getattr(np, name), a, b)
    check_gradients(getattr(mg, name), a, b)
    assert_float32_gradients(getattr(mg, name), a, b)


@given(shapes=broadcastable_triples, data=st.data())
def test_clip_away_from_bounds(shapes, data):
    shape_x, shape_lo, shape_hi = shapes.input_shapes
    x = data.draw(hnp.arrays(np.float64, shape_x, elements=offset_grid(0.1)), label="x")
    lo = data.draw(hnp.arrays(np.float64, shape_lo, elements=offset_grid(0.35, steps=4)))
    hi = data.draw(hnp.arrays(np.float64, shape_hi, elements=offset_grid(0.3, steps=4)))
    # a_min > a_max is allowed (the result is a_max, as in NumPy).
    assert_forward_matches(mg.clip, np.clip, x, lo, hi)
    check_gradients(mg.clip, x, lo, hi)
    assert_float32_gradients(mg.clip, x, lo, hi)


@given(x=arrays_in((-3, 3)), bound=st.sampled_from(["min", "max"]))
def test_clip_with_one_bound(x, bound):
    lo, hi = (0.05, None) if bound == "min" else (None, 0.05)
    out = mg.clip(mg.Tensor(x), lo, hi)
    np.testing.assert_array_equal(out.data, np.clip(x, lo, hi))
    if np.all(np.abs(x - 0.05) > 1e-3):  # finite differences must not cross the bound
        check_gradients(lambda t: mg.clip(t, lo, hi), x)


def test_clip_without_bounds_cuts_nothing():
    # (as NumPy 2's np.clip(x, None, None), which MyGrad's tests mirror)
    x = mg.Tensor([-1e300, 1.0, 2.0])
    y = mg.clip(x, None, None)
    np.testing.assert_array_equal(y.data, np.clip(x.data, None, None))
    y.backward()
    np.testing.assert_array_equal(x.grad, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(mg.clip(np.arange(3), None, None).data, [0, 1, 2])


@given(shapes=broadcastable_triples, data=st.data())
def test_where(shapes, data):
    shape_c, shape_x, shape_y = shapes.input_shapes
    cond = data.draw(hnp.arrays(bool, shape_c), label="condition")
    x = data.draw(arrays_in((-3, 3), shape=shape_x), label="x")
    y = data.draw(arrays_in((-3, 3), shape=shape_y), label="y")
    out = mg.where(cond, mg.Tensor(x), mg.Tensor(y))
    np.testing.assert_array_equal(out.data, np.where(cond, x, y))
    check_gradients(lambda a, b: mg.where(cond, a, b), x, y)


def test_where_with_condition_only_is_nonzero():
    result = mg.where(mg.Tensor([0.0, 2.0, 3.0]) > 1)
    np.testing.assert_array_equal(result[0], [1, 2])


# -- the documented policies at non-differentiable points, exactly -------------------


def test_abs_at_zero_takes_subgradient_zero_or_nan():
    x = mg.Tensor([-1.0, 0.0, 2.0])
    mg.abs(x).backward()
    np.testing.assert_array_equal(x.grad, [-1.0, 0.0, 1.0])
    x = mg.Tensor([-1.0, 0.0, 2.0])
    mg.absolute(x, nan_to_num=False).backward()
    np.testing.assert_array_equal(x.grad, [-1.0, np.nan, 1.0])


@pytest.mark.parametrize("op", [mg.maximum, mg.minimum])
def test_ties_go_to_the_first_argument(op):
    x, y = mg.Tensor([1.0, 2.0, 3.0]), mg.Tensor([2.0, 2.0, 2.0])
    op(x, y).backward()
    first = [0.0, 1.0, 1.0] if op is mg.maximum else [1.0, 1.0, 0.0]
    np.testing.assert_array_equal(x.grad, first)
    np.testing.assert_array_equal(y.grad, 1 - np.array(first))


@pytest.mark.parametrize("op", [mg.maximum, mg.minimum])
def test_tie_with_itself_keeps_gradient_one(op):
    t = mg.Tensor([1.5])
    op(t, t).backward()
    np.testing.assert_array_equal(t.grad, [1.0])


def test_clip_at_bounds_gradient_goes_to_a():
    x = mg.Tensor([0.0, 1.0, 1.5, 2.0, 3.0])
    lo = mg.Tensor([1.0] * 5)
    hi = mg.Tensor([2.0] * 5)
    mg.clip(x, lo, hi).backward()
    np.testing.assert_array_equal(x.grad, [0.0, 1.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(lo.grad, [1.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(hi.grad, [0.0, 0.0, 0.0, 0.0, 1.0])


def test_clip_with_crossed_bounds_gives_a_max_the_gradient():
    x, lo, hi = mg.Tensor([0.0, 5.0]), mg.Tensor(3.0), mg.Tensor(1.0)
    out = mg.clip(x, lo, hi)
    out.backward()
    np.testing.assert_array_equal(out.data, np.clip([0.0, 5.0], 3.0, 1.0))
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])
    assert lo.grad == 0.0 and hi.grad == 2.0


def test_sqrt_and_cbrt_at_zero_are_infinite():
    x = mg.Tensor([0.0, 0.0])
    with np.errstate(divide="ignore"):
        (mg.sqrt(x[:1]).sum() + mg.cbrt(x[1:]).sum()).backward()
    assert np.all(np.isinf(x.grad))


def test_clip_with_one_bound_keeps_integer_and_float32_dtypes():
    assert mg.clip(np.arange(5), None, 3).dtype == np.arange(5).dtype
    assert mg.clip(mg.Tensor(np.ones(2, dtype=np.float32)), 0.5, None).dtype == np.float32
