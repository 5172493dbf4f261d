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
from tests.support.checker_ops import elementwise

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


def _copy(x):
    return np.array(x, copy=True)


WRONG_CUBE = elementwise("wrong_cube", _cubic, _dcubic, scale=1 + RELATIVE_BUG)
#: The identity with a backward off by RELATIVE_BUG: composed with a correct op, the
#: buggy twin of that op (wrong by 1e-3 wherever the op's gradient reaches x).
WRONG_IDENTITY = elementwise("wrong_identity", _copy, np.ones_like, scale=1 + RELATIVE_BUG)
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


def _off(x):
    return mg.execute_op(WRONG_IDENTITY, x)


#: Ops with kinks (none at the drawn inputs: ties and zeros are 1e-1 away in units
#: of the inputs), each with a twin whose backward is off by 1e-3 (relative).
KINKED = {
    "abs": (mg.abs, (Y,)),
    "maximum": (mg.maximum, (X, Y)),
    "minimum": (mg.minimum, (X, Y)),
    "relu": (lambda x: mg.where(x > 0, x, 0.0), (Y,)),
    "x_abs_x": (lambda x: x * mg.abs(x), (Y,)),
    "clip": (lambda x: mg.clip(x, -1.0, 1.0), (Y,)),
}
for _name, (_f, _xs) in KINKED.items():
    CASES[_name] = (_f, _xs, "passed")
    CASES["wrong_" + _name] = (lambda *xs, _f=_f: _f(_off(xs[0]), *xs[1:]), _xs, "failed")


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


def test_maximum_of_tiny_inputs_is_judged_as_at_scale_1():
    # At inputs of ~1e-9 the steps reach across the tie of two inputs 1e-10 apart:
    # the smaller of the two stands still at the steps below that distance, which is
    # no quantum of rounding (it was read as one, and the larger steps, which see a
    # kink, decided: "not differentiable" at 11 of 12 elements).
    x, y = CASES["multiply"][1]
    assert check(mg.maximum, x, y, seed=0).verdict == "passed"
    a = -30
    result = check(_rescaled(mg.maximum, a, 0), x * 2.0**a, y * 2.0**a, seed=0)
    assert result.verdict == "passed", str(result)


KINKED_NAMES = sorted([*KINKED, *("wrong_" + name for name in KINKED)])


@pytest.mark.parametrize("name", KINKED_NAMES)
@pytest.mark.parametrize("a, b", [(-30, 0), (-30, -30), (-20, 10), (30, 30), (30, -30)])
def test_a_kinked_op_keeps_its_verdict_at_extreme_units(name, a, b):
    f, xs, expected = CASES[name]
    scaled = tuple(x * 2.0**a for x in xs)
    result = check(_rescaled(f, a, b), *scaled, seed=0)
    assert result.verdict == expected, (a, b, str(result))


#: Units beyond the levels' reach below the absolute step (4**-40 of it): the steps
#: at an element's own relative step decide there. x·|x| and the cube, whose wrong
#: twins passed from 2**-40 down (the base steps, far longer than x, resolved the
#: derivative to 1e-3 only, within a jump threshold of the first pass's gradient,
#: which those steps blow up: ``levels.unresolved``). clip, whose flat elements' own
#: relative steps resolve s to a rounding of 3e-12 of the gradient's scale (as at x of
#: 1), were kinks: the jump threshold they were held to was the first pass's, 0.017
#: beside gradients of 2**150 (``PointProbes.tiny_kinks``).
TINY_UNITS = ["abs", "clip", "cube", "exp", "log", "maximum", "minimum", "relu", "tanh"]
TINY_UNITS += ["x_abs_x"]


@pytest.mark.parametrize(
    "name",
    [*TINY_UNITS, *("wrong_" + n for n in TINY_UNITS if n in KINKED or n == "cube")],
)
@pytest.mark.parametrize("a, b", [(-150, 0), (-200, 100)])
def test_the_verdict_holds_at_units_beyond_the_levels_reach(name, a, b):
    f, xs, expected = CASES[name]
    scaled = tuple(x * 2.0**a for x in xs)
    result = check(_rescaled(f, a, b), *scaled, seed=0)
    assert result.verdict == expected, (a, b, str(result))
