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
    axes_for,
    check_gradients,
    distinct_arrays,
)

# name: (NumPy reference, strategy kwargs for the input). max/min use distinct
# elements (no ties); std needs no constant slice.
REDUCTIONS = {
    "sum": (np.sum, {}),
    "mean": (np.mean, {}),
    "max": (np.max, {"distinct": True}),
    "amax": (np.amax, {"distinct": True}),
    "min": (np.min, {"distinct": True}),
    "amin": (np.amin, {"distinct": True}),
    "prod": (np.prod, {}),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@given(data=st.data(), keepdims=st.booleans())
def test_reduction(name, data, keepdims):
    reference, options = REDUCTIONS[name]
    x = data.draw(distinct_arrays() if options else arrays_in((-3, 3)), label="x")
    axis = data.draw(axes_for(x.ndim), label="axis")
    kwargs = {"axis": axis, "keepdims": keepdims}
    assert_forward_matches(getattr(mg, name), reference, x, **kwargs)
    assert_forward_matches(getattr(mg, name), reference, x.astype(np.float32), **kwargs)
    check_gradients(lambda t: getattr(mg, name)(t, **kwargs), x)
    assert_float32_gradients(lambda t: getattr(mg, name)(t, **kwargs), x)


@pytest.mark.parametrize("name", ["var", "std"])
@given(data=st.data(), keepdims=st.booleans(), ddof=st.integers(0, 1))
def test_var_std(name, data, keepdims, ddof):
    # Sides of 2 or more and distinct elements: every slice has a positive spread
    # and N - ddof > 0.
    x = data.draw(distinct_arrays(min_dims=1, min_side=2), label="x")
    axis = data.draw(axes_for(x.ndim).filter(lambda a: a != ()), label="axis")
    kwargs = {"axis": axis, "ddof": ddof, "keepdims": keepdims}
    assert_forward_matches(getattr(mg, name), getattr(np, name), x, **kwargs)
    check_gradients(lambda t: getattr(mg, name)(t, **kwargs), x)
    assert_float32_gradients(lambda t: getattr(mg, name)(t, **kwargs), x)


@given(x=arrays_in((-2, 2), (0, 0)), data=st.data())
def test_prod_with_zeros(x, data):
    # prod is multilinear, so central differences are exact also at zeros.
    axis = data.draw(axes_for(x.ndim), label="axis")
    assert_forward_matches(mg.prod, np.prod, x, axis=axis)
    check_gradients(lambda t: mg.prod(t, axis=axis), x)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@given(x=arrays_in((-2, 2), (0, 0), min_dims=1), data=st.data())
def test_cumulative(name, x, data):
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1), label="axis")
    assert_forward_matches(getattr(mg, name), getattr(np, name), x, axis=axis)
    check_gradients(lambda t: getattr(mg, name)(t, axis=axis), x)
    assert_float32_gradients(lambda t: getattr(mg, name)(t, axis=axis), x)


# -- exact values: zeros and ties ---------------------------------------------------


def test_prod_gradient_with_one_zero_and_with_several():
    x = mg.Tensor([[2.0, 0.0, 5.0], [0.0, 3.0, 0.0], [1.0, 2.0, 3.0]])
    mg.prod(x, axis=1).backward()
    np.testing.assert_array_equal(x.grad, [[0.0, 10.0, 0.0], [0.0, 0.0, 0.0], [6.0, 3.0, 2.0]])


def test_cumprod_gradient_with_zeros():
    x = mg.Tensor([2.0, 0.0, 5.0, 0.0, 7.0])
    mg.cumprod(x).backward()
    # out = [2, 0, 0, 0, 0]; d out_j/d x_i = prod_{k<=j, k!=i} x_k.
    np.testing.assert_array_equal(x.grad, [1.0, 2.0 + 10.0, 0.0, 0.0, 0.0])


def _exact_cumprod_gradient(x, g):
    """sum over j >= i of g_j times the product of x_k, k <= j, k != i, in rationals."""
    from fractions import Fraction

    xs, gs = [Fraction(v) for v in x], [Fraction(v) for v in g]
    out = []
    for i in range(len(xs)):
        total = Fraction(0)
        for j in range(i, len(xs)):
            term = gs[j]
            for k in range(j + 1):
                if k != i:
                    term *= xs[k]
            total += term
        out.append(float(total))
    return out


@pytest.mark.parametrize(
    "data",
    [
        [2.22507386e-311],  # subnormal: grad * x lost bits the division cannot restore
        [5e-324],  # the smallest subnormal: grad * x rounded to 0 or 5e-324
        [1e-200, 1e-200, 1e300],  # the product underflows to 0 with no zero in x
        [3e-160, -2e-160, 0.0, 4.0],  # underflow, then a zero
        [0.5, 3.0, -2.0, 0.25],  # normal numbers: the division formula
    ],
)
def test_cumprod_gradient_is_exact_where_products_underflow(data):
    x = mg.Tensor(np.array(data))
    g = np.array([0.7, -1.3, 0.4, 2.0][: len(data)])
    mg.cumprod(x).backward(g)
    # (a subnormal result is off by its rounding, a step of 5e-324, at most twice)
    tiny = 2 * np.finfo(np.float64).smallest_subnormal
    np.testing.assert_allclose(x.grad, _exact_cumprod_gradient(data, g), rtol=1e-15, atol=tiny)
    assert mg.check(lambda t: mg.cumprod(t), np.array(data)).verdict == "passed"


def test_max_min_ties_go_to_the_first_in_c_order():
    x = mg.Tensor([[3.0, 1.0, 3.0], [0.0, 3.0, 0.0]])
    mg.max(x).backward()
    np.testing.assert_array_equal(x.grad, [[1, 0, 0], [0, 0, 0]])
    x = mg.Tensor([[3.0, 1.0, 3.0], [0.0, 3.0, 0.0]])
    mg.min(x, axis=1, keepdims=True).backward()
    np.testing.assert_array_equal(x.grad, [[0, 1, 0], [1, 0, 0]])
    x = mg.Tensor([[3.0, 1.0, 3.0], [0.0, 3.0, 0.0]])
    mg.max(x, axis=(0,)).backward()
    np.testing.assert_array_equal(x.grad, [[1, 0, 1], [0, 1, 0]])


def test_std_of_a_constant_slice_has_gradient_zero():
    x = mg.Tensor([[1.0, 1.0], [1.0, 3.0]])
    mg.std(x, axis=1).backward()
    np.testing.assert_array_equal(x.grad, [[0.0, 0.0], [-0.5, 0.5]])


@given(x=hnp.arrays(np.float64, hnp.array_shapes(max_dims=2), elements=st.just(1.5)))
def test_mean_spreads_the_gradient_evenly(x):
    t = mg.Tensor(x)
    mg.mean(t).backward()
    np.testing.assert_allclose(t.grad, np.full(x.shape, 1 / x.size))


def test_tensor_methods_are_the_functions():
    data = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    x = mg.Tensor(data)
    pairs = [
        (x.max(axis=1), np.max(data, axis=1)),
        (x.min(), np.min(data)),
        (x.var(ddof=1), np.var(data, ddof=1)),
        (x.std(axis=0, keepdims=True), np.std(data, axis=0, keepdims=True)),
        (x.prod(axis=0), np.prod(data, axis=0)),
        (x.cumsum(axis=1), np.cumsum(data, axis=1)),
        (x.cumprod(), np.cumprod(data)),
        (x.clip(0.0, 2.0), np.clip(data, 0.0, 2.0)),
        (x.sum(axis=0), np.sum(data, axis=0)),
        (x.mean(axis=1, keepdims=True), np.mean(data, axis=1, keepdims=True)),
    ]
    for got, expected in pairs:
        assert isinstance(got, mg.Tensor) and got.creator is not None
        np.testing.assert_allclose(got.data, expected)


def test_prod_over_an_empty_axis():
    x = mg.Tensor(np.zeros((2, 0)))
    out = mg.prod(x, axis=1)
    out.backward()
    np.testing.assert_array_equal(out.data, [1.0, 1.0])
    assert x.grad.shape == (2, 0)
