"""Operation.backward, one test per behaviour of the reference semantics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gradcheck as mg
from gradcheck import InvalidBackprop, InvalidGradient, Operation, SkipGradient
from gradcheck.operation import reduce_broadcast


class Scale(Operation):
    """out = 3 * a * b, recording which indices backward_var was asked for."""

    def __call__(self, a, b):
        self.variables = (a, b)
        self.asked = []
        return 3 * a.data * b.data

    def backward_var(self, grad, index, **kwargs):
        self.asked.append(index)
        a, b = self.variables
        return 3 * grad * (b.data if index == 0 else a.data)


def test_constants_get_no_gradient_and_are_not_asked():
    x = mg.Tensor([1.0, 2.0])
    c = mg.Tensor([4.0, 5.0], constant=True)
    out = mg.execute_op(Scale, x, c)
    op = out.creator
    out.backward()
    assert op.asked == [0]
    np.testing.assert_array_equal(x.grad, [12.0, 15.0])
    assert c.grad is None


def test_a_cleared_graph_raises_the_reference_message():
    x = mg.Tensor([1.0, 2.0])
    y = x * 2
    z = y * 3
    y.backward()  # clears the graph containing y (and the tensors above it)
    with pytest.raises(InvalidBackprop, match=r"was 'cleared' prior to backprop"):
        z.backward()


def test_backprop_through_a_stale_op_raises_after_clear_graph():
    x = mg.Tensor([1.0, 2.0])
    y = x * 2
    op = y.creator
    y.clear_graph()
    assert y.creator is None
    with pytest.raises(InvalidBackprop, match="cleared"):
        op.backward(np.ones(2))


def test_skip_gradient_skips_that_input_only():
    class SkipSecond(Operation):
        def __call__(self, a, b):
            self.variables = (a, b)
            return a.data + b.data

        def backward_var(self, grad, index, **kwargs):
            if index == 1:
                raise SkipGradient
            return grad

    x, y = mg.Tensor([1.0]), mg.Tensor([2.0])
    mg.execute_op(SkipSecond, x, y).backward()
    np.testing.assert_array_equal(x.grad, [1.0])
    assert y.grad is None


@pytest.mark.parametrize("bad", [None, [1.0], "1", np.array([1j]), np.array([object()]), {}])
def test_an_invalid_gradient_names_the_op_and_the_index(bad):
    class Bad(Operation):
        def __call__(self, a, b):
            self.variables = (a, b)
            return a.data + b.data

        def backward_var(self, grad, index, **kwargs):
            return grad if index == 0 else bad

    x, y = mg.Tensor([1.0]), mg.Tensor([2.0])
    with pytest.raises(InvalidGradient) as info:
        mg.execute_op(Bad, x, y).backward()
    msg = str(info.value)
    assert "An invalid gradient-value was passed to:" in msg
    assert "`Bad.backward_var(<gradient>, index=1)`" in msg
    assert f"got a gradient of type: {type(bad)}" in msg


def test_the_first_gradient_is_copied_when_it_shares_memory_with_grad():
    class Identity(Operation):
        def __call__(self, a):
            self.variables = (a,)
            return a.data

        def backward_var(self, grad, index, **kwargs):
            return grad

    x = mg.Tensor([1.0, 2.0])
    out = mg.execute_op(Identity, x)
    g = np.array([5.0, 6.0])
    out.creator.backward(g)
    assert x.grad is not g and not np.shares_memory(x.grad, g)
    np.testing.assert_array_equal(x.grad, g)


def test_the_first_gradient_is_stored_as_is_when_it_does_not_share_memory():
    fresh = np.array([7.0, 8.0])

    class Fresh(Operation):
        def __call__(self, a):
            self.variables = (a,)
            return a.data

        def backward_var(self, grad, index, **kwargs):
            return fresh

    x = mg.Tensor([1.0, 2.0])
    mg.execute_op(Fresh, x).creator.backward(np.ones(2))
    assert x.grad is fresh


def test_later_gradients_accumulate():
    x = mg.Tensor([1.0, 2.0])
    op = (x * 2).creator
    op.backward(np.array([1.0, 1.0]))
    op.backward(np.array([10.0, 20.0]))
    np.testing.assert_array_equal(x.grad, [22.0, 42.0])


def test_accumulation_does_not_write_into_a_stored_array():
    shared = np.array([1.0, 1.0])

    class Returns(Operation):
        def __call__(self, a):
            self.variables = (a,)
            return a.data

        def backward_var(self, grad, index, **kwargs):
            return shared

    x = mg.Tensor([0.0, 0.0])
    op = mg.execute_op(Returns, x).creator
    op.backward(np.ones(2))
    op.backward(np.ones(2))
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])
    np.testing.assert_array_equal(shared, [1.0, 1.0])


def test_the_reduction_hook_processes_gradients_before_storage():
    calls = []

    def reduction(grad, shape):
        calls.append(shape)
        return grad.sum(axis=0)

    x = mg.Tensor([1.0, 2.0])
    op = (x * 1).creator
    op.backward(np.ones((3, 2)), _reduction=reduction)
    assert calls == [(2,)]
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])


def test_a_gradient_of_the_wrong_shape_is_an_error_naming_op_index_and_shapes():
    class WrongShape(Operation):
        def __call__(self, a):
            self.variables = (a,)
            return a.data.sum()

        def backward_var(self, grad, index, **kwargs):
            return np.ones(3)

    x = mg.Tensor([1.0, 2.0])
    with pytest.raises(InvalidGradient) as info:
        mg.execute_op(WrongShape, x).backward()
    msg = str(info.value)
    assert "WrongShape.backward_var(<gradient>, index=0)" in msg
    assert "(3,)" in msg and "(2,)" in msg


@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3),
)
def test_reduce_broadcast_undoes_broadcasting(shapes):
    (sa, sb), out = shapes.input_shapes, shapes.result_shape
    grad = np.ones(out)
    for shape in (sa, sb):
        reduced = reduce_broadcast(grad, shape)
        assert reduced.shape == shape
        # each input element was used prod(out) / prod(shape) times
        np.testing.assert_array_equal(
            reduced, np.prod(out) / max(np.prod(shape), 1) * np.ones(shape)
        )


@pytest.mark.parametrize(
    ("grad", "is_invalid"),
    [
        (None, True),
        (np.array([None], dtype=object), True),
        ("abc", True),
        (b"abc", True),
        ([1.0, 2.0], True),
        ((1.0,), True),
        ({"a": 1.0}, True),
        (object(), True),
        (1j, True),
        (np.array([1j]), True),
        (np.array([True]), True),
        (True, True),
        (np.array(["a"]), True),
        (1, False),
        (1.5, False),
        (np.float32(1.5), False),
        (np.int64(2), False),
        (np.array(2.0), False),
        (np.ones((2, 3), dtype=np.float16), False),
        (np.ones((2, 3), dtype=np.float32), False),
        (np.ones((2, 3), dtype=np.float64), False),
        (np.arange(3), False),
        (st.floats(allow_nan=False), False),
        (hnp.arrays(hnp.floating_dtypes(), hnp.array_shapes(min_dims=0)), False),
        (st.text(), True),
        (st.lists(st.floats()), True),
    ],
)
@given(data=st.data())
def test_is_invalid_gradient(grad, is_invalid, data: st.DataObject):
    if isinstance(grad, st.SearchStrategy):
        grad = data.draw(grad, label="grad")
    assert mg.is_invalid_gradient(grad) is is_invalid, grad
