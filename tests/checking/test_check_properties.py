"""Sensitivity and silence of check(), property-tested.

Sensitivity: a correct op whose gradient is scaled by 1 + δ is caught (δ = 1e-6 in
float64, 1e-2 in float32), and a bug in one element out of 2,000 is caught at that
index. Silence: correct ops never fail, at every float dtype, at large and tiny
magnitudes, with high curvature and catastrophic cancellation; kinks hit exactly are
"not differentiable", never "failed".
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gradcheck import Operation, check
from gradcheck.frontend.report import format_result
from tests.support.checker_ops import SMOOTH, Abs, Clip, MatMul, Max, Mul, Relu, elementwise

SHAPES = hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=6)


def values(dtype, lo, hi, shape=SHAPES):
    return hnp.arrays(
        dtype,
        shape,
        elements=st.floats(lo, hi, allow_nan=False, width=np.dtype(dtype).itemsize * 8),
    )


def make_ops(scale=1.0):
    return {name: elementwise(name, f, df, scale) for name, (f, df) in SMOOTH.items()}


CORRECT = make_ops()
OFF_1E6 = make_ops(1 + 1e-6)
OFF_1E2 = make_ops(1 + 1e-2)
#: Where each smooth op is tried (sin25 and cubes over a smaller range).
DOMAIN = {"sin": 3.0, "tanh": 3.0, "square": 10.0, "sin25": 1.0, "cancel": 10.0, "cube": 3.0}


def has_signal(x: np.ndarray, name: str) -> bool:
    """The op's derivative is not ~0 everywhere (a bug scaled by 1+δ is then invisible)."""
    d = np.abs(SMOOTH[name][1](x.astype(np.float64)))
    return bool(d.size and d.max() > 1e-3)


# -- sensitivity ----------------------------------------------------------------------
@given(name=st.sampled_from(sorted(CORRECT)), data=st.data(), seed=st.integers(0, 2**16))
def test_relative_error_1e_6_is_caught_in_float64(name, data, seed):
    x = data.draw(values(np.float64, -DOMAIN[name], DOMAIN[name]))
    if not has_signal(x, name):
        return
    result = check(OFF_1E6[name], x, seed=seed)
    assert result.verdict == "failed", format_result(result)
    assert result.failure.kind == "mismatch"


@given(name=st.sampled_from(["sin", "tanh", "square", "cube"]), data=st.data())
def test_relative_error_1e_2_is_caught_in_float32(name, data):
    x = data.draw(values(np.float32, -DOMAIN[name], DOMAIN[name]))
    if not has_signal(x, name):
        return
    result = check(OFF_1E2[name], x)
    assert result.verdict == "failed", format_result(result)


def test_relative_error_1e_6_in_a_two_input_op():
    class MulOff(Mul):
        def backward_var(self, grad, index, **kw):
            g = super().backward_var(grad, index)
            return g * (1 + 1e-6) if index == 1 else g

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    result = check(MulOff, a, b)
    assert result.failure.kind == "mismatch" and result.failure.input == 1
    assert check(Mul, a, b).verdict == "passed"


class OneWrongElement(Operation):
    """sin, with the gradient of one element (``bad``) off by 0.1% (``relative``) or
    by ``absolute`` times the upstream gradient there."""

    bad: tuple[int, int] = (0, 0)
    relative: float = 1e-3
    absolute: float = 0.0

    def __call__(self, a):
        self.variables = (a,)
        return np.sin(a.data)

    def backward_var(self, grad, index, **kw):
        g = grad * np.cos(self.variables[0].data)
        g[self.bad] = g[self.bad] * (1 + self.relative) + self.absolute * grad[self.bad]
        return g


def one_wrong_element(bad, relative=1e-3, absolute=0.0):
    attrs = {"bad": bad, "relative": relative, "absolute": absolute}
    return type("OneWrong", (OneWrongElement,), attrs)


X2000 = np.random.default_rng(7).uniform(-3, 3, (40, 50))


@pytest.mark.parametrize("bad", [(0, 0), (23, 41), (39, 49)])
def test_one_bad_element_in_2000_is_found_in_full_mode(bad):
    result = check(one_wrong_element(bad), X2000, mode="full")
    assert result.failure.kind == "mismatch"
    assert result.failure.mismatched == 1 and result.failure.size == 2000
    assert result.failure.worst[0].index == bad


@settings(max_examples=10)
@given(row=st.integers(0, 39), col=st.integers(0, 49), seed=st.integers(0, 2**16))
def test_one_bad_element_in_2000_is_found_in_fast_mode(row, col, seed):
    # Fast mode compares sums over all elements: an error hides below the tolerance
    # of the whole sum (rtol times the norm of the gradient), not of its element, so
    # the bug here does not shrink with cos(x) there. Full mode finds 0.1% of one
    # element's gradient.
    bug = one_wrong_element((row, col), relative=0.0, absolute=0.05)
    result = check(bug, X2000, mode="fast", seed=seed)
    assert result.failure is not None and result.failure.kind == "mismatch"
    assert result.failure.worst[0].index == (row, col)
    assert result.forward_calls < 400  # a few directions plus a bisection, not 4,000


# -- silence ----------------------------------------------------------------------------
@given(
    name=st.sampled_from(sorted(CORRECT)),
    dtype=st.sampled_from([np.float64, np.float32, np.float16]),
    data=st.data(),
    seed=st.integers(0, 2**16),
    mode=st.sampled_from(["full", "fast"]),
)
def test_correct_ops_never_fail(name, dtype, data, seed, mode):
    if name == "cancel" and dtype is np.float16:
        return  # x + 1e6 overflows float16
    x = data.draw(values(dtype, -DOMAIN[name], DOMAIN[name]))
    result = check(CORRECT[name], x, seed=seed, mode=mode)
    assert result.verdict == "passed", format_result(result)


@given(
    magnitude=st.sampled_from([1e6, 1e-8]),
    name=st.sampled_from(["square", "cube", "tanh", "sin"]),
    dtype=st.sampled_from([np.float64, np.float32]),
    data=st.data(),
    seed=st.integers(0, 2**16),
)
def test_correct_ops_never_fail_at_large_and_tiny_magnitudes(magnitude, name, dtype, data, seed):
    unit = data.draw(values(np.float64, -1.0, 1.0))
    x = (unit * magnitude).astype(dtype)
    if name == "cube" and magnitude > 1 and dtype is np.float32:
        x = x / 1e4  # (1e6)**3 overflows float32
    with np.errstate(over="ignore"):
        result = check(CORRECT[name], x, seed=seed)
    assert result.verdict == "passed", format_result(result)


@given(
    data=st.data(),
    dtype=st.sampled_from([np.float64, np.float32, np.float16]),
    seed=st.integers(0, 2**16),
)
def test_correct_two_input_ops_never_fail(data, dtype, seed):
    n, k, m = data.draw(st.tuples(*[st.integers(1, 5)] * 3))
    a = data.draw(values(dtype, -3, 3, (n, k)))
    b = data.draw(values(dtype, -3, 3, (k, m)))
    result = check(MatMul, a, b, seed=seed)
    assert result.verdict == "passed", format_result(result)
    c = data.draw(values(dtype, -3, 3, (n, k)))
    result = check(Mul, a, c, seed=seed)
    assert result.verdict == "passed", format_result(result)


# -- kinks ---------------------------------------------------------------------------
def with_kinks(kink_values, dtype=np.float64):
    """Arrays of random values with at least one element exactly at a kink."""
    return st.tuples(
        values(dtype, -3, 3, hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=5)),
        st.data(),
    ).map(lambda t: _plant(t[0], t[1], kink_values))


def _plant(x, data, kink_values):
    flat = x.reshape(-1)
    where = data.draw(st.lists(st.integers(0, flat.size - 1), min_size=1, max_size=3))
    for j in where:
        flat[j] = data.draw(st.sampled_from(kink_values))
    return x


KINKS = [(Relu, [0.0]), (Abs, [0.0]), (Clip, [-1.0, 1.0])]


@pytest.mark.parametrize(("op", "kink_values"), KINKS, ids=["relu", "abs", "clip"])
@given(data=st.data(), seed=st.integers(0, 2**16), mode=st.sampled_from(["full", "fast"]))
def test_kinks_hit_exactly_are_not_differentiable(op, kink_values, data, seed, mode):
    x = data.draw(with_kinks(kink_values))
    result = check(op, x, seed=seed, mode=mode)
    # Some elements compared: not differentiable; none: inconclusive (never a pass).
    assert result.verdict in ("not differentiable", "inconclusive"), format_result(result)
    assert result.note == "not differentiable there" and result.failure is None
    flagged = {np.ravel_multi_index(idx, x.shape) for _, idx in result.kinks}
    if mode == "full":
        assert (result.verdict == "inconclusive") == (len(flagged) == x.size)
        assert result.passed == (result.verdict == "not differentiable")
    flat = x.reshape(-1)
    exact = {j for j in range(flat.size) if flat[j] in kink_values}
    if mode == "full":  # fast mode stops after locating a few
        assert exact <= flagged
    # Elements closer to a kink than the refinement steps reach (64 eps**(1/3)) are
    # "not differentiable" numerically too.
    assert all(min(abs(flat[j] - k) for k in kink_values) < 1e-3 for j in flagged - exact)


@given(data=st.data(), seed=st.integers(0, 2**16), mode=st.sampled_from(["full", "fast"]))
def test_max_with_ties_is_not_differentiable(data, seed, mode):
    x = data.draw(values(np.float64, -3, 3, hnp.array_shapes(min_dims=1, max_side=5)))
    flat = x.reshape(-1)
    if flat.size < 2:
        return
    i, j = data.draw(st.lists(st.integers(0, flat.size - 1), min_size=2, max_size=2, unique=True))
    flat[i] = flat[j] = flat.max() + 1.0  # a tie at the maximum
    result = check(Max, x, seed=seed, mode=mode)
    expected = "inconclusive" if flat.size == 2 else "not differentiable"
    assert result.verdict == expected, format_result(result)
    assert {np.ravel_multi_index(idx, x.shape) for _, idx in result.kinks} == {i, j}


@given(
    op=st.sampled_from([Relu, Abs, Clip, Max]),
    data=st.data(),
    dtype=st.sampled_from([np.float64, np.float32, np.float16]),
    seed=st.integers(0, 2**16),
)
def test_near_kinks_never_fail(op, data, dtype, seed):
    near = [0.0, 1e-9, -1e-9, 1e-7, 1.0, 1.0 + 1e-12, -1.0 + 1e-10]
    x = data.draw(with_kinks(near, dtype))
    result = check(op, x, seed=seed)
    assert result.verdict != "failed", format_result(result)
