"""The operators' and the ufuncs' short forward paths (``execution._pair`` and
``_single``) build the tensor that ``_execute``, the general path, builds: the same
slots on the output and the same writes to the inputs, in every case they take on or
hand over."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as mg
from gradcheck.engine import execution
from gradcheck.engine._utils import lock_management as lm
from gradcheck.engine._utils.views import STATE
from gradcheck.engine.ops._rules import arithmetic
from gradcheck.engine.ops._rules.unary import UnaryOp
from gradcheck.engine.ufuncs import ufunc_creator

#: The slots compared (``_seq``: only whether it is 0; ``_creator``: only its class;
#: ``_data``: value and dtype; ``_locks``: only whether there are any).
COMPARED = tuple(name for name in STATE if name not in ("_seq", "_creator", "_data", "_locks"))


def _state(t: mg.Tensor) -> dict[str, object]:
    state = {name: getattr(t, name) for name in COMPARED}
    state["_grad"] = None if t._grad is None else t._grad.tobytes()
    state["_seq"] = t._seq != 0
    state["_creator"] = type(t._creator)
    state["_locks"] = t._locks is not None
    state["_data"] = (t._data.tobytes(), t._data.dtype, t._data.shape)
    state["_views"] = t._views is not None
    return state


def _leaf(kind: str) -> mg.Tensor:
    """A tensor of each kind the short paths test for."""
    values = np.array([0.5, -1.25, 2.0])
    if kind == "plain":
        return mg.sin(mg.Tensor(values, copy=True))  # an op's output: not exposed
    if kind == "leaf":
        return mg.Tensor(values, copy=True)
    if kind == "exposed":
        return mg.Tensor(values)  # the caller holds the array
    if kind == "constant":
        return mg.Tensor(values, constant=True, copy=True)
    if kind == "float32":
        return mg.sin(mg.Tensor(values.astype(np.float32), copy=True))
    if kind == "integer":
        return mg.Tensor(np.array([1, 2, 3]), copy=True)
    if kind == "view":
        return mg.sin(mg.Tensor(np.arange(6.0).reshape(2, 3), copy=True))[0]
    if kind == "with grad":
        t = mg.sin(mg.Tensor(values, copy=True))
        t.backward()
        return t
    if kind == "constant with grad":
        t = mg.Tensor(values, constant=True, copy=True)
        t._grad = values.copy()  # (MyGrad nulls it when the tensor is used)
        return t
    raise AssertionError(kind)


KINDS = [
    "plain",
    "leaf",
    "exposed",
    "constant",
    "float32",
    "integer",
    "view",
    "with grad",
    "constant with grad",
]
OTHERS = [*KINDS, 2.0, 3, -0.0, np.float64(1.5), np.array([1.0, 2.0, 3.0]), [1.0, 2.0, 3.0]]


def _twins(make):
    """Two calls of ``make`` (which returns the inputs) in the same state."""
    return make(), make()


def _inputs(kind):
    return _leaf(kind) if isinstance(kind, str) else kind


@pytest.mark.parametrize("guard", [True, False])
@pytest.mark.parametrize("reflected", [False, True])
@pytest.mark.parametrize("other", OTHERS, ids=repr)
@pytest.mark.parametrize("first", KINDS)
@pytest.mark.parametrize(
    "Op", [arithmetic.Add, arithmetic.Subtract, arithmetic.Multiply, arithmetic.Divide]
)
def test_pair_builds_what_execute_builds(Op, first, other, reflected, guard) -> None:
    with lm.mem_guard_off if not guard else _Nothing():
        results = []
        for path in ("short", "general"):
            a = _leaf(first)
            b = _inputs(other)
            x, y = (b, a) if reflected else (a, b)
            if path == "short":
                out = execution._pair(Op, x, y)
            else:
                out = execution._execute(Op, (x, y), (), None, None)
            tensors = [t for t in (x, y) if isinstance(t, mg.Tensor)]
            results.append((_state(out), [_state(t) for t in tensors]))
        assert results[0] == results[1]


@pytest.mark.parametrize("Op", [arithmetic.Multiply, arithmetic.Add])
def test_pair_of_a_tensor_with_itself_and_under_no_autodiff(Op) -> None:
    for no_autodiff in (False, True):
        results = []
        for path in ("short", "general"):
            x = _leaf("plain")
            with mg.no_autodiff if no_autodiff else _Nothing():
                if path == "short":
                    out = execution._pair(Op, x, x)
                else:
                    out = execution._execute(Op, (x, x), (), None, None)
            results.append((_state(out), _state(x)))
        assert results[0] == results[1]


@pytest.mark.parametrize("guard", [True, False])
@pytest.mark.parametrize("kind", [*KINDS, 2.0, np.array([1.0, 2.0])], ids=repr)
@pytest.mark.parametrize("Op", [arithmetic.Negative, mg.tanh._wrapped_op, mg.exp._wrapped_op])
def test_single_builds_what_execute_builds(Op, kind, guard) -> None:
    with lm.mem_guard_off if not guard else _Nothing():
        results = []
        for path in ("short", "general"):
            x = _inputs(kind)
            if path == "short":
                out = execution._single(Op, x)
            else:
                out = execution._execute(Op, (x,), (), None, None)
            tensors = [x] if isinstance(x, mg.Tensor) else []
            results.append((_state(out), [_state(t) for t in tensors]))
        assert results[0] == results[1]


def test_a_scalar_only_input_makes_a_scalar_only_output() -> None:
    class OnlyScalar(UnaryOp):
        func = staticmethod(np.sin)
        scalar_only = True

        def derivative(self, x, out):
            return np.cos(x)

    x = mg.Tensor([1.0, 2.0])
    y = mg.execute_op(OnlyScalar, x)
    assert y._scalar_only
    for out in (y * 2.0, 2.0 * y, y + y, -y, mg.tanh(y), x * y, mg.add(x, y)):
        assert out._scalar_only
    assert not (x * 2.0)._scalar_only


def test_operators_and_ufuncs_take_the_short_paths(monkeypatch) -> None:
    # fails where they go through _execute (main before this path)
    calls = []
    general = execution._execute

    def counted(*args):
        calls.append(args[0])
        return general(*args)

    x = mg.sin(mg.Tensor([1.0, 2.0], copy=True))

    def ops():
        return (
            x * 2.0,
            2.0 * x,
            x + 1,
            1 - x,
            x / 3.0,
            x - x,
            -x,
            mg.sin(x),
            mg.tanh(x),
            mg.add(x, x),
            mg.multiply(x, 2.0),
        )

    # (a number's constant tensor is made once, on the general path; the cache is
    # emptied when full, which other tests may have brought it near)
    execution._SCALAR_CACHE.clear()
    execution._FLOAT64_SCALARS.clear()
    with lm.mem_guard_on:
        ops()
        monkeypatch.setattr(execution, "_execute", counted)
        for out in ops():
            assert out.creator is not None
    assert calls == []


def test_the_short_paths_ops_are_neither_scalar_only_nor_views() -> None:
    # _pair and _single do not read these two class attributes: their callers promise
    for Op in (
        arithmetic.Add,
        arithmetic.Subtract,
        arithmetic.Multiply,
        arithmetic.Divide,
        arithmetic.Power,
        arithmetic.Negative,
    ):
        assert not Op.scalar_only and not Op.can_return_view
    ufuncs = [getattr(mg, name) for name in dir(mg) if isinstance(getattr(mg, name), type)]
    for f in ufuncs:
        if issubclass(f, mg.ufunc) and getattr(f, "_plain_op", None) is not None:
            assert not f._plain_op.scalar_only and not f._plain_op.can_return_view


def test_a_scalar_only_or_view_rule_makes_a_ufunc_of_the_general_path() -> None:
    class OnlyScalar(UnaryOp):
        func = staticmethod(np.cos)
        scalar_only = True

        def derivative(self, x, out):
            return -np.sin(x)

    @ufunc_creator(OnlyScalar)
    def only_scalar(x, out=None, *, where=True, dtype=None, constant=None):
        """cos."""

    assert only_scalar._plain_op is None
    assert only_scalar(mg.Tensor([1.0, 2.0]))._scalar_only


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
