"""Issue 34: verdicts that know rounding, of the backward (its linearity check) and of
the finite differences (scale, smoothness class, cancellation)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import Operation, check


# -- the linearity check allows the backward's measured rounding (item 11) ------------
def _log_space_exp(transform):
    """exp(x), whose backward works in log space as logcumsumexp's does:
    sign(g)·exp(log|g| + x), rounding at eps·|log|g| + x| relative; ``transform``
    maps the upstream gradient first (the identity for the correct op)."""

    class LogSpaceExp(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return np.exp(x.data)

        def backward_var(self, grad, index, **kwargs):
            g = transform(np.asarray(grad, dtype=np.float64))
            with np.errstate(divide="ignore"):
                return np.sign(g) * np.exp(np.log(np.abs(g)) + self.variables[0].data)

    return LogSpaceExp


X_LARGE = np.array([180.16, 131.51, 35.7, -120.8, 163.9, 170.2])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_backward_in_log_space_is_linear_to_its_own_rounding(seed):
    result = check(_log_space_exp(lambda g: g), X_LARGE, seed=seed)
    assert result.verdict == "passed", result


@pytest.mark.parametrize(
    "transform",
    [np.abs, lambda g: g * np.abs(g), lambda g: g + 1e-3, lambda g: np.sign(g)],
    ids=["abs", "square", "offset", "sign"],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_backward_in_log_space_that_is_not_linear_still_fails(transform, seed):
    result = check(_log_space_exp(transform), X_LARGE, seed=seed)
    assert result.verdict == "failed", result
    assert result.failure.kind == "nonlinear", result


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_torchs_log_space_and_norm_scaled_backwards_are_not_nonlinear(seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4)) * 100
    a = np.random.default_rng(seed).standard_normal((3, 3)) * 2

    def logcumsumexp(x):
        return torch.logcumsumexp(x, dim=0)

    def matrix_exp(a):
        return torch.linalg.matrix_exp(a)

    assert check(logcumsumexp, x, seed=seed).verdict == "passed"
    assert check(matrix_exp, a, seed=seed).verdict == "passed"
