"""A forward invariant to a common shift of its inputs is differenced as given (issue 34:
a false alarm of user round 6). x - max(x) at the float32 numbers 0.02 and 0.021 (one
binade: a quarter of float32's ulp, and of float16's, is the same move for both) stood
still when every element moved up by a quarter ulp, the test of a forward that rounds
its inputs to a narrower dtype inside. It was taken for one computing in float32 that
rounds its inputs to float16, its levels' noise modelled at float16's eps (0.001 per
level, against a derivative of 0.13), the steps that crossed the tie 1e-3 away chosen
for the estimate and their kink lost in that noise: numeric 0.1289 against the right
0.1257, a mismatch. And a miss: x[1:] - x[:-1] at float32 numbers, so taken, passed with
a backward 1e-3 off. Each element now moves by its own share of its ulp."""

import numpy as np
import pytest

import gradcheck as mg
from gradcheck.checking.numerical import Evaluator


def _max_shift(right: bool):
    class MaxShift(mg.Operation):
        def __call__(self, x):
            self.variables = (x,)
            self.at = np.argmax(x.data)
            return x.data - x.data.flat[self.at]

        def backward_var(self, grad, index, **kwargs):
            out = np.array(grad, copy=True)
            if right:
                out.flat[self.at] -= np.sum(grad)
            return out

    return MaxShift


def _diff(factor: float):
    class Diff(mg.Operation):
        """x[1:] - x[:-1]: invariant to a common shift of x, its outputs at float32
        numbers of one binade float32 numbers too."""

        def __call__(self, x):
            self.variables = (x,)
            return np.diff(x.data)

        def backward_var(self, grad, index, **kwargs):
            out = np.zeros(self.variables[0].shape)
            out[1:] += grad
            out[:-1] -= grad
            return factor * out

    return Diff


# float32 numbers, as a float32 search draws them: 0.02 and 0.021 share a binade.
TIE = np.array([0.02, 0.021], dtype=np.float32)
V = np.array([0.12573022, -0.13210486], dtype=np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reference", ["float64", "native"])
def test_x_minus_its_max_near_a_tie_is_not_a_mismatch(dtype, reference):
    result = mg.check(
        _max_shift(True), TIE.astype(dtype), upstream=V.astype(dtype), reference=reference
    )
    assert result.verdict != "failed", str(result)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_its_twin_that_holds_the_max_constant_still_fails_there(dtype):
    result = mg.check(_max_shift(False), TIE.astype(dtype), upstream=V.astype(dtype))
    assert result.verdict == "failed", str(result)


def _float32_numbers(seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).uniform(0.5, 0.99, size=4)
    return x.astype(np.float32).astype(np.float64)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_shift_invariant_forward_at_float32_numbers_is_a_float64_forward(seed):
    forward = lambda arrays, params: np.diff(arrays[0])  # noqa: E731
    ev = Evaluator(forward, [_float32_numbers(seed)], None, np.ones(3))
    assert (ev.eval_dtype, ev.noise_dtype) == (np.float64, np.float64)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("off", [1e-3, 1e-4])
def test_a_wrong_backward_of_it_fails_at_float32_numbers(seed, off):
    """Taken for a forward rounding its inputs to float16, differenced with float32's
    steps and its noise modelled at float16's eps, a backward 1e-3 off passed."""
    x = _float32_numbers(seed)
    assert mg.check(_diff(1.0), x).verdict == "passed"
    result = mg.check(_diff(1.0 + off), x)
    assert result.verdict == "failed", str(result)
