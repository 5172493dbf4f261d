"""The fifth user round of issue 34 (`tests/support/user_round5_ops.py`): each bug a
new user wrote following the docs fails, and its correct twin passes, at an input of
each pair and in a search on seed 0 with the settings the pair needs (every path on
seeds 0, 1, 2: `benchmarks/user_round5.py`)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("jax")
pytest.importorskip("mygrad")

import gradcheck
from tests.support import user_round5_ops as u

_RNG = np.random.default_rng(0)

#: pair: (bug, twin, the inputs of a check, check's keywords, verify's settings, the
#: input a failure at those inputs names)
PAIRS = {
    "cube_argmax": (
        "BadCubeArgmax",
        "GoodCubeArgmax",
        (np.array([[-1.5, 0.7, -0.2], [0.4, -0.9, 1.1]]),),
        {},
        {},
        "x",
    ),
    "gate": ("bad_gate", "good_gate", (_RNG.normal(size=(4, 3)),), {}, {"shapes": ["n,3"]}, "x"),
    "shift_scale": (
        "bad_shift_scale",
        "good_shift_scale",
        ({"scale": np.array([0.5, -1.5]), "shift": np.array([0.2, 0.3])}, np.array([0.3, -0.8])),
        {},
        {},
        "params['shift']",
    ),
    "scale_exp": (
        "BadScaleExp",
        "GoodScaleExp",
        (_RNG.normal(size=(4, 3)), np.array([0.1, -0.4, 0.3])),
        {},
        {},
        "b",
    ),
    "normalize": (
        "BadNormalize",
        "GoodNormalize",
        (_RNG.uniform(0.5, 2.0, size=(3, 4)),),
        {},
        {},
        "x",
    ),
    "pow_log": (
        "bad_pow_log",
        "good_pow_log",
        (np.array([0.5, 2.0, 3.0]), np.array([-1.0, 0.3, 2.0]), np.array([2, 3, 1])),
        {},
        {},
        "x",
    ),
    "softplus2": (
        "bad_softplus2",
        "good_softplus2",
        (np.array([-0.5, 1.2]),),
        {"order": 2},
        {"order": 2},
        "x",
    ),
    "complex_square": (
        "BadComplexSquare",
        "GoodComplexSquare",
        (np.array([0.5 + 1.0j, -1.2 + 0.3j]),),
        {},
        {"dtype": "complex128"},
        "z.imag",  # (its imaginary part: the bug's error is there)
    ),
}


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_the_bug_fails_and_its_twin_passes_at_an_input(pair):
    bug, twin, inputs, keywords, _, named = PAIRS[pair]
    failed = gradcheck.check(getattr(u, bug), *inputs, **keywords)
    assert failed.failure is not None, failed
    text = str(failed)
    assert text.startswith(f"gradcheck: tests.support.user_round5_ops:{bug} failed"), text
    assert f"(input {named})" in text.splitlines()[0], text
    passed = gradcheck.check(getattr(u, twin), *inputs, **keywords)
    assert passed.verdict == "passed", passed


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_the_bug_fails_and_its_twin_passes_in_a_search(pair):
    bug, twin, _, _, settings, _ = PAIRS[pair]
    failed = gradcheck.verify(getattr(u, bug), seed=0, max_examples=30, **settings)
    assert failed.verdict == "failed", failed
    passed = gradcheck.verify(getattr(u, twin), seed=0, max_examples=30, **settings)
    assert passed.passed, passed


def test_the_integer_output_is_left_out_and_the_failure_names_the_float_one():
    # (BadCubeArgmax returns x**3 and the int64 argmax: only the first is compared)
    x = np.array([[-1.5, 0.7, -0.2], [0.4, -0.9, 1.1]])
    failed = gradcheck.check(u.BadCubeArgmax, x)
    assert failed.failure.message.startswith("output 0 of 2 (float64[2, 3])"), failed
