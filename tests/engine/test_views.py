"""Views and in-place operations (MyGrad's semantics, gradcheck._utils.views).

A view's ``base`` is the tensor that owns its memory and its gradient is the matching
view of the base's gradient; writing a tensor in place (``x[...] = y``, ``x += y``,
``out=``, ``x.shape = ...``) writes its base and every view of it, while the ops that
read the old values keep backpropagating through them.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcheck as mg
from gradcheck.errors import DisconnectedView, InvalidBackprop
from tests.support.gradients import check_gradients
from tests.support.op_inputs import floats_array

# -- base ----------------------------------------------------------------------------


def test_base_is_the_tensor_that_owns_the_memory():
    x = mg.arange(6.0)
    v = x[1:]
    vv = v.reshape(5, 1)[::2].T
    assert x.base is None
    assert v.base is x and vv.base is x
    assert (x + 1).base is None and (v * 1).base is None
    assert np.shares_memory(vv.data, x.data)
    assert sorted(map(id, x._view_children)) == [id(v)]


def test_a_view_of_a_number_or_list_has_no_base():
    assert mg.reshape(2.0, (1,)).base is None
    assert mg.reshape([1.0, 2.0], (2, 1)).base is None


def test_a_cleared_view_loses_its_base_once_it_enters_a_new_op():
    x = mg.Tensor([1.0, 2.0, 3.0])
    v = x[:2]
    v.backward()
    assert v.base is x  # (still: nothing new has happened to it)
    _ = v * 2
    assert v.base is None and v.grad is None


def test_einsum_diagonal_is_a_view():
    x = mg.Tensor(np.arange(9.0).reshape(3, 3))
    d = mg.einsum("ii->i", x)
    assert d.base is x
    d[...] = 0.0
    np.testing.assert_array_equal(x.data, np.arange(9.0).reshape(3, 3) * (1 - np.eye(3)))


# -- gradients of views ----------------------------------------------------------------


@pytest.mark.parametrize("made", ["before", "after"])
def test_a_views_gradient_is_the_view_of_its_bases(made):
    x = mg.Tensor([1.0, 2.0, 3.0])
    if made == "before":
        v = x[::-1][:2]
    (x**2).backward()
    if made == "after":
        v = x[::-1][:2]
    np.testing.assert_array_equal(v.grad, [6.0, 4.0])
    assert v.grad.base is x.grad
    x.null_grad()
    assert v.grad is None


def test_taking_a_view_keeps_the_gradient_a_new_op_resets_it():
    x = mg.Tensor([1.0, 2.0])
    (3 * x).backward()
    v = x[:1]
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])
    np.testing.assert_array_equal(v.grad, [3.0])
    v.backward(np.array([5.0]))  # the base's gradient starts again from zero
    np.testing.assert_array_equal(x.grad, [5.0, 0.0])
    _ = x + 1
    assert x.grad is None and v.grad is None


# -- in-place arithmetic ---------------------------------------------------------------


@pytest.mark.parametrize(
    "op", ["__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__"], ids=str
)
def test_augmented_assignment_mirrors_numpy(op):
    a = np.array([3.0, 4.0, 5.0])
    t = mg.Tensor(a)
    av, tv = a[1:], t[1:]
    same = t
    assert getattr(a, op)(2.0) is a
    assert getattr(t, op)(2.0) is t
    assert same is t
    np.testing.assert_array_equal(t.data, a)
    np.testing.assert_array_equal(tv.data, av)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_augmented_assignment_gradients(data):
    x = data.draw(floats_array((3,)))
    y = data.draw(floats_array((3,)))

    def f(a, b):
        out = a * mg.Tensor(1.0)  # (a fresh tensor that takes a gradient)
        out += b
        out *= b
        out -= a
        out[1:] /= b[1:] * b[1:] + 1.0
        return out

    check_gradients(f, x, y)


def test_in_place_dtype_follows_numpys_casting_rule():
    x = mg.Tensor([1, 2])
    with pytest.raises(TypeError, match="same_kind"):
        x += 1.5
    f = mg.Tensor(np.array([1.0, 2.0], dtype=np.float32))
    f += np.array([1.0, 1.0])  # float64 into float32: same kind
    assert f.dtype == np.float32


# -- writes through views --------------------------------------------------------------


@pytest.mark.parametrize("write_the_view", [True, False])
def test_a_write_reaches_the_base_and_every_view(write_the_view):
    w = mg.arange(1.0, 5.0)
    base = w * 1
    target = base[...] if write_the_view else base
    other = base[1:]
    other_of_other = other[::-1]
    target[:2] = -1.0
    expected = [-1.0, -1.0, 3.0, 4.0]
    np.testing.assert_array_equal(base.data, expected)
    np.testing.assert_array_equal(target.data, expected)
    np.testing.assert_array_equal(other.data, expected[1:])
    np.testing.assert_array_equal(other_of_other.data, expected[1:][::-1])
    assert other.base is base and other_of_other.base is base
    (other_of_other * mg.Tensor([1.0, 10.0, 100.0])).sum().backward()
    np.testing.assert_array_equal(w.grad, [0.0, 0.0, 10.0, 1.0])


def test_writing_a_view_with_another_view_of_the_same_base():
    w = mg.arange(1.0, 5.0)
    y = w * 1
    dangling = y[...]
    y[:2] = y[-2:]
    np.testing.assert_array_equal(dangling.data, [3.0, 4.0, 3.0, 4.0])
    (mg.Tensor([-1.0, 2.0, -3.0, 4.0]) * y).sum().backward()
    np.testing.assert_array_equal(w.grad, [0.0, 0.0, -4.0, 6.0])
    np.testing.assert_array_equal(dangling.grad, y.grad)


def test_ops_made_before_a_write_backprop_through_the_old_values():
    w = mg.Tensor([1.0, 2.0, 3.0])
    y = w * 1
    v = y[1:]
    z = (w * y * v.sum()).sum()  # reads y and v before the write
    y[...] = 0.0
    assert z.creator.variables  # (the graph is intact)
    z.backward()
    # z = sum(w * y) * (y1 + y2) with y = w: dz/dw = 2w * 5 + sum(w*w) * [0, 1, 1]
    np.testing.assert_allclose(w.grad, 2 * w.data * 5.0 + 14.0 * np.array([0.0, 1.0, 1.0]))
    assert y.grad is None and v.grad is None


def test_a_failed_write_changes_nothing():
    w = mg.arange(1.0, 5.0)
    y = w * 2
    v = y[...]
    with pytest.raises(ValueError):
        y[:2] = y  # shape mismatch
    (2 * v).backward()
    np.testing.assert_array_equal(w.grad, [4.0, 4.0, 4.0, 4.0])
    assert v.base is y


def test_out_of_a_ufunc_writes_in_place():
    x = mg.Tensor([1.0, 2.0])
    y = x * 1
    y_T = y[...]
    mg.multiply(x, 3.0, out=y_T)
    np.testing.assert_array_equal(y.data, [3.0, 6.0])
    y.backward()
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])


def test_op_with_out_writes_the_target():
    from gradcheck.ops.arithmetic import Multiply

    x0 = mg.arange(3.0)
    x = +x0
    assert mg.Tensor._op(Multiply, x, x, out=x) is x
    x.backward()
    np.testing.assert_array_equal(x0.grad, 2 * np.arange(3.0))


def test_writing_read_only_data_raises_as_numpy_does():
    a = np.arange(3.0)
    a.flags.writeable = False
    x = mg.Tensor(a, copy=False)
    with pytest.raises(ValueError, match="read-only"):
        x[...] = 0.0
    with pytest.raises(ValueError, match="read-only"):
        x[1:][...] = 0.0


def test_memory_guarding_locks_the_new_values_and_releases_them():
    x = mg.arange(1.0, 5.0)
    y = (+x)[...]
    y[...] = 0.0
    assert not y.data.flags.writeable and not x.data.flags.writeable
    y.backward()
    assert y.data.flags.writeable and x.data.flags.writeable


def test_no_autodiff_writes_the_array_itself():
    x = mg.Tensor([1.0, 2.0])
    data = x.data
    with mg.no_autodiff:
        v = x[...]  # (no graph: x's memory is not locked)
        x += 1.0
        x[0] = 7.0
    assert x.data is data and x.creator is None
    np.testing.assert_array_equal(v.data, [7.0, 3.0])


def test_repeated_writes_release_the_old_arrays_once_backpropagated():
    x = mg.Tensor(np.ones(1000))
    old = weakref.ref(x._data)
    for _ in range(3):
        x += 1.0
        x.backward()
    gc.collect()
    assert old() is None
    np.testing.assert_array_equal(x.data, 4.0)


def test_an_op_on_a_value_whose_graph_was_cleared_raises():
    w = mg.Tensor([1.0, 2.0])
    y = w * 1
    z = y * 2
    y[0] = 5.0
    y.backward()  # clears the old y as well (it is upstream of the new one)
    with pytest.raises(InvalidBackprop):
        z.backward()


# -- in-place reshape --------------------------------------------------------------------


def test_setting_the_shape_reshapes_in_place_and_keeps_the_views():
    x0 = mg.arange(10.0)
    x = +x0
    y = x[:5]
    x.shape = (2, 5)
    assert x.shape == (2, 5) and x.base is None and y.base is x
    x[:1] = y[::-1]
    np.testing.assert_array_equal(y.data, [4.0, 3.0, 2.0, 1.0, 0.0])
    (x[0] * y).sum().backward()
    np.testing.assert_array_equal(x0.grad, [0.0, 2.0, 4.0, 6.0, 8.0, 0, 0, 0, 0, 0])


def test_setting_an_impossible_shape_raises_and_changes_nothing():
    x = mg.arange(5.0)
    y = +x
    with pytest.raises(ValueError):
        y.shape = (2, 3)
    (2 * y).backward()
    np.testing.assert_array_equal(x.grad, [2.0] * 5)


# -- replaying a view op ------------------------------------------------------------------


def test_replay_op_applies_the_same_view_op():
    a, b = mg.arange(6.0), mg.arange(6.0) * 10
    v = a.reshape(2, 3)[:, 1:]
    replayed = v._replay_op(b.reshape(2, 3))
    np.testing.assert_array_equal(replayed.data, [[10.0, 20.0], [40.0, 50.0]])
    with pytest.raises(DisconnectedView):
        a._replay_op(b)


@pytest.mark.parametrize("where", [True, np.array([True, False, True])])
def test_a_ufunc_with_out_one_of_its_inputs_backpropagates_through_the_old_value(where):
    # out=x where x is an input: x's gradient paths read x before the write (it was
    # the written value, silently: y.grad 2·x·y instead of 2·x)
    ox = mg.Tensor([1.0, 2.0, 3.0])
    x = +ox
    y = -x.copy()
    out = mg.multiply(x, y, where=where, out=x)
    (2 * out).backward()
    mask = np.broadcast_to(where, (3,))
    np.testing.assert_allclose(y.grad, 2 * np.array([1.0, 2.0, 3.0]) * mask)
    np.testing.assert_allclose(ox.grad, np.where(mask, -2 * np.array([1.0, 2.0, 3.0]), 2.0))
