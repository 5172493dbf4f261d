"""Issue 34 item 7: the verdict on an op is the same as on the op with its inputs and
outputs rescaled by powers of 2 (exact in float64): ``g(x) = 2**b · f(2**-a · x)``
checked at ``2**a · x`` is ``f`` at ``x`` in other units, and a check must not judge
the units. Over a handful of engine ops, their correct twins and a backward off by
1e-3 relative, for ``a`` and ``b`` from -30 to 30."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcheck as mg
from gradcheck import check
from tests.checker_ops import elementwise

#: The exponents of the rescaling, each way.
EXPONENTS = st.integers(-30, 30)
RELATIVE_BUG = 1e-3


def _rescaled(f, a: int, b: int):
    """``x -> 2**b · f(2**-a · x)``, a function of tensors (the engine's chain rule
    scales the gradient exactly)."""

    def g(*xs):
        return mg.multiply(f(*(mg.multiply(x, 2.0**-a) for x in xs)), 2.0**b)

    return g


def _cubic(x):
    return x * x * x


def _dcubic(x):
    return 3 * x * x


WRONG_CUBE = elementwise("wrong_cube", _cubic, _dcubic, scale=1 + RELATIVE_BUG)
RIGHT_CUBE = elementwise("cube", _cubic, _dcubic)
RNG = np.random.default_rng(3)
X = RNG.uniform(0.2, 2.0, (3, 4))
Y = RNG.uniform(-2.0, 2.0, (3, 4))

#: name -> (function of tensors, inputs, the verdict at scale 1)
CASES = {
    "tanh": (mg.tanh, (Y,), "passed"),
    "exp": (mg.exp, (Y,), "passed"),
    "log": (mg.log, (X,), "passed"),
    "multiply": (mg.multiply, (X, Y), "passed"),
    "sum_axis": (lambda x: mg.sum(x * x, axis=1), (Y,), "passed"),
    "cube": (lambda x: mg.execute_op(RIGHT_CUBE, x), (Y,), "passed"),
    "wrong_cube": (lambda x: mg.execute_op(WRONG_CUBE, x), (Y,), "failed"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_verdict_at_scale_1_is_the_expected_one(name):
    f, xs, expected = CASES[name]
    assert check(f, *xs, seed=0).verdict == expected


@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=12, deadline=None, derandomize=True)
@given(a=EXPONENTS, b=EXPONENTS)
def test_the_verdict_does_not_depend_on_units(name, a, b):
    f, xs, expected = CASES[name]
    scaled = tuple(x * 2.0**a for x in xs)
    result = check(_rescaled(f, a, b), *scaled, seed=0)
    assert result.verdict == expected, (a, b, str(result))


@pytest.mark.xfail(
    strict=True,
    reason="known (issue 34 item 7, open): at inputs of ~1e-9 the absolute steps of an "
    "|x| < 1 (up to 5e-4) straddle the tie of two inputs 1e-10 apart, and maximum is "
    "declared 'not differentiable' at 11 of 12 elements; at scale 1 it passes",
)
def test_maximum_of_tiny_inputs_is_judged_as_at_scale_1():
    x, y = CASES["multiply"][1]
    assert check(mg.maximum, x, y, seed=0).verdict == "passed"
    a = -30
    result = check(_rescaled(mg.maximum, a, 0), x * 2.0**a, y * 2.0**a, seed=0)
    assert result.verdict == "passed", str(result)
