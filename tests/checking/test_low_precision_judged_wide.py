"""Issue 34 item 9: a float32 or float16 check hides no bug that a float64 check of the
same op would show, and an op that computes in float16 whatever it is given is
differentiated with steps that see it."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as mg
from gradcheck import Operation, check
from gradcheck.ops._rules.arithmetic import Multiply
from gradcheck.testing.mutants import MUTATIONS, mutated


def _sin(factor: float):
    """sin, computed in its input's dtype (float16 in, float16 out; float64 in,
    float64 out), with a backward off by ``factor`` (1: correct)."""

    class Sin(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return np.sin(x.data)

        def backward_var(self, grad, index, **kwargs):
            x = self.variables[0].data
            return (grad * np.cos(x) * x.dtype.type(factor)).astype(x.dtype)

    return Sin


X16 = [np.random.default_rng(seed).uniform(-2, 2, 5).astype(np.float16) for seed in range(3)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_2_percent_error_in_a_float16_op_fails(seed):
    # float16's tolerances (1e-2 of the gradient's scale, and its measured rounding)
    # hide 2%; the same backward run in float64 shows it, and the float16 gradient
    # carries it
    result = check(_sin(1.02), X16[seed], seed=seed)
    assert result.verdict == "failed", result
    assert "float64" in result.failure.message
    assert check(_sin(1.0), X16[seed], seed=seed).verdict == "passed"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_2e_5_error_in_a_float32_op_fails(seed):
    # below float32's default rtol (1e-4), far above what float64 resolves
    x = X16[seed].astype(np.float32)
    assert check(_sin(1.0 + 2e-5), x, seed=seed).verdict == "failed"
    assert check(_sin(1.0), x, seed=seed).verdict == "passed"


def test_a_wrong_reduction_that_float16_hides_fails():
    # the mutation suite's survivor: x1 * x2 over shapes (2,) and (2, 2), whose x1
    # gradient summed over the wrong axis is off by 0.022 beside elements of 0.26
    x1 = np.array([-6.14, 11.54], dtype=np.float16)
    x2 = np.array([[-10.336, -10.08], [2.111, -10.24]], dtype=np.float16)
    assert check(mg.multiply, x1, x2, seed=0).verdict == "passed"
    with mutated(Multiply, MUTATIONS["wrong_reduction"]):
        result = check(mg.multiply, x1, x2, seed=0)
    assert result.verdict == "failed", result


def test_tolerances_the_user_chose_are_not_overridden():
    result = check(_sin(1.02), X16[0], seed=0, rtol=0.05, atol=0.05)
    assert result.verdict == "passed", result


def _computed_in_float16(fn, derivative, factor: float = 1.0):
    """``fn`` computed in float16 whatever the input's dtype, the output cast back;
    its backward likewise."""

    class InFloat16(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return fn(x.data.astype(np.float16)).astype(x.dtype)

        def backward_var(self, grad, index, **kwargs):
            x = self.variables[0].data
            d = derivative(x.astype(np.float16)) * np.float16(factor)
            return (grad.astype(np.float16) * d).astype(x.dtype)

    return InFloat16


FLOAT16_INSIDE = {
    "tanh": (np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    "exp": (np.exp, np.exp),
    "sin": (np.sin, np.cos),
}


@pytest.mark.parametrize("name", sorted(FLOAT16_INSIDE))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_op_computing_in_float16_inside_is_differentiated_with_its_steps(name, dtype, seed):
    # Evaluated with float64's steps (1e-5), every step is absorbed by the rounding of
    # x to float16, or crosses one of its ulps: a staircase, whose quanta read as kinks
    # or false alarms. Steps for float16 see tanh.
    op = _computed_in_float16(*FLOAT16_INSIDE[name])
    x = np.random.default_rng(seed).uniform(-2, 2, 5).astype(dtype)
    result = check(op, x, seed=seed)
    assert result.verdict == "passed", result


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_gross_error_in_an_op_computing_in_float16_inside_still_fails(seed):
    op = _computed_in_float16(*FLOAT16_INSIDE["sin"], factor=1.5)
    x = np.random.default_rng(seed).uniform(-2, 2, 5).astype(np.float16)
    assert check(op, x, seed=seed).verdict == "failed"


def _tanh_in_float32(factor: float = 1.0):
    class TanhInFloat32(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return np.tanh(x.data.astype(np.float32)).astype(x.dtype)

        def backward_var(self, grad, index, **kwargs):
            x = self.variables[0].data
            t = np.tanh(x.astype(np.float32))
            return (grad * (1 - t * t) * np.float32(factor)).astype(x.dtype)

    return TanhInFloat32


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_op_computing_in_float32_inside_passes_and_its_1_percent_error_fails(dtype, seed):
    # (main: 'failed' or 'not differentiable' for the correct op at every seed)
    x = np.random.default_rng(seed).uniform(-2, 2, 6).astype(dtype)
    assert check(_tanh_in_float32(), x, seed=seed).verdict == "passed"
    assert check(_tanh_in_float32(1.01), x, seed=seed).verdict == "failed"


class _Float64Only(Operation):
    """2·x + 3·x² in float64, refusing any other dtype (as torch's eigh refuses float16:
    `"linalg_eigh_cpu" not implemented for 'Half'`); a backward off by ``factor``."""

    factor = 1.0

    def __call__(self, x):
        if x.data.dtype != np.float64:
            raise TypeError(f"not implemented for {x.data.dtype}")
        self.variables = (x,)
        return 2 * x.data + 3 * x.data**2

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        return grad * (2 + 6 * x) * self.factor


class _Float64OnlyWrong(_Float64Only):
    factor = 1.01


@pytest.mark.parametrize("x", [np.zeros((1, 1)), np.zeros(3), np.array([0.0, 1.0, -2.0])])
def test_a_float64_op_at_inputs_exact_in_float16_is_not_run_in_float16(x):
    # At zeros and small integers a float64 forward moved by 1.5 float16 ulps gives
    # outputs exact in float16 too; that is no sign of computing in float16, and the
    # op (which refuses float16, as torch's eigh does) must not be handed float16.
    assert check(_Float64Only, x, seed=0).verdict == "passed"
    wrong = check(_Float64OnlyWrong, x + 0.5, seed=0)
    assert wrong.verdict == "failed" and wrong.failure.kind == "mismatch"
