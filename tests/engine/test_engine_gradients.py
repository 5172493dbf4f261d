"""Gradients of the engine's first ops against an independent central difference, over
generated shapes and values; graph shapes that stress accumulation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradcheck as mg
from tests.support.helpers import assert_grads_match


def values(shape, lo=-3.0, hi=3.0):
    return hnp.arrays(np.float64, shape, elements=st.floats(lo, hi))


def away_from_zero(shape):
    # magnitudes in [0.5, 3] with either sign: keeps abs, divide and x**y smooth
    return st.tuples(values(shape, 0.5, 3.0), hnp.arrays(bool, shape)).map(
        lambda t: np.where(t[1], -t[0], t[0])
    )


UNARY = {
    "negative": (mg.negative, values),
    "square": (mg.square, values),
    "exp": (mg.exp, values),
    "log": (mg.log, lambda s: values(s, 0.1, 5.0)),
    "sin": (mg.sin, values),
    "cos": (mg.cos, values),
    "tanh": (mg.tanh, values),
    "sqrt": (mg.sqrt, lambda s: values(s, 0.1, 5.0)),
    "abs": (mg.abs, away_from_zero),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4))
def test_unary_ops(name, data, shape):
    f, elements = UNARY[name]
    assert_grads_match(f, data.draw(elements(shape), label="x"))


BINARY = {
    "add": (mg.add, values, values),
    "subtract": (mg.subtract, values, values),
    "multiply": (mg.multiply, values, values),
    "divide": (mg.divide, values, away_from_zero),
    "power": (mg.power, lambda s: values(s, 0.5, 2.0), lambda s: values(s, -2.0, 2.0)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@given(
    data=st.data(), shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3)
)
def test_binary_ops_with_broadcasting_in_both_operands(name, data, shapes):
    f, ea, eb = BINARY[name]
    sa, sb = shapes.input_shapes
    assert_grads_match(f, data.draw(ea(sa), label="a"), data.draw(eb(sb), label="b"))


def test_power_with_a_zero_base_has_a_finite_exponent_gradient():
    x, y = mg.Tensor([0.0, 2.0]), mg.Tensor([2.0, 3.0])
    mg.power(x, y).backward()
    np.testing.assert_allclose(y.grad, [0.0, 8.0 * np.log(2.0)])
    np.testing.assert_allclose(x.grad, [0.0, 12.0])


def test_abs_at_zero_uses_the_documented_subgradient():
    x = mg.Tensor([-1.0, 0.0, 1.0])
    mg.abs(x).backward()
    np.testing.assert_array_equal(x.grad, [-1.0, 0.0, 1.0])
    x = mg.Tensor([0.0])
    mg.absolute(x, nan_to_num=False).backward()
    assert np.isnan(x.grad[0])


@st.composite
def array_and_axis(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, max_side=3))
    x = draw(values(shape))
    axis = draw(
        st.none()
        | hnp.valid_tuple_axes(len(shape))
        | st.sampled_from(range(-len(shape), len(shape)) or [None])
    )
    return x, axis, draw(st.booleans())


@pytest.mark.parametrize("reduce", [mg.sum, mg.mean])
@given(args=array_and_axis())
def test_reductions(reduce, args):
    x, axis, keepdims = args
    np.testing.assert_allclose(
        reduce(x, axis=axis, keepdims=keepdims).data,
        getattr(np, reduce.__name__)(x, axis=axis, keepdims=keepdims),
    )
    assert_grads_match(lambda t: reduce(t, axis=axis, keepdims=keepdims), x)


MATMUL_SHAPES = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((5, 1, 2, 3), (4, 3, 2)),
    ((3,), (5, 3, 2)),
    ((5, 2, 3), (3,)),
]


@pytest.mark.parametrize(("sa", "sb"), MATMUL_SHAPES)
def test_matmul_every_numpy_case(sa, sb):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    np.testing.assert_allclose(mg.matmul(a, b).data, np.matmul(a, b))
    assert_grads_match(mg.matmul, a, b)


@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=3))
def test_reshape_and_transpose(data, shape):
    x = data.draw(values(shape))
    new_shape = tuple(data.draw(st.permutations(shape)))
    axes = tuple(data.draw(st.permutations(range(len(shape)))))
    assert_grads_match(lambda t: mg.reshape(t, new_shape), x)
    assert_grads_match(lambda t: mg.transpose(t, axes), x)
    assert_grads_match(lambda t: t.T, x)
    assert_grads_match(lambda t: t.reshape(-1), x)


@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
def test_basic_indexing(data, shape):
    x = data.draw(values(shape))
    index = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    np.testing.assert_array_equal(mg.Tensor(x)[index].data, x[index])
    assert_grads_match(lambda t: t[index], x)


def test_the_issue_example_index():
    x = np.arange(6.0).reshape(2, 3)
    assert_grads_match(lambda t: t[1:, None, ...], x)


def test_advanced_indices_accumulate_repeats():
    x = mg.Tensor([1.0, 2.0, 3.0])
    x[np.array([0, 0, 2])].backward(np.array([1.0, 2.0, 5.0]))
    np.testing.assert_array_equal(x.grad, [3.0, 0.0, 5.0])


def test_a_tensor_used_twice_in_one_op():
    (t,) = assert_grads_match(lambda x: x * x, [1.0, -2.0, 3.0])
    assert t.grad is not None


def test_diamond_and_fan_out_with_constants_mixed_in():
    c = np.array([0.5, -1.5, 2.0])

    def f(x, w):
        h = mg.tanh(x * w)  # used by both branches
        left = h * c + w
        right = mg.exp(h) / (1.0 + h * h)
        return (left * right).sum() + (h @ c)

    assert_grads_match(f, [0.3, -0.7, 1.1], [1.2, 0.4, -0.9])
