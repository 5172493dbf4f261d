"""The seventh user round of issue 34 (`tests/support/user_round7_ops.py`): each bug a
new user wrote following the docs fails, and its correct twin passes, at an input of
each pair, the failure naming the input as the user named it (every path on seeds
0, 1, 2: `benchmarks/user_round7.py`)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("jax")
pytest.importorskip("mygrad")

import gradcheck
from tests.support import user_round7_ops as u

_RNG = np.random.default_rng(0)
_M = _RNG.normal(size=(3, 4))

#: pair: (bug, twin, the inputs of a check, check's keywords, the failure's kind, the
#: input it names (None: the upstream gradient's failure names none))
PAIRS = {
    "layer_norm": (
        "BadLayerNorm",
        "GoodLayerNorm",
        (_M, _RNG.normal(size=4), _RNG.normal(size=4)),
        {},
        "mismatch",
        "x",
    ),
    "huber": (
        "bad_huber",
        "good_huber",
        (_M, _RNG.normal(size=(1, 4))),
        {"delta": 0.5},
        "wrong_shape",
        "target",
    ),
    "cumprod": (
        "BadCumprod",
        "GoodCumprod",
        (np.array([0.5, 0.0, -1.5, 2.0]),),
        {"dim": 0},
        "nonfinite_gradient",
        "x",
    ),
    "gru": (
        "BadGRU",
        "GoodGRU",
        (_RNG.normal(size=(2, 3)) * 3, _RNG.normal(size=(2, 4))),
        {},
        "mismatch",
        "x",
    ),
    "cosine": ("bad_cosine", "good_cosine", (_M, _M[::-1] + 0.5), {"axis": 0}, "mismatch", "x"),
    "masked_mean": (
        "BadMaskedMean",
        "GoodMaskedMean",
        (_M, _M > 0),
        {},
        "wrong_dtype",
        "x",
    ),
    "conv2d": (
        "BadConv2d",
        "GoodConv2d",
        (_RNG.normal(size=(4, 5)), _RNG.normal(size=(2, 3))),
        {},
        "mismatch",
        "x",
    ),
    "log_cosh": (
        "bad_log_cosh",
        "good_log_cosh",
        (np.array([0.3, -1.2, 2.0]),),
        {"order": 2},
        "mismatch",
        "x",
    ),
    "mish": ("BadMish", "GoodMish", (np.array([-1.5, 0.3, 2.0]),), {}, "mutated_upstream", None),
    "abs2": (
        "BadAbs2",
        "GoodAbs2",
        (np.array([0.3 - 1.2j, -0.7 + 0.4j]),),
        {},
        "mismatch",
        "z",
    ),
}


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_the_bug_fails_and_its_twin_passes_at_an_input(pair):
    bug, twin, inputs, keywords, kind, named = PAIRS[pair]
    failed = gradcheck.check(getattr(u, bug), *inputs, **keywords)
    assert failed.failure is not None and failed.failure.kind == kind, failed
    head = str(failed).splitlines()[0]
    assert head.startswith(f"gradcheck: tests.support.user_round7_ops:{bug} failed"), head
    if named is not None:
        assert f"(input {named}" in head, head
    passed = gradcheck.check(getattr(u, twin), *inputs, **keywords)
    assert passed.verdict == "passed", passed


def test_a_complex_input_s_part_is_named_once_by_the_user_s_name():
    # The failure said "(input 1 is the imaginary part of complex input 0) the gradient
    # of input z.imag ...": numbers beside the names that already say it.
    failed = gradcheck.check(u.BadAbs2, np.array([0.3 - 1.2j, -0.7 + 0.4j]))
    message = failed.failure.message
    assert message.startswith("the gradient of input z."), message
    assert "complex input 0" not in message
