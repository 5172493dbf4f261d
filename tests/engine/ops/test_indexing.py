"""Indexing: ``x[index]`` for every NumPy index form, ``x[index] = y`` (set_item and
Tensor.__setitem__), take."""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg
from tests.support.gradients import check_gradients
from tests.support.op_inputs import floats_array, small_shapes


@st.composite
def indices(draw: st.DrawFn, shape: tuple[int, ...]):
    """Any NumPy index for an array of ``shape``: basic (ints, slices, None, ...),
    integer arrays (with repeats), a boolean mask, or a mix of slices and arrays."""
    kind = draw(st.sampled_from(["basic", "integer", "boolean", "mixed"]))
    if kind == "basic" or not shape:
        return draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    if kind == "integer":
        return draw(hnp.integer_array_indices(shape, result_shape=small_shapes(0, 2)))
    if kind == "boolean":
        k = draw(st.integers(1, len(shape)))
        return draw(hnp.arrays(np.bool_, shape[:k]))
    # mixed: a slice or None before an integer array (with negative indices) on axis 1
    first = draw(st.sampled_from([slice(None), slice(None, None, -1), Ellipsis]))
    axis_len = shape[1] if len(shape) > 1 and first is not Ellipsis else shape[-1]
    array = draw(
        hnp.arrays(np.intp, small_shapes(0, 2), elements=st.integers(-axis_len, axis_len - 1))
    )
    return (first, array) if len(shape) > 1 or first is Ellipsis else (array,)


@given(st.data(), small_shapes(0, 3))
def test_get_item_every_index_form(data, shape):
    x = data.draw(floats_array(shape))
    index = data.draw(indices(shape))
    out = mg.Tensor(x)[index]
    np.testing.assert_array_equal(out.data, x[index])
    check_gradients(lambda t: t[index], x)


def test_get_item_repeated_indices_accumulate():
    x = mg.Tensor([1.0, 2.0, 3.0])
    x[np.array([0, 0, 2, 0])].sum().backward()
    np.testing.assert_array_equal(x.grad, [3.0, 0.0, 1.0])
    x = mg.Tensor(np.ones((2, 2)))
    x[[0, 0], [1, 1]].sum().backward()
    np.testing.assert_array_equal(x.grad, [[0.0, 2.0], [0.0, 0.0]])


def test_get_item_accepts_tensor_indices():
    x = mg.Tensor([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(x[mg.Tensor([2, 0])].data, [3.0, 1.0])


@given(st.data(), small_shapes(1, 3))
def test_set_item_gradients_to_both_operands(data, shape):
    x = data.draw(floats_array(shape))
    index = data.draw(indices(shape))
    selected = x[index].shape
    # y of the selected shape, or of a shape that broadcasts to it
    y_shape = data.draw(
        hnp.broadcastable_shapes(selected, max_dims=len(selected), min_side=0, max_side=3).map(
            lambda s: tuple(
                1 if n != m else n for n, m in zip(s, selected[len(selected) - len(s) :])
            )
        )
    )
    y = data.draw(floats_array(y_shape))
    expected = x.copy()
    expected[index] = y
    np.testing.assert_array_equal(mg.set_item(x, index, y).data, expected)
    # Finite differences of the NumPy assignment follow "last write wins" for
    # repeated indices, so they check that rule too.
    check_gradients(lambda a, b: mg.set_item(a, index, b), x, y)


def test_set_item_repeated_index_last_write_wins():
    x, y = mg.Tensor([1.0, 2.0, 3.0]), mg.Tensor([7.0, 8.0])
    z = mg.set_item(x, [0, 0], y)
    z.backward(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(z.data, [8.0, 2.0, 3.0])
    np.testing.assert_array_equal(x.grad, [0.0, 2.0, 3.0])
    np.testing.assert_array_equal(y.grad, [0.0, 1.0])


def test_setitem_in_place_builds_a_graph_op():
    w = mg.Tensor([1.0, 1.0, 1.0])
    y = mg.Tensor([7.0, 8.0])
    x = w * 2
    x[[0, 0]] = y
    np.testing.assert_array_equal(x.data, [8.0, 2.0, 2.0])
    assert x.creator is not None
    x.backward(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(w.grad, [0.0, 4.0, 6.0])
    np.testing.assert_array_equal(y.grad, [0.0, 1.0])


def test_setitem_broadcast_value_sums_its_gradient():
    x = mg.Tensor(np.zeros((2, 3)))
    y = mg.Tensor([1.0, 2.0, 3.0])
    x[:, :] = y
    x.backward(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(y.grad, [3.0, 5.0, 7.0])


def test_setitem_on_a_leaf_keeps_the_old_value_as_input():
    x = mg.Tensor([1.0, 2.0])
    x[1] = 5.0  # a constant value: x's old value still gets its gradient
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.data, [1.0, 5.0])
    np.testing.assert_array_equal(x.grad, [2.0, 10.0])


def test_ops_built_before_setitem_backprop_through_the_old_value():
    # MyGrad's semantics: an op keeps reading the value its input had when it ran
    w = mg.Tensor([1.0, 2.0])
    x = w * 1
    z = x * x
    x[0] = 5.0
    z.backward()
    np.testing.assert_array_equal(z.data, [1.0, 4.0])
    np.testing.assert_array_equal(w.grad, [2.0, 4.0])
    assert x.grad is None  # (the new x is in no graph of z)


def test_setitem_on_a_constant_with_a_variable_value():
    # MyGrad's semantics: the target decides whether the result is a constant
    x = mg.Tensor([1.0, 2.0], constant=True)
    y = mg.Tensor(3.0)
    x[0] = y
    assert x.constant
    np.testing.assert_array_equal(x.data, [3.0, 2.0])
    x = mg.Tensor([1.0, 2.0])
    x[0] = y
    (2 * x).sum().backward()
    np.testing.assert_array_equal(y.grad, 2.0)


@given(st.data(), small_shapes(1, 3))
def test_take(data, shape):
    x = data.draw(floats_array(shape))
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    n = x.size if axis is None else shape[axis]
    idx = data.draw(hnp.arrays(np.intp, small_shapes(0, 2), elements=st.integers(-n, n - 1)))
    np.testing.assert_array_equal(mg.take(x, idx, axis).data, np.take(x, idx, axis))
    check_gradients(lambda t: mg.take(t, idx, axis), x)


def test_setitem_with_a_value_computed_from_the_same_tensor():
    w = mg.Tensor([1.0, 2.0, 3.0])
    x = w * 1
    x[0] = x[1] * 2  # reads the old x
    np.testing.assert_array_equal(x.data, [4.0, 2.0, 3.0])
    x.backward(np.array([1.0, 10.0, 100.0]))
    np.testing.assert_array_equal(w.grad, [0.0, 12.0, 100.0])


def test_setitem_with_repeated_reads_of_the_same_tensor():
    w = mg.Tensor([1.0, 2.0, 3.0])
    x = w * 1
    x[[0, 2]] = x[:2] ** 2  # x becomes [w0**2, w1, w1**2]
    np.testing.assert_array_equal(x.data, [1.0, 2.0, 4.0])
    (x * mg.Tensor([1.0, 10.0, 100.0])).sum().backward()
    np.testing.assert_array_equal(w.grad, [2.0, 10.0 + 100.0 * 2 * 2.0, 0.0])


@given(st.data(), small_shapes(1, 3))
def test_setitem_in_place_matches_set_item(data, shape):
    x = data.draw(floats_array(shape))
    index = data.draw(indices(shape))
    y = data.draw(floats_array(x[index].shape))

    def assign(a, b):
        # a fresh tensor to assign into, which takes a gradient (in place, the
        # target decides whether the result is a constant)
        out = a * mg.Tensor(1.0)
        out[index] = b
        return out

    np.testing.assert_array_equal(assign(mg.Tensor(x), y).data, mg.set_item(x, index, y).data)
    check_gradients(assign, x, y)
