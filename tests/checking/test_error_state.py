"""A caller's NumPy error state (``np.seterr(all="raise")`` in a conftest, or at a
module's import, which the command line keeps for that module's targets) is the op's:
its own calls run under it, while gradcheck's finite differences and probes run under
NumPy's own state. Before, an underflow in gradcheck's own arithmetic at a tiny input
raised ``FloatingPointError`` and failed a correct op as its ``forward_error``."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

import gradcheck
from gradcheck import Operation


class AddOne(Operation):
    """x + 1: no floating-point exception of its own at any finite x."""

    seen: ClassVar[list[dict[str, str]]] = []

    def __call__(self, x):
        AddOne.seen.append(dict(np.geterr()))
        self.variables = (x,)
        return x.data + 1.0

    def backward_var(self, grad, index, **kwargs):
        return grad * np.ones_like(self.variables[0].data)


class GuardedSmoothAbs(Operation):
    """sqrt(x² + 0.5), computed under its own ``errstate(all="ignore")`` (as a library
    op guards itself, or a JAX op never raises): any FloatingPointError is gradcheck's."""

    def __call__(self, x):
        self.variables = (x,)
        with np.errstate(all="ignore"):
            return np.sqrt(x.data * x.data + 0.5)

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        with np.errstate(all="ignore"):
            return grad * x / np.sqrt(x * x + 0.5)


class ExpUnderflows(Operation):
    """x + 0·exp(-1e4 - x²): underflows in its own forward, at every x."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data + 0.0 * np.exp(-1e4 - x.data**2)

    def backward_var(self, grad, index, **kwargs):
        return grad * np.ones_like(self.variables[0].data)


@pytest.fixture
def raising():
    saved = np.seterr(all="raise")
    yield
    np.seterr(**saved)


def test_gradchecks_own_arithmetic_does_not_meet_the_callers_raise_state(raising):
    # (its probes below the smallest normal number underflowed, at a tiny input)
    result = gradcheck.check(GuardedSmoothAbs, np.array([2.2250738585072014e-308]), seed=0)
    assert result.failure is None, str(result)
    assert np.geterr()["under"] == "raise"  # the caller's state is back


def test_the_ops_own_calls_run_under_the_callers_state(raising):
    AddOne.seen.clear()
    gradcheck.check(AddOne, np.array([0.5, 2.0]), seed=0)
    assert AddOne.seen and all(s["under"] == "raise" for s in AddOne.seen)
    # ... so an op that raises under it fails, as it would in the caller's code
    result = gradcheck.check(ExpUnderflows, np.array([0.5]), seed=0)
    assert result.failure is not None and "FloatingPointError" in result.failure.message


def test_a_search_keeps_the_callers_state_for_the_op_alone(raising):
    result = gradcheck.verify(AddOne, max_examples=30, seed=0)
    assert result.passed, str(result)
    assert np.geterr()["under"] == "raise"
