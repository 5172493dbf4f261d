"""The finite differences' levels: the steps, and what a ladder of central differences
at steps ``h·4^k`` says about a derivative.

:func:`step_sizes` gives each element's base step and :func:`_levels` the ladder
around it; :class:`_LevelScores` holds the differences at every level (and the
rounding quanta of the outputs they moved); from them :func:`_combine` makes an
:class:`Estimate`: Richardson pairs (:func:`_richardson`), their noise and error
(:func:`_level_noise`, :func:`_pair_errors`), the order of convergence where it is
not h² (:func:`_convergence_ratio`), and the kink test (:func:`_is_kink`). The module
docstring of :mod:`gradcheck.checking.numerical` says why each number is what it is;
the numbers are in :mod:`gradcheck.checking.thresholds`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.checking.thresholds import (
    CONVERGED_FRACTION,
    HIGHEST_LEVEL,
    KINK_NOISE_MARGIN,
    KINK_STEADINESS,
    KINK_WINDOW,
    LEVEL_RATIO,
    LOWEST_LEVEL,
    NOISE_LEVELS,
    ORDER_LEVELS,
    ORDER_RANGE,
    ORDER_STEADINESS,
    OUTPUT_ROUNDING_EPS,
    SINGULAR_BLOWUP,
    SMALL_X_LEVELS,
    TRUNCATION_GROWTH,
    VALUE_ROUNDING_EPS,
)

#: Up to this many output elements over all levels of one refinement, the levels'
#: arithmetic runs once for all of them (see :meth:`Evaluator.refine`).
_BATCHED_LEVELS_MAX_SIZE = 1 << 16
#: What :func:`_trend` sees in a signal over neighbouring levels.
STEADY, GROWING, SHRINKING = "steady", "growing", "shrinking"
#: What :func:`_is_kink` finds: two finite one-sided derivatives that differ, or no
#: finite derivative at all.
KINK, UNBOUNDED = "kink", "unbounded"


def _levels(size: float) -> tuple[np.ndarray, int]:
    """Step multipliers for an element of size ``size`` (|x|), and the index of 1.

    The base step is eps**(1/3) times ``max(|x|, 1)``: relative to |x| for |x| > 1,
    right for x², log x...; absolute below, right for sin x near 0. But a function's
    own scale may be the other one: sin(x) at x = 1e6 varies on a scale of 1, and
    log x, 1/x or a cosine similarity at x = 1e-5 on a scale of |x|. So the levels
    reach further down, to the other step (eps**(1/3) absolute for |x| > 1, relative
    for |x| < 1, by at most :data:`SMALL_X_LEVELS` levels), and the choice among them
    is the error estimate's (see :func:`_combine`).
    """
    extra = int(_extra_levels(np.array([size]))[0])
    powers = np.arange(LOWEST_LEVEL - extra, HIGHEST_LEVEL + 1)
    return LEVEL_RATIO**powers, extra - LOWEST_LEVEL


def _extra_levels(sizes: np.ndarray) -> np.ndarray:
    """Per element of size ``sizes`` (|x|), how many levels :func:`_levels` adds below
    the base ladder."""
    sizes = np.asarray(sizes, dtype=np.float64)
    with np.errstate(all="ignore"):
        extra = np.ceil(np.abs(np.log(sizes)) / np.log(LEVEL_RATIO) - 1e-9)
        extra = np.where((sizes > 0) & np.isfinite(sizes), np.maximum(extra, 0), 0)
        extra = np.where(sizes < 1, np.minimum(extra, SMALL_X_LEVELS), extra)
    return extra.astype(np.int64)


def step_sizes(x: np.ndarray, eps: float) -> np.ndarray:
    """Per-element central-difference steps for ``x``: ``eps**(1/3) * max(|x|, 1)``
    rounded to a power of two.

    A power-of-two step is a whole number of units in the last place of every
    intermediate at least as large as the step's own ulp: when an op rounds its
    intermediates coarsely (``(x + 1e6) - 1e6`` rounds to 1e6's ulp, 2**-33), both
    ``x + h`` and ``x - h`` round by the same amount and their difference stays exact.

    Examples
    --------
    >>> step_sizes(np.array([0.0, 1e6]), np.finfo(np.float64).eps)
    array([7.62939453e-06, 8.00000000e+00])
    """
    xf = np.asarray(x, dtype=np.float64)
    h = np.cbrt(eps) * np.maximum(np.abs(xf), 1.0)
    return np.exp2(np.round(np.log2(h)))


@dataclass
class Estimate:
    """Numeric derivative of ``s``: value, error estimate, whether ``s`` is not
    differentiable there (a kink), its second derivative along the same direction (a
    by-product: ``J / h``), whether it was refined, the forward calls spent, and the
    rounding noise within the error estimate.

    :func:`full_estimate` gives one per input, each field an array of the input's
    shape; :meth:`Evaluator.refine` one per element or direction, each field a scalar.
    """

    value: Any
    error: Any
    kink: Any
    curvature: Any
    refined: Any = True
    calls: int = 0
    #: The part of ``error`` that is the rounding noise of the differences: below it,
    #: finite differences resolve nothing (0 where the first pass settled an element).
    noise: Any = 0.0
    #: Where ``kink``: whether the derivative there is no finite number as far as the
    #: steps show (a pole, a log, a jump of ``s`` within every step's reach, or no two
    #: estimates agreeing), rather than two finite one-sided derivatives that differ.
    unbounded: Any = False
    #: The smaller step of the levels the value came from (0 where not refined).
    step: Any = 0.0
    #: Whether the value is extrapolated with an order below h² (see
    #: :func:`_convergence_ratio`): smaller steps, where there are any, may see s smooth.
    low_order: Any = False


def _blows_up_below(levels: _LevelScores, est: Estimate) -> bool:
    """Whether two levels of steps smaller than the ones ``est`` took its value from
    see central differences :data:`SINGULAR_BLOWUP` times those steps' (and the value)
    or more, each far above its rounding noise: the chosen steps straddle a singular
    set. (A smooth function's smaller steps agree with its larger ones, or differ by
    less, its truncation shrinking like h²; noise stays within its bounds.)"""
    if not est.step or not math.isfinite(est.value):
        return False
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(levels.d)
        chosen = np.abs(levels.d[finite & (levels.hs >= est.step)])
        bound = SINGULAR_BLOWUP * max(float(chosen.max(initial=0.0)), abs(est.value))
        below = finite & (levels.hs < est.step)
        # (the noise of a level where s moves in quanta includes their floor)
        resolution = np.maximum(levels.noise, levels.floor)
        limit = KINK_NOISE_MARGIN * resolution
        loud = np.abs(levels.d) > np.maximum(bound, limit)
        # Steps smaller still that bound D far below the loud ones (s stands still there:
        # a clip's bound 7.7e-10 from x, whose straddling steps see D ~ 1/h): the set is
        # not at x but between those steps and the loud ones, and the chosen steps, which
        # agree with the smallest ones, reach across it from afar.
        quiet = finite & ~loud & (np.abs(levels.d) <= limit)
        loud_below = below & loud
        if loud_below.any() and quiet.any():
            smallest_loud = float(levels.hs[loud_below].min())
            under = quiet & (levels.hs < smallest_loud)
            if under.any() and SINGULAR_BLOWUP * float(limit[under].min()) < float(
                np.abs(levels.d[loud_below]).max()
            ):
                return False
    return int(np.sum(loud_below)) >= 2


class _LevelScores:
    """One refinement's levels: per level the central difference ``d``, the jump ``J``,
    the modelled rounding noise and the step (nan, nan, 0, 1 where a level was not
    evaluated); and the buffers of outputs at x ± h not yet scored.

    The forward calls only copy their outputs into rows; the arithmetic on them
    (:meth:`Evaluator._score_levels`) runs once for all levels when their outputs are
    small (profiled: per level, ~20 NumPy calls on a small output cost more than its
    two forward calls), and after each level when they are large (then the calls' cost
    is nothing, and all levels at once would hold several arrays of n outputs).
    """

    def __init__(self, n: int, shape: tuple[int, ...]) -> None:
        self.shape = shape
        self.batch = n if n * math.prod(shape) <= _BATCHED_LEVELS_MAX_SIZE else 1
        self.plus = np.empty((self.batch, *shape))
        self.minus = np.empty((self.batch, *shape))
        self.pending: list[int] = []  # levels whose outputs are in the first rows
        self.d = np.full(n, np.nan)
        self.jump = np.full(n, np.nan)
        self.noise = np.zeros(n)
        self.hs = np.ones(n)
        #: Each level's resolution where ``s`` moves in quanta (:meth:`quantize_noise`):
        #: part of the error estimate, and of the noise that a kink's J stands out of
        #: (not of what a jump of s, D·h, stands out of: see :func:`_is_kink`).
        self.floor = np.zeros(n)
        #: Each level's step as a power of LEVEL_RATIO times the base step.
        self.powers = np.arange(n) + LOWEST_LEVEL
        #: Levels at which no output moved at all (the step was absorbed somewhere).
        self.still = np.zeros(n, dtype=bool)
        #: Whether the levels that stood still did so because ``s`` is flat there, not
        #: because it moves in quanta of rounding: the levels that moved moved by more
        #: than rounding could (see :meth:`quantize_noise`).
        self.flat = False
        #: The size of the intermediates a step of the moved element (or direction)
        #: may have been absorbed in, where no output moved: ``max(|x_j|, 1)``. The
        #: element itself is one (35 + 1e-15 - 35), and 1 is in most formulas (1 + δ,
        #: exp near 0); the steps are relative to it, so the noise it gives at a still
        #: level is eps**(2/3)·<|v|, 1> / 2 over the level's multiplier, at every scale.
        self.magnitude = 1.0
        #: Whether the modelled noise is a bound of the outputs' rounding, not a scale
        #: of it (:attr:`Evaluator.in_inner`): a pair's own error is then read from
        #: below only (see :func:`_pair_errors`).
        self.tight = False
        #: The rounding noise of every level where the forward is linear in the moved
        #: element (a backward in its upstream gradient: :meth:`Evaluator.linear_noise`).
        self.linear_noise = 0.0
        #: Per output, the rounding size measured around the largest step's points
        #: (:meth:`Evaluator._step_point_sizes`), where it was.
        self.point_sizes: np.ndarray | None = None
        #: Where ``s`` was a line at the smallest levels, the move by which a larger
        #: step first left it, within rounding (see :meth:`Evaluator._probe_line`).
        self.line_quantum = 0.0
        #: Per output (flat): the smallest step at which it stood still, the largest at
        #: which it moved, and the least it moved by there (see :meth:`note_outputs`).
        #: Each level's difference's share of the outputs' own precision, where they
        #: move in quanta far coarser than their rounding (see :meth:`Evaluator._score_levels`).
        self.precision = np.zeros(n)
        self.still_step = np.full(math.prod(shape), np.inf)
        self.moved_step = np.zeros(math.prod(shape))
        self.least_move = np.full(math.prod(shape), np.inf)

    def note_outputs(
        self, touched: np.ndarray, changes: tuple[np.ndarray, np.ndarray], hs: np.ndarray
    ) -> None:
        """Keep, per output, where it stood still and where it moved (``touched``, one
        row per level of steps ``hs``), and its least move (the larger of its changes
        up and down, ``changes``) at a level where it moved."""
        rows = len(hs)
        touched = touched.reshape(rows, -1)
        if rows == 1:  # (a large output's level: no array of its size made here)
            self._note_one(touched[0], changes, float(hs[0]))
            return
        step = np.asarray(hs, dtype=np.float64)[:, None]
        with np.errstate(invalid="ignore"):
            up, down = (np.abs(c.reshape(rows, -1)) for c in changes)
            move = np.where(touched, np.fmax(up, down), np.inf)
        np.minimum(
            self.still_step, np.where(touched, np.inf, step).min(axis=0), out=self.still_step
        )
        np.maximum(self.moved_step, np.where(touched, step, 0.0).max(axis=0), out=self.moved_step)
        np.fmin(self.least_move, move.min(axis=0), out=self.least_move)

    def _note_one(
        self, touched: np.ndarray, changes: tuple[np.ndarray, np.ndarray], step: float
    ) -> None:
        """:meth:`note_outputs` of one level, in place: ``changes`` (its own arrays,
        which this changes) become the moves."""
        up, down = (c.reshape(-1) for c in changes)
        with np.errstate(invalid="ignore"):
            np.abs(up, out=up)
            np.fmax(up, np.abs(down, out=down), out=up)
        still = ~touched
        np.minimum(self.still_step, step, out=self.still_step, where=still)
        # (moved_step is 0 or a step, never negative: as the maximum with 0 elsewhere)
        np.maximum(self.moved_step, step, out=self.moved_step, where=touched)
        # An output that moved by nan keeps its least move, as np.fmin keeps it.
        np.fmin(self.least_move, up, out=self.least_move, where=touched)

    def quantize_outputs(
        self,
        absv: np.ndarray,
        known: np.ndarray | None,
        ulps: np.ndarray,
        cap: float,
        seeded: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """:meth:`quantize_noise` output by output: an output that stood still at some
        step and moved at a larger one depends on the element, and moves in quanta of
        its intermediates (at order 2, a cross-entropy's backward at logits [30, 0, -1]
        is softmax - onehot, whose first output p0 - 1 = -1.3e-13 rounds at the ulps of
        p0, 1e-16: it stands still at the smaller steps while the other outputs, of the
        same size, move smoothly, so no level stands still as a whole). At every level
        it resolves the element's effect on it only to about its least move (its
        quantum) over 2h: that, times |v| of it, over those outputs, is a floor of each
        level's resolution, as a level's quantum is.

        An output that did not move at any level here may still depend on the element,
        below its quantum (p0 - 1 and the smallest logit: its effect, 1e-29 per step,
        never shows): where another element's refinement at this point showed that
        output moving in quanta far coarser than its own rounding (``known``, against
        ``ulps``, eps of each output: intermediates far larger than the output, which is
        what a cancellation is), that quantum counts too. (Outputs of their own
        rounding's quanta are left out: an elementwise op's other outputs, which do not
        depend on the element, would blunt every element by theirs.)

        A least move above ``cap`` is no quantum of rounding but the function's own
        (a clip's bound that a large step crosses): such an output is left out.
        ``seeded``: the quanta the point's measured rounding shows (see
        :meth:`Evaluator._seed_quanta`), for the outputs none was seen of.

        Returns ``known`` with the quanta this refinement showed."""
        quantized = (self.still_step < self.moved_step) & (self.least_move <= cap)
        share = float(np.vdot(absv[quantized], self.least_move[quantized]))
        floor_known = known
        if seeded is not None:
            floor_known = seeded if known is None else np.where(known > 0, known, seeded)
        if floor_known is not None:
            unmoved = (self.moved_step == 0) & (floor_known > OUTPUT_ROUNDING_EPS * ulps)
            share += float(np.vdot(absv[unmoved], floor_known[unmoved]))
        if share > 0:
            done = np.isfinite(self.d) & np.isfinite(self.jump)
            self.floor = np.maximum(self.floor, np.where(done, share / (2 * self.hs), 0.0))
        if not quantized.any():
            return known
        if known is None:
            known = np.zeros(self.least_move.shape)
        seen = np.where(quantized, self.least_move, 0.0)
        return np.where((known > 0) & (seen > 0), np.minimum(known, seen), known + seen)

    def quantize_noise(self, known: float | None = None, cap: float = math.inf) -> float | None:
        """Where some level's outputs did not move at all and a level of a larger step
        did, ``s`` moves in quanta (its forward's intermediates round far coarser than
        its outputs: a cross-entropy at a logit of 30 is log(1 + 1e-13), which moves
        only when the sum crosses an ulp of 1), and no level resolves a change below
        the smallest one seen: each level's noise is at least that quantum over 2h.
        Where the forward runs in a wider dtype its rounding measure shows this too;
        this needs no such dtype (torch and JAX targets in float64).

        A least move above ``cap`` (the most that the rounding of the outputs ``s``
        sums may move it by), where the one-sided quotients of the largest step that
        moved differ by at least their mean (|J| >= |D|), is no quantum of rounding but
        the function's own: s stood still at the smaller steps because it does not
        depend on the element there, and the larger ones reach where it does
        (maximum(x, y) with the element the smaller of two inputs 1e-6 apart: still up
        to steps of 5e-7, moving by 0.1 at 2e-6, on one side only). Such levels floor
        nothing; the levels that stood still are evidence (:attr:`flat`). Where both
        sides move alike, s is smooth at those steps and the smaller ones were absorbed
        in an intermediate whose rounding nothing measured ((x + 1e6) - 1e6 at 0, from
        a forward no wider dtype computes): the quantum floors the levels, as before.

        Where no level moved at all, the quantum ``known`` from another element of the
        same point (the outputs' quanta are the point's) applies. Returns the quantum
        found here, or None."""
        done = np.isfinite(self.d) & np.isfinite(self.jump)
        still, moving = done & self.still, done & ~self.still
        quantum = None
        self.flat = False
        if still.any() and moving.any() and self.hs[still].min() < self.hs[moving].max():
            with np.errstate(all="ignore"):
                # s(x ± h) - s(x) = ±h·D + h·J/2
                up = self.hs * (self.d + self.jump / 2)
                down = self.hs * (self.jump / 2 - self.d)
                change = np.maximum(np.abs(up), np.abs(down))
            quantum = float(change[moving].min())
            top = int(np.flatnonzero(moving)[np.argmax(self.hs[moving])])
            # (one side of the largest moving step moves by far more than the other)
            lopsided = abs(self.jump[top]) >= abs(self.d[top])
            self.flat = lopsided and not quantum <= cap
            if self.flat:
                return None
            self.floor = np.where(done, quantum / (2 * self.hs), 0.0)
        elif known is not None and still.any() and not moving.any():
            self.floor = np.where(done, known / (2 * self.hs), 0.0)
        return quantum

    def below(self, more: int) -> _LevelScores:
        """These levels, scored, with ``more`` levels of smaller steps before them,
        not yet run (no level may be pending)."""
        new = _LevelScores(len(self.d) + more, self.shape)
        for name in ("d", "jump", "noise", "hs", "still"):
            getattr(new, name)[more:] = getattr(self, name)
        new.floor[more:] = self.floor
        new.precision[more:] = self.precision
        new.magnitude = self.magnitude
        new.tight = self.tight
        new.linear_noise = self.linear_noise
        new.point_sizes = self.point_sizes
        new.line_quantum = self.line_quantum
        new.flat = self.flat
        new.still_step, new.moved_step, new.least_move = (
            self.still_step,
            self.moved_step,
            self.least_move,
        )
        new.powers = np.concatenate([self.powers[0] - np.arange(more, 0, -1), self.powers])
        return new


@dataclass
class _Finite:
    """The levels of one refinement where both D and J are finite, smallest step first:
    their level numbers ``k``, central differences ``D``, jumps ``J``, steps ``H`` and
    modelled noise ``N``. Plain Python floats: a handful of values, where NumPy's
    per-call cost would dominate."""

    k: list[int]
    D: list[float]
    J: list[float]
    H: list[float]
    N: list[float]
    #: No output moved at the level: it says the derivative is below what the outputs
    #: resolve, unless an intermediate absorbed the step ((x + 1e6) - 1e6 at h < 1e-10).
    still: list[bool]
    #: The level's resolution where s moves in quanta (see _LevelScores.quantize_noise).
    floor: list[float]
    #: The levels that stood still did so because s is flat there (see _LevelScores.flat).
    flat: bool = False
    #: The noise N bounds the rounding (see _LevelScores.tight).
    tight: bool = False


def _finite_levels(levels: _LevelScores) -> _Finite:
    d, jump, hs, noise = (
        levels.d.tolist(),
        levels.jump.tolist(),
        levels.hs.tolist(),
        levels.noise.tolist(),
    )
    isfinite = math.isfinite
    ok = [k for k in range(len(d)) if isfinite(d[k]) and isfinite(jump[k])]
    still = levels.still.tolist()
    return _Finite(
        ok,
        [d[k] for k in ok],
        [jump[k] for k in ok],
        [hs[k] for k in ok],
        [noise[k] for k in ok],
        [still[k] for k in ok],
        [float(levels.floor[k]) for k in ok],
        levels.flat,
        levels.tight,
    )


def _level_noise(f: _Finite, growth: float = TRUNCATION_GROWTH) -> list[float]:
    """The rounding noise of each level's D: the modelled N, or the noise measured from
    the smallest levels where that is larger.

    The second difference J·h is s''·h² plus noise; the smooth part grows
    :data:`TRUNCATION_GROWTH` × per level, so what does not is noise. This catches
    noise the output's size does not show, e.g. (x + 1e6) - 1e6 rounding at 1e6's ulp.
    Likewise D(h) - D(4h) is c·h² for smooth s; its part that does not grow
    :data:`TRUNCATION_GROWTH` × per level, times h, measures noise that rounds x ± h
    symmetrically (J = 0). Noise so measured is about the same at each of the
    smallest windows; the median of theirs is taken, because a window where the steps
    leave the h² regime (they reach the scale the function varies on: log|x| near 0)
    shows truncation there that is no noise at all.
    """
    D, J, H = f.D, f.J, f.H
    n = len(D)
    sigmas = []
    for a in range(min(NOISE_LEVELS, n - 1)):
        sigma = abs(J[a] * H[a] - J[a + 1] * H[a + 1] / TRUNCATION_GROWTH)
        if a + 2 < n:
            dd0, dd1 = D[a] - D[a + 1], D[a + 1] - D[a + 2]
            sigma = max(sigma, abs(dd0 - dd1 / growth) * H[a])
        sigmas.append(sigma)
    sigma = sorted(sigmas)[(len(sigmas) - 1) // 2] if sigmas else 0.0
    return [max(f.N[a], sigma / H[a], f.floor[a]) for a in range(n)]


def _richardson(D: list[float], pairs: list[int], growth: float = TRUNCATION_GROWTH) -> list[float]:
    """``(16 D(h) - D(4h)) / 15`` for each pair of levels ``a``, ``a + 1``: cancels the
    h² term of the central difference (with ``growth`` ρ, ``(ρ D(h) - D(4h)) / (ρ - 1)``
    cancels a term that grows ρ× per level)."""
    gain = growth - 1
    return [D[a] + (D[a] - D[a + 1]) / gain for a in pairs]


def _convergence_ratio(f: _Finite, noise: list[float]) -> float | None:
    """The ratio ρ by which the central differences' changes grow per level, where
    the smallest :data:`ORDER_LEVELS` changes of neighbouring levels each stand far
    out of their noise, keep their sign and grow by one ratio in :data:`ORDER_RANGE`
    (within :data:`ORDER_STEADINESS`): D(h) = s' + c·h**p, p = log_4 ρ. None where
    they do not: the usual h² extrapolation, or no convergence, says it."""
    D, k = f.D, f.k
    for a in range(len(D) - ORDER_LEVELS):
        if k[a + ORDER_LEVELS] != k[a] + ORDER_LEVELS:
            continue
        changes = [D[b + 1] - D[b] for b in range(a, a + ORDER_LEVELS)]
        if not all(
            abs(c) > KINK_NOISE_MARGIN * (noise[b] + noise[b + 1])
            for b, c in zip(range(a, a + ORDER_LEVELS), changes)
        ):
            continue
        ratios = [changes[q + 1] / changes[q] for q in range(ORDER_LEVELS - 1)]
        if not all(r > 0 for r in ratios):
            return None
        if max(ratios) > ORDER_STEADINESS * min(ratios):
            return None
        rho = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        return rho if ORDER_RANGE[0] < rho < ORDER_RANGE[1] else None
    return None


def _pair_errors(
    f: _Finite, pairs: list[int], rich: list[float], noise: list[float]
) -> list[float]:
    """The error estimate of each Richardson pair: how far it lies from its neighbour
    pairs (the larger gap), or for a lone pair its own correction, plus the noise of
    its smaller step; and at least how far it lies outside the error bars of every
    pair of smaller steps.

    Truncation error grows with the step: where the estimates of smaller steps agree
    among themselves (their bars are small) and a larger step's estimate lies far
    from them, the larger step is not yet where the function looks smooth, however
    well it agrees with its own neighbours (log|x| at 3.5e-12: the smallest steps give
    2.83e11, each larger one 16 times less than the last, 1e-5 at the top, and those
    agree with each other to 1e-5).

    Where the noise N bounds the rounding (``f.tight``: a forward computing in float16
    inside, whose outputs round once), a pair's error is its gap to the pair of smaller
    steps only: that gap is its truncation where the differences follow the h² pattern
    up to it, and a gap to a larger pair is that pair's error, not its own. A larger
    pair is trusted only as far as it is consistent with the smaller ones, through
    their bars: tanh(x.half()) at 0.97 gives pairs of steps 0.5/2 and 2/8 that agree
    by chance where tanh saturates, 5% from the derivative that steps 1/32 to 1/2
    agree on, and the gap to them had made those smaller pairs' own bars as wide."""
    if len(rich) == 1:
        a = pairs[0]
        errs = [abs(f.D[a] - f.D[a + 1]) / (TRUNCATION_GROWTH - 1)]
    elif f.tight:
        diffs = [abs(rich[q + 1] - rich[q]) for q in range(len(rich) - 1)]
        errs = [diffs[0], *diffs]
    else:
        diffs = [abs(rich[q + 1] - rich[q]) for q in range(len(rich) - 1)]
        errs = [diffs[0], *(max(diffs[q - 1], diffs[q]) for q in range(1, len(diffs))), diffs[-1]]
    errs = [e + noise[a] for e, a in zip(errs, pairs)]
    # Outside the bars of the smaller steps (those where some output moved: a step
    # absorbed in an intermediate says nothing, unless s is known to be flat there, as
    # maximum(x, y) is in x where x < y), smallest steps first.
    moved = [f.flat or not (f.still[a] or f.still[a + 1]) for a in pairs]
    for q in range(1, len(rich)):
        bounds = [abs(rich[q] - rich[p]) - errs[p] for p in range(q) if moved[p]]
        if bounds:
            errs[q] = max(errs[q], *bounds)
    return errs


def _trend(values: list[float]) -> str | None:
    """:data:`STEADY` when ``values`` (one per neighbouring level) keep their sign and
    size (each next within :data:`KINK_STEADINESS` × of the last), :data:`GROWING`
    when they keep their sign and grow like h (LEVEL_RATIO × per level, within the
    same factor), :data:`SHRINKING` when they keep their sign and shrink like 1/h;
    else None (sign changes, a change of regime)."""
    ratios = [values[q + 1] / values[q] for q in range(len(values) - 1)]
    if all(1 / KINK_STEADINESS < r < KINK_STEADINESS for r in ratios):
        return STEADY
    low, high = LEVEL_RATIO / KINK_STEADINESS, LEVEL_RATIO * KINK_STEADINESS
    if all(low < r < high for r in ratios):
        return GROWING
    if all(1 / high < r < 1 / low for r in ratios):
        return SHRINKING
    return None


def _kink_signature(
    signal: list[float],
    seen: list[float],
    f: _Finite,
    jump_threshold: float,
    upto: int | None = None,
    noise: list[float] | None = None,
    unit: list[float] | None = None,
    nearby: list[int] | None = None,
) -> str | None:
    """Going up from the smallest step, the first windows of :data:`KINK_WINDOW`
    neighbouring levels where ``signal`` stands out of the modelled rounding noise
    (``noise``, by default ``f.N``; by :data:`KINK_NOISE_MARGIN` ×) decide: ``seen``
    (the signal or a multiple of it) steady there is a kink (if the signal is larger
    than ``jump_threshold``, what matters); growing like h is a smooth function (no
    kink); anything else, and the next window decides. Shrinking like 1/h far above
    the noise is a singularity within the steps' reach (a pole, a log, a jump of s:
    every step straddles it), a kink too, unless smaller steps already showed a
    smooth function: a window where the signal is within the noise while D is well
    above it (the one-sided quotients agree there; arccot at -6e-8, whose larger steps
    straddle its jump at 0).

    Nor is a window a kink where a level of smaller steps bounds ``seen`` (``signal``
    times ``unit``, by default 1) to far below the window's: a kink at x shows at every
    step, so one that smaller steps do not see lies between those steps and the
    window's (maximum(x, y) at x 1e-10 from y, or a clip's bound as near: s stands
    still at the smaller steps, J = 0, and is steady from there up): no larger window
    decides either. The window's first level goes into ``nearby``: it and every larger
    step straddle that kink, and their quotients are no derivative at x.

    With ``upto``, no window starting above that level decides: the Richardson
    values converged there, and larger steps only straddle the function's scale
    (tanh(3x) in float16, whose smallest steps are noise and whose steps of 2 and 8
    see it saturate: J shrinks like 1/h there).

    Returns the trend that marks the kink (:data:`STEADY` or :data:`SHRINKING`), or
    None."""
    k, span = f.k, KINK_WINDOW - 1
    limit = [KINK_NOISE_MARGIN * n for n in (f.N if noise is None else noise)]
    above = [abs(signal[b]) > limit[b] for b in range(len(signal))]
    measured = [abs(f.D[b]) > limit[b] for b in range(len(signal))]
    smooth_below = False
    # The least bound on |seen| a quiet level below the window gives (its signal within
    # the noise), inf until one shows.
    quiet = math.inf
    for a in range(len(signal) - span):
        end = a + KINK_WINDOW
        if a > 0 and not above[a - 1]:
            quiet = min(quiet, limit[a - 1] * (1.0 if unit is None else unit[a - 1]))
        if upto is not None and a > upto:
            break
        if k[a + span] != k[a] + span:
            continue
        if not any(above[a:end]) and all(measured[a:end]):
            smooth_below = True
        if not all(above[a:end]):
            continue
        trend = _trend(seen[a:end])
        if KINK_NOISE_MARGIN * quiet < min(abs(seen[b]) for b in range(a, end)):
            # The smaller steps do not see it: it lies between theirs and these, and
            # every larger step straddles it too (J shrinking like 1/h above a clip's
            # bound at 7.7e-10) and decides nothing about x, nor gives its derivative.
            if nearby is not None:
                nearby.append(a)
            return None
        if trend == STEADY or (trend == SHRINKING and not smooth_below):
            large = all(abs(signal[b]) > jump_threshold for b in range(a, end))
            return trend if large else None
        if trend == GROWING:
            return None
    return None


def _is_kink(
    f: _Finite, jump_threshold: float, upto: int | None = None, nearby: list[int] | None = None
) -> str | None:
    """Whether ``s`` is not differentiable at x. A kink is a property of the limit
    h -> 0, so its signature is looked for at the smallest steps that show anything
    (:func:`_kink_signature`), never at larger ones alone:

    * a jump of the one-sided derivatives (``abs`` at 0, ``relu``, ``max`` with a tie,
      ``clip`` at a bound): J holds still in sign and size across levels, where a
      smooth s gives J = s''·h, growing 4× per level, and rounding noise J ∝ 1/h with
      random sign;
    * a jump of ``s`` itself within the steps' reach (a step function, arccot at 0):
      every straddling D(h) is about jump / 2h, so D·h holds still across levels, where
      a smooth s keeps D still and D·h grows 4× per level;
    * a singularity within every step's reach (log|x| at 1e-307, atan2 at 1e-13 from
      the origin): J, or D·h, shrinks like 1/h far above the noise.

    Larger steps say nothing about x itself: they may straddle a kink nearby or
    sample an oscillation (sin at 1e5: D·h holds still by chance over steps of 8, 32
    and 128), and a kink found there would call a smooth function "not
    differentiable" and hide a wrong gradient. The modelled rounding noise N, not the
    measured one (which a jump inflates), says what stands out.

    Returns :data:`KINK` for the first (finite one-sided derivatives),
    :data:`UNBOUNDED` for the others (no finite derivative), None where smooth. Where
    the smaller steps place a kink nearby but not at x, the first level that straddles
    it goes into ``nearby``.
    """
    D, H = f.D, f.H
    # Where s moves in quanta (see _LevelScores.quantize_noise), s(x) itself lies
    # anywhere within one: J·h = s(x+h) + s(x-h) - 2 s(x) of a few quanta is rounding,
    # which shrinks like 1/h as exactly as a pole does (a cross-entropy at a logit of
    # 30, whose log(1 + 1e-13) moves by ulps of 1). J must stand out of the quantum too.
    # (D·h of one quantum stays a jump of s: round(x) just below a half, whose
    # smaller steps stand still, moves by its jump, the only quantum it shows.)
    quantized = [max(n, q) for n, q in zip(f.N, f.floor)]
    jump = _kink_signature(f.J, f.J, f, jump_threshold, upto, quantized, nearby=nearby)
    if jump is not None:
        return KINK if jump == STEADY else UNBOUNDED
    seen = [D[b] * H[b] for b in range(len(D))]
    if _kink_signature(D, seen, f, jump_threshold, upto, unit=H, nearby=nearby):
        return UNBOUNDED
    return None


def _combine(levels: _LevelScores, eps: float, jump_threshold: float, base_index: int) -> Estimate:
    """Value, error, kink flag and second derivative from the central differences of
    every level: the Richardson pair whose value agrees best with its neighbours."""
    f = _finite_levels(levels)
    D, J, H = f.D, f.J, f.H
    n = len(D)
    if n < 2:
        return Estimate((D[0] if n else float("nan")), float("inf"), True, 0.0, unbounded=True)
    pairs = [a for a in range(n - 1) if f.k[a + 1] == f.k[a] + 1]  # neighbour levels
    if not pairs:
        # s'' = J / h at the step nearest the base step.
        near = min(range(n), key=lambda a: abs(f.k[a] - base_index))
        return Estimate(D[0], float("inf"), True, J[near] / H[near], unbounded=True)
    rich = _richardson(D, pairs)
    noise = _level_noise(f)
    value, error, best = _best_pair(f, pairs, rich, noise, eps)
    # Where no two neighbouring estimates agree, the steps never reached the scale the
    # function varies on (log|x| at x = 1e-15: every D is ~x/h², 16 times the next):
    # not differentiable *here*, numerically, which is never a failure.
    converged = _converged(rich, [f.N[a] for a in pairs])
    nearby: list[int] = []
    found = _is_kink(
        f, jump_threshold, pairs[best] if converged and len(rich) > 1 else None, nearby
    )
    if found is None and nearby:
        # A kink between the smaller steps and the larger ones, not at x: only the pairs
        # below it estimate the derivative at x (grid_sampler_3d's trilinear cells, one
        # edge 8.5e-7 along a direction: D -20.3 up to steps of 4.8e-7, -10.5 at 1.2e-4,
        # where the pairs agreed best). Where no pair lies below, nothing here measures
        # the derivative at x: not differentiable, numerically, as before.
        # Steps that stood still (an intermediate absorbed them: (x + 1e6) - 1e6 at
        # h < 1e-10) show no kink and no derivative, unless s is known to be flat there:
        # where every step below stood still, every pair stays (as _pair_errors reads them).
        below = [a for a in pairs if a + 1 < min(nearby)]
        clean = [a for a in below if f.flat or not (f.still[a] or f.still[a + 1])]
        if clean:
            pairs = clean
            rich = _richardson(D, pairs)
            value, error, best = _best_pair(f, pairs, rich, noise, eps)
        elif not below or not _converged(
            _richardson(D, [a for a in pairs if a >= min(nearby)]),
            [f.N[a] for a in pairs if a >= min(nearby)],
        ):
            # (pairs below that all stood still measure nothing either, where the ones
            # above do not agree: atan2 at 1.9e-22 from its branch cut, whose steps
            # below it move s by less than its rounding, and whose larger ones straddle
            # the cut's jump of 2*pi)
            found = KINK
    low_order = False
    if not converged:
        found = UNBOUNDED
        rho = _convergence_ratio(f, f.N)
        if rho is not None:
            low_order = True
            # The usual extrapolation assumed h²; this one converges like h**p.
            rich = _richardson(D, pairs, rho)
            if _converged(rich, [f.N[a] for a in pairs]):
                noise = _level_noise(f, rho)
                value, error, best = _best_pair(f, pairs, rich, noise, eps)
                found = _is_kink(f, jump_threshold)
                if _quotients_differ(f, pairs[best]):
                    found = UNBOUNDED
    return Estimate(
        value,
        error,
        found is not None,
        J[pairs[best]] / H[pairs[best]],
        noise=noise[pairs[best]],
        unbounded=found == UNBOUNDED,
        step=H[pairs[best]],
        low_order=low_order,
    )


def _quotients_differ(f: _Finite, a: int) -> bool:
    """Whether the one-sided quotients of a low-order extrapolation's pair ``a``,
    ``a + 1`` differ, by J, more than the steps explain: at these steps the derivative
    is known no better (x·|x| at 1e-16, every step straddling 0: D ~ h, J = 4x,
    steady). Where J stands out of the noise but shrinks with the step like h (a C1
    function whose second derivative jumps at x: relu(x)² or a smoothstep clamp at 0,
    s = h² on one side and 0 on the other, J = h), the quotients meet as h -> 0: the
    function is differentiable there, and the extrapolation gives its derivative, as
    where J = 0 (x·|x| at 0)."""
    J = f.J
    if max(abs(J[a]), abs(J[a + 1])) <= KINK_NOISE_MARGIN * (f.N[a] + f.N[a + 1]):
        return False
    window = [b for b in range(a, min(a + KINK_WINDOW, len(J))) if f.k[b] == f.k[a] + b - a]
    if len(window) < 2:
        return True
    return _trend([J[b] for b in window]) != GROWING


def _best_pair(
    f: _Finite, pairs: list[int], rich: list[float], noise: list[float], eps: float
) -> tuple[float, float, int]:
    """(value, error, index into ``pairs``) of the Richardson pair with the smallest
    error estimate (:func:`_pair_errors`)."""
    errs = _pair_errors(f, pairs, rich, noise)
    best = min(range(len(errs)), key=errs.__getitem__)
    value = rich[best]
    curvature = f.J[pairs[best]] / f.H[pairs[best]]
    # x ± h rounds: the stencil's centre may sit up to eps·h off x (all of x, when
    # x is below h's ulp), which moves the estimate by s''·(that).
    shift = 2 * eps * f.H[pairs[best]] * abs(curvature)
    return value, max(errs[best] + shift, VALUE_ROUNDING_EPS * eps * abs(value)), best


def _converged(rich: list[float], noise: list[float]) -> bool:
    """Some two neighbouring Richardson values agree to within half their size (or
    their modelled rounding noise: the measured one is inflated by the very behaviour
    this looks for): the levels reached the scale where the function is smooth."""
    if len(rich) < 2:
        return True  # one pair: its own correction is the error estimate
    if any(
        abs(rich[q + 1] - rich[q])
        <= CONVERGED_FRACTION * max(abs(rich[q]), abs(rich[q + 1])) + noise[q] + noise[q + 1]
        for q in range(len(rich) - 1)
    ):
        return True
    # Or their changes shrink toward the smaller steps, LEVEL_RATIO x or more per level,
    # with one sign: a sequence converging to a limit of 0, which no relative agreement
    # shows (a smoothstep clamp at 0: D = 1.5h - h², whose low-order extrapolation is
    # 4h², 16x smaller each level down; a pole's or noise's grow toward small steps).
    changes = [rich[q + 1] - rich[q] for q in range(len(rich) - 1)]
    return any(
        changes[q] * changes[q + 1] > 0
        and changes[q + 1] * changes[q + 2] > 0
        and LEVEL_RATIO * abs(changes[q]) <= abs(changes[q + 1])
        and LEVEL_RATIO * abs(changes[q + 1]) <= abs(changes[q + 2])
        for q in range(len(changes) - 2)
    )
