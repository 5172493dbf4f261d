"""Ops with several outputs, checked output by output; the run with each input made a
constant; outputs less precise than their inputs (issue 19, items 1 and 2)."""

from __future__ import annotations

import json

import numpy as np

import gradcheck
import gradcheck as mg
from gradcheck import Operation
from gradcheck.checking.checker import check

X = np.array([0.3, -1.2, 2.0, 0.7])
Y = np.array([1.5, 0.4, -0.8, 2.2])


class WrongSquare(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data**2

    def backward_var(self, grad, index, **kwargs):
        return grad * 2.02 * self.variables[0].data


def values_and_index(x):
    return mg.tanh(x), np.argmax(x.data)


def right_then_wrong(x):
    return mg.tanh(x), mg.execute_op(WrongSquare, x), np.argmax(x.data)


def only_indices(x):
    return np.argsort(x.data), x.data > 0


def with_none(x, y):
    return x * y, None


class WrongWhenOtherIsConstant(Operation):
    """a * b whose gradient for a is wrong when b needs none (the path a backward
    takes when `needs_input_grad[1]` is False)."""

    def __call__(self, a, b):
        self.variables = (a, b)
        return a.data * b.data

    def backward_var(self, grad, index, **kwargs):
        a, b = self.variables
        if index == 0:
            return grad * b.data * (2.0 if b.constant else 1.0)
        return grad * a.data


def test_several_outputs_are_checked_together_and_pass():
    result = check(values_and_index, X)
    assert result.verdict == "passed", result.failure
    assert check(with_none, X, Y).verdict == "passed"
    assert gradcheck.verify(values_and_index, max_examples=10, seed=0).verdict == "passed"


def test_a_wrong_output_is_named():
    result = check(right_then_wrong, X)
    assert result.failure.kind == "mismatch"
    assert result.failure.output == 1
    assert result.failure.message.startswith("output 1 of 3 (float64[4])")
    assert json.loads(json.dumps(result.to_dict()))["failure"]["output"] == 1
    found = gradcheck.verify(right_then_wrong, max_examples=10, seed=0)
    assert found.verdict == "failed" and found.failure.failure.output == 1


def test_no_floating_output_is_an_invalid_output():
    result = check(only_indices, X)
    assert result.failure.kind == "invalid_output"
    assert "none of the op's 2 outputs" in result.failure.message


def test_each_input_made_a_constant_in_turn():
    x, y = X, Y
    assert check(WrongWhenOtherIsConstant, x, y, constants=[1]).verdict == "failed"
    result = check(WrongWhenOtherIsConstant, x, y)  # both take a gradient: right numbers
    assert result.failure is not None and result.failure.kind == "mismatch"
    assert result.failure.input == 0 and "with input b a constant" in result.failure.message
    assert check(lambda a, b: a * b, x, y).verdict == "passed"


def test_an_output_less_precise_than_its_inputs():
    class Float32Sin(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return np.sin(x.data).astype(np.float32)

        def backward_var(self, grad, index, **kwargs):
            return grad * np.cos(self.variables[0].data)

    result = check(Float32Sin, X)
    assert result.failure.kind == "low_precision_output"
    assert "float32, less precise than the op's inputs (float64)" in result.failure.message
    assert check(Float32Sin, X.astype(np.float32)).verdict == "passed"
    mixed = check(lambda a, b: a * b, X.astype(np.float32), Y)  # float64 out: fine
    assert mixed.verdict == "passed"


def test_a_random_forward_is_nondeterministic():
    noise = np.random.default_rng(0)

    def noisy(x):
        return x + mg.Tensor(noise.normal(size=x.shape), constant=True)

    result = check(noisy, X)
    assert result.failure.kind == "nondeterministic"
    assert "a second forward at the same inputs gave a different output" in result.failure.message
