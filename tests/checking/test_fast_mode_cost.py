"""Fast mode at the floor of its forward calls, and grouped directions (issue 25): what
each costs, and what each still catches."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as mg
from gradcheck import Operation
from gradcheck.errors import CheckUsageError
from tests.support.helpers import load_example

RNG = np.random.default_rng(0)
XM, W = RNG.standard_normal((8, 32)), RNG.standard_normal((32, 32)) / np.sqrt(32)


def tanh_matmul(x, w):
    return mg.tanh(x @ w)


def wrong_tanh_matmul(bad: int, relative: float = 1e-3) -> type[Operation]:
    """tanh(x @ W) whose gradient of W is wrong by ``relative`` at flat element ``bad``."""

    class Wrong(Operation):
        def __call__(self, x, w):
            self.variables = (x, w)
            self.t = np.tanh(x.data @ w.data)
            return self.t

        def backward_var(self, grad, index, **kwargs):
            x, w = (v.data for v in self.variables)
            inner = grad * (1 - self.t**2)
            if index == 0:
                return inner @ w.T
            gw = x.T @ inner
            gw.reshape(-1)[bad] *= 1 + relative
            return gw

    return Wrong


_xtanh = load_example("xtanh")
XTanh, XTanhOneOff = _xtanh.XTanh, _xtanh.XTanhOneOff


# -- fast mode ----------------------------------------------------------------------------
def test_fast_mode_spends_two_forward_calls_per_direction_where_they_agree() -> None:
    result = mg.check(tanh_matmul, XM, W, mode="fast", seed=0)
    assert result.passed
    # the structural checks' forward calls (the first, then one fresh graph for the
    # repeat and the scaled backward), the point itself, then 2 of the 4 directions per
    # input at one central difference each: they agree clearly, so the other 2 are not
    # needed (it was 7 Richardson levels each: 108 calls)
    assert result.forward_calls <= 2 + 1 + 2 * 2 * 2


def test_fast_mode_takes_the_other_half_of_the_directions_where_agreement_is_not_clear(
    monkeypatch,
) -> None:
    from gradcheck.checking import compare

    monkeypatch.setattr(compare, "CLEAR_AGREEMENT", 0.0)  # no difference is small enough
    result = mg.check(tanh_matmul, XM, W, mode="fast", seed=0)
    assert result.passed
    assert result.forward_calls == 2 + 1 + 2 * 4 * 2


def test_fast_mode_directions_rarely_tie_two_elements() -> None:
    # A tie of max at two elements is crossed by a direction unless their factors are
    # equal; so are two equal errors cancelled. 64 factors: once in 64 directions.
    from gradcheck.checking.compare import _DIRECTION_FACTORS

    assert len(set(_DIRECTION_FACTORS.tolist())) == 64
    x = np.zeros(2)
    flat = _fast_directions(x, 4000)
    assert np.mean(flat[:, 0] == flat[:, 1]) < 1 / 32


def _fast_directions(x: np.ndarray, count: int) -> np.ndarray:
    from gradcheck.checking.compare import Comparison, _FastMode
    from gradcheck.checking.numerical import Evaluator
    from gradcheck.checking.tolerance import Tolerance

    ev = Evaluator(lambda arrays, params: arrays[0] * 1.0, [x], {}, np.ones_like(x))
    cmp = Comparison(0, x, np.ones_like(x), Tolerance(atol=1e-7, rtol=1e-7, atol_scaled=True), 1.0)
    return _FastMode(ev, cmp).directions(np.random.default_rng(0), count)


@pytest.mark.parametrize("bad", [0, 333, 517, 1023])
def test_fast_mode_still_finds_a_relative_1e_3_error_in_one_of_1024_elements(bad) -> None:
    result = mg.check(wrong_tanh_matmul(bad), XM, W, mode="fast", seed=bad)
    assert result.failure is not None and result.failure.kind == "mismatch"
    assert result.failure.input == 1
    assert result.failure.worst[0].index == np.unravel_index(bad, W.shape)


def test_fast_mode_settles_a_zero_gradient_by_a_second_step_not_every_level() -> None:
    # x·tanh(x) at 0: the gradient is 0 and the first jump J (the curvature, 2·h) is all
    # there is, above any fraction of the gradient's scale; a second step shows J
    # growing like h, as a smooth function's does.
    result = mg.check(XTanh, np.zeros((40, 50)), mode="fast", seed=0)
    assert result.passed
    # the structural checks (3: the first forward, the repeat's fresh graph, and the
    # Operation's forward run again for its returned dtypes), the point, a first and a
    # second step for 2 of the 4 directions (they agree clearly), the rounding
    # measurement (9), and 2 that ask which dtype the forward computes in (the
    # Evaluator's _computes_in). float64 has no eps-sized allowance (issue 34), so a zero
    # gradient's tolerance is 0, which the second step's noise term alone exceeded:
    # both directions then climbed the whole ladder of levels (47 calls in all); both
    # differences are exactly 0 here (x·tanh(x) is even), which settles them.
    assert result.forward_calls <= 3 + 1 + 2 * 2 * 2 + 9 + 2


def test_fast_mode_still_catches_a_gradient_wrong_where_the_right_one_is_zero() -> None:
    class OffAtZero(XTanh):
        def backward_var(self, grad, index, **kwargs):
            return super().backward_var(grad, index) + 1e-9 * grad

    result = mg.check(OffAtZero, np.zeros((40, 50)), mode="fast", seed=0)
    assert result.verdict == "failed" and result.failure.kind == "mismatch"


def test_fast_mode_still_marks_a_kink_on_every_direction() -> None:
    result = mg.check(lambda x: mg.absolute(x), np.zeros(6), mode="fast", seed=0)
    assert result.verdict in ("not differentiable", "inconclusive")


class SinAbs(Operation):
    """sin(x) + |x|: a kink wherever an element is 0."""

    def __call__(self, x):
        self.variables = (x,)
        return np.sin(x.data) + np.abs(x.data)

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        return grad * (np.cos(x) + np.sign(x))


@pytest.mark.parametrize("seed", [0, 1])
def test_fast_mode_follows_a_kink_down_its_bisection_without_refining_every_level(seed) -> None:
    # A direction across the kink at one element of 4,096 is bisected down to it. Where
    # one half's first differences agree, the other half is the one the kink is in (the
    # directional derivative is linear in the direction): followed on, not refined over
    # every level first, nor screened. It was 279 forward calls (grid_sampler_3d's
    # samples of 559,020 elements took 10 s so); the levels of the bisection (12) at 2
    # to 6 calls each, the kink's own refinement and the structural checks' are 105.
    # 109, then 97: a half's first difference alone, no second step at 4h (the half
    # holding the kink keeps its jump steady, and a second step never settled it).
    x = np.random.default_rng(1).uniform(0.5, 2, 4096) * np.where(np.arange(4096) % 2, 1, -1)
    x[1365] = 0.0
    result = mg.check(SinAbs, x, mode="fast", seed=seed)
    assert result.verdict == "not differentiable"
    assert result.kinks == [(0, (1365,))]
    assert result.forward_calls < 105


def test_fast_mode_bisection_refines_one_half_where_neither_settles_at_first() -> None:
    # Every element within a step or so of the kink of |x| at 0 (grid_sampler_3d's
    # sample locations near its cells' edges): halves whose first differences do not
    # settle them, level after level. The first half is refined; where it agrees, the
    # other is the one the parent's difference is in, followed without a refinement of
    # its own. On main, which refined both, 757 forward calls; 701 with the first half's
    # agreement alone followed up (the test above), 653 then, which said 'passed': the
    # directions' larger steps, straddling their neighbours' kinks 1e-5 away, read as a
    # kink at x and the kink at 341 was never reached. The smaller steps place those
    # kinks off x now, and the bisection follows on down to 341, as mode="full" finds it
    # (12,905 calls): 827. (215 with the tests beside it; 143 with the halves screened
    # at h0/16 alone below a level where neither settled at h0.)
    x = np.random.default_rng(1).uniform(0.5, 2, 1024) * np.where(np.arange(1024) % 2, 1, -1)
    x *= 1e-5
    x[341] = 0.0
    result = mg.check(SinAbs, x, mode="fast", seed=0)
    assert result.verdict == "not differentiable"
    assert result.kinks == [(0, (341,))]
    assert result.forward_calls < 160


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_mode_bisection_settles_a_half_near_kinks_at_a_smaller_step(seed) -> None:
    # One element in 8 within a step h0 of |x|'s kink but not within h0/16 of it (as
    # grid_sampler_3d's sample locations near its cells' edges), one exactly at it:
    # at many levels of the bisection neither half settles at h0. A half whose first
    # difference at h0/16 settles it is taken as agreeing (2 forward calls) instead of
    # refined over every level (14). On main 419, 309 and 359 forward calls; then 243,
    # 221 and 249, the same kink found; 203, 185 and 207 with the halves screened by
    # their first difference alone (no second step at 4h); 115, 101 and 101 with the
    # second half's first difference at h0/16 taken before the first half is refined,
    # and the halves below a level where neither settled at h0 screened at h0/16
    # alone (near kinks, neither settles at h0 at most levels: 4 calls wasted each).
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 2, 4096) * np.where(np.arange(4096) % 2, 1, -1)
    near = np.arange(3, 4096, 8)
    x[near] = rng.uniform(1.5e-6, 6e-6, near.size) * rng.choice([-1, 1], near.size)
    x[1365] = 0.0
    result = mg.check(SinAbs, x, mode="fast", seed=seed)
    assert result.verdict == "not differentiable"
    assert result.kinks == [(0, (1365,))]
    assert result.forward_calls < 125


def test_fast_mode_measures_the_located_elements_step_point_rounding_once(monkeypatch) -> None:
    # A torch forward's rounding is measured in its own dtype, and around each located
    # element's step points too (x ± its largest step: 2 points of 1 + ~9 calls each).
    # Two kinks of 4,096 elements, both located: their points measured together, once
    # (grid_sampler_3d's sample 28: 76 of its 358 calls, two located elements). The
    # same kinks as with each element's own points; on main 348 forward calls in all.
    import contextlib

    torch = pytest.importorskip("torch")

    from gradcheck.checking.adapters import framework
    from gradcheck.checking.forward_rounding import ForwardRounding

    @framework("torch")
    def sin_abs(x):
        return torch.sin(x) + torch.abs(x)

    x = np.random.default_rng(2).uniform(0.5, 2, 4096) * np.where(np.arange(4096) % 2, 1, -1)
    x[[1365, 2730]] = 0.0
    shared = mg.check(sin_abs, x, mode="fast", seed=0)
    monkeypatch.setattr(
        ForwardRounding, "shared_step_points", lambda *args: contextlib.nullcontext()
    )
    own = mg.check(sin_abs, x, mode="fast", seed=0)
    assert shared.verdict == own.verdict == "not differentiable"
    assert shared.kinks == own.kinks == [(0, (1365,)), (0, (2730,))]
    assert own.forward_calls - shared.forward_calls >= 2 * 8
    # (234 on its branch; 240 merged: 4 of them the deeper round at a located bounded
    # kink, whose jump is tried once at a smaller step, i34-scale2's
    # PointProbes.go_deeper, and 2 of the other merged numerics)
    assert shared.forward_calls <= 240


# -- grouped directions --------------------------------------------------------------------
X2000 = np.random.default_rng(7).uniform(-3, 3, (40, 50))


class OneCosWrong(Operation):
    """sin(x), its gradient wrong by a relative 3e-6 at (22, 17)."""

    def __call__(self, x):
        self.variables = (x,)
        return np.sin(x.data)

    def backward_var(self, grad, index, **kwargs):
        g = grad * np.cos(self.variables[0].data)
        g[22, 17] *= 1 + 3e-6
        return g


def test_groups_find_an_error_that_hides_below_the_whole_inputs_tolerance() -> None:
    # Over all 2000 elements a direction's tolerance is rtol·|g∘d|, ~45× one element's:
    # the error hides there, and shows in a group of 16 (4× one element's).
    whole = [mg.check(OneCosWrong, X2000, mode="fast", seed=s).verdict for s in range(4)]
    grouped = [mg.check(OneCosWrong, X2000, mode="fast", group_size=16, seed=s) for s in range(4)]
    assert whole == ["passed"] * 4
    assert sum(r.verdict == "failed" for r in grouped) >= 3
    found = [r for r in grouped if r.failure is not None]
    assert all(r.failure.worst[0].index == (22, 17) for r in found)
    assert all(r.forward_calls < 2 * 2000 / 16 + 200 for r in grouped)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "8"])
def test_group_size_must_be_a_positive_integer(bad) -> None:
    with pytest.raises(CheckUsageError, match="group_size must be"):
        mg.check(XTanh, X2000, mode="fast", group_size=bad)
