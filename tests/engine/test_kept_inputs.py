"""The built-in ops of one or two inputs on the per-op path keep their inputs in two
attributes of their own rather than in a ``variables`` tuple (one object fewer per op
for the cyclic collector to walk), and ``variables`` still means what MyGrad's API
says: the tuple of the op's inputs, read or set."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import gradcheck as mg
from gradcheck.engine.ops._rules import arithmetic
from gradcheck.engine.ops._rules.trigonometric import Sin

KEPT = [arithmetic.Add, arithmetic.Subtract, arithmetic.Multiply, arithmetic.Divide]


def _tracked_left_alive_per_op(make) -> float:
    """Objects tracked by the collector that one op leaves alive (1,000 ops kept)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        kept = [make() for _ in range(10)]  # (first calls: caches filled)
        gc.collect()
        before = len(gc.get_objects())
        for _ in range(1000):
            kept.append(make())
        after = len(gc.get_objects())
    finally:
        if was_enabled:
            gc.enable()
    return (after - before - 1) / 1000  # (the list `kept` itself: 1)


@pytest.mark.parametrize(
    "make",
    [lambda x, y: x + y, lambda x, y: x * 1.01, lambda x, y: mg.sin(x), lambda x, y: x / y],
    ids=["x + y", "x * 1.01", "sin(x)", "x / y"],
)
def test_an_op_leaves_two_tracked_objects_alive(make) -> None:
    # the output tensor and the op; no tuple of inputs besides (main: 3 per op)
    x = mg.tensor(np.ones(8))
    y = mg.tensor(np.ones(8))
    assert _tracked_left_alive_per_op(lambda: make(x, y)) == pytest.approx(2.0, abs=0.01)


@pytest.mark.parametrize("Op", KEPT)
def test_variables_of_a_kept_binary_op_is_the_tuple_of_its_inputs(Op) -> None:
    x = mg.tensor([1.0, 2.0])
    y = mg.tensor([3.0, 4.0])
    op = mg.execute_op(Op, x, y).creator
    assert type(op.variables) is tuple
    assert op.variables == (x, y) and op.variables[0] is x and op.variables[1] is y
    a, b = op.variables
    assert a is x and b is y


def test_variables_of_a_unary_rule_and_of_an_op_with_a_number() -> None:
    x = mg.tensor([1.0, 2.0])
    (only,) = mg.sin(x).creator.variables
    assert only is x
    a, b = (x * 2.0).creator.variables
    assert a is x and b.constant and b.data == 2.0


def test_setting_variables_of_a_kept_op_points_its_backward_at_them() -> None:
    x = mg.tensor([1.0, 2.0])
    y = mg.tensor([3.0, 4.0])
    w = mg.tensor([5.0, 6.0])
    z = x * y
    w * 1.0  # (w feeds an op: a tensor in the graph)
    z.creator.variables = (x, w)  # (what the graph does for an input written since)
    assert z.creator.variables == (x, w)
    z.backward()
    np.testing.assert_array_equal(x.grad, [5.0, 6.0])
    np.testing.assert_array_equal(w.grad, [1.0, 2.0])


def test_variables_of_another_length_set_on_a_kept_op() -> None:
    # a subclass's own __call__ may set any number of inputs: read back as set
    class AddThree(arithmetic.Add):
        def __call__(self, a, b, c):
            self.variables = [a, b, c]
            return a.data + b.data + c.data

        def backward_var(self, grad, index, **kwargs):
            return grad * (index + 1)

    x, y, w = (mg.tensor([1.0]) for _ in range(3))
    out = mg.execute_op(AddThree, x, y, w)
    assert out.creator.variables == (x, y, w)
    out.backward()
    assert (x.grad, y.grad, w.grad) == (1.0, 2.0, 3.0)


def test_a_subclass_setting_variables_keeps_the_rules_of_its_parent() -> None:
    class MyMultiply(arithmetic.Multiply):
        def __call__(self, a, b):
            self.variables = (a, b)
            return a.data * b.data

    x = mg.tensor([2.0, 3.0])
    y = mg.tensor([5.0, 7.0])
    out = mg.execute_op(MyMultiply, x, y)
    assert out.creator.variables == (x, y)
    out.backward()
    np.testing.assert_array_equal(x.grad, [5.0, 7.0])
    np.testing.assert_array_equal(y.grad, [2.0, 3.0])


def test_an_op_never_called_has_no_variables() -> None:
    assert Sin().variables == () and arithmetic.Add().variables == ()


@pytest.mark.parametrize("Op", KEPT)
def test_a_kept_op_backprops_as_an_op_with_a_variables_tuple(Op) -> None:
    # the same class with its inputs in a tuple (as every op had them) gives the same
    class AsTuple(mg.Operation):
        broadcastable = True

        def __call__(self, a, b):
            self.variables = (a, b)
            return Op.numpy_ufunc(a.data, b.data)

        def backward_var(self, grad, index, **kwargs):
            rule = Op()
            rule.variables = self.variables
            return rule.backward_var(grad, index)

    a = np.array([[1.5, -2.0, 0.5]])
    b = np.array([[0.25], [3.0]])
    grads = []
    for cls in (Op, AsTuple):
        x, y = mg.tensor(a), mg.tensor(b)
        mg.sin(mg.execute_op(cls, x, y)).sum().backward()
        grads.append((x.grad, y.grad))
    for kept, tupled in zip(*grads):
        np.testing.assert_array_equal(kept, tupled)
