"""Tensor: construction, attributes, operators and Tensor.backward."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradcheck as mg
from gradcheck import InvalidBackprop, InvalidGradient, Operation


@pytest.mark.parametrize(
    ("data", "constant"),
    [([1.0, 2.0], False), ([1, 2], True), (3, True), (True, True), (np.float32(1), False)],
)
def test_constant_defaults_follow_the_dtype(data, constant):
    assert mg.Tensor(data).constant is constant


@pytest.mark.parametrize("data", [[1, 2], np.array([True]), 3])
def test_integer_and_bool_tensors_cannot_be_variables(data):
    with pytest.raises(ValueError, match="must be constant"):
        mg.Tensor(data, constant=False)


def test_explicit_constant_and_dtype():
    t = mg.Tensor([1, 2], dtype=np.float32, constant=True)
    assert t.dtype == np.float32 and t.constant
    assert not mg.Tensor([1, 2], dtype=float).constant


def test_non_numeric_data_is_rejected():
    with pytest.raises(TypeError, match="numeric"):
        mg.Tensor(["a", "b"])


def test_copy_semantics():
    a = np.array([1.0, 2.0])
    assert not np.shares_memory(mg.Tensor(a).data, a)
    assert np.shares_memory(mg.Tensor(a, copy=False).data, a)
    assert not np.shares_memory(mg.tensor(a).data, a)


def test_a_tensor_of_a_tensor_takes_its_constant_flag_from_the_dtype():
    # (as MyGrad's Tensor: the default depends on the dtype alone; astensor keeps it)
    c = mg.Tensor([1.0], constant=True)
    assert not mg.Tensor(c).constant
    assert mg.Tensor(c, constant=True).constant
    assert mg.Tensor(mg.Tensor([1, 2]), dtype=float).constant is False
    assert mg.astensor(c).constant and mg.astensor(c, dtype=np.float32).constant
    assert mg.astensor(mg.Tensor([1.0]), dtype=np.int8).constant


def test_astensor_returns_the_same_tensor_when_it_can():
    x = mg.Tensor([1.0])
    assert mg.astensor(x) is x
    assert mg.astensor(x, dtype=np.float64) is x
    assert mg.astensor(x, dtype=np.float32) is not x
    a = np.array([1.0])
    assert np.shares_memory(mg.astensor(a).data, a)


def test_attributes():
    x = mg.Tensor(np.arange(6.0).reshape(2, 3))
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.dtype == np.float64
    assert x.T.shape == (3, 2) and x.T.creator is not None
    assert mg.Tensor([[4.0]]).item() == 4.0
    np.testing.assert_array_equal(np.asarray(x), x.data)
    assert len(x) == 2
    assert [t.shape for t in x] == [(3,), (3,)]
    assert x.creator is None and x.grad is None


def test_repr():
    assert repr(mg.Tensor([1.0, 2.0])) == "Tensor([1., 2.])"
    assert repr(mg.Tensor(1.0)) == "Tensor(1.)"
    assert repr(mg.Tensor([[1.0], [2.0]])) == "Tensor([[1.],\n        [2.]])"


def test_null_grad():
    x = mg.Tensor([1.0])
    (2 * x).backward()
    assert x.null_grad() is x and x.grad is None


def test_backward_doc_example():
    x, y = mg.Tensor(2.0), mg.Tensor(3.0)
    w = x * y
    f = 2 * w
    f.backward()
    assert (f.grad, w.grad, y.grad, x.grad) == (1.0, 2.0, 4.0, 6.0)


def test_backward_of_a_constant_does_nothing():
    c = mg.Tensor([1.0], constant=True)
    c.backward(np.array([3.0]))
    assert c.grad is None
    c.backward(None)  # and does not validate the gradient either
    assert c.grad is None


def test_backward_of_a_constant_clears_its_graph():
    # (MyGrad's semantics: the graph leading to a constant is cleared, no gradient)
    x = mg.Tensor([1.0, 2.0])
    y = x * 2
    z = y * 1
    c = y.sum(constant=True)
    assert c.constant and c.creator is not None
    c.backward()
    assert c.creator is None and y.creator is None
    assert c.grad is None and x.grad is None
    with pytest.raises(InvalidBackprop):
        z.backward()  # y's graph was cleared


@pytest.mark.parametrize("bad", [object(), "x", 1j, [[1.0], [1.0, 2.0]], np.array(["a"])])
def test_backward_validates_the_given_gradient(bad):
    x = mg.Tensor([1.0])
    # (an InvalidGradient, and the TypeError/ValueError MyGrad raises there)
    with pytest.raises(InvalidGradient) as info:
        (x * 1).backward(bad)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)
    msg = str(info.value)
    assert "An invalid gradient-value was passed to" in msg
    assert "`Tensor.backward(<gradient>)`" in msg
    assert f"got a gradient of type: {type(bad)}" in msg


def test_backward_accepts_a_tensor_and_broadcasts_a_scalar_gradient():
    x = mg.Tensor([1.0, 2.0])
    (x * 3).backward(mg.Tensor(2.0))
    np.testing.assert_array_equal(x.grad, [6.0, 6.0])


def test_backward_rejects_a_gradient_of_an_incompatible_shape():
    x = mg.Tensor([1.0, 2.0])
    with pytest.raises(InvalidGradient, match=r"shape \(3,\).*shape \(2,\)"):
        (x * 3).backward(np.ones(3))
    with pytest.raises(ValueError):
        (x * 3).backward(np.ones((2, 2)))  # (broadcasts, but not to the tensor's shape)


def test_backward_takes_an_array_like_gradient():
    x = mg.Tensor([1.0, 2.0])
    (x * 3).backward([2.0, 1.0])
    np.testing.assert_array_equal(x.grad, [6.0, 3.0])
    (x * 3).backward((1,))  # integers: cast to the tensor's dtype, broadcast
    assert x.grad.dtype == np.float64
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])


def test_default_seed_is_ones_of_the_tensor_shape():
    x = mg.Tensor([[1.0, 2.0]])
    y = x * 1
    y.backward()
    np.testing.assert_array_equal(y.grad, np.ones((1, 2)))
    np.testing.assert_array_equal(x.grad, np.ones((1, 2)))
    s = (x * 1).sum()
    s.backward()
    assert s.grad.shape == () and s.grad.dtype == np.float64


def test_a_scalar_only_graph_needs_a_scalar_or_a_gradient():
    class ScalarOnly(Operation):
        scalar_only = True

        def __call__(self, a):
            self.variables = (a,)
            return a.data * 2

        def backward_var(self, grad, index, **kwargs):
            return 2 * grad

    x = mg.Tensor([1.0, 2.0])
    y = mg.execute_op(ScalarOnly, x) + 1
    with pytest.raises(InvalidBackprop, match="must be invoked from a scalar-tensor"):
        y.backward()
    y = mg.execute_op(ScalarOnly, x).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])
    y = mg.execute_op(ScalarOnly, x) + 1
    y.backward(np.ones(2))  # an explicit gradient is fine
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])


def test_using_a_tensor_in_a_new_op_resets_its_gradient():
    x = mg.Tensor([1.0])
    (x * 2).backward()
    assert x.grad is not None
    _ = x * 3
    assert x.grad is None


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (lambda x, a: x + a, lambda x, a: x + a),
        (lambda x, a: a + x, lambda x, a: a + x),
        (lambda x, a: x - a, lambda x, a: x - a),
        (lambda x, a: a - x, lambda x, a: a - x),
        (lambda x, a: x * a, lambda x, a: x * a),
        (lambda x, a: a * x, lambda x, a: a * x),
        (lambda x, a: x / a, lambda x, a: x / a),
        (lambda x, a: a / x, lambda x, a: a / x),
        (lambda x, a: x**a, lambda x, a: x**a),
        (lambda x, a: a**x, lambda x, a: a**x),
        (lambda x, a: -x, lambda x, a: -x),
        (lambda x, a: +x, lambda x, a: +x),
        (lambda x, a: abs(x), lambda x, a: abs(x)),
        (lambda x, a: x @ a, lambda x, a: x @ a),
        (lambda x, a: a @ x, lambda x, a: a @ x),
    ],
)
@pytest.mark.parametrize("other", ["array", "tensor"])
def test_operators_build_graph_ops(expr, expected, other):
    xd = np.array([[1.0, 2.0], [3.0, 4.0]])
    ad = np.array([[0.5, 1.5], [2.5, 0.25]])
    x = mg.Tensor(xd)
    a = ad if other == "array" else mg.Tensor(ad, constant=True)
    out = expr(x, a)
    assert isinstance(out, mg.Tensor)
    np.testing.assert_allclose(out.data, expected(xd, ad))
    if out is not x:
        assert out.creator is not None


def test_scalar_operands_keep_the_tensor_dtype():
    x = mg.Tensor(np.ones(3, dtype=np.float32))
    assert (x * 2.0).dtype == np.float32
    assert (2 + x).dtype == np.float32
    assert (x**2).dtype == np.float32


@pytest.mark.parametrize("op", ["__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"])
def test_comparisons_return_arrays(op):
    x = mg.Tensor([1.0, 2.0])
    out = getattr(x, op)(mg.Tensor([2.0, 2.0]))
    assert type(out) is np.ndarray and out.dtype == bool
    np.testing.assert_array_equal(out, getattr(x.data, op)(np.array([2.0, 2.0])))


def test_tensors_stay_hashable():
    x = mg.Tensor([1.0])
    assert {x: 1}[x] == 1


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3), elements=st.floats(-5, 5)))
def test_data_round_trips(arr):
    t = mg.Tensor(arr)
    np.testing.assert_array_equal(t.data, arr)
    assert t.shape == arr.shape and not t.constant


def test_a_given_gradient_is_copied_not_aliased():
    x = mg.Tensor([1.0, 2.0])
    y = mg.reshape(x, (2,))
    g = np.array([3.0, 4.0])
    y.backward(g)
    assert not np.shares_memory(y.grad, g) and not np.shares_memory(x.grad, g)
    g[0] = 100.0
    np.testing.assert_array_equal(x.grad, [3.0, 4.0])
