"""A forward whose outputs only look like a narrower dtype's is differenced as given
(issue 34 item 7): (a·x + c) - c rounds its outputs at ulps of c, 2**-23 for c = 1e9,
as float32 does near 1, and was taken for a forward computing in float32. Differenced
in float32 (where 1e9's ulp is 64) it stood still, the numeric gradient read 0 "below
what finite differences resolve", and a backward 2x off passed."""

import numpy as np
import pytest

import gradcheck as mg


def _offset(c, a, factor):
    class Offset(mg.Operation):
        def __call__(self, x):
            self.variables = (x,)
            return (a * x.data + c) - c

        def backward_var(self, grad, index, **kwargs):
            return grad * a * factor

    return Offset


X = np.array([-0.26977966, -0.78900944, 0.2582163, 0.85430911])


@pytest.mark.parametrize("c, a", [(1e9, 1.0), (1e8, 1e-4), (1e5, 1e-7)])
def test_a_wrong_backward_fails_beside_a_large_offset(c, a):
    result = mg.check(_offset(c, a, 2.0), X)
    assert result.verdict == "failed", str(result)


@pytest.mark.parametrize("c, a", [(1e9, 1.0), (1e8, 1e-4), (1e5, 1e-7), (1e9, 1e-7)])
def test_the_right_backward_passes_there(c, a):
    assert mg.check(_offset(c, a, 1.0), X).verdict == "passed"


def test_a_forward_that_rounds_to_float32_inside_is_still_differenced_in_float32():
    class Float32Inside(mg.Operation):
        def __call__(self, x):
            self.variables = (x,)
            return np.tanh(x.data.astype(np.float32)).astype(np.float64)

        def backward_var(self, grad, index, **kwargs):
            t = np.tanh(self.variables[0].data.astype(np.float32)).astype(np.float64)
            return grad * (1 - t * t)

    result = mg.check(Float32Inside, X)
    assert result.verdict == "passed", str(result)
