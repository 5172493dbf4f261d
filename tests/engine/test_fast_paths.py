"""The engine's fast paths give what the general code gives (values and dtypes)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg


@pytest.mark.parametrize("exponent", [1, 2, 3, 4.0, 5, 8, 9, 2.5, -3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_power_gradient_matches_the_formula(exponent, dtype) -> None:
    a = np.array([-1.5, -0.25, 0.0, 0.75, 2.0], dtype=dtype)
    if exponent < 0 or exponent != int(exponent):
        a = np.abs(a) + 0.5  # real and finite
    x = mg.Tensor(a)
    (x**exponent).backward()
    expected = exponent * a.astype(np.float64) ** (exponent - 1)
    assert x.grad.dtype == dtype
    np.testing.assert_allclose(x.grad, expected, rtol=8 * np.finfo(dtype).eps)


@given(st.lists(st.floats(-10, 10), min_size=1, max_size=6), st.integers(3, 9))
def test_power_gradient_of_integer_exponents(values, exponent) -> None:
    a = np.array(values)
    x = mg.Tensor(a)
    (x**exponent).sum().backward()
    np.testing.assert_allclose(x.grad, exponent * a ** (exponent - 1), rtol=1e-14, atol=0)


def test_cached_number_tensors_stay_unchanged() -> None:
    x = mg.Tensor([1.0, 2.0])
    y = x * 3.0
    z = x * 3.0
    three = y.creator.variables[1]
    assert three.constant and three.grad is None and not three.data.flags.writeable
    (y + z).sum().backward()
    assert three.grad is None and float(three.data) == 3.0
    np.testing.assert_array_equal(x.grad, [6.0, 6.0])


def test_backprop_order_is_creation_order_across_branches() -> None:
    # b is created before c but consumes c's input only through a later op: every
    # consumer of a tensor must run before the tensor's own creator.
    x = mg.Tensor([0.5, 1.5])
    a = mg.sin(x)
    b = a * 2.0
    c = mg.exp(a)
    d = b * c + a
    d.sum().backward()
    s, e = np.sin([0.5, 1.5]), np.exp(np.sin([0.5, 1.5]))
    da = 2.0 * e + 2.0 * s * e + 1.0
    np.testing.assert_allclose(x.grad, da * np.cos([0.5, 1.5]), rtol=1e-14)
    assert a.grad is not None and a.creator is None


def test_backward_clears_graph_behind_a_constant_output() -> None:
    x = mg.Tensor([1.0, 2.0])
    y = mg.multiply(x, 2.0, constant=True)  # a constant with a creator
    z = mg.Tensor([3.0, 4.0])
    (y * z).sum().backward()
    assert y.creator is None and x.grad is None
    np.testing.assert_array_equal(z.grad, [2.0, 4.0])


@pytest.mark.parametrize("number", [2, 2.0, 2**70, 2**53 + 1, float(2**53), 0.5])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_a_number_meets_a_tensor_as_numpy_would_have_it(number, dtype) -> None:
    # The float64 cache is keyed by the number alone: an int and a float that compare
    # equal must give the same value, and other dtypes must not be served from it.
    a = np.array([1.0, 3.0]).astype(dtype)
    if dtype is np.int64 and number > np.iinfo(np.int64).max:
        with pytest.raises(OverflowError):  # as NumPy does
            mg.Tensor(a) * number
        return
    for _ in range(2):  # the second time from the cache
        y = mg.Tensor(a) * number
        z = number - mg.Tensor(a)
        expected_y, expected_z = a * number, number - a
        assert y.dtype == expected_y.dtype and z.dtype == expected_z.dtype
        np.testing.assert_array_equal(y.data, expected_y)
        np.testing.assert_array_equal(z.data, expected_z)


def test_zeros_of_both_signs_stay_apart() -> None:
    x = mg.Tensor([1.0])
    assert np.signbit((x * -0.0).data[0]) and not np.signbit((x * 0.0).data[0])
    assert np.signbit((x * -0.0).data[0]) and not np.signbit((x * 0).data[0])


def test_an_interrupted_graph_collection_leaves_no_marks() -> None:
    # Collecting the graph marks each tensor (its sequence number negated); if the
    # collection is interrupted, the marks are undone and a later backprop sees every
    # tensor again.
    # (through an op of the user's, whose variables the collection iterates: the
    # built-in ops of one or two inputs keep theirs in attributes of their own)
    class Interrupting(tuple):
        def __iter__(self):
            raise KeyboardInterrupt

    class Sine(mg.Operation):
        def __call__(self, a):
            self.variables = (a,)
            return np.sin(a.data)

        def backward_var(self, grad, index, **kwargs):
            return grad * np.cos(self.variables[0].data)

    x = mg.Tensor([1.0, 2.0])
    y = x * 2.0
    z = mg.execute_op(Sine, y)
    w = z * 3.0
    inputs = z.creator.variables
    z.creator.variables = Interrupting(inputs)
    with pytest.raises(KeyboardInterrupt):
        w.backward()
    assert w._seq > 0 and z._seq > 0 and y._seq > 0
    z.creator.variables = inputs
    w.backward()
    np.testing.assert_allclose(x.grad, 6.0 * np.cos([2.0, 4.0]), rtol=1e-15)
