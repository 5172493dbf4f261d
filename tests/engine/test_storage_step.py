"""One storage step (issue 24 item 1): every op's gradients go Operation.backward ->
backward_var -> the storage step in Operation.backward, and what makes a built-in op
fast is data that backward reads (class attributes), never an override of it."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import numpy as np
import pytest

import gradcheck as mg
from gradcheck import Operation
from gradcheck.ops._rules.unary import UnaryOp
from gradcheck.ops.arithmetic import Add, Multiply, Negative, Positive

BIG = 1 << 15  # above operation.IN_PLACE_MIN_SIZE: the in-place paths run


def _engine_op_classes() -> list[type]:
    found: set[type] = set()
    for package in ("gradcheck.ops", "gradcheck.nnet"):
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                if isinstance(value, type) and issubclass(value, Operation):
                    found.add(value)
    return sorted(found, key=lambda cls: (cls.__module__, cls.__qualname__))


def test_no_op_of_the_engine_overrides_backward():
    classes = _engine_op_classes()
    assert len(classes) > 50
    assert [c.__qualname__ for c in classes if c.backward is not Operation.backward] == []
    # (what backprop calls: Operation.backward's body, taken positionally; each class
    # has a copy of its own, the same code with inline caches of its own; a built-in
    # elementwise rule's copy is of UnaryOp's backward_var and the storage step written
    # out for its one input, issue 40 item 5)
    assert [
        c.__qualname__
        for c in classes
        if c._engine_backprop.__code__ != Operation._engine_backprop.__code__
        and not _runs_the_elementwise_step(c)
        and not _runs_the_arithmetic_step(c)
    ] == []


def _runs_the_elementwise_step(cls: type) -> bool:
    return (
        issubclass(cls, UnaryOp)
        and cls._engine_backprop.__code__ == UnaryOp._elementwise_backprop.__code__
        and cls._engine_backprop.__defaults__[-1] is cls.__dict__["backward_var"]
        and cls.backward_var.__code__ == UnaryOp.backward_var.__code__
        and cls.__call__.__code__ == UnaryOp.__call__.__code__
    )


def _runs_the_arithmetic_step(cls: type) -> bool:
    # Add's and Multiply's backprop written out for their two inputs (issue 40 item 5)
    written_out = {Add: "_sum_backprop", Multiply: "_product_backprop"}
    return (
        cls in written_out
        and cls._engine_backprop.__qualname__ == written_out[cls]
        and cls._engine_backprop.__defaults__[-1] is cls.__dict__["backward_var"]
    )


def test_x_times_x_is_a_multiply():
    for square in (lambda x: x * x, lambda x: mg.multiply(x, x)):
        x = mg.Tensor([1.0, 2.0])
        y = square(x)
        assert type(y.creator) is Multiply
        y.backward()
        np.testing.assert_array_equal(x.grad, [2.0, 4.0])


def _backward_calls(run) -> list[tuple[str, str]]:
    """(class of self, code's qualified name) of every function named backward (or
    _engine_backprop, Operation.backward's body, which backprop calls, or
    _elementwise_backprop, a built-in elementwise rule's) that ``run`` enters,
    Tensor.backward aside."""
    calls = []

    def profile(frame, event, arg):
        names = (
            "backward",
            "_engine_backprop",
            "_elementwise_backprop",
            "_sum_backprop",
            "_product_backprop",
        )
        if event == "call" and frame.f_code.co_name in names:
            owner = frame.f_locals.get("self")
            if not isinstance(owner, mg.Tensor):
                calls.append((type(owner).__name__, frame.f_code.co_qualname))

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return calls


@pytest.mark.parametrize("size", [3, BIG], ids=["small", "large (in place)"])
def test_every_op_stores_its_gradients_through_operation_backward(size):
    data = np.linspace(-1.0, 1.0, size)
    x, w = mg.Tensor(data), mg.Tensor(data + 2.0)
    # sin (a new derivative array), exp (its derivative is its output), negative and
    # x * x (into the spent gradient when large), a sum, a product of two tensors
    f = (mg.sin(x) * w + mg.exp(-(x * x))).sum()
    calls = _backward_calls(f.backward)
    # (Add's and Multiply's written out)
    ops = ["Sum", "Negative"]
    elementwise = [
        ("Sin", "UnaryOp._elementwise_backprop"),
        ("Exp", "UnaryOp._elementwise_backprop"),
        ("Add", "_sum_backprop"),
        ("Multiply", "_product_backprop"),
        ("Multiply", "_product_backprop"),
    ]
    assert sorted(calls) == sorted([(op, "Operation._engine_backprop") for op in ops] + elementwise)
    e = np.exp(-(data**2))
    np.testing.assert_allclose(x.grad, np.cos(data) * (data + 2.0) - 2 * data * e, rtol=1e-12)
    np.testing.assert_allclose(w.grad, np.sin(data), rtol=1e-12)


def test_the_fast_path_is_a_class_attribute():
    assert UnaryOp.returns_new_arrays and Negative.returns_new_arrays
    assert mg.ops.trigonometric.Sin.returns_new_arrays  # inherited: UnaryOp's rule
    assert Multiply.returns_new_arrays
    # Positive's own rule returns its gradient as it is: no promise
    assert not Positive.returns_new_arrays and not Operation.returns_new_arrays


def test_a_subclass_that_brings_its_own_backward_var_makes_no_promise():
    class Identity(UnaryOp):  # a user's elementwise op that hands grad on as it is
        func = staticmethod(np.positive)

        def backward_var(self, grad, index, **kwargs):
            return grad

    assert not Identity.returns_new_arrays
    x = mg.Tensor([1.0, 2.0])
    y = mg.execute_op(Identity, x)
    y.backward(np.array([3.0, 4.0]))
    assert not np.shares_memory(x.grad, y.grad)
    x.grad[0] = 100.0  # x's own array
    assert y.grad[0] == 3.0


def test_a_direct_call_never_writes_into_the_callers_gradient():
    # spent() is asked inside backward_var; a caller's array (no backprop graph) is
    # never spent, however large.
    x = mg.Tensor(np.linspace(0.0, 1.0, BIG))
    for y in (-x, x * x, mg.exp(x)):
        g = np.ones(BIG)
        y.creator.backward(g)
        np.testing.assert_array_equal(g, np.ones(BIG))


def test_each_op_class_runs_a_copy_of_its_own_of_the_storage_step():
    # (issue 40 item 5) the same code, one function object per class: an attribute
    # read in it then keeps seeing one class, as CPython's inline caches need
    classes = {*_engine_op_classes(), Operation}
    bodies = [c._engine_backprop for c in classes]
    assert len({id(body) for body in bodies}) == len(classes)
    assert {body.__qualname__ for body in bodies} == {
        "Operation._engine_backprop",
        "UnaryOp._elementwise_backprop",
        "_sum_backprop",
        "_product_backprop",
    }
    assert UnaryOp._engine_backprop is not mg.ops.trigonometric.Sin._engine_backprop
    assert Multiply._engine_backprop is not Negative._engine_backprop


def test_a_users_op_gets_its_own_copy_and_an_override_of_backward_still_runs():
    class Twice(Operation):
        def __call__(self, a):
            self.variables = (a,)
            return 2 * a.data

        def backward_var(self, grad, index, **kwargs):
            return 2 * grad

    seen = []

    class Logged(Twice):
        def backward(self, grad, **kwargs):
            seen.append(grad.copy())
            return super().backward(grad, **kwargs)

    assert Twice._engine_backprop is not Operation._engine_backprop
    assert Twice._engine_backprop.__code__ == Operation._engine_backprop.__code__
    assert Logged._engine_backprop.__code__ == Operation._through_backward.__code__
    x = mg.Tensor([1.0, 2.0])
    y = mg.execute_op(Logged, mg.execute_op(Twice, x))
    y.backward()
    np.testing.assert_array_equal(x.grad, [4.0, 4.0])
    assert len(seen) == 1


def test_sums_of_small_gradients_match_the_accumulated_values():
    # the storage step adds a small gradient out of place, written out inline: the
    # shared gradient Add hands on is never written (x + x, then x * 3 on top)
    x = mg.Tensor([1.0, 2.0, 3.0])
    s = x + x
    f = s * 3.0 + s + mg.sin(x)
    f.backward()
    np.testing.assert_allclose(x.grad, 8.0 + np.cos([1.0, 2.0, 3.0]), rtol=1e-15)
    assert s.grad is not x.grad
    np.testing.assert_array_equal(s.grad, [4.0, 4.0, 4.0])


def test_built_in_elementwise_rules_run_copies_of_their_own_of_unaryops_methods():
    sin, tanh = mg.ops.trigonometric.Sin, mg.ops.hyperbolic.Tanh
    for method in ("__call__", "backward_var"):
        mine, base = getattr(sin, method), getattr(UnaryOp, method)
        assert mine is not base and mine.__code__ == base.__code__
        assert getattr(tanh, method) is not mine

    class Cube(UnaryOp):  # a user's rule: UnaryOp's own methods
        func = staticmethod(np.cbrt)

        def derivative(self, x, out):
            return 1 / (3 * out**2)

    assert Cube.__call__ is UnaryOp.__call__ and Cube.backward_var is UnaryOp.backward_var
    x = mg.Tensor([1.0, 8.0])
    (mg.tanh(mg.sin(x)) + mg.execute_op(Cube, x)).sum().backward()
    s = np.sin([1.0, 8.0])
    np.testing.assert_allclose(
        x.grad, (1 - np.tanh(s) ** 2) * np.cos([1.0, 8.0]) + [1 / 3, 1 / 12], rtol=1e-14
    )
