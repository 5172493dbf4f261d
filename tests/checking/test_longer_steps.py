"""A backward 1e-3 off where the function is flat beside its value (issue 34 item 7):
the ladder's steps resolved the derivative to a few percent only, and the error passed
within the estimate's rounding noise; longer steps resolve it. A backward that loses
digits to cancellation there (torch's own sinc formula) still passes."""

import numpy as np
import pytest

import gradcheck as mg


def _op(forward, derivative, factor=1.0):
    class Op(mg.Operation):
        def __call__(self, x):
            self.variables = (x,)
            return forward(x.data)

        def backward_var(self, grad, index, **kwargs):
            return grad * derivative(self.variables[0].data) * factor

    return Op


def _rsqrt1(x):
    return 1 / np.sqrt(1 + x * x)


def _rsqrt1_grad(x):
    return -x / (1 + x * x) ** 1.5


def _atan_grad(x):
    return 1 / (1 + x * x)


def _sinc_grad(x):  # torch's formula: cancels at small x
    return (np.cos(np.pi * x) * np.pi * x - np.sin(np.pi * x)) / (np.pi * x * x)


_X = np.array([0.27392337, -0.46042657, -0.91805295, -0.96694473])

CASES = [
    pytest.param(_rsqrt1, _rsqrt1_grad, _X * 1e-9, id="rsqrt(1+x^2) at 1e-9"),
    pytest.param(np.arctan, _atan_grad, np.abs(_X) * 1e9, id="atan at 1e9"),
    pytest.param(np.arctan, _atan_grad, -np.abs(_X) * 1e8, id="atan at -1e8"),
]


@pytest.mark.parametrize("forward, derivative, x", CASES)
@pytest.mark.parametrize("factor", [1.001, 0.999])
def test_an_error_of_1e_3_is_caught_where_the_function_is_flat(forward, derivative, x, factor):
    result = mg.check(_op(forward, derivative, factor), x)
    assert result.verdict == "failed", str(result)


@pytest.mark.parametrize("forward, derivative, x", CASES)
def test_the_right_backward_passes_there(forward, derivative, x):
    result = mg.check(_op(forward, derivative), x)
    assert result.verdict == "passed", str(result)


@pytest.mark.parametrize("scale", [3e-5, 1e-4, 1e-3])
def test_a_backward_that_cancels_like_finite_differences_still_passes(scale):
    # (at 3e-5 the formula loses 2e-7 to cancellation, less than a re-estimate over
    # longer steps is evidence of; below 1e-5 it loses 4e-6 to 2e-4 and fails, as it
    # did before the longer steps)
    x = np.abs(_X) * scale
    result = mg.check(_op(np.sinc, _sinc_grad), x)
    assert result.verdict == "passed", str(result)


_C = 0.0234375


class _CrossEntropyAtItsTarget(mg.Operation):
    """-(c·log x + (1 - c)·log(1 - x)), which refuses x outside [0, 1] as torch's binary
    cross-entropy does, at x = c: its derivative is 0 there, the estimate all rounding
    noise, and the longer steps (to 0.025) reach past x = 0."""

    def __call__(self, x):
        self.variables = (x,)
        d = x.data
        if np.any(d < 0) or np.any(d > 1):
            raise ValueError("all elements of input should be between 0 and 1")
        return -(_C * np.log(d) + (1 - _C) * np.log1p(-d))

    def backward_var(self, grad, index, **kwargs):
        d = self.variables[0].data
        return grad * (-_C / d + (1 - _C) / (1 - d))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_longer_step_past_the_op_s_domain_is_no_evidence_and_no_failure(seed):
    result = mg.check(_CrossEntropyAtItsTarget, np.array(_C), seed=seed)
    assert result.verdict == "passed", str(result)
