"""Issue 34 items 9 and 11: ops that compute in float16 inside, written as a user
writes them (torch's ``x.half()``), judged by what float16's rounding explains.

* sigmoid(x.half()) at 1.9375: the smallest levels' line, left by the function's own
  curvature (s''·h²/2 at the step 0.25), was read as the tread of a staircase and
  floored every level; the pair of steps 4 and 16, agreeing by chance with its
  neighbour where sigmoid saturates, gave 0.1159 against 0.1101 (a float32 check
  failed; float64's passed at an error ratio of 0.87).
* 1 - cos(x.half()) at 223 (its outputs float32 numbers, its inputs rounded to
  float16, whose ulp there is 0.125): the levels below half that ulp stood still and
  were read as the function being flat there (numeric 0 against sin(223)·v).
* A float32 input through x.half(): its gradient, float16 numbers, rounds at
  float16's subnormal steps, which -2·v does not commute with ('nonlinear' at ±10).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradcheck import check, verify
from gradcheck.checking.numerical import Evaluator, full_estimate

torch = pytest.importorskip("torch")


def _sigmoid_op(factor: float = 1.0, flip: bool = False):
    class Sigmoid16(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.sigmoid(x.half())
            ctx.save_for_backward(y, x)
            return y.double()

        @staticmethod
        def backward(ctx, g):
            y, x = ctx.saved_tensors
            d = y * (1 - y) * factor
            if flip:
                d = torch.where(x < 0, -d, d)
            return (g.half() * d).to(x.dtype)

    return Sigmoid16


def _cos_op(factor: float = 1.0, flip: bool = False):
    class OneMinusCos16(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            h = x.half()
            ctx.save_for_backward(h, x)
            return 1 - torch.cos(h).double()

        @staticmethod
        def backward(ctx, g):
            h, x = ctx.saved_tensors
            d = torch.sin(h).double() * factor
            if flip:
                d = torch.where(x < 0, -d, d)
            return g * d

    return OneMinusCos16


def _sigmoid16(arrays, params):
    return torch.sigmoid(torch.from_numpy(np.asarray(arrays[0])).half()).double().numpy()


def test_the_curvature_of_a_float16_forward_is_no_staircase():
    x = np.array([1.9375])
    ev = Evaluator(_sigmoid16, [x], None, np.ones(1))
    est = full_estimate(ev, 0)
    s = 1 / (1 + math.exp(-1.9375))
    assert abs(float(est.value[0]) - s * (1 - s)) < 1e-3, est


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
@pytest.mark.parametrize("x", [[1.9375], [1.9375, 0.5], [-1.9375, 3.0]])
def test_sigmoid_in_float16_passes_at_exact_float16_inputs(dtype, x):
    result = check(_sigmoid_op(), np.array(x, dtype=dtype), seed=0)
    assert result.verdict == "passed", str(result)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("factor", "flip"), [(1.1, False), (1.0, True)])
def test_the_wrong_twins_of_sigmoid_in_float16_fail(seed, factor, flip):
    assert verify(_sigmoid_op(factor, flip), seed=seed).verdict == "failed"


@pytest.mark.parametrize("x", [223.0, -223.0, 202.0, 213.59375])
@pytest.mark.parametrize("seed", [0, 1])
def test_one_minus_cos_in_float16_at_large_inputs_is_no_mismatch(x, seed):
    # (float16's steps there, 1/4 and up, are all that moves x; cos varies on a
    # scale of 1: no pair of them resolves its derivative, and nothing is judged)
    assert check(_cos_op(), np.array([x]), seed=seed).verdict in ("passed", "inconclusive")


def test_a_float32_gradient_of_float16_numbers_is_linear_in_float16s_steps():
    # (float16 subnormals at ±10: sigmoid's derivative there is 4.5e-5)
    x = np.array([10.0, -10.0], dtype=np.float32)
    result = check(_sigmoid_op(), x, seed=1)
    assert result.verdict == "passed", str(result)
