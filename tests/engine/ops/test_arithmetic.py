import operator

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
)

UNARY = {
    "negative": (np.negative, [(-4, 4)]),
    "positive": (np.positive, [(-4, 4)]),
    "reciprocal": (np.reciprocal, [(0.2, 4), (-4, -0.2)]),
    "square": (np.square, [(-4, 4)]),
}

# name: (NumPy reference, domain of the first input, domain of the second)
BINARY = {
    "add": (np.add, [(-4, 4)], [(-4, 4)]),
    "subtract": (np.subtract, [(-4, 4)], [(-4, 4)]),
    "multiply": (np.multiply, [(-4, 4)], [(-4, 4)]),
    "divide": (np.divide, [(-4, 4)], [(0.3, 4), (-4, -0.3)]),
    "true_divide": (np.true_divide, [(-4, 4)], [(0.3, 4), (-4, -0.3)]),
    "power": (np.power, [(0.3, 3)], [(-2, 2)]),
}

broadcastable_pairs = hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3)


@pytest.mark.parametrize("name", sorted(UNARY))
@given(data=st.data())
def test_unary(name, data):
    reference, domain = UNARY[name]
    check_unary(getattr(mg, name), reference, domain, data)


@pytest.mark.parametrize("name", sorted(BINARY))
@given(shapes=broadcastable_pairs, data=st.data())
def test_binary(name, shapes, data):
    reference, domain_a, domain_b = BINARY[name]
    shape_a, shape_b = shapes.input_shapes
    a = data.draw(arrays_in(*domain_a, shape=shape_a), label="a")
    b = data.draw(arrays_in(*domain_b, shape=shape_b), label="b")
    assert_forward_matches(getattr(mg, name), reference, a, b)
    check_gradients(getattr(mg, name), a, b)
    assert_float32_gradients(getattr(mg, name), a, b)


@pytest.mark.parametrize(
    "symbol, reference",
    [
        (operator.add, np.add),
        (operator.sub, np.subtract),
        (operator.mul, np.multiply),
        (operator.truediv, np.divide),
        (operator.pow, np.power),
    ],
)
def test_operators_and_reflected_operators_build_the_same_ops(symbol, reference):
    a, b = np.array([1.5, 2.0]), np.array([[0.5], [3.0]])
    for left, right in [(mg.Tensor(a), b), (a, mg.Tensor(b)), (mg.Tensor(a), mg.Tensor(b))]:
        out = symbol(left, right)
        assert isinstance(out, mg.Tensor)
        np.testing.assert_allclose(out.data, reference(a, b))
    check_gradients(lambda x, y: symbol(x, y), a, b)


def test_python_scalars_keep_float32():
    x = mg.Tensor(np.ones(2, dtype=np.float32))
    for out in (x + 1.0, 2.0 * x, x / 3, x**2.0, mg.power(2.0, x)):
        assert out.dtype == np.float32


def test_power_gradient_of_exponent_at_zero_base_is_zero():
    x, y = mg.Tensor([0.0, 2.0]), mg.Tensor([2.0, 3.0])
    mg.power(x, y).backward()
    np.testing.assert_allclose(y.grad, [0.0, 8.0 * np.log(2.0)])
    np.testing.assert_allclose(x.grad, [0.0, 12.0])


@pytest.mark.parametrize("name", ["add_sequence", "multiply_sequence"])
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=4, max_dims=3, max_side=3),
    count=st.integers(2, 4),
    data=st.data(),
)
def test_sequences(name, shapes, count, data):
    # zeros included: multiply_sequence is multilinear, so finite differences are
    # exact there too.
    arrays = [
        data.draw(arrays_in((-2, 2), (0, 0), shape=s), label=f"x{i}")
        for i, s in enumerate(shapes.input_shapes[:count])
    ]
    op = getattr(mg, name)
    combine = np.add if name == "add_sequence" else np.multiply
    expected = arrays[0]
    for a in arrays[1:]:
        expected = combine(expected, a)
    out = op(*(mg.Tensor(a) for a in arrays))
    np.testing.assert_allclose(out.data, expected, rtol=1e-12)
    check_gradients(op, *arrays)


def test_multiply_sequence_with_zeros_exact():
    x, y, z = mg.Tensor([2.0, 0.0]), mg.Tensor([0.0, 0.0]), mg.Tensor([5.0, 3.0])
    mg.multiply_sequence(x, y, z).backward()
    np.testing.assert_array_equal(x.grad, [0.0, 0.0])
    np.testing.assert_array_equal(y.grad, [10.0, 0.0])
    np.testing.assert_array_equal(z.grad, [0.0, 0.0])


@pytest.mark.parametrize("op", [mg.add_sequence, mg.multiply_sequence])
def test_sequences_need_two_inputs(op):
    with pytest.raises(ValueError, match="at least two"):
        op(mg.Tensor([1.0]))
