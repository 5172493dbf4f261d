"""Positional parameters that are not tensors (issue 19, item 1): a value given in
kwargs for a positional parameter without a default makes it a parameter, passed in
its place by position."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck
import gradcheck as mg
from gradcheck import Operation
from gradcheck.checking.checker import check
from gradcheck.checking.resolve import resolve_target
from gradcheck.checking.signature import arrange, op_signature
from gradcheck.errors import InvalidDescription

X = np.array([0.5, -1.2, 2.0])


def scaled_tanh(x, alpha):
    return mg.tanh(x) * alpha


class PowerFirst(Operation):
    """`v` (a number) before the tensor, as in `ive(v, z)`."""

    def __call__(self, v, z):
        self.variables = (z,)
        self.v = v
        return z.data**v

    def backward_var(self, grad, index, **kwargs):
        (z,) = self.variables
        return grad * self.v * z.data ** (self.v - 1)


class WrongPowerFirst(PowerFirst):
    def backward_var(self, grad, index, **kwargs):
        (z,) = self.variables
        return grad * z.data ** (self.v - 1)


def test_given_moves_a_positional_parameter_out_of_the_inputs():
    sig = op_signature(scaled_tanh)
    assert sig.arity == 2 and sig.accepts("alpha")
    given = sig.given({"alpha": 2.0})
    assert (given.arity, given.input_names, given.parameters) == (1, ("x",), ("alpha",))
    assert sig.given({}) is sig


def test_arrange_puts_each_value_in_its_place():
    sig = op_signature(PowerFirst)
    assert arrange(sig, ["Z"], {"v": 3.0}) == ([3.0, "Z"], {})
    # nothing given for a positional parameter: tensors then keywords, as before
    assert arrange(op_signature(lambda x, *, k=1: x), ["X"], {"k": 2}) == (["X"], {"k": 2})


def test_check_and_verify_take_a_positional_parameter_in_kwargs():
    assert check(scaled_tanh, X, alpha=2.0).verdict == "passed"
    assert check(scaled_tanh, X, params={"alpha": 2.0}).verdict == "passed"
    result = gradcheck.verify(scaled_tanh, kwargs={"alpha": 0.5}, max_examples=10, seed=0)
    assert result.verdict == "passed", result.note


def test_a_parameter_before_the_tensor_reaches_an_operation():
    t = resolve_target(PowerFirst)
    x = np.array([0.5, 2.0])
    np.testing.assert_allclose(t.forward([x], {"v": 3.0}), x**3)
    assert check(PowerFirst, x, v=3.0).verdict == "passed"
    result = check(WrongPowerFirst, x, v=3.0)
    assert result.failure.kind == "mismatch" and result.failure.input == 0
    found = gradcheck.verify(
        WrongPowerFirst, kwargs={"v": 2.5}, domain=(0.5, 3), max_examples=10, seed=0
    )
    assert found.verdict == "failed"


def test_too_few_shapes_say_that_parameters_go_in_kwargs():
    with pytest.raises(InvalidDescription, match=r'kwargs \(\{"alpha": \.\.\.\}\)'):
        gradcheck.verify(scaled_tanh, shapes=["3"], max_examples=2, seed=0)


def test_a_function_checked_again_has_its_signature_read_once(monkeypatch):
    import inspect

    import gradcheck.checking.signature as signature_module

    def fresh(x, alpha=2.0):
        return mg.tanh(x) * alpha

    reads = []
    real = inspect.signature
    monkeypatch.setattr(signature_module.inspect, "signature", lambda f: reads.append(f) or real(f))
    for _ in range(3):
        assert op_signature(fresh).parameters == ("alpha",)
    assert reads == [fresh]
    # a function whose defaults are replaced is read again
    fresh.__defaults__ = None
    assert op_signature(fresh).arity == 2
    assert reads == [fresh, fresh]


def keyword_scaled(x, *, alpha):
    return mg.tanh(x) * alpha


def test_check_without_a_required_parameter_is_a_usage_error_not_a_failure():
    """A keyword-only parameter without a default that check() was not given: the op
    cannot run, which is the caller's mistake (verify refuses it before any example);
    it was reported as the op's forward_error, a failed verdict."""
    with pytest.raises(gradcheck.errors.CheckUsageError, match="needs its parameter 'alpha'"):
        check(keyword_scaled, X)
    assert check(keyword_scaled, X, alpha=2.0).passed
    assert check(keyword_scaled, X, params={"alpha": 2.0}).passed


def test_check_takes_the_described_kwargs_as_verify_does():
    # a positional parameter that is not a tensor, declared with describe(kwargs=...)
    # (a custom_vjp's nondiff_argnums): check(op, x) on a failure's shrunk input
    # replays what verify checked; it said "takes 2 tensor input(s) (x, alpha)"
    @gradcheck.describe(kwargs={"alpha": 3.0})
    def scaled(x, alpha):
        return mg.tanh(x) * alpha

    @gradcheck.describe(kwargs={"alpha": 3.0})
    def wrongly_scaled(x, alpha):
        return mg.tanh(x) * alpha + (x - x.data) * (1 - alpha)

    assert check(scaled, X).passed
    result = check(wrongly_scaled, X)
    assert result.failure is not None and result.failure.kind == "mismatch"
    assert result.params == {"alpha": 3.0}
    # given ones take the place of the described ones, as in verify
    assert check(wrongly_scaled, X, alpha=1.0).passed
    assert check(wrongly_scaled, X, params={"alpha": 1.0}).passed
