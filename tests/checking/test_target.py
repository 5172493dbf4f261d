"""resolve_target and Target: one object that runs any kind of target on arrays."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as mg
from gradcheck import Operation, SkipGradient
from gradcheck.checking.resolve import resolve_target
from gradcheck.checking.target import Target, user_frame
from gradcheck.errors import GradcheckError, InvalidGradient, NotATarget, TargetRaised
from tests.support.checker_ops import Clip, Mul


def test_operation_subclass():
    t = resolve_target(Mul)
    assert isinstance(t, Target) and t.obj is Mul
    assert t.name.endswith("checker_ops:Mul")
    assert t.signature.arity == 2
    np.testing.assert_array_equal(t.forward([np.array([2.0]), np.array([3.0])]), [6.0])


def test_operation_params():
    t = resolve_target(Clip)
    assert t.signature.parameters == ("lo", "hi")
    out = t.forward([np.array([-5.0, 0.5, 5.0])], {"lo": -1.0, "hi": 2.0})
    np.testing.assert_array_equal(out, [-1.0, 0.5, 2.0])


def test_function_of_tensors():
    def f(x, y, *, power=2):
        return (x * y) ** power

    t = resolve_target(f)
    assert t.signature.arity == 2 and t.signature.parameters == ("power",)
    np.testing.assert_allclose(t.forward([np.array(2.0), np.array(3.0)], {"power": 3}), 216.0)


def test_a_target_resolves_to_itself():
    t = resolve_target(Mul)
    assert resolve_target(t) is t


@pytest.mark.parametrize(
    ("obj", "words"),
    [
        (42, "not an op"),
        ("gradcheck.tanh", "not an op"),
        (dict, "not an Operation subclass"),
        (type("NoForward", (Operation,), {}), "does not implement __call__"),
    ],
)
def test_things_that_are_not_ops(obj, words):
    with pytest.raises(NotATarget, match=words) as info:
        resolve_target(obj)
    assert isinstance(info.value, GradcheckError)
    assert "\n" not in str(info.value)  # one clear line


def test_forward_builds_no_graph():
    calls = []

    def f(x):
        out = mg.tanh(x)
        calls.append(out.creator)
        return out

    x = np.array([0.5, 1.0])
    resolve_target(f).forward([x])
    assert calls == [None]


def test_apply_and_backward():
    t = resolve_target(Mul)
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    graph = t.apply([a, b])
    assert graph.output.creator is not None
    v = np.array([1.0, -1.0])
    grads = t.backward(graph, v)
    np.testing.assert_array_equal(grads[0], v * b)
    np.testing.assert_array_equal(grads[1], v * a)
    # inputs are copied: the caller's arrays are not the tensors' data
    assert not np.shares_memory(graph.tensors[0].data, a)


def test_constants_get_no_gradient():
    t = resolve_target(Mul)
    graph = t.apply([np.array([1.0]), np.array([2.0])], constants=(0,))
    assert t.backward(graph, np.array([1.0]))[0] is None


def test_bind_sees_arrays_changed_in_place():
    x = np.array([1.0, 2.0])
    forward = resolve_target(lambda t: t * t).bind([x])
    with mg.no_autodiff:
        first = forward().copy()
        x[0] = 3.0
        second = forward()
    np.testing.assert_array_equal(first, [1.0, 4.0])
    np.testing.assert_array_equal(second, [9.0, 4.0])


def test_exceptions_are_wrapped_with_their_phase():
    class Boom(Operation):
        def __call__(self, a):
            self.variables = (a,)
            return a.data * 1

        def backward_var(self, grad, index, **kw):
            raise ZeroDivisionError("no")

    t = resolve_target(Boom)
    graph = t.apply([np.array([1.0])])
    with pytest.raises(TargetRaised) as info:
        t.backward(graph, np.array([1.0]))
    assert info.value.phase == "backward"
    assert isinstance(info.value.exception, ZeroDivisionError)
    frame = user_frame(info.value.exception.__traceback__)
    assert "test_target.py" in frame and "raise ZeroDivisionError" in frame


def test_raw_gradients_show_what_backward_var_returned():
    class Listy(Operation):
        def __call__(self, a, b):
            self.variables = (a, b)
            return a.data + b.data

        def backward_var(self, grad, index, **kw):
            if index == 1:
                raise SkipGradient
            return grad.tolist()

    t = resolve_target(Listy)
    arrays = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    graph = t.apply(arrays)
    with pytest.raises(TargetRaised) as info:
        t.backward(graph, np.ones(2))
    assert isinstance(info.value.exception, InvalidGradient)
    raw = t.raw_gradients(arrays, {}, np.ones(2))
    assert raw == [[1.0, 1.0], None]
    assert resolve_target(lambda x: x * 2).raw_gradients([arrays[0]], {}, np.ones(2)) is None


def _product_of_last_axis(x):
    # (a function of torch tensors whose code names no torch name: gradcheck takes
    # it for a function of its own tensors; issue 34, the bug corpus 3 round)
    import functools
    import operator

    return functools.reduce(operator.mul, x.unbind(-1))


def test_a_function_taken_for_gradcheck_s_says_how_to_mark_it_at_order_2():
    import gradcheck
    from gradcheck.errors import CheckUsageError

    with pytest.raises(CheckUsageError) as info:
        gradcheck.check(_product_of_last_axis, np.array([[0.5, 2.0, 3.0]]), order=2)
    said = str(info.value)
    assert "taken for a function of gradcheck's tensors" in said
    assert '@gradcheck.checking.adapters.framework("torch")' in said


def test_a_missing_tensor_attribute_says_how_to_mark_the_function():
    import gradcheck

    result = gradcheck.check(_product_of_last_axis, np.array([[0.5, 2.0, 3.0]]))
    assert result.failure.kind == "forward_error"
    assert "The op ran on gradcheck's own Tensors" in result.failure.message
    assert '@gradcheck.checking.adapters.framework("torch")' in str(result)
    # (another AttributeError, of the op's own making, gets no such line)
    result = gradcheck.check(lambda x: x.data.nope, np.array([1.0]))
    assert "gradcheck's own Tensors" not in result.failure.message
