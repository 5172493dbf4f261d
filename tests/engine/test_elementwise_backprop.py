"""A built-in elementwise rule's backprop (issue 40 item 5): ``UnaryOp.backward_var`` and
the storage step written out for its one input (``UnaryOp._elementwise_backprop``),
without the shape test that its gradient passes by construction. The gradients are
those of the storage step every other op runs, bit for bit; a patched ``backward_var``
still runs; and once an array or a gradient may have changed shape behind the graph,
the shape test is back, so that a mismatch is reported as it always was."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as mg
from gradcheck import no_autodiff
from gradcheck.engine import operation
from gradcheck.engine.ops._rules.unary import UnaryOp
from gradcheck.errors import InvalidGradient
from gradcheck.testing.mutants import Mutation, mutated

ELEMENTWISE = (mg.sin, mg.tanh, mg.exp, mg.log, mg.sqrt, mg.cos, mg.arctan)


@pytest.fixture
def shapes_kept(monkeypatch):
    """Each test starts with no shape rewritten behind a graph (the flag is per
    process: another test may have rewritten one)."""
    monkeypatch.setattr(operation, "SHAPES_KEPT", True)


def _through_the_storage_step(monkeypatch) -> None:
    """Every built-in elementwise rule's backward_var patched with a wrapper of itself:
    backprop then runs the storage step of every op for them."""
    for func in ELEMENTWISE:
        rule = func._wrapped_op
        own = rule.backward_var

        def wrapper(self, grad, index, _own=own, **kwargs):
            return _own(self, grad, index, **kwargs)

        monkeypatch.setattr(rule, "backward_var", wrapper)


def _gradients(dtype, shape) -> list[np.ndarray]:
    x = mg.Tensor(np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape).astype(dtype))
    y = x
    for func in ELEMENTWISE:
        y = func(y) * 0.75 + 1.0
    (y + mg.sin(x) * mg.cos(x)).sum().backward()  # x reached twice: a sum of gradients
    return [x.grad, x.grad.dtype]


@pytest.mark.usefixtures("shapes_kept")
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)], ids=["0-d", "1-d", "2-d"])
def test_the_gradients_are_the_storage_steps_bit_for_bit(monkeypatch, dtype, shape):
    fast = _gradients(dtype, shape)
    assert mg.sin._wrapped_op._engine_backprop.__qualname__ == "UnaryOp._elementwise_backprop"
    _through_the_storage_step(monkeypatch)
    assert _gradients(dtype, shape)[1] == fast[1] == dtype
    np.testing.assert_array_equal(_gradients(dtype, shape)[0], fast[0], strict=True)


@pytest.mark.usefixtures("shapes_kept")
def test_a_patched_backward_var_runs(monkeypatch):
    sin = mg.sin._wrapped_op

    def doubled(self, grad, index, **kwargs):
        return 2 * grad * np.cos(self.variables[0].data)

    monkeypatch.setattr(sin, "backward_var", doubled)
    x = mg.Tensor([0.5, 1.0])
    mg.sin(x).backward()
    np.testing.assert_allclose(x.grad, 2 * np.cos([0.5, 1.0]), rtol=1e-15)


@pytest.mark.usefixtures("shapes_kept")
def test_a_mutant_of_an_elementwise_rule_runs_and_its_wrong_shape_is_reported():
    # the mutation suite's machinery replaces backward_var on the class: the storage
    # step runs for it, and tests its shape
    wrong_shape = Mutation(
        "wrong-shape", "a gradient of another shape", lambda op, bw, g, i, kw: np.ones(4)
    )
    x = mg.Tensor([0.5, 1.0])
    with mutated(mg.tanh._wrapped_op, wrong_shape) as calls:
        with pytest.raises(InvalidGradient, match=r"shape \(4,\) for an input of shape \(2,\)"):
            mg.tanh(x).backward()
    assert calls.count == 1


def _reshaped_under_no_autodiff():
    x = mg.Tensor(np.arange(6.0))
    y = mg.tanh(x)
    with no_autodiff:
        x.shape = (2, 3)
    return y


def _data_of_another_shape():
    x = mg.Tensor(np.arange(6.0))
    y = mg.tanh(x)
    x.data = np.arange(6.0).reshape(2, 3)
    return y


def _gradient_of_another_shape():
    x = mg.Tensor(np.arange(6.0))
    s = mg.sin(x)
    y = mg.tanh(s)
    s.grad = np.ones((2, 1, 6))  # (backprop adds tanh's gradient to it)
    return y


@pytest.mark.usefixtures("shapes_kept")
@pytest.mark.parametrize(
    "graph, message",
    [
        (_reshaped_under_no_autodiff, r"Tanh.*shape \(6,\) for an input of shape \(2, 3\)"),
        (_data_of_another_shape, r"Tanh.*shape \(6,\) for an input of shape \(2, 3\)"),
        (_gradient_of_another_shape, r"Sin.*shape \(2, 1, 6\) for an input of shape \(6,\)"),
    ],
    ids=["x.shape= under no_autodiff", "x.data= another shape", "x.grad= another shape"],
)
def test_a_shape_rewritten_behind_the_graph_is_still_reported(graph, message):
    y = graph()
    assert not operation.SHAPES_KEPT
    with pytest.raises(InvalidGradient, match=message):
        y.backward()


@pytest.mark.usefixtures("shapes_kept")
def test_writes_of_the_same_shape_keep_the_shapes_known():
    x = mg.Tensor(np.arange(6.0))
    y = mg.tanh(x)
    x.data = np.ones(6)
    x.grad = np.zeros(6)
    with no_autodiff:
        x.shape = (6,)
    assert operation.SHAPES_KEPT
    y.backward()
    np.testing.assert_allclose(x.grad, 1 - np.tanh(np.arange(6.0)) ** 2, rtol=1e-15)


def test_a_users_elementwise_rule_runs_the_storage_step():
    class Cube(UnaryOp):
        func = staticmethod(np.cbrt)

        def derivative(self, x, out):
            return 1 / (3 * out**2)

    assert Cube._engine_backprop.__qualname__ == "Operation._engine_backprop"
