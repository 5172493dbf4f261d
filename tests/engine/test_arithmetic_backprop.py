"""``Add``'s and ``Multiply``'s backprop written out (``arithmetic._sum_backprop``,
``_product_backprop``, with the storage step as ``operation.store_given`` and
``store_new``): the gradients, their dtypes and which of them share memory are those of
the storage step every other op runs, in every case (broadcasting, dtypes, constants,
``x * x``, sums of gradients, large arrays); a patched ``backward_var`` still runs."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as mg
from gradcheck.engine.operation import Operation, _own_copy
from gradcheck.engine.ops._rules import arithmetic
from gradcheck.errors import InvalidBackprop, InvalidGradient
from gradcheck.testing.mutants import Mutation, mutated

RULES = (arithmetic.Add, arithmetic.Multiply)


def test_the_two_rules_run_their_backprop_written_out() -> None:
    # fails where they run the storage step's loop (main before this change)
    assert arithmetic.Add._engine_backprop.__qualname__ == "_sum_backprop"
    assert arithmetic.Multiply._engine_backprop.__qualname__ == "_product_backprop"


def _through_the_loop(monkeypatch) -> None:
    for rule in RULES:
        monkeypatch.setattr(rule, "_engine_backprop", _own_copy(Operation._engine_backprop))


def _leaf(kind, dtype, shape):
    if kind == "number":
        return 1.25
    data = np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape).astype(dtype)
    if kind == "constant":
        return mg.Tensor(data, constant=True)
    return mg.Tensor(data)


CASES = [
    # (kind of a, kind of b, shape of a, shape of b, dtype of a, dtype of b)
    ("tensor", "tensor", (3,), (3,), np.float64, np.float64),
    ("tensor", "number", (3,), None, np.float64, None),
    ("number", "tensor", None, (2, 3), None, np.float64),
    ("tensor", "tensor", (2, 3), (3,), np.float64, np.float64),
    ("tensor", "tensor", (2, 1), (1, 3), np.float32, np.float64),
    ("tensor", "tensor", (), (4,), np.float16, np.float32),
    ("tensor", "constant", (3,), (3,), np.float64, np.float64),
    ("constant", "tensor", (2, 3), (2, 3), np.float32, np.float32),
    ("tensor", "tensor", (200, 100), (200, 100), np.float64, np.float64),
    ("tensor", "tensor", (200, 100), (100,), np.float64, np.float64),
]


def _run(rule, case, form):
    """The gradients of the leaves (and whether each shares memory with another)."""
    kind_a, kind_b, shape_a, shape_b, dtype_a, dtype_b = case
    a = _leaf(kind_a, dtype_a, shape_a)
    b = _leaf(kind_b, dtype_b, shape_b)
    op = (lambda u, v: u + v) if rule is arithmetic.Add else (lambda u, v: u * v)
    if form == "plain":
        out = op(a, b)
    elif form == "twice":  # each leaf reached twice: sums of gradients
        out = op(a, b) + op(mg.sin(a) if isinstance(a, mg.Tensor) else a, b)
    elif form == "chained":  # the gradient of an op's output handed on
        out = mg.tanh(op(mg.sin(a) if isinstance(a, mg.Tensor) else a, b)) * 0.5
    else:  # the same tensor on both sides
        t = a if isinstance(a, mg.Tensor) else b
        out = op(t, t)
    out.backward()
    leaves = [t for t in (a, b) if isinstance(t, mg.Tensor)]
    grads = [
        None if t.grad is None else (t.grad.tobytes(), t.grad.dtype, t.grad.shape) for t in leaves
    ]
    shared = [t._shared for t in leaves]
    return grads, shared


@pytest.mark.parametrize("form", ["plain", "twice", "chained", "itself"])
@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.__name__)
def test_the_gradients_are_the_loops_bit_for_bit(monkeypatch, rule, case, form) -> None:
    written_out = _run(rule, case, form)
    _through_the_loop(monkeypatch)
    assert _run(rule, case, form) == written_out


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.__name__)
def test_a_patched_or_mutated_backward_var_runs(monkeypatch, rule) -> None:
    wrong_shape = Mutation(
        "wrong-shape", "a gradient of another shape", lambda op, bw, g, i, kw: np.ones(4)
    )
    x, y = mg.Tensor([0.5, 1.0]), mg.Tensor([2.0, 3.0])
    with mutated(rule, wrong_shape) as calls:
        with pytest.raises(InvalidGradient, match=r"shape \(4,\) for an input of shape \(2,\)"):
            (x + y if rule is arithmetic.Add else x * y).backward()
    assert calls.count == 1

    def tripled(self, grad, index, **kwargs):
        return 3 * grad

    monkeypatch.setattr(rule, "backward_var", tripled)
    x = mg.Tensor([0.5, 1.0])
    (x + 2.0 if rule is arithmetic.Add else x * 2.0).backward()
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.__name__)
def test_a_cleared_input_is_reported(rule) -> None:
    x, y = mg.Tensor([0.5, 1.0]), mg.Tensor([2.0, 3.0])
    z = x + y if rule is arithmetic.Add else x * y
    x._ops = 0  # (what clear_graph leaves behind)
    with pytest.raises(InvalidBackprop, match="cleared"):
        z.backward()


def test_an_added_gradient_handed_on_is_shared_and_copied_when_read() -> None:
    x = mg.Tensor([0.5, 1.0])
    y = mg.sin(x)
    z = y + 1.0
    z.backward()
    # y's gradient was z's array itself (shared), copied when first read
    assert y._shared
    assert not np.shares_memory(y.grad, z.grad)
    np.testing.assert_array_equal(y.grad, [1.0, 1.0])
    np.testing.assert_allclose(x.grad, np.cos([0.5, 1.0]), rtol=1e-15)
