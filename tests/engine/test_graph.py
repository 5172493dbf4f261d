"""Backprop traversal, graph clearing and no_autodiff."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcheck as mg
from gradcheck import Operation
from gradcheck.strategies import computational_graphs


class CountingMul(Operation):
    """a * b that counts its backward calls."""

    calls = 0

    def __call__(self, a, b):
        self.variables = (a, b)
        return a.data * b.data

    def backward(self, grad, **kwargs):
        CountingMul.calls += 1
        super().backward(grad, **kwargs)

    def backward_var(self, grad, index, **kwargs):
        a, b = self.variables
        return grad * (b.data if index == 0 else a.data)


def test_a_100000_op_chain_backprops_without_recursion():
    x = mg.Tensor(1.0)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad == 1.0


def test_each_op_runs_backward_once_in_a_tower_of_diamonds():
    # 60 stacked diamonds: 2**60 paths from top to bottom, 180 ops. Visiting paths
    # instead of ops would never finish; visiting each op once gives 2**60 exactly.
    CountingMul.calls = 0
    x = mg.Tensor(1.0)
    y = x
    for _ in range(60):
        a = mg.execute_op(CountingMul, y, 1.0)
        b = mg.execute_op(CountingMul, y, 1.0)
        y = a + b
    y.backward()
    assert CountingMul.calls == 120
    assert x.grad == 2.0**60


def test_fan_out_accumulates_before_propagating():
    x = mg.Tensor(3.0)
    y = x * x  # used by three consumers below
    z = y * 2 + mg.sin(y) + y**2
    z.backward()
    yv = 9.0
    expected_dz_dy = 2 + np.cos(yv) + 2 * yv
    np.testing.assert_allclose(y.grad, expected_dz_dy)
    np.testing.assert_allclose(x.grad, expected_dz_dy * 2 * 3.0)


def test_the_graph_is_cleared_after_backward_and_gradients_stay():
    x = mg.Tensor([1.0, 2.0])
    y = x * 2
    z = y.sum()
    z.backward()
    assert z.creator is None and y.creator is None
    np.testing.assert_array_equal(y.grad, [1.0, 1.0])
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])


def test_a_second_graph_from_the_same_leaf_after_backward_raises():
    x = mg.Tensor([1.0, 2.0])
    a = x * 2
    b = x * 3
    a.backward()
    with pytest.raises(mg.InvalidBackprop):
        b.backward()


def test_a_fresh_graph_on_a_leaf_works_after_backward():
    x = mg.Tensor([1.0, 2.0])
    (x * 2).backward()
    (x * 3).backward()
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])


def test_constant_branches_are_not_traversed():
    x = mg.Tensor([1.0, 2.0])
    c = mg.Tensor([5.0, 6.0], constant=True)
    cc = c * 2  # constant, has a creator
    assert cc.constant
    (x * cc).backward()
    np.testing.assert_array_equal(x.grad, [10.0, 12.0])
    assert c.grad is None and cc.grad is None


def test_no_autodiff_as_context_manager_and_decorator():
    x = mg.Tensor([1.0])
    with mg.no_autodiff:
        y = x * 2
        with mg.no_autodiff:
            pass
        z = x * 2  # still off after the nested block
    assert y.creator is None and z.creator is None
    assert (x * 2).creator is not None

    @mg.no_autodiff
    def double(t):
        return t * 2

    assert double(x).creator is None
    assert (x * 2).creator is not None


def test_no_autodiff_restores_tracking_after_an_exception():
    x = mg.Tensor([1.0])
    with pytest.raises(RuntimeError), mg.no_autodiff:
        raise RuntimeError
    assert (x * 2).creator is not None


def test_execute_op_makes_non_tensors_constant_and_honours_constant():
    from gradcheck.ops.arithmetic import Multiply

    x = mg.Tensor([1.0])
    out = mg.execute_op(Multiply, x, np.array([2.0]))
    assert not out.constant and out.creator.variables[1].constant
    assert mg.execute_op(Multiply, x, 2.0, constant=True).constant
    assert mg.execute_op(Multiply, 1.0, 2.0).constant
    assert mg.execute_op(Multiply, np.array([1, 2]), 2).constant  # integer result


def test_op_kwargs_and_args_reach_the_op():
    from gradcheck.ops.reductions import Sum

    x = mg.Tensor(np.ones((2, 3)))
    out = mg.execute_op(Sum, x, op_kwargs={"axis": 1, "keepdims": True})
    assert out.shape == (2, 1)
    out = mg.execute_op(Sum, x, op_args=(0,))
    assert out.shape == (3,)


# -- gradients shared inside the engine, separate arrays outside ---------------------
def _graph_tensors(root):
    """Every tensor of root's graph (root included), collected before backprop
    clears the creators."""
    found, stack, seen = [], [root], set()
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        found.append(t)
        if t.creator is not None:
            stack.extend(t.creator.variables)
    return found


def test_gradients_handed_on_by_add_and_sum_are_separate_arrays():
    x, y = mg.Tensor([1.0, 2.0]), mg.Tensor([3.0, 4.0])
    z = x + y
    f = z.sum()
    f.backward()
    grads = [z.grad, x.grad, y.grad]
    for g in grads:
        np.testing.assert_array_equal(g, [1.0, 1.0])
        assert g.flags.writeable and g.flags.c_contiguous
    for i, g in enumerate(grads):
        for h in grads[i + 1 :]:
            assert not np.shares_memory(g, h)
    x.grad[0] = 100.0  # the user's to change: the others do not move
    np.testing.assert_array_equal(y.grad, [1.0, 1.0])
    np.testing.assert_array_equal(z.grad, [1.0, 1.0])
    assert x.grad is x.grad  # copied once, on the first read


@pytest.mark.parametrize("first", ["z", "x"])
def test_changing_the_first_gradient_read_changes_no_other(first):
    # z's gradient was handed unchanged to x: whichever is read first, and then
    # written, the other still reads the value backprop gave it. (Not a view: a
    # view's gradient is a view of its base's, see test_a_views_gradient_is_a_view_of_its_bases)
    x = mg.Tensor([1.0, 2.0])
    z = x + 0.0
    w = z * 3.0
    w.backward()
    a, b = (z, x) if first == "z" else (x, z)
    a.grad[...] = -1.0
    np.testing.assert_array_equal(b.grad.ravel(), [3.0, 3.0])


def test_a_views_gradient_is_a_view_of_its_bases():
    # MyGrad's semantics: a view's gradient shares memory with its base's gradient as
    # its data does with the base's data
    x = mg.Tensor([1.0, 2.0])
    z = mg.reshape(x, (2, 1))
    (z * 3.0).backward()
    assert z.base is x
    assert z.grad.base is x.grad
    z.grad[...] = -1.0
    np.testing.assert_array_equal(x.grad, [-1.0, -1.0])


def test_a_users_op_gets_its_own_gradient_even_behind_add():
    class DoublesInPlace(Operation):  # writes the grad it is given (bad, but allowed)
        def __call__(self, a):
            self.variables = (a,)
            return a.data.copy()

        def backward_var(self, grad, index, **kwargs):
            grad *= 2
            return grad

    x, y = mg.Tensor([1.0, 2.0]), mg.Tensor([3.0, 4.0])
    a = mg.execute_op(DoublesInPlace, x)
    (a + y).sum().backward()
    np.testing.assert_array_equal(y.grad, [1.0, 1.0])
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])


def test_only_built_in_op_classes_are_trusted_with_shared_gradients():
    from gradcheck.ops.arithmetic import Add

    class MyAdd(Add):
        pass

    assert Add._pure_grad and not MyAdd._pure_grad and not Operation._pure_grad


def test_a_callers_own_gradient_array_is_never_shared():
    x = mg.Tensor([1.0, 2.0])
    out = mg.add(x, 1.0)
    g = np.array([5.0, 6.0])
    out.creator.backward(g)  # a direct call: g is the caller's, not the engine's
    g[0] = 100.0
    np.testing.assert_array_equal(x.grad, [5.0, 6.0])


@settings(max_examples=60)
@given(graph=computational_graphs(max_nodes=10), order=st.randoms(use_true_random=False))
def test_every_gradient_read_after_backprop_is_its_own_array(graph, order):
    leaves = [mg.Tensor(a) for a in graph.leaves]
    out = graph(*leaves)
    if out.constant:
        return
    tensors = [t for t in _graph_tensors(out) if not t.constant]
    out.backward()
    # (a view's gradient is a view of its base's: the two share memory on purpose)
    tensors = [t for t in tensors if t._grad is not None and t.base is None]
    expected = {id(t): np.array(t._grad) for t in tensors}  # a snapshot, not a read
    order.shuffle(tensors)  # the order of reading must not matter
    for k, t in enumerate(tensors):
        g = t.grad
        # not changed by writing the gradients read before it
        np.testing.assert_array_equal(g, expected[id(t)])
        assert g.flags.writeable
        g[...] = 1000.0 + k  # the reader's to change
    for k, t in enumerate(tensors):  # each kept its own reader's write
        assert np.all(t.grad == 1000.0 + k)


# -- large gradients are written in place only when nothing else holds them ---------
BIG = 1 << 15  # above operation.IN_PLACE_MIN_SIZE


def test_in_place_accumulation_gives_the_right_large_gradient():
    data = np.linspace(-2.0, 2.0, BIG)
    x = mg.Tensor(data)
    f = (mg.sin(x) + mg.sin(x) * 2.0 + x * x).sum()
    f.backward()
    np.testing.assert_allclose(x.grad, 3 * np.cos(data) + 2 * data, rtol=1e-12)


def test_an_exp_output_is_not_overwritten_by_its_own_backward():
    # exp's derivative is its output: that array is the tensor's data, not a
    # temporary the backward may write into
    data = np.linspace(-1.0, 1.0, BIG)
    x = mg.Tensor(data)
    y = mg.exp(x)
    before = y.data.copy()
    (y * 3.0).backward()
    np.testing.assert_array_equal(y.data, before)
    np.testing.assert_allclose(x.grad, 3 * np.exp(data), rtol=1e-12)


def test_a_gradient_an_op_keeps_is_not_written_by_accumulation():
    class KeepsItsGradient(Operation):
        def __call__(self, a):
            self.variables = (a,)
            return a.data * 1.0

        def backward_var(self, grad, index, **kwargs):
            self.kept = grad * 1.0
            return self.kept

    x = mg.Tensor(np.ones(BIG))
    s = mg.sin(x)
    a = mg.execute_op(KeepsItsGradient, x)  # newer: its backward runs first
    op = a.creator
    (s + a).backward()  # x's gradient: the kept array, then sin's added to it
    np.testing.assert_array_equal(op.kept, np.ones(BIG))
    np.testing.assert_allclose(x.grad, 1 + np.cos(1.0), rtol=1e-12)


_ADDRESSES: list[int] = []


class _RecordsItsGradient(Operation):
    """2 * a, whose backward records where the new gradient it returns lives (the
    address only: a reference would keep the array from being spent)."""

    def __call__(self, a):
        self.variables = (a,)
        return a.data * 2.0

    def backward_var(self, grad, index, **kwargs):
        g = grad * 2.0
        _ADDRESSES.append(_address(g))
        return g


def _address(array):
    return array.__array_interface__["data"][0]


@pytest.mark.parametrize(
    "chain, derivative",
    [
        (lambda x: mg.negative(-(x * x)), lambda d: 2 * d),  # negative, negative, x * x
        (lambda x: mg.exp(-x), lambda d: -np.exp(-d)),  # exp (derivative: its output)
    ],
    ids=["negatives-square", "exp"],
)
def test_a_spent_gradient_becomes_the_next_one(chain, derivative):
    # Nobody holds the intermediates, so each op writes its gradient into the one it
    # was given: the array made by the recording op ends up as x's gradient.
    data = np.linspace(-1.0, 1.0, BIG)
    x = mg.Tensor(data)
    _ADDRESSES.clear()
    mg.execute_op(_RecordsItsGradient, chain(x)).sum().backward()
    assert _address(x.grad) == _ADDRESSES[0]
    np.testing.assert_allclose(x.grad, 2 * derivative(data), rtol=1e-12)


def test_a_gradient_whose_tensor_is_held_is_not_overwritten():
    data = np.linspace(-1.0, 1.0, BIG)
    x = mg.Tensor(data)
    square = x * x
    negated = -square  # held: its gradient must survive the backward of `-`
    inner = -negated
    also_held = mg.exp(inner)  # held too: exp must not write into its gradient
    (also_held * 3.0).sum().backward()
    e = np.exp(data * data)
    np.testing.assert_allclose(also_held.grad, np.full(BIG, 3.0))
    np.testing.assert_allclose(inner.grad, 3 * e, rtol=1e-12)
    np.testing.assert_allclose(negated.grad, -3 * e, rtol=1e-12)
    np.testing.assert_allclose(square.grad, 3 * e, rtol=1e-12)
    np.testing.assert_allclose(x.grad, 6 * data * e, rtol=1e-12)
    assert len({_address(t.grad) for t in (x, square, negated, inner, also_held)}) == 5


def test_a_spent_gradient_is_only_reused_for_the_same_dtype():
    # A float32 gradient reaching x * x for a float64 x: the product is a new float64
    # array, not a float32 write into the spent gradient.
    class ToFloat32(Operation):
        def __call__(self, a):
            self.variables = (a,)
            return a.data.astype(np.float32)

        def backward_var(self, grad, index, **kwargs):
            return grad * np.float32(1.0)  # (stays float32)

    data = np.linspace(-1.0, 1.0, BIG)
    x = mg.Tensor(data)
    mg.execute_op(ToFloat32, x * x).sum().backward()
    assert x.grad.dtype == np.float64
    np.testing.assert_allclose(x.grad, 2 * data, rtol=1e-15)


# -- backprop releases the graph as it goes -------------------------------------------
def test_arrays_nobody_holds_are_freed_during_backprop():
    import weakref

    freed_when_probed = []

    class Probe(Operation):  # runs last: records whether downstream arrays are gone
        def __call__(self, a):
            self.variables = (a,)
            return a.data.copy()

        def backward_var(self, grad, index, **kwargs):
            freed_when_probed.append(watched() is None)
            return grad * 1.0

    x = mg.Tensor(np.ones(4))
    h = mg.execute_op(Probe, x) * 2.0
    watched = weakref.ref(h.data)
    f = (h * 3.0).sum()
    del h
    f.backward()
    assert freed_when_probed == [True]
    np.testing.assert_array_equal(x.grad, np.full(4, 6.0))


def test_an_ops_output_nobody_holds_is_freed_before_the_ops_backward():
    import weakref

    alive_in_backward = []

    class Watched(Operation):
        def __call__(self, a):
            self.variables = (a,)
            return a.data * 2.0

        def backward_var(self, grad, index, **kwargs):
            alive_in_backward.append(output() is not None)
            return grad * 2.0

    x = mg.Tensor(np.ones(3))
    y = mg.execute_op(Watched, x)
    output = weakref.ref(y.data)
    f = (y * 3.0).sum()
    del y
    f.backward()
    kept = mg.execute_op(Watched, x)  # held by the caller: stays, with its gradient
    output = weakref.ref(kept.data)
    (kept * 3.0).sum().backward()
    assert alive_in_backward == [False, True]
    np.testing.assert_array_equal(kept.grad, np.full(3, 3.0))
    np.testing.assert_array_equal(x.grad, np.full(3, 6.0))


def test_an_op_that_raises_leaves_no_graph_behind():
    class Raises(Operation):
        def __call__(self, a):
            self.variables = (a,)
            return a.data.copy()

        def backward_var(self, grad, index, **kwargs):
            raise ValueError("boom")

    x = mg.Tensor([1.0, 2.0])
    r = mg.execute_op(Raises, x)
    h = r * 2.0
    f = h.sum()
    with pytest.raises(ValueError, match="boom"):
        f.backward()
    assert f.creator is None and h.creator is None and r.creator is None
    np.testing.assert_array_equal(h.grad, [1.0, 1.0])  # stored before the error stays
    assert x.grad is None


def test_owned_knows_an_array_that_something_else_holds():
    from gradcheck.operation import owned

    a = np.empty(BIG)
    assert owned(a)
    other = a  # a second holder
    assert not owned(a)
    del other
    assert owned(a)
    assert not owned(a[1:])  # a view: its memory is another array's
    assert not owned(np.empty(4))  # small: not worth it
    holder = [np.empty(BIG)]
    b = holder[0]
    assert not owned(b)  # the list holds it too
    assert owned(a, refs=0) and not owned(a, refs=1)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_a_square_backpropagates_like_a_product_of_two_tensors(shape):
    data = np.arange(1.0, 1.0 + np.prod(shape, dtype=int)).reshape(shape)
    x, a, b = mg.Tensor(data), mg.Tensor(data), mg.Tensor(data)
    g = np.full(shape, 0.5)
    (x * x + mg.sin(x)).backward(g)
    (a * b + mg.sin(a)).backward(g)
    np.testing.assert_allclose(x.grad, a.grad + b.grad, rtol=1e-15)
    np.testing.assert_allclose(x.grad, 2 * data * g + np.cos(data) * g, rtol=1e-15)


def test_backward_under_no_autodiff_does_nothing():
    x = mg.Tensor([1.0, 2.0])
    with mg.no_autodiff:
        y = x * 2
        y.backward()
        x.backward()
    assert y.grad is None and x.grad is None and y.creator is None
    z = x * 2  # tracked again
    z.backward()
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])
