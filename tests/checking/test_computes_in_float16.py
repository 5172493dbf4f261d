"""Issue 34 item 9, second half: an op that computes in float16 inside is judged in
float16 as a float64 check of the same op judges it. Its float16 check passed wrong
backwards (off by 5 to 10%) that the float64 check fails, while the correct twins
false-alarmed where float64 steps saw a staircase of float16 ulps (exp at inputs that
are mostly 0, tanh near saturation)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import check, verify
from gradcheck.checking.numerical import Evaluator
from tests.support.f16_inside_ops import EXP, EXP_10, MUL, MUL_5, SQUARE, SQUARE_5, TANH

PAIR = (np.array([1.5, -0.75, 2.0]), np.array([0.5, 1.25, -3.0]))
#: (op, inputs, verdict): each checked in float16 and in float64.
CASES = [
    (EXP, (np.array([3.0, 0.0, 0.0]),), "passed"),
    (TANH, (np.array([3.0]),), "passed"),
    (SQUARE, (np.array([1.5, -0.75]),), "passed"),
    (MUL, PAIR, "passed"),
    (EXP_10, (np.array([4.0]),), "failed"),
    (SQUARE_5, (np.array([1.5, -0.75]),), "failed"),
    (MUL_5, PAIR, "failed"),
]


@pytest.mark.parametrize("dtype", ["float16", "float64"])
@pytest.mark.parametrize(
    ("op", "inputs", "verdict"), CASES, ids=lambda c: getattr(c, "__name__", "")
)
def test_float16_and_float64_checks_agree(op, inputs, verdict, dtype):
    result = check(op, *(x.astype(dtype) for x in inputs), seed=0)
    assert result.verdict == verdict, str(result)


@pytest.mark.parametrize("x", [[3.0, 0.0, 0.0], [3.0], [0.0], [-2.5, 0.0, 1.0]])
def test_a_forward_computing_in_float16_is_evaluated_in_it(x):
    # exp(x.half()) at 0 stays 1 under a move of 1.5 float16 ulps (below its smallest
    # number), tanh(x.half()) at 3 under one of its output's half ulp: the old test
    # (half the outputs moved) missed both, and float64 steps saw a staircase.
    for op in (EXP, TANH):
        ev = Evaluator(
            lambda arrays, params, op=op: _forward(op, arrays), [np.array(x)], None, np.ones(len(x))
        )
        assert ev.inner == np.float16 and ev.eval_dtype == np.float16


@pytest.mark.parametrize("f", [np.exp, np.tanh, np.floor, np.sign, lambda x: 0 * x])
def test_a_forward_computing_in_float64_is_evaluated_in_float64(f):
    x = np.array([3.0, 0.0, 0.5, -2.0])
    ev = Evaluator(lambda arrays, params: f(arrays[0]), [x], None, np.ones(x.size))
    assert ev.inner is None and ev.eval_dtype == np.float64


def _forward(op, arrays):
    from gradcheck import Tensor, execute_op

    return execute_op(op, Tensor(arrays[0])).data


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    ("op", "verdict"),
    [(EXP, "passed"), (TANH, "passed"), (MUL, "passed"), (EXP_10, "failed"), (MUL_5, "failed")],
    ids=lambda c: getattr(c, "__name__", ""),
)
def test_float16_searches(op, verdict, seed):
    assert verify(op, dtype="float16", seed=seed).verdict == verdict


def test_a_float64_forward_that_rounds_coarsely_at_zero_is_not_taken_for_float32():
    """(x + 1e6) - 1e6 at x = 0 gives outputs exact in float32 at float32's steps, and a
    quarter of float32's ulp at 0 (a subnormal's quarter) does not move it: only a step
    away does a quarter ulp show it computes in float64 (then a 1e-6 error of its
    gradient, which float64's exact steps resolve, is caught)."""

    def forward(arrays, params):
        return (arrays[0] + 1e6) - 1e6

    assert Evaluator(forward, [np.array(0.0)], None, np.array(1.0)).inner is None


@pytest.mark.parametrize(
    ("f", "x"),
    [
        (np.round, [-4.826984902407649]),
        (np.floor, [2.9]),
        (np.round, [0.3, -4.8]),
        (np.floor, [10.3]),
        (np.ceil, [27.6, 11.2]),
        (np.trunc, [100.7, 300.2, 5.5]),
        (np.sign, [3.0, -2.0]),
    ],
)
def test_a_staircase_of_whole_numbers_is_not_taken_for_float16(f, x):
    """round at -4.83 (torch's OpInfo sample round.decimals_0[2]): one output, a whole
    number of float16, and float16's step up (0.5) crosses its jump at -4.5, so all its
    outputs moved; at |x| >= 8 float16's step is 1 and crosses a jump of every output.
    Such staircases were taken for float16 forwards, differenced with float16's steps
    across their jumps (numeric 1 against their right gradient 0) and failed."""
    x = np.array(x)
    ev = Evaluator(lambda arrays, params: f(arrays[0]), [x], None, np.ones(x.size))
    assert ev.inner is None and ev.eval_dtype == np.float64


@pytest.mark.parametrize("name", ["round", "floor", "ceil", "trunc"])
@pytest.mark.parametrize("x", [[-4.826984902407649], [10.3], [27.6], [10.3, 11.2]])
def test_torch_rounding_ops_pass_away_from_their_jumps(name, x):
    torch = pytest.importorskip("torch")
    from gradcheck.checking.adapters import framework

    @framework("torch")
    def stairs(x):
        return getattr(torch, name)(x)

    result = check(stairs, np.array(x), seed=0)
    assert result.verdict == "passed", str(result)


def test_whole_outputs_of_a_float16_forward_above_1024_still_show_float16():
    """exp(x.half()) at 8 is 2980, a whole number as every float16 from 1024 on: the
    whole-number staircase test leaves it to the float16 test."""
    ev = Evaluator(
        lambda arrays, params: _forward(EXP, arrays), [np.array([8.0])], None, np.ones(1)
    )
    assert ev.inner == np.float16


# -- the same ops written as torch Functions (known gaps, issue 34 items 2 and 9) -----


def _torch_half_op(name, f, df, bug=0.0):
    """A torch Function computing ``f(x.half())`` cast back; its backward
    ``g · df(x.half()) · (1 + bug)``."""
    torch = pytest.importorskip("torch")

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return f(x.half()).to(x.dtype)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * df(x.half()).to(x.dtype) * (1 + bug)

    return type(
        name,
        (torch.autograd.Function,),
        {"forward": staticmethod(forward), "backward": staticmethod(backward)},
    )


@pytest.mark.xfail(
    strict=True,
    reason="known (issue 34 item 9, open): the modelled rounding noise of a level "
    "evaluated in float16 is 4 eps of the op's largest output over h, 1.6% to 230% of "
    "exp's derivative at these inputs where the outputs' real rounding (half a float16 "
    "ulp each) gives 0.1% to 0.4%; Richardson at the base steps is within 0.2% of the "
    "derivative, so a 5% error is resolvable, but the error bars allow it",
)
def test_a_torch_exp_of_half_with_a_backward_off_by_5_percent_fails():
    torch = pytest.importorskip("torch")
    wrong = _torch_half_op("exp16_5", torch.exp, torch.exp, bug=0.05)
    x = np.array([1.5, -0.75, 2.0, 0.3])
    assert check(wrong, x, seed=0).verdict == "failed"


@pytest.mark.xfail(
    strict=True,
    reason="known (issue 34 item 9, open; also on main before this branch): the correct "
    "tanh(x.half()) at 0.96875 false-alarms (numeric 5% high): the Richardson pairs of "
    "steps 0.5/2 and 2/8 agree by coincidence (tanh saturates at 8), their bars are "
    "small, and the smaller steps' pairs, whose modelled float16 noise is 5x the real "
    "rounding, do not bound them",
)
def test_a_torch_tanh_of_half_with_a_correct_backward_passes():
    torch = pytest.importorskip("torch")
    right = _torch_half_op("tanh16", torch.tanh, lambda h: 1 - torch.tanh(h) ** 2)
    assert check(right, np.array([0.96875]), seed=0).verdict == "passed"
