"""Verdicts users can trust (issue 17): no false alarm at the rounding floor or at false
kinks, and no pass that hides a bug.

Each op here is correct unless its name says otherwise; the wrong twins are the same
op with its gradient scaled by ``1 + rel``."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as mg
from gradcheck import Operation, check
from gradcheck.errors import CheckUsageError, InvalidDescription
from tests.support.checker_ops import Abs, Clip, Max, Mul, Relu, elementwise


def _gelu(z):
    return 0.5 * z * (1 + np.tanh(0.79788456 * z * (1 + 0.044715 * z * z)))


def _dgelu(z):
    t = np.tanh(0.79788456 * z * (1 + 0.044715 * z * z))
    return 0.5 * z * ((1 - t * t) * (0.79788456 + 0.1070322243 * z * z)) + 0.5 * (1 + t)


def _softsign(x):
    return x / (1 + np.abs(x))


def _dsoftsign(x):
    return 1 / (1 + np.abs(x)) ** 2


SIN = elementwise("sin", np.sin, np.cos)
GELU = elementwise("gelu", _gelu, _dgelu)
X_ABS_X = elementwise("x_abs_x", lambda x: x * np.abs(x), lambda x: 2 * np.abs(x))
SOFTSIGN = elementwise("softsign", _softsign, _dsoftsign)


def wrong(op_name, f, df, rel):
    return elementwise(f"wrong_{op_name}", f, df, scale=1 + rel)


# -- false kinks ---------------------------------------------------------------------
@pytest.mark.parametrize("x", [1e5, 3.3e5, 1e6, -7.7e5, 2.5e4])
def test_sin_at_large_x_is_differentiable_and_passes(x):
    result = check(SIN, np.array([x]), seed=1)
    assert result.verdict == "passed", result


@pytest.mark.parametrize("x", [1e6, 1.3e6, -8.1e5, 4.4e5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_1e_4_error_of_sin_at_1e6_is_caught(x, seed):
    result = check(wrong("sin", np.sin, np.cos, 1e-4), np.array([x]), seed=seed)
    assert result.verdict == "failed", result


@pytest.mark.parametrize("op", [X_ABS_X, SOFTSIGN], ids=["x_abs_x", "softsign"])
@pytest.mark.parametrize("scale", [1e-3, 1e-5, 1e-7])
def test_a_second_derivative_jump_near_0_is_no_kink(op, scale):
    x = np.random.default_rng(0).uniform(-scale, scale, 16)
    result = check(op, x, seed=0)
    assert result.verdict == "passed", result


def test_real_kinks_stay_not_differentiable():
    assert check(Relu, np.array([0.0, 1.0]), seed=0).verdict == "not differentiable"
    assert check(Abs, np.array([0.0, -2.0]), seed=0).verdict == "not differentiable"
    assert check(Clip, np.array([1.0, 0.5]), seed=0).verdict == "not differentiable"
    assert check(Max, np.array([3.0, 3.0, 1.0]), seed=0).verdict == "not differentiable"


# -- the rounding floor ----------------------------------------------------------------
@pytest.mark.parametrize("z", [-7.0, -6.8, -6.5, -6.0, -5.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_gradient_below_the_forwards_rounding_is_not_a_mismatch(z, seed):
    # 0.5 z (1 + tanh(u)) at z = -7: the output, 2e-15, is 3.5 × a sum that rounds at
    # 1e-16, so within ~1e-3 of z it is a staircase: finite differences see its
    # flat steps (4e-17) where the derivative is -2.8e-14
    result = check(GELU, np.array([[z]]), seed=seed)
    assert result.verdict == "passed", result


class ScaledLayerNorm(Operation):
    """gamma · (x - mean) / sqrt(var + 1e-5) + 1 over the last axis, one gamma for all."""

    def __call__(self, x, gamma=1e-16):
        self.variables = (x,)
        self.gamma = gamma
        centred = x.data - x.data.mean(axis=-1, keepdims=True)
        self.inv = 1 / np.sqrt(x.data.var(axis=-1, keepdims=True) + 1e-5)
        self.xhat = centred * self.inv
        return gamma * self.xhat + 1.0

    def backward_var(self, grad, index, **kwargs):
        g = grad * self.gamma
        mean_gx = (g * self.xhat).mean(axis=-1, keepdims=True)
        return self.inv * (g - g.mean(axis=-1, keepdims=True) - self.xhat * mean_gx)


class CosineLoss(Operation):
    """1 - cos(a_i, b_i) per row; on rows of one element cos is ±1 exactly, the true
    gradient 0 and the computed one the rounding of two terms that cancel."""

    def __call__(self, a, b):
        self.variables = (a, b)
        self.na = np.sqrt((a.data**2).sum(axis=-1))
        self.nb = np.sqrt((b.data**2).sum(axis=-1))
        self.cos = (a.data * b.data).sum(axis=-1) / (self.na * self.nb)
        return 1 - self.cos

    def backward_var(self, grad, index, **kwargs):
        a, b = (t.data for t in self.variables)
        mine, other, n = (a, b, self.na) if index == 0 else (b, a, self.nb)
        d = other / (self.na * self.nb)[..., None] - self.cos[..., None] * mine / n[..., None] ** 2
        return -grad[..., None] * d


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_gradient_far_below_the_outputs_size_is_not_a_mismatch(seed):
    # a layer norm whose gamma shrank to 1e-16: outputs ~1, gradients ~1e-16; a cosine
    # loss on one-element rows: outputs 0 or 2, gradients of rounding noise, ~1e-17
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, 4))
    assert check(ScaledLayerNorm, x, seed=seed).verdict == "passed"
    a, b = rng.standard_normal((4, 1)), rng.standard_normal((4, 1))
    assert check(CosineLoss, a, b, seed=seed).verdict == "passed"
    # ... while an error of the layer norm with gamma 1 above the forward's rounding
    # still shows (its gradients, ~3e-5 here, are resolved to ~1e-10: outputs ~1)
    wrong = type(
        "Wrong",
        (ScaledLayerNorm,),
        {
            "backward_var": lambda self, grad, index, **kw: (
                (1 + 1e-4) * ScaledLayerNorm.backward_var(self, grad, index)
            )
        },
    )
    assert check(wrong, x, gamma=1.0, seed=seed).verdict == "failed"


def test_the_floor_does_not_hide_an_error_above_it():
    x = np.array([[-3.0, -1.0, 0.5, 2.0]])
    assert check(wrong("gelu", _gelu, _dgelu, 1e-6), x, seed=0).verdict == "failed"


@pytest.mark.parametrize("v", [1e-5, 1e-6])
def test_a_function_on_the_scale_of_a_small_x_is_resolved(v):
    # x / |x| - like: the cosine of two vectors varies on the scale of the vectors
    class Cosine(Operation):
        def __call__(self, a, b):
            self.variables = (a, b)
            self.na, self.nb = np.linalg.norm(a.data), np.linalg.norm(b.data)
            self.cos = a.data @ b.data / (self.na * self.nb)
            return np.asarray(self.cos)

        def backward_var(self, grad, index, **kwargs):
            a, b = (t.data for t in self.variables)
            mine, other, n = (a, b, self.na) if index == 0 else (b, a, self.nb)
            return grad * (other / (self.na * self.nb) - self.cos * mine / n**2)

    a, b = np.array([v, v]), np.array([0.3, 1.0])
    assert check(Cosine, a, b, seed=0).verdict == "passed"


@pytest.mark.parametrize("x", [[0.5, -1.0], [1e-3, 2.0], [3.0, 7.0]])
def test_relative_errors_of_1e_6_are_caught_in_float64(x):
    for name, f, df in [("sin", np.sin, np.cos), ("exp", np.exp, np.exp)]:
        assert check(wrong(name, f, df, 1e-6), np.array(x), seed=0).verdict == "failed"


def test_a_1e_6_error_is_caught_in_a_sum_over_many_elements_and_a_matmul():
    rng = np.random.default_rng(0)

    class WrongSum(Operation):
        def __call__(self, a):
            self.variables = (a,)
            return np.sum(np.sin(a.data))

        def backward_var(self, grad, index, **kwargs):
            return grad * np.cos(self.variables[0].data) * (1 + 1e-6)

    class WrongMatMul(Operation):
        def __call__(self, a, b):
            self.variables = (a, b)
            return a.data @ b.data

        def backward_var(self, grad, index, **kwargs):
            a, b = self.variables
            g = grad @ b.data.T if index == 0 else a.data.T @ grad
            return g * (1 + 1e-6)

    assert check(WrongSum, rng.standard_normal(10_000), seed=0).verdict == "failed"
    a, b = rng.standard_normal((30, 40)), rng.standard_normal((40, 20))
    assert check(WrongMatMul, a, b, seed=0).verdict == "failed"
    assert check(WrongMatMul, a, b, seed=0, mode="fast").verdict == "failed"


# -- undefined points ------------------------------------------------------------------
class VarDdof1(Operation):
    """np.var(x, ddof=1): undefined (nan) on one element."""

    def __call__(self, x):
        self.variables = (x,)
        if x.size <= 1:
            return np.asarray(np.nan)
        return np.asarray(np.var(x.data, ddof=1))

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        with np.errstate(all="ignore"):
            return grad * 2 * (x - x.mean()) / (x.size - 1)


class LogAbsDet(Operation):
    def __call__(self, a):
        self.variables = (a,)
        return np.asarray(np.linalg.slogdet(a.data)[1])

    def backward_var(self, grad, index, **kwargs):
        return grad * np.linalg.inv(self.variables[0].data).T


class NanGradient(Operation):
    """A finite output whose gradient is nan: a failure, not an undefined point."""

    def __call__(self, x):
        self.variables = (x,)
        return np.sqrt(np.abs(x.data) + 1.0)

    def backward_var(self, grad, index, **kwargs):
        return grad * np.full(self.variables[0].shape, np.nan)


def test_an_output_that_is_not_finite_is_skipped_not_failed():
    result = check(VarDdof1, np.array([0.7]), seed=0)
    assert (result.verdict, result.note) == ("inconclusive", "output not finite there")
    assert not result.passed and result.failure is None
    singular = check(LogAbsDet, np.zeros((1, 1)), seed=0)
    assert (singular.verdict, singular.note) == ("inconclusive", "output not finite there")
    assert check(VarDdof1, np.array([0.7, -1.2, 3.0]), seed=0).verdict == "passed"
    assert check(NanGradient, np.array([0.5]), seed=0).failure.kind == "nonfinite_gradient"


def test_a_search_skips_and_counts_undefined_examples():
    result = mg.verify(VarDdof1, max_examples=30, seed=0)
    assert result.verdict == "passed", result
    assert result.skipped.get("output not finite there", 0) > 0
    assert any("skipped: output not finite there" in line for line in result.skip_lines)
    never = mg.verify(VarDdof1, shapes=["1"], max_examples=10, seed=0)
    assert never.verdict == "inconclusive" and not never.passed
    assert "output not finite there" in never.note


# -- no vacuous verdicts ---------------------------------------------------------------
def test_integer_inputs_are_constants_as_in_torch():
    # an integer array is a label or an index: not differentiated, passed as given,
    # and the report says so; an op of integers only has nothing to compare
    wrong_sin = wrong("sin", np.sin, np.cos, 1e-3)
    result = check(wrong_sin, np.array([1, 2, 3]), seed=0)
    assert (result.verdict, result.note) == ("inconclusive", "nothing to compare")
    assert not result.passed and result.inputs[0].dtype.kind == "i"
    assert "Constants, not differentiated (integer or boolean arrays): input a" in str(result)
    assert check(wrong_sin, np.array([1.0, 2.0, 3.0]), seed=0).verdict == "failed"
    kept = check(Mul, np.array([0.5, 2.0]), np.array([3, 4]), seed=0)
    assert kept.verdict == "passed" and kept.inputs[1].dtype.kind == "i"
    assert kept.settings["constants"] == [1]


def test_an_integer_index_needs_no_constants_setting():
    class Take(Operation):
        def __call__(self, x, idx):
            self.variables = (x, idx)
            return x.data[idx.data]

        def backward_var(self, grad, index, **kwargs):
            out = np.zeros_like(self.variables[0].data)
            np.add.at(out, self.variables[1].data, grad)
            return out

    class WrongTake(Take):
        def backward_var(self, grad, index, **kwargs):
            out = np.zeros_like(self.variables[0].data)
            out[self.variables[1].data] = grad  # drops the repeated index's second term
            return out

    x, idx = np.array([1.0, 2.0, 3.0]), np.array([0, 2, 2])
    assert check(Take, x, idx).passed
    assert check(Take, x, idx, constants=(1,)).passed
    assert check(WrongTake, x, idx).failure.kind == "mismatch"


def test_nothing_to_compare_is_inconclusive_never_passed():
    wrong_sin = wrong("sin", np.sin, np.cos, 1.0)
    for arrays in [(np.zeros(0),), (np.zeros((2, 0)),)]:
        result = check(wrong_sin, *arrays, seed=0)
        assert (result.verdict, result.note) == ("inconclusive", "nothing to compare")
        assert not result.passed
    assert check(Mul, np.ones(2), np.ones(2), constants=(0, 1)).verdict == "inconclusive"
    everything_at_a_kink = check(Relu, np.array([0.0]), seed=0)
    assert everything_at_a_kink.verdict == "inconclusive"
    assert everything_at_a_kink.note == "not differentiable there"
    empty = mg.verify(wrong_sin, shapes=["0"], max_examples=20, seed=0)
    assert empty.verdict == "inconclusive" and "nothing to compare" in empty.note


@pytest.mark.parametrize("bad", [float("inf"), float("nan"), -1.0])
def test_tolerances_must_be_finite_and_not_negative(bad):
    with pytest.raises(CheckUsageError, match="finite number >= 0"):
        check(SIN, np.ones(2), atol=bad)
    with pytest.raises(CheckUsageError, match="finite number >= 0"):
        check(SIN, np.ones(2), rtol=bad)
    with pytest.raises(InvalidDescription, match="finite number >= 0"):
        mg.verify(SIN, rtol=bad, max_examples=2)


# -- float32 and float16: the backward's own rounding --------------------------------
class LayerNorm(Operation):
    """Over the last axis, with gamma and beta; the backward in the inputs' dtype."""

    def __call__(self, x, gamma, beta, eps=1e-5):
        self.variables = (x, gamma, beta)
        mean = x.data.mean(axis=-1, keepdims=True)
        self.inv = (1 / np.sqrt(x.data.var(axis=-1, keepdims=True) + eps)).astype(x.dtype)
        self.xhat = (x.data - mean) * self.inv
        return gamma.data * self.xhat + beta.data

    def backward_var(self, grad, index, **kwargs):
        gamma = self.variables[1].data
        if index == 2:
            return grad.sum(axis=0)
        if index == 1:
            return (grad * self.xhat).sum(axis=0)
        g = grad * gamma
        mean_g = g.mean(axis=-1, keepdims=True)
        mean_gx = (g * self.xhat).mean(axis=-1, keepdims=True)
        return self.inv * (g - mean_g - self.xhat * mean_gx)


class Float16Gradient(LayerNorm):
    """A systematic precision loss: the gradient rounded to float16 whatever the dtype."""

    def backward_var(self, grad, index, **kwargs):
        g = super().backward_var(grad, index, **kwargs)
        return g.astype(np.float16).astype(g.dtype)


F32 = np.float32


def test_a_float32_backward_is_right_to_its_own_rounding():
    # Terms of ~5|v| cancel to a gradient of ~1e-4, rounding at ~1e-7 in float32.
    x = np.array([[-2.0, -2.375]], F32)
    ones, zeros = np.ones(2, F32), np.zeros(2, F32)
    for seed in range(6):
        assert check(LayerNorm, x, ones, zeros, seed=seed).verdict == "passed"
    # A constant channel: x - mean is 0 in float64 but an ulp in float32, which
    # 1/sqrt(eps) amplifies into gamma's gradient (2e-5 where finite differences see 0).
    flat = np.full((2, 3), 1.3075239658355713, F32)
    for seed in range(6):
        assert check(LayerNorm, flat, np.ones(3, F32), np.zeros(3, F32), seed=seed).passed
    # Two elements, one of them 0: a one-ulp move of 0 (a subnormal) changes nothing,
    # and three moves of the other by one ulp happened to leave the rounding alone.
    x, gamma = np.array([[0.32755855, 0.0]], F32), np.full(2, 5.0, F32)
    for seed in range(6):
        assert check(LayerNorm, x, gamma, np.zeros(2, F32), seed=seed).verdict == "passed"


def test_a_systematic_float32_precision_loss_is_still_caught():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5)).astype(F32)
    result = check(Float16Gradient, x, np.ones(5, F32), np.zeros(5, F32), seed=0)
    assert result.verdict == "failed", result


@pytest.mark.parametrize("x", [[0.5, -1.0, 2.0], [1e-3, 3.0, -0.2]])
def test_relative_errors_of_1e_2_are_caught_in_float32(x):
    for name, f, df in [("sin", np.sin, np.cos), ("exp", np.exp, np.exp)]:
        result = check(wrong(name, f, df, 1e-2), np.array(x, F32), seed=0)
        assert result.verdict == "failed", result


def test_the_result_counts_elements_below_the_floor_and_the_report_says_so():
    result = check(GELU, np.array([[-7.0]]), seed=0)
    assert result.verdict == "passed" and result.below_floor == 1
    assert result.per_input[0].below_floor == 1
    assert check(GELU, np.array([[0.5, 2.0]]), seed=0).below_floor == 0
    # An error above the floor still fails, and the report says the floor dominated.
    failed = check(wrong("gelu", _gelu, _dgelu, 0.3), np.array([[-6.0]]), seed=0)
    assert failed.verdict == "failed"
    assert "mostly rounding" in failed.failure.message
    assert failed.failure.worst[0].floor > 0


def test_a_rounding_error_the_same_at_every_step_does_not_loosen_the_check():
    # (x + 1e6) - 1e6 rounds by up to 6e-11, but by the same amount at x ± h for a
    # power-of-two step: its finite differences are exact, and a 1e-6 error shows.
    cancel = wrong("cancel", lambda x: (x + 1e6) - 1e6, np.ones_like, 1e-6)
    for x in (1.14136302, -3.7, 0.25):
        assert check(cancel, np.array(x), seed=0).verdict == "failed"


def _times(cls, factor: float):
    """``cls`` with its backward times ``factor``."""
    scaled = {
        "backward_var": lambda self, grad, index, **kw: factor * cls.backward_var(self, grad, index)
    }
    return type("Wrong" + cls.__name__, (cls,), scaled)


def test_where_no_step_reaches_the_functions_scale_the_point_is_not_judged():
    # log|det| of a 1x1 matrix of 1e-307: log|a| varies on the scale of a, and not even
    # its relative step (eps**(1/3)·|a|, below float64's normal numbers) resolves it:
    # every difference straddles the pole, no two estimates agree, so nothing is known,
    # and nothing fails. At 8e-46, beyond the levels' reach (the smallest, 4**-52 of the
    # base step, is 3e-37), the element's own relative step decides, as at 1 in other
    # units: right passes, 1e-3 wrong fails (issue 34 item 7; it was not judged).
    result = check(LogAbsDet, np.array([[1e-307]]), seed=0)
    assert result.verdict == "inconclusive" and result.note == "not differentiable there"
    tiny = np.array([[7.953e-46]])
    assert check(LogAbsDet, tiny, seed=0).verdict == "passed"
    assert check(_times(LogAbsDet, 1.001), tiny, seed=0).verdict == "failed"
    assert check(LogAbsDet, np.array([[0.8, 0.1], [-0.3, 1.2]]), seed=0).verdict == "passed"


def _log_softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


class KLLogits(Operation):
    """KL(softmax(a) || softmax(b)) per row: 0 at a = b, a sum of terms of the logits'
    size that cancel there."""

    scale = 1.0

    def __call__(self, a, b):
        self.variables = (a, b)
        self.la, self.lb = _log_softmax(a.data), _log_softmax(b.data)
        self.p = np.exp(self.la)
        self.kl = (self.p * (self.la - self.lb)).sum(axis=-1)
        return self.kl

    def backward_var(self, grad, index, **kwargs):
        g = grad[..., None] * self.scale
        if index == 0:
            return g * self.p * (self.la - self.lb - self.kl[..., None])
        return g * (np.exp(self.lb) - self.p)


@pytest.mark.parametrize(
    "a, b",
    [
        ([[10.0, 0.0]], [[10.0, 2.2250738585072014e-308]]),
        ([[10.0, 0.0]], [[10.0, 0.0]]),
        ([[-3.0, 7.0, 1.0]], [[-3.0, 7.0, 1.0]]),
        (np.zeros((4, 3)), np.zeros((4, 3))),
    ],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_rounding_a_symmetric_point_hides_still_counts(a, b, seed):
    # At a = b the KL is exactly 0 in every precision, at the point and where every
    # element moves by the same step; a one-element step sees the rounding of the
    # log-sum-exps (eps·10 at logits of 10), which the floor must know: at b = a + 1e-308
    # the differences at the smallest steps are -p·h exactly (the change of the sum is
    # absorbed), a slope of -5.7e-6 where the gradient is 0.
    result = check(KLLogits, np.array(a), np.array(b), seed=seed)
    assert result.verdict == "passed", result


def test_the_floor_of_a_symmetric_point_does_not_hide_an_error_elsewhere():
    wrong = type("WrongKL", (KLLogits,), {"scale": 1 + 1e-6})
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    assert check(wrong, a, b, seed=0).verdict == "failed"
    assert check(KLLogits, a, b, seed=0).verdict == "passed"


def _tiny_matrix(t, singular):
    """Entries t (1e-159, 1e-288), zeros and a 1: log|det| is finite, inv(A) has
    entries of 1/t next to exact zeros; with two equal rows the matrix is singular,
    though LU rounds its det to a finite log and inv overflows."""
    if singular:
        return np.array([[t, 0, t, 1], [0, t, t, t], [t, t, t, t], [t, t, t, t]])
    return np.array([[t, t, 1, t], [0, t, t, t], [t, 0, t, t], [t, t, t, t]])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_float64_backward_is_right_to_its_own_rounding_where_ill_conditioned(seed):
    # inv(A).T of a matrix of entries 1e-159: the gradient's elements are 2e158, and
    # NumPy's inverse gives 1 where the exact one is 0, a rounding of 5e-159 of the
    # gradient's scale. Finite differences see 0 there (the cofactor is exactly 0).
    result = check(LogAbsDet, _tiny_matrix(4.673482671881221e-159, False), seed=seed)
    assert result.failure is None, result


def test_an_ill_conditioned_float64_point_does_not_loosen_a_well_conditioned_one():
    wrong = type(
        "WrongLogAbsDet",
        (LogAbsDet,),
        {
            "backward_var": lambda self, grad, index, **kw: (
                (1 + 1e-6) * LogAbsDet.backward_var(self, grad, index)
            )
        },
    )
    a = np.array([[0.8, 0.1, -0.2], [-0.3, 1.2, 0.4], [0.5, 0.0, 0.9]])
    for seed in (0, 1, 2):
        assert check(wrong, a, seed=seed).verdict == "failed"


def test_the_float64_rounding_measure_keeps_a_bug_at_zero():
    # xlogy's forward mask reused for d/dx (pytorch#80770): 0 instead of log y at x = 0.
    # Moving the zero off 0 to measure the backward's rounding would move the gradient
    # by the very error: zeros stay.
    class XlogyMaskedDx(Operation):
        def __call__(self, x, y):
            self.variables = (x, y)
            return np.where(x.data == 0, 0.0, x.data * np.log(y.data))

        def backward_var(self, grad, index, **kwargs):
            x, y = (v.data for v in self.variables)
            if index == 0:
                return grad * np.where(x == 0, 0.0, np.log(y))
            return grad * np.where(x == 0, 0.0, x / y)

    for seed in (0, 1, 2):
        result = check(XlogyMaskedDx, np.array([0.0, 1.5]), np.array([2.0, 3.0]), seed=seed)
        assert result.verdict == "failed", result


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_non_finite_gradient_where_no_step_resolves_a_derivative_is_not_judged(seed):
    # Two equal rows of 2.6e-288: singular, yet slogdet's LU rounds to a finite log and
    # inv overflows (inf, nan). log|det| varies there on a scale of 1e-288, below every
    # step: no two estimates agree, nothing is known, nothing fails.
    result = check(LogAbsDet, _tiny_matrix(2.5777161529695682e-288, True), seed=seed)
    assert (result.verdict, result.note) == ("inconclusive", "not differentiable there")


def test_a_non_finite_gradient_at_a_kink_or_a_smooth_point_still_fails():
    # |x| at 0: the one-sided derivatives are finite, and so is any subgradient
    class NanAtZero(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return np.abs(x.data)

        def backward_var(self, grad, index, **kwargs):
            x = self.variables[0].data
            with np.errstate(all="ignore"):
                return grad * x / np.abs(x)

    for x in ([0.0, 1.5], [0.0]):
        assert check(NanAtZero, np.array(x), seed=0).failure.kind == "nonfinite_gradient"
    assert check(NanGradient, np.array([1e-300, 3.0]), seed=0).failure.kind == (
        "nonfinite_gradient"
    )


class Atan2(Operation):
    def __call__(self, y, x):
        self.variables = (y, x)
        return np.arctan2(y.data, x.data)

    def backward_var(self, grad, index, **kwargs):
        y, x = (v.data for v in self.variables)
        r2 = x * x + y * y
        safe = np.where(r2 == 0, 1.0, r2)
        return grad * np.where(r2 == 0, 0.0, (x if index == 0 else -y) / safe)


def test_a_kinks_first_pass_does_not_loosen_the_others_and_then_fail_them():
    # atan2 at the origin jumps: its first pass, ~pi/2h, made the input's scale (and
    # the tolerance that settles the other elements) huge; refined, the kink leaves
    # the scale, and an element settled under the old tolerance must be refined too.
    y, x = np.zeros(3), np.array([2.0**-8, 0.0, 0.0])
    result = check(Atan2, y, x, seed=0)
    assert result.verdict == "not differentiable", result

    class WrongAtan2(Atan2):
        def backward_var(self, grad, index, **kwargs):
            return super().backward_var(grad, index) * (1 + 1e-6)

    assert check(WrongAtan2, y, x, seed=0).verdict == "failed"


def test_a_singularity_within_every_steps_reach_is_not_judged():
    # log|a| at 1e-307: every difference straddles the singularity, its relative step
    # too. atan2 1.4e-45 from the origin: every level straddles it (J, or D·h, shrinks
    # like 1/h far above the noise), but its own relative step resolves it, as at
    # 1.4e-13, where the levels come down to its scale (4**-40 of the base step and 12
    # more where they straddle a singular set): it passes there, and 1e-3 wrong fails.
    assert check(LogAbsDet, np.array([[1e-307]]), seed=0).verdict == "inconclusive"
    for at in (1e-45, 1e-13):
        assert check(Atan2, np.array(at), np.array(at), seed=0).verdict == "passed"
        wrong = _times(Atan2, 1.001)
        assert check(wrong, np.array(at), np.array(at), seed=0).verdict == "failed"


def test_a_kink_whose_slopes_barely_differ_is_still_a_kink():
    # one-sided slopes 10 and 9: J (the jump, 1) is smaller than D (9.5)
    leaky = elementwise("leaky", lambda x: np.where(x > 0, 10 * x, 9 * x), lambda x: 10 + 0 * x)
    assert check(leaky, np.array([0.0, 0.5]), seed=0).verdict == "not differentiable"


def test_larger_steps_that_disagree_with_the_smaller_ones_are_not_taken():
    # log|a| at 3.5e-12: the smallest steps agree on 2.83e11; each larger one is 16
    # times less than the last (they straddle the pole), down to 1e-5, and agree with
    # each other to 1e-5: the estimate comes from the small steps.
    assert check(LogAbsDet, np.array([[3.5293398244310757e-12]]), seed=2).verdict == "passed"
    wrong = type(
        "WrongLogAbsDet",
        (LogAbsDet,),
        {
            "backward_var": lambda self, grad, index, **kw: (
                1.3 * LogAbsDet.backward_var(self, grad, index)
            )
        },
    )
    assert check(wrong, np.array([[3.5293398244310757e-12]]), seed=2).verdict == "failed"
