"""Ops for tests/checking/test_domain_errors.py: ops whose forward raises outside their domain."""

from __future__ import annotations

import numpy as np

import gradcheck


class Inverse(gradcheck.Operation):
    """inv(a): numpy raises LinAlgError at a singular matrix."""

    def __call__(self, a):
        self.variables = (a,)
        self.out = np.linalg.inv(a.data)
        return self.out

    def backward_var(self, grad, index, **kwargs):
        t = np.swapaxes(self.out, -1, -2)
        return -t @ grad @ t


class CholeskySqrt(gradcheck.Operation):
    """sqrt(x), each element through a 1x1 Cholesky factor: LinAlgError at x <= 0, so a
    finite-difference step at a small x crosses into where the forward raises."""

    def __call__(self, x):
        self.variables = (x,)
        flat = [np.linalg.cholesky(np.array([[v]]))[0, 0] for v in x.data.ravel()]
        self.out = np.array(flat).reshape(x.shape)
        return self.out

    def backward_var(self, grad, index, **kwargs):
        return grad * 0.5 / self.out


class WrongCholeskySqrt(CholeskySqrt):
    def backward_var(self, grad, index, **kwargs):
        return grad * 0.505 / self.out


class OutsideUnitBall(Exception):
    """What :func:`unit_ball_square` raises outside its domain."""


def unit_ball_square(x):
    """x * x, defined (by the op's own say) for sum(x) <= 0.5 only."""
    if float(np.sum(x.data)) > 0.5:
        raise OutsideUnitBall("outside the domain")
    return x * x


def unit_ball_raises_value_error(x):
    """x * x that raises a plain ValueError for sum(x) > 0.5: a failure unless named."""
    if float(np.sum(x.data)) > 0.5:
        raise ValueError("sum above 0.5")
    return x * x


@gradcheck.describe(skip_on=[OutsideUnitBall])
def described_unit_ball_square(x):
    return unit_ball_square(x)


class StorageOrderScale(gradcheck.Operation):
    """x * 3, whose backward reads the upstream gradient in its memory order (right
    only for a C-contiguous one)."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data * 3

    def backward_var(self, grad, index, **kwargs):
        return np.ravel(grad, order="K").reshape(grad.shape) * 3


class Scale(StorageOrderScale):
    def backward_var(self, grad, index, **kwargs):
        return grad * 3


def never_runs(x):
    """Raises a LinAlgError at every input: a broken op, not a domain."""
    raise np.linalg.LinAlgError("never runs")


class NanAtZeroSquare(gradcheck.Operation):
    """x**2 whose backward computes 2x as 2·x²/x: nan at 0 whatever the upstream
    gradient's scale (a bug, never an overflow)."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data**2

    def backward_var(self, grad, index, **kwargs):
        (x,) = self.variables
        with np.errstate(all="ignore"):
            return grad * 2 * x.data**2 / x.data


class Solve(gradcheck.Operation):
    """np.linalg.solve(a, b) for a square a; the backward solves with a.T, which LAPACK
    may find singular where the forward's solve with a did not (rounding)."""

    def __call__(self, a, b):
        self.variables = (a, b)
        self.x = np.linalg.solve(a.data, b.data)
        return self.x

    def backward_var(self, grad, index, **kwargs):
        a, _ = self.variables
        gb = np.linalg.solve(a.data.T, grad)
        return gb if index == 1 else -np.outer(gb, self.x)


class SolveRaisingValueError(Solve):
    """The same, with a backward that raises an error that is not a domain error."""

    def backward_var(self, grad, index, **kwargs):
        raise ValueError("not a domain error")


class TraceInverse(gradcheck.Operation):
    """trace(inv(a)); ``factor`` and ``transpose`` make wrong twins (a gradient 1.001
    times too large, or the transpose left out, wrong where a is not symmetric)."""

    factor = 1.0
    transpose = True

    def __call__(self, a):
        self.variables = (a,)
        self.inv = np.linalg.inv(a.data)
        return np.trace(self.inv, axis1=-2, axis2=-1)

    def backward_var(self, grad, index, **kwargs):
        square = self.inv @ self.inv
        square = np.swapaxes(square, -1, -2) if self.transpose else square
        return -self.factor * np.asarray(grad)[..., None, None] * square


class TraceInverseTooLarge(TraceInverse):
    factor = 1.001


class TraceInverseUntransposed(TraceInverse):
    transpose = False
