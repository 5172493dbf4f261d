"""The finite differences' levels: the steps, and what a ladder of central differences
at steps ``h·4^k`` says about a derivative.

:func:`step_sizes` gives each element's base step and :func:`_levels` the ladder
around it; :class:`LevelScores` holds the differences at every level (and the
rounding quanta of the outputs they moved); from them :func:`_combine` makes an
:class:`Estimate`: Richardson pairs (:func:`_richardson`), their noise and error
(:func:`_level_noise`, :func:`_pair_errors`), the order of convergence where it is
not h² (:func:`_convergence_ratio`), and the kink test (:func:`_is_kink`). The module
docstring of :mod:`gradcheck.checking.numerical` says why each number is what it is;
the numbers are in :mod:`gradcheck.checking.thresholds`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gradcheck.checking.level_scores import LevelScores
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
    SATURATION_GROWTH,
    SATURATION_KEPT,
    SATURATION_LEVELS,
    SATURATION_NOISE,
    SINGULAR_BLOWUP,
    SMALL_X_LEVELS,
    SMALL_X_RESOLVED,
    TRUNCATION_GROWTH,
    VALUE_ROUNDING_EPS,
)

#: What :func:`_trend` sees in a signal over neighbouring levels.
STEADY, GROWING, SHRINKING = "steady", "growing", "shrinking"
#: What :func:`_is_kink` finds: two finite one-sided derivatives that differ, or no
#: finite derivative at all.
KINK, UNBOUNDED = "kink", "unbounded"


def noise_dtype(eval_dtype: np.dtype, input_rounding: np.dtype | None) -> np.dtype:
    """The dtype whose eps a forward's rounding is modelled in: ``input_rounding`` (the
    dtype it rounds its inputs to inside) where that is narrower than ``eval_dtype``
    (the dtype of the steps), else ``eval_dtype``. ``1 - cos(x.half())`` and ``1 - z·z``
    in complex32 with their subtractions in float32 have outputs that are float32
    numbers (or float16 numbers by chance), but they carry float16's rounding of
    cos(x) and z·z, 8192 float32 ulps: modelled at float32's eps, the levels' noise was
    that much too fine (numeric 0.12506 against 0.12512 at x = -42.3, a false alarm)."""
    if input_rounding is not None and input_rounding.itemsize < eval_dtype.itemsize:
        return input_rounding
    return eval_dtype


def output_ulps(outputs: np.ndarray, eval_dtype: np.dtype, narrow: np.dtype) -> np.ndarray:
    """Per output, its ulp in ``eval_dtype``, or, where the forward rounds through a
    narrower dtype ``narrow`` (:func:`noise_dtype`), in that one, at least that of an
    intermediate of size 1 (``cos(x.half())`` beside ``1 - cos`` near 0), and beyond
    its range ``eval_dtype``'s times the ratio of their eps."""
    with np.errstate(all="ignore"):
        ulps = np.spacing(outputs.astype(eval_dtype)).astype(np.float64)
        if narrow == eval_dtype:
            return ulps
        ratio = float(np.finfo(narrow).eps) / float(np.finfo(eval_dtype).eps)
        wide = np.spacing(np.fmax(outputs, 1.0).astype(narrow)).astype(np.float64)
        return np.where(np.isfinite(wide), wide, ratio * ulps)


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
    #: Where not ``kink`` and the error is above the jump threshold: whether J grows
    #: like h at the smallest levels and holds still above (:func:`_kink_above`), a kink
    #: between those steps (a cone's smoothed tip nearby), which smaller steps resolve.
    kink_above: Any = False


def unresolved(est: Estimate, jump_threshold: float, scale: float) -> bool:
    """Whether an element's refinement ``est`` (of an element of size ``scale``, |x|)
    leaves what the levels below its steps may decide: a kink, a low order, an error
    above ``jump_threshold``, or, for 0 < |x| < 1, steps longer than |x| itself and an
    error above :data:`SMALL_X_RESOLVED` of the value. The jump threshold is of the
    first pass's gradient, which steps that long may blow up: the cube (2**40·x)**3 at
    x = 8e-13, whose base steps of 5e-7 see outputs of 1e17, resolved its derivative to
    1e-3 only, within that threshold, and a backward 1e-3 off passed (at the relative
    step eps**(1/3)·|x| the outputs are of 1 and resolve it to 1e-11)."""
    if est.kink or est.low_order or not est.error <= jump_threshold:
        return True
    return 0 < scale < 1 and est.step > scale and not est.error <= SMALL_X_RESOLVED * abs(est.value)


def lower_levels_needed(est: Estimate, jump_threshold: float, scale: float, lowest: float) -> bool:
    """Whether the levels below the base ladder, down to the step ``lowest``, may
    resolve what the base ladder's refinement ``est`` (of an element of size ``scale``,
    |x|) leaves (:func:`unresolved`). Not where all it leaves is steps longer than |x|
    and every one of those levels is longer than |x| too (0 < |x| < ``lowest``, beyond
    the levels' reach): they bring no step to the scale of x, which the element's own
    relative step does (``PointProbes.below_small_x_levels``, run next). At the
    library's such elements (var at x = 1e-216 beside elements of 1) their 80 forward
    calls made 243 of 302 resolved estimates unresolved (an error of 9.8e-8 -> 0.069)."""
    if est.kink or est.low_order or not est.error <= jump_threshold:
        return True
    return unresolved(est, jump_threshold, scale) and not 0 < scale < lowest


def _blows_up_below(levels: LevelScores, est: Estimate) -> bool:
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
    #: The level's resolution where s moves in quanta (see LevelScores.quantize_noise).
    floor: list[float]
    #: The levels that stood still did so because s is flat there (see LevelScores.flat).
    flat: bool = False
    #: The noise N bounds the rounding (see LevelScores.tight).
    tight: bool = False
    #: The forward rounds its inputs to a narrower dtype (see LevelScores.absorbed).
    rounded: bool = False


def _finite_levels(levels: LevelScores) -> _Finite:
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
        levels.absorbed > 0,
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
    # Where s moves in quanta (see LevelScores.quantize_noise), s(x) itself lies
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


def _combine(levels: LevelScores, eps: float, jump_threshold: float, base_index: int) -> Estimate:
    """Value, error, kink flag and second derivative from the central differences of
    every level: the Richardson pair whose value agrees best with its neighbours."""
    f = _below_saturation(_finite_levels(levels))
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
    above = found is None and not error <= jump_threshold and _kink_above(f, jump_threshold)
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
        kink_above=above,
    )


def _kink_above(f: _Finite, jump_threshold: float) -> bool:
    """Whether J, going up from the smallest step, first grows like h (s is smooth at x
    at those steps) and then holds still above ``jump_threshold`` (those steps straddle
    a kink, or a tip smoothed below their length, that lies between): the smallest
    steps measure the derivative at x, and only a few levels lie below the kink, whose
    truncation (s varies on the kink's distance) the noise of :func:`_level_noise`
    takes in. eigvalsh of a matrix whose eigenvalues are 1e-6 apart, along the
    diagonal element whose move closes the gap: J of -0.0097, -0.043 at steps 1.2e-7
    and 4.8e-7, then -0.32 .. -0.71 (the cone's tip 1e-6 away, 6e-7 wide); the
    "noise" of 0.46 at the smallest level made the large steps' pairs the best
    (-0.179 against the derivative -0.472, a false alarm)."""
    limit = [KINK_NOISE_MARGIN * max(n, q) for n, q in zip(f.N, f.floor)]
    span, smooth = KINK_WINDOW - 1, False
    for a in range(len(f.J) - span):
        window = range(a, a + KINK_WINDOW)
        if f.k[a + span] != f.k[a] + span or not all(abs(f.J[b]) > limit[b] for b in window):
            continue
        trend = _trend(f.J[a : a + KINK_WINDOW])
        if not smooth and trend != GROWING:
            return False
        smooth = True
        if trend == STEADY:
            return all(abs(f.J[b]) > jump_threshold for b in window)
    return False


def _below_saturation(f: _Finite) -> _Finite:
    """The levels below the first pair of neighbours whose larger step moved ``s`` by
    less than :data:`SATURATION_GROWTH` times what its smaller step moved it (both
    above their noise): there the steps have crossed the scale the function varies
    on, as a bounded function's differences (f(x + h) - f(x - h), at most its range)
    stop growing with h, and the quotients of that pair and of every larger one
    shrink like 1/h towards 0 whatever the derivative: two of them agree by chance,
    and their second differences are no noise of the smaller ones. 1 - cos(x.half())
    at 223 (float16's ulp 0.125 there), differenced with float16's steps 1 to 1024,
    had its pair of steps 256 and 1024 agree near 0 against a derivative of 0.05, a
    mismatch of the right op. For forwards that round their inputs to a narrower
    dtype (float16), whose steps start at that dtype's ulps. Where the first pair
    is already beyond, fewer than two levels are left: nothing is resolved there.

    For every forward, the same where the moves of ``s`` stop growing (as above, at
    any size) at a pair whose second differences J·h, far above their noise, stop
    growing too (a smooth function's grow LEVEL_RATIO**2 x, a kink's LEVEL_RATIO x):
    the steps crossed the function's scale, which its even part shows resolved where
    its odd part (the derivative's) is too small to be: a cosine similarity at
    y = [4.8e-179, 1.19e-7, ...] varies along y0 on the scale of y1, and its steps
    above 1.19e-7 all moved s by the same 1.02e-16 (quotients 1/h, 8.8e-13 at the
    largest step, against a derivative of 8.6e-10 that no step resolves)."""
    for a in range(len(f.D) - 1):
        if f.k[a + 1] != f.k[a] + 1:
            continue
        small, large = abs(f.D[a]) * f.H[a], abs(f.D[a + 1]) * f.H[a + 1]
        above = f.rounded and small > SATURATION_NOISE * f.N[a] * f.H[a]
        if (above or _crossed(f, a)) and large < SATURATION_GROWTH * small:
            # (where the crossed scale leaves one pair or none, no more than one level:
            # nothing is resolved at these steps, and smaller ones decide, as where a
            # pole is nearer than the steps: inv(A) 1e-6 from singular)
            keep = slice(0, a + 1 if above or a + 1 >= SATURATION_KEPT else 1)
            return replace(
                f,
                k=f.k[keep],
                D=f.D[keep],
                J=f.J[keep],
                H=f.H[keep],
                N=f.N[keep],
                still=f.still[keep],
                floor=f.floor[keep],
            )
    return f


def _crossed(f: _Finite, a: int) -> bool:
    """Whether the steps crossed the function's scale at levels ``a`` on (see
    :func:`_below_saturation`): at :data:`SATURATION_LEVELS` neighbouring levels from
    ``a`` up, the second differences J·h, far above their noise at ``a``, and the
    moves D·h, nonzero, each grow by less than :data:`SATURATION_GROWTH` x per level.
    (At one pair alone a sum of terms of both signs may grow so little by chance:
    a direction along many elements, each near a kink of its own.)"""
    top = a + SATURATION_LEVELS - 1
    if top >= len(f.D) or f.k[top] != f.k[a] + SATURATION_LEVELS - 1:
        return False
    bent = [abs(f.J[b]) * f.H[b] for b in range(a, top + 1)]
    moves = [abs(f.D[b]) * f.H[b] for b in range(a, top + 1)]
    if not (bent[0] > SATURATION_NOISE * f.N[a] * f.H[a] and moves[0] > 0):
        return False
    return all(
        bent[b + 1] < SATURATION_GROWTH * bent[b] and moves[b + 1] < SATURATION_GROWTH * moves[b]
        for b in range(SATURATION_LEVELS - 1)
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
