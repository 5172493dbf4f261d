"""Analytic against numeric, for one input: tolerances, element verdicts, kinks.

:func:`estimate_full` estimates every element (finite differences from
:func:`gradcheck.checking.numerical.full_estimate`) and :func:`judge_full` judges them
(full mode; :mod:`gradcheck.checking.longer_steps` may re-estimate some between the
two); :func:`compare_fast` judges random
directional derivatives and bisects to the elements responsible when one disagrees.
Both fill a :class:`Comparison`, which :func:`gradcheck.check` turns into result data.

An element passes when

    |analytic - numeric| <= atol + rtol·|numeric| + c·error_estimate + k·rounding

where the error estimate includes what finite differences cannot resolve there (the
forward's rounding over the step, :mod:`gradcheck.checking.numerical`), and the last
term allows for the analytic gradient's own rounding: ``eps·|x|·|s''|`` (computed at
inputs rounded to the op's dtype) and, in float32 and float16, how far the gradient
moves when the inputs' last bits change (``Comparison.jitter``: a backward in a low
precision is right only to its rounding, which no formula predicts).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from gradcheck.checking.computed_in import narrow_numbers
from gradcheck.checking.numerical import (
    Estimate,
    Evaluator,
    full_estimate,
    refine_elements,
    step_sizes,
)
from gradcheck.checking.result import Element, Failure, InputErrors
from gradcheck.checking.thresholds import (
    BELOW,
    CLEAR_AGREEMENT,
    ERROR_ESTIMATE_FACTOR,
    FAST_MODE_MAX_LOCATED,
    FIRST_JUMP_FRACTION,
    HIGHEST_LEVEL,
    INPUT_ROUNDING_FACTOR,
    KINK_NOISE_MARGIN,
    KINK_STEADINESS,
    LEVEL_RATIO,
    RESETTLE_ROUNDS,
    TIE_PARTIALS_ADD_UP,
    TRUNCATION_GROWTH,
    UPSTREAM_ROUNDING_FACTOR,
    WORST_ELEMENTS,
)
from gradcheck.checking.tolerance import Tolerance
from gradcheck.checking.vocabulary import Kind

__all__ = ["Comparison", "analytic_rounding", "compare_fast", "estimate_full", "judge_full"]
__all__ += ["WORST_ELEMENTS"]

#: Below this mantissa (of frexp, in [0.5, 1)) a number is nearer 2**(e-1) than 2**e in log2.
_SQRT_HALF = float(np.sqrt(0.5))

#: A random direction's elements, in units of the element's scale (see
#: :meth:`_FastMode.directions`): ±2**k·(1 + m/16), k in -2..1, m in 0..7, 64 values.
#: The powers of two ±1/4..±2 set the spread (as the 8 powers of two alone did: a
#: wider one, up to ±3.75, hid an error of 1e-6 in one of 2,000 elements from verify's
#: grouped screen in 2 of 5 runs, against 0 of 5); the four bits of mantissa keep every
#: h·d_j exact in float32 intermediates of a float64 evaluation (its lowest bit
#: 2**-17·2**-6 = 2**-23 of the scale, float32's last place there); 64 values, not 8,
#: make two elements' factors equal (a tie of max that no direction crosses, two equal
#: errors cancelling) once in 64 directions, not once in 8.
_DIRECTION_FACTORS = np.array(
    [
        (-1.0) ** sign * 2.0 ** (k - 2) * (1 + m / 16)
        for m in range(8)
        for k in range(4)
        for sign in range(2)
    ]
)


class Comparison:
    """Analytic against numeric for one input: tolerances, elements, verdicts."""

    def __init__(
        self,
        i: int,
        x: np.ndarray,
        analytic: np.ndarray,
        tol: Tolerance,
        v_max: float,
        jitter: np.ndarray | None = None,
    ):
        self.x = x
        self.v_max = v_max
        #: How far the analytic gradient moves when the inputs' last bits change (its
        #: own rounding, in float32 and float16; None in float64), per element.
        self.jitter = None if jitter is None else np.asarray(jitter, np.float64).reshape(-1)
        info = np.finfo(x.dtype if x.dtype.kind == "f" else np.float64)
        self.eps = float(info.eps)
        self.smallest_normal = float(info.smallest_normal)
        #: The eps the upstream gradient rounds at in the backward: the input's, or
        #: that of the dtype the analytic gradient is numbers of (a float64 op whose
        #: backward computes in float16 rounds ``v`` to float16: tanh(x.half())'s
        #: gradient at 0 is v rounded, 0.640625 against 0.64042).
        narrow = narrow_numbers(np.asarray(analytic)) if self.eps < 1e-10 else None
        self.upstream_eps = self.eps if narrow is None else float(np.finfo(narrow).eps)
        self.i, self.analytic, self.tol = i, analytic, tol
        self.rtol, self.atol = tol.rtol, tol.atol
        #: The judged elements (worst first within each batch judged).
        self.elements: list[Element] = []
        self.kinks: list[tuple[int, ...]] = []
        self.mismatched = 0
        self.below_floor = 0
        self.max_abs = 0.0
        #: The largest relative error of an element (:meth:`relative_errors`).
        self.max_rel = 0.0
        self.max_ratio = 0.0
        self.size = analytic.size
        self.direction_failure: str | None = None
        self.atol_used = tol.atol
        #: Full mode's estimates (numeric, error, kink, curvature, noise), flat.
        self.estimated: tuple[np.ndarray, ...] | None = None
        #: Where a tie's joint direction showed the analytic gradient wrong along it
        #: (see :func:`gradcheck.checking.verdict.ties_not_a_gradient`): the tied
        #: elements (flat), the derivative of ``s`` along them all moved together, and
        #: the analytic gradient's sum over them.
        self.along_tie: tuple[np.ndarray, float, float] | None = None
        #: The estimates this judgement was made by, once stage 3 spent them (see
        #: :func:`gradcheck.checking.verdict.refined_at_own_scale`).
        self.spent: tuple[np.ndarray, ...] | None = None
        #: The flat indices of the elements judged mismatched.
        self.bad: list[int] = []
        #: Where this is the judgement of a float64 run of a float32 or float16
        #: backward (see ``low_precision.convicted_wide``): the low-precision gradient and its
        #: dtype's name, whose values the failure message shows beside the float64 ones.
        self.low: tuple[np.ndarray, str] | None = None
        #: Whether this is the judgement again beside the backward's rounding measured
        #: for it (see :func:`gradcheck.checking.verdict.noise_remeasured`).
        self.remeasured = False
        #: Whether the forward's value at x stands apart from its neighbours' (see
        #: :func:`gradcheck.checking.verdict.forward_apart`): the mismatch is no evidence.
        self.apart = False

    def abs_tol(self, numeric: np.ndarray) -> float:
        """The absolute tolerance for this input, given (an estimate of) its numeric
        gradient: scaled by the gradient's size for the default."""
        if not self.tol.atol_scaled:
            return self.atol
        finite = np.abs(numeric[np.isfinite(numeric)])
        scale = float(finite.max()) if finite.size else 0.0
        # A backward rounds intermediates of the size of the upstream gradient: 1 - t²
        # for tanh near saturation loses all relative precision in float16, though the
        # op is right. A few eps of max|v| absolute is allowed for that. And below the
        # dtype's smallest normal number a gradient loses relative precision (a float16
        # gradient of 1e-8 underflows to 0): no claim is made there.
        #
        # In float64 that allowance is not made: it is not of the gradient's scale (a
        # cube at x = 1e-9 has gradients of 3e-18, and an error of 1e-3 of them would
        # pass), and a float64 backward's own rounding is measured where an element
        # would fail (see ``_Run.rounding_jitter``), which scales with the op.
        return self.atol * scale + self.upstream_allowance() + self.smallest_normal

    def upstream_allowance(self) -> float:
        """The part of the default absolute tolerance that allows for the backward's
        rounding of the upstream gradient (a few eps of max|v| of the dtype it rounds
        in): an allowed error, not a size of the gradient."""
        if self.upstream_eps < np.finfo(np.float32).eps:
            return 0.0
        return UPSTREAM_ROUNDING_FACTOR * self.upstream_eps * self.v_max

    def settled(self, first: np.ndarray) -> np.ndarray:
        a = self.abs_tol(first)
        return np.abs(self.analytic - first) <= a + self.rtol * np.abs(first)

    def jump_threshold(self, first: np.ndarray) -> float:
        finite = np.abs(first[np.isfinite(first)])
        return self.abs_tol(first) + self.rtol * (float(finite.max()) if finite.size else 0.0)

    def record(
        self,
        flat_index: np.ndarray,
        analytic: np.ndarray,
        numeric: np.ndarray,
        error: np.ndarray,
        kink: np.ndarray,
        atol: float,
        extra: np.ndarray | float = 0.0,
        noise: np.ndarray | float = 0.0,
    ) -> None:
        """Judge elements (flat indices into the input) and keep the worst; ``extra``
        (the analytic gradient's rounding) is added to each element's allowed
        difference, and with the error estimate's ``noise`` makes its rounding floor."""
        self.atol_used = atol
        shape = self.analytic.shape
        # (Each NumPy call on a small input costs microseconds, about what a small
        # forward does: broadcasts and masks are made only where they change something.)
        with np.errstate(all="ignore"):
            diff = np.abs(analytic - numeric)
            abs_numeric = np.abs(numeric)
            allowed = atol + self.rtol * abs_numeric + ERROR_ESTIMATE_FACTOR * error + extra
            ratio = np.where(np.isfinite(diff), diff / allowed, np.inf)
            floor = ERROR_ESTIMATE_FACTOR * noise + extra
        floor = np.asarray(
            floor if np.shape(floor) == diff.shape else np.broadcast_to(floor, diff.shape)
        )
        kinked = bool(kink.any())
        smooth = ~kink
        bad = ~(ratio <= 1.0)
        if kinked:
            bad &= smooth
        self.mismatched += int(np.count_nonzero(bad))
        self.bad.extend(int(j) for j in flat_index[bad])
        below = (floor > 0) & (np.maximum(np.abs(analytic), abs_numeric) <= floor)
        self.below_floor += int(np.count_nonzero(below & smooth if kinked else below))
        if kinked:
            for j in flat_index[kink]:
                self.kinks.append(tuple(int(k) for k in np.unravel_index(j, shape)))
        with np.errstate(all="ignore"):  # the allowed difference but its rtol part
            beside_rtol = atol + ERROR_ESTIMATE_FACTOR * error + extra
        rel = self.relative_errors(diff, abs_numeric, np.abs(analytic), beside_rtol, atol)
        if diff.size and (not kinked or smooth.any()):
            if kinked:
                diff_s, rel_s, ratio_s = diff[smooth], rel[smooth], ratio[smooth]
            else:
                diff_s, rel_s, ratio_s = diff, rel, ratio
            self.max_abs = max(self.max_abs, float(diff_s.max()))
            self.max_rel = max(self.max_rel, float(rel_s.max()))
            self.max_ratio = max(self.max_ratio, float(ratio_s.max()))
        order = np.argsort(-np.where(smooth, ratio, -1.0), kind="stable")[:WORST_ELEMENTS]
        order = order[smooth[order]]
        indices = zip(*np.unravel_index(flat_index[order], shape)) if shape else [()] * order.size
        for o, index in zip(order.tolist(), indices):
            self.elements.append(
                Element(
                    input=self.i,
                    index=tuple(int(k) for k in index),
                    analytic=float(analytic[o]),
                    numeric=float(numeric[o]),
                    abs_error=float(diff[o]),
                    rel_error=float(rel[o]),
                    ratio=float(ratio[o]),
                    floor=float(floor[o]),
                )
            )

    def relative_errors(
        self,
        diff: np.ndarray,
        abs_numeric: np.ndarray,
        abs_analytic: np.ndarray,
        beside_rtol: np.ndarray | float,
        atol: float,
    ) -> np.ndarray:
        """Each element's error relative to its own size as the tolerance takes it:
        the one definition of a relative error, in the worst-elements table, the
        summary, the text and JSON alike.

        The size is the largest of |numeric|; atol / rtol, where the absolute
        tolerance governs (a gradient smaller than that counts as that size); and what
        finite differences resolve there, the allowed difference but its rtol part
        (``beside_rtol``: the error estimate, the rounding floor, atol). Where
        |numeric| is within that (they cannot tell the gradient from 0 there), the
        analytic value's size counts too: the error is then relative to the larger of
        what was claimed and what could be seen, at most 2 (x³ at x = 0: numeric 5e-29
        of pure truncation against analytic 0 is no relative error of 1; a backward
        that says 0.13 where the gradient is exactly 0 is wrong by all of it, 1, not by
        1e11 of a resolution of 1e-12).

        Each element its own: an element whose finite differences resolve little does
        not shrink another's relative error (an error of 0.7 on a gradient of 0.06 read
        1.2e-7 beside one), nor its own (relative to its resolution over rtol, a gross
        error read as rounding). Never against a zero reference: 0 only where the
        error is 0 too."""
        # The size atol stands for is its gradient-scaled part over rtol; the upstream
        # rounding allowance in it is an allowed error (in ``beside_rtol`` already),
        # not a size: over rtol = 1e-7 it read a float64 gradient of 1, off by 0.5, as
        # a relative error of 1.3e-5 where the backward's numbers were float16's.
        if self.tol.atol_scaled:
            atol = max(atol - self.upstream_allowance(), 0.0)
        floor = atol / self.rtol if self.rtol > 0 else atol
        with np.errstate(all="ignore"):
            resolution = np.maximum(beside_rtol, floor)
            size = np.maximum(abs_numeric, resolution)
            unresolved = abs_numeric <= resolution
            if np.any(unresolved):
                size = np.where(unresolved, np.maximum(size, abs_analytic), size)
            rel = np.where(size > 0, diff / size, np.where(diff > 0, np.inf, 0.0))
        return np.where(np.isnan(diff), np.inf, rel)

    def summary(self) -> InputErrors:
        return InputErrors(
            input=self.i,
            max_abs_error=self.max_abs,
            max_rel_error=self.max_rel,
            error_ratio=self.max_ratio,
            mismatched=self.mismatched,
            size=self.size,
            kinks=len(self.kinks),
            rtol=self.rtol,
            atol=self.atol_used,
            below_floor=self.below_floor,
        )

    def failure(self, *, missing: bool) -> Failure:
        worst = tuple(sorted((e for e in self.elements if e.ratio > 1), key=lambda e: -e.ratio))
        worst = worst[:WORST_ELEMENTS]
        if missing:
            return Failure(
                Kind.MISSING_GRADIENT,
                f"input {self.i} received no gradient, but its numeric gradient is not "
                f"zero ({self.mismatched} / {self.size} elements)",
                input=self.i,
                worst=worst,
                mismatched=self.mismatched,
                size=self.size,
            )
        if worst:
            e = worst[0]
            message = (
                f"the gradient of input {self.i} differs from finite differences "
                f"at {self.mismatched} / {self.size} elements; worst at index {e.index}: "
                f"analytic {e.analytic:.10g}, numeric {e.numeric:.10g}"
            )
            allowed = e.abs_error / e.ratio if e.ratio > 0 else 0.0
            if self.low is not None:
                gradient, name = self.low
                low = float(gradient[e.index])
                message += (
                    f" (the backward run in float64 on the same inputs, judged with "
                    f"float64's tolerances; the {name} gradient, {low:.6g} "
                    f"there, carries the same error, which its own precision hides: the "
                    f"formula is wrong, not its rounding)"
                )
            elif e.floor >= 0.5 * allowed > 0:
                message += (
                    f" (the difference allowed there, {allowed:.3g}, is mostly rounding: "
                    f"finite differences resolve this gradient no finer than {e.floor:.3g} "
                    f"here, and the error is above that)"
                )
        else:
            message = f"the gradient of input {self.i} differs from finite differences " + (
                self.direction_failure or ""
            )
        message += self._tie_text(worst[0].index if worst else None)
        return Failure(
            Kind.MISMATCH,
            message,
            input=self.i,
            worst=worst,
            mismatched=self.mismatched,
            size=self.size,
        )

    def _tie_text(self, worst: tuple[int, ...] | None) -> str:
        """Where the mismatch stands at a tie whose joint direction showed the analytic
        gradient wrong (:attr:`along_tie`), what a user can compare: the numeric
        column there is each tied element's partial derivative (moved alone), which a
        subgradient need not equal, and the derivative along the tie is what the
        gradient's sum over the tie must be."""
        if self.along_tie is None:
            return ""
        members, along, total = self.along_tie
        estimated = self.estimated if self.estimated is not None else self.spent
        if estimated is not None:
            partials = np.asarray(estimated[0], dtype=np.float64).reshape(-1)[members]
            if abs(float(partials.sum()) - along) <= TIE_PARTIALS_ADD_UP * float(
                np.abs(partials).sum() + abs(along)
            ):
                return ""  # (no kink at the tie: the numeric column is the gradient)
        shape = self.analytic.shape
        shown = [int(np.ravel_multi_index(worst, shape))] if worst is not None and shape else []
        first = next((j for j in shown + self.bad if j in members), int(members[0]))
        value = float(np.asarray(self.x).reshape(-1)[first])
        index = tuple(int(k) for k in np.unravel_index(first, shape)) if shape else ()
        off = abs(total - along) / abs(along) if along else math.inf
        return (
            f". At a tie: index {index} and {members.size - 1} other element(s) share the "
            f"value {value:.6g}; the numeric column there is each one's derivative moved "
            f"alone (a partial derivative at a kink, which the gradient there need not "
            f"equal), but moved together, keeping the tie, vᵀf changes at {along:.10g} per "
            f"unit, while the analytic gradient sums to {total:.10g} over them "
            f"(relative error {off:.3g}): the gradient is wrong along the tie"
        )


def estimate_full(ev: Evaluator, cmp: Comparison, complex_step: bool) -> tuple[np.ndarray, ...]:
    """(numeric, error, kink, curvature, noise) of every element, flat."""
    i = cmp.i
    if complex_step:
        numeric = ev.complex_step(i)
        error = 8 * ev.eps * np.abs(numeric)
        kink = np.zeros(numeric.shape, dtype=bool)
        curvature = np.zeros(numeric.shape)
        noise = np.zeros(numeric.size)
    else:
        est = full_estimate(ev, i, settled=cmp.settled, jump_threshold=cmp.jump_threshold)
        _refine_the_unsettled(ev, cmp, est)
        numeric, error, kink, curvature = est.value, est.error, est.kink, est.curvature
        noise = np.asarray(est.noise, np.float64).reshape(-1)
    return tuple(np.asarray(a).reshape(-1) for a in (numeric, error, kink, curvature, noise))


def judge_full(cmp: Comparison, estimated: tuple[np.ndarray, ...]) -> None:
    """Judge every element of ``cmp``'s input against the estimates of
    :func:`estimate_full` (which a judge with other allowances may reuse)."""
    numeric, error, kink, curvature, noise = estimated
    cmp.record(
        np.arange(numeric.size),
        cmp.analytic.reshape(-1),
        numeric,
        error,
        kink,
        cmp.abs_tol(np.where(kink, 0.0, numeric) if kink.any() else numeric),
        analytic_rounding(cmp, curvature),
        noise,
    )


def analytic_rounding(cmp: Comparison, curvature: np.ndarray) -> np.ndarray:
    """Per element, the analytic gradient's own error allowed beside its tolerance.

    Computed in the op's dtype, it is at best the gradient at a point off by a
    rounding of each input, eps·|x|, which moves it by about s''·eps·|x|: what float16
    sin(25 x) needs; and at least the backward's measured rounding, where measured."""
    x = np.abs(cmp.x).astype(np.float64).reshape(-1)
    with np.errstate(all="ignore"):
        extra = INPUT_ROUNDING_FACTOR * cmp.eps * x * np.abs(curvature.reshape(-1))
    extra = np.where(np.isfinite(extra), extra, 0.0)
    if cmp.jitter is not None:
        extra = np.maximum(extra, INPUT_ROUNDING_FACTOR * cmp.jitter)
    return extra


def _refine_the_unsettled(ev: Evaluator, cmp: Comparison, est: Estimate) -> None:
    """Refine the elements the first pass settled but the final tolerance would not.

    The first pass settles an element within a tolerance scaled by the input's largest
    first-pass gradient; a kink's first pass (atan2(±h, 0) = ±pi/2: D ~ 1/h) can make
    that scale huge, and once refined (and left out of the scale, being a kink) the
    scale, and so the tolerance of every element, comes down. A settled element must
    still be within it, or be refined too. (Where the first pass settled every element,
    nothing moved the tolerance it settled them within.)"""
    if not est.refined.any():
        return
    for _ in range(RESETTLE_ROUNDS):
        value, kink = est.value.reshape(-1), est.kink.reshape(-1)
        atol = cmp.abs_tol(np.where(kink, 0.0, value))
        analytic = cmp.analytic.reshape(-1)
        with np.errstate(all="ignore"):
            within = np.abs(analytic - value) <= atol + cmp.rtol * np.abs(value)
        which = np.flatnonzero(~est.refined.reshape(-1) & ~within)
        if not which.size:
            return
        refine_elements(ev, cmp.i, est, which, cmp.jump_threshold(np.where(kink, 0.0, value)))


@dataclass(frozen=True)
class _Directional:
    """One directional derivative, analytic against numeric."""

    ok: bool
    analytic: float
    numeric: float
    allowed: float
    kink: bool


class _FastMode:
    """Fast mode for one input: directional derivatives of ``s`` along signed
    directions whose every |d_j| is a short binary number times the element's scale
    (:data:`_DIRECTION_FACTORS`), judged
    like full mode's elements, and the elements located by bisection.

    Like full mode's elements, each direction first gets one central difference (two
    forward calls, :meth:`Evaluator.directional`, for a batch of directions at once),
    and a second one where the first leaves a large jump (:meth:`screen`); only the
    directions these do not settle are refined over every level
    (:meth:`Evaluator.refine`)."""

    def __init__(self, ev: Evaluator, cmp: Comparison) -> None:
        self.ev, self.cmp = ev, cmp
        self.x = ev.work[cmp.i].reshape(-1).astype(np.float64)
        self.g = cmp.analytic.reshape(-1)
        # Powers of two (see gradcheck.checking.numerical.step_sizes): h0, the levels and
        # the unit of every |d_j| are, and d_j has three bits of mantissa, so each
        # perturbation h·d_j is exact in coarse intermediates.
        self.h0 = 2.0 ** round(math.log2(np.cbrt(ev.eps)))  # step_sizes at x = 0
        self.scale = np.maximum(np.abs(self.x), 1.0)
        # The scale rounded to a power of two (in log2: by the mantissa of frexp).
        mantissa, exponent = np.frexp(self.scale)
        self.unit = np.ldexp(1.0, exponent - (mantissa < _SQRT_HALF))
        # Tolerance per element, with the analytic gradient standing in for the numeric.
        self.atol = cmp.abs_tol(self.g)
        cmp.atol_used = self.atol
        self.t = self.atol + cmp.rtol * np.abs(self.g)
        self.t2 = self.t * self.t
        self.located: list[int] = []
        #: The size of the directional derivatives (the largest first difference so
        #: far), against which a first jump counts as large.
        self.jump_scale = 0.0

    def directions(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` random directions, one per row: each d_j is the element's scale
        rounded to a power of two, times one of :data:`_DIRECTION_FACTORS` (one random
        byte each: a Gaussian per element and its logarithm cost as much as the forward
        calls)."""
        size = count * self.x.size
        raw = rng.bit_generator.random_raw(-(-size // 8)).view(np.uint8)[:size]
        return _DIRECTION_FACTORS[raw.reshape(count, self.x.size) & 63] * self.unit

    def screen(self, directions: np.ndarray, second: bool = True) -> list[_Directional | None]:
        """Each direction's first central differences: a :class:`_Directional` where
        they settle it, None where the direction needs :meth:`agrees`.

        As full mode's first pass: one central difference within the tolerance whose
        jump J is below it or below :data:`FIRST_JUMP_FRACTION` of the directional
        derivatives' size (no kink in reach) settles a direction. Where the jump is
        larger (near a zero gradient the curvature term is all there is: x·tanh(x) at
        x = 0), a second step 4h follows: the Richardson value of the two within the
        tolerance, their difference too, and J growing like h (4× per level, within
        :data:`KINK_STEADINESS`, and far above the rounding noise: a smooth function,
        where a kink keeps J steady) settle it. ``second=False``: no second step (see
        :meth:`bisect`)."""
        tolerance = np.sqrt((directions * directions) @ self.t2)
        analytic = directions @ self.g
        first, jump, _ = self.ev.directional(self.cmp.i, directions, self.h0)
        finite = np.abs(first[np.isfinite(first)])
        if finite.size:
            self.jump_scale = max(self.jump_scale, float(finite.max()))
        with np.errstate(invalid="ignore"):
            agree = np.abs(analytic - first) <= tolerance
            small = np.abs(jump) <= np.maximum(tolerance, FIRST_JUMP_FRACTION * self.jump_scale)
        settled, value = agree & small, first.copy()
        rest = np.flatnonzero(np.isfinite(first) & ~settled)
        if rest.size and second:
            value[rest], settled[rest] = self._second_step(
                directions[rest], analytic[rest], tolerance[rest], first[rest], jump[rest]
            )
        return [
            _Directional(True, float(a), float(n), float(t), False) if ok else None
            for a, n, t, ok in zip(analytic, value, tolerance, settled)
        ]

    def _second_step(
        self,
        directions: np.ndarray,
        analytic: np.ndarray,
        tolerance: np.ndarray,
        first: np.ndarray,
        jump: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(Richardson value, settled) of directions whose first difference did not
        settle them, from a second one at 4h (see :meth:`screen`)."""
        second, jump4, noise4 = self.ev.directional(
            self.cmp.i, directions, LEVEL_RATIO * self.h0, noise=True
        )
        gain = TRUNCATION_GROWTH - 1
        with np.errstate(all="ignore"):
            value = first + (first - second) / gain
            error = np.abs(first - second) / gain + LEVEL_RATIO * noise4  # noise at h
            ratio = jump4 / jump
            growing = (LEVEL_RATIO / KINK_STEADINESS < ratio) & (
                ratio < LEVEL_RATIO * KINK_STEADINESS
            )
            # J at each step far above that step's noise (the noise of J is about D's)
            resolved = (np.abs(jump) > KINK_NOISE_MARGIN * LEVEL_RATIO * noise4) & (
                np.abs(jump4) > KINK_NOISE_MARGIN * noise4
            )
            within = (np.abs(analytic - value) <= tolerance) & (error <= tolerance)
            # A zero gradient in float64 has a zero tolerance (no eps-sized allowance,
            # issue 34), which the noise term of `error` alone exceeds: there, both
            # differences exactly the analytic value (an even function along the
            # direction, x·tanh(x) at 0) with J resolved and growing like h settle it,
            # where the whole ladder of levels said the same at 12 calls a direction.
            exact = (analytic == first) & (first == second)
            settled = (within | exact) & growing & resolved
        return value, settled

    def settles_below(self, directions: np.ndarray) -> np.ndarray:
        """Whether each row's first central difference at the step h0 / :data:`BELOW`
        settles it, by :meth:`screen`'s first test (within the tolerance, its jump
        small): two forward calls a row, where a refinement takes 14. Nothing is noted
        (the jump scale stays :meth:`screen`'s)."""
        tolerance = np.sqrt((directions * directions) @ self.t2)
        analytic = directions @ self.g
        first, jump, _ = self.ev.directional(self.cmp.i, directions, self.h0 / BELOW)
        with np.errstate(invalid="ignore"):
            agree = np.abs(analytic - first) <= tolerance
            small = np.abs(jump) <= np.maximum(tolerance, FIRST_JUMP_FRACTION * self.jump_scale)
        return agree & small & np.isfinite(first)

    def agrees(self, e: np.ndarray, screened: bool = False) -> _Directional:
        """The direction ``e`` judged: settled by its first difference (unless
        ``screened``: that was done), else refined over every level."""
        if not screened:
            first = self.screen(e[None, :])[0]
            if first is not None:
                return first
        tolerance = float(np.sqrt(np.sum((self.t * e) ** 2)))
        est = self.ev.refine(self.cmp.i, e, self.h0, tolerance, float(self.scale.max(initial=1.0)))
        analytic = float(self.g @ e)
        # As in full mode, plus the inputs' rounding: e is scaled like x, so about
        # eps·|e' H e| (curvature along e).
        rounding = self.cmp.eps * abs(est.curvature)
        if self.cmp.jitter is not None:
            rounding = max(rounding, float(np.sqrt(np.sum((self.cmp.jitter * e) ** 2))))
        allowed = tolerance + ERROR_ESTIMATE_FACTOR * est.error + INPUT_ROUNDING_FACTOR * rounding
        numeric = est.value
        ok = bool(np.isfinite(numeric) and abs(analytic - numeric) <= allowed and not est.kink)
        return _Directional(ok, analytic, numeric, allowed, est.kink)

    def bisect(self, members: np.ndarray, d: np.ndarray, below: bool = False) -> None:
        """Halve ``members`` (indices into ``d``), following the halves that disagree,
        down to at most two elements each; at most :data:`FAST_MODE_MAX_LOCATED` in all.
        ``below``: the halves screened at the step h0/:data:`BELOW` (see below)."""
        if len(self.located) >= FAST_MODE_MAX_LOCATED:
            return
        if members.size <= 2:
            self.located.extend(int(j) for j in members)
            return
        halves = (members[: members.size // 2], members[members.size // 2 :])
        # The directional derivative is linear in the direction: where one half agrees
        # (its first differences settle it, two forward calls), the part of the parent's
        # difference it does not explain is the other half's, which is followed without
        # a look of its own (a direction across a kink of grid_sampler_3d refined both
        # halves over every level at each of ~20 levels of 559,020 elements: 10 s).
        # A half's first difference alone (2 calls), no second step at 4h (2 more): a
        # half that holds the parent's kink keeps its jump steady, and the second step
        # never settles it (grid_sampler_3d's sample 28: at each of its ~19 levels, 38
        # calls in all); a smooth half it would settle is settled as well, and as
        # cheaply, by `settles_below` where neither half settles, and where the other
        # does, the parent's disagreement is this half's (linearity, below).
        unsettled: list[tuple[np.ndarray, np.ndarray]] = []
        for half in halves:
            e = np.zeros_like(d)
            e[half] = d[half]
            if below:
                settled = bool(self.settles_below(e[None, :])[0])
            else:
                settled = self.screen(e[None, :], second=False)[0] is not None
            if not settled:
                unsettled.append((half, e))
            elif half is halves[0]:
                self.bisect(halves[1], d, below)
                return
        if len(unsettled) == 1:
            self.bisect(unsettled[0][0], d, below)
            return
        # Neither settled: each half's first difference at a smaller step (2 calls,
        # :meth:`settles_below`), the first's, then the second's: a half whose elements
        # are only near a kink (within h0 of it, not within h0/BELOW) settles there,
        # standing for the refinement that would agree, and the other half is followed
        # as above. The second's before the first is refined (14 calls): where the
        # first holds the kink, its refinement never agrees, and the second settled
        # below was all that was followed from it (grid_sampler_3d's sample 28, 2 of its
        # 5 refinements). Below such a level, the halves are screened at h0/BELOW alone:
        # where the elements are many, some are near a kink, and neither half settles
        # at h0 (sample 28: the 7 levels from 159,390 elements to 2,490, 6-8 calls each,
        # where h0/BELOW settles one half at 2-4). Where neither settles below, the
        # first refined and judged; where it agrees, the second is followed, else the
        # second is judged too (either half may hold what failed: both elements of a
        # tie at a maximum are kinks, and are reported).
        (first, e), (second, e2) = unsettled
        if not below and self.settles_below(e[None, :])[0]:
            self.bisect(second, d, True)
            return
        if not below and self.settles_below(e2[None, :])[0]:
            self.bisect(first, d, True)
            return
        if self.agrees(e, screened=True).ok:
            self.bisect(second, d, True)
            return
        self.bisect(first, d, True)
        if len(self.located) < FAST_MODE_MAX_LOCATED and not self.agrees(e2, screened=True).ok:
            self.bisect(second, d, True)

    def judge_located(self) -> None:
        """Judge the located elements one by one, as full mode would."""
        cmp, x = self.cmp, self.x
        threshold = cmp.jump_threshold(self.g)
        idx = np.array(sorted(set(self.located)))
        steps = step_sizes(x[idx], self.ev.eps)
        # (the rounding at their step points measured once for all of them)
        with self.ev.shared_step_points(cmp.i, idx, steps * LEVEL_RATIO**HIGHEST_LEVEL):
            results = [
                self.ev.refine(cmp.i, int(j), float(h), threshold, abs(float(x[j])))
                for j, h in zip(idx, steps)
            ]
        numeric = np.array([r.value for r in results])
        error = np.array([r.error for r in results])
        kink = np.array([r.kink for r in results])
        curvature = np.abs(np.array([r.curvature for r in results]))
        extra = INPUT_ROUNDING_FACTOR * cmp.eps * np.abs(x[idx]) * curvature
        if cmp.jitter is not None:
            extra = np.maximum(extra, INPUT_ROUNDING_FACTOR * cmp.jitter[idx])
        before = cmp.mismatched
        cmp.record(idx, self.g[idx], numeric, error, kink, self.atol, extra)
        if cmp.mismatched == before and not kink.any() and cmp.direction_failure is not None:
            cmp.mismatched += 1  # the direction failed; no single element explains it


def compare_fast(
    ev: Evaluator,
    cmp: Comparison,
    rng: np.random.Generator,
    directions: int,
    group_size: int | None = None,
) -> None:
    """Directional derivatives along random signed directions; when one disagrees
    (or crosses a kink), bisect the elements to find the ones responsible. With
    ``group_size``, one direction per group of at most that many elements (a random
    partition of the input), instead of ``directions`` over all of them."""
    fast = _FastMode(ev, cmp)
    for d, members, r in _judged_directions(fast, rng, directions, group_size):
        if not r.kink:  # a direction across a kink says nothing about the error
            diff = abs(r.analytic - r.numeric)
            cmp.max_abs = max(cmp.max_abs, diff)
            # (the direction's whole allowance stands for its part beside rtol)
            rel = cmp.relative_errors(
                np.array([diff]),
                np.array([abs(r.numeric)]),
                np.array([abs(r.analytic)]),
                r.allowed,
                cmp.atol_used,
            )
            cmp.max_rel = max(cmp.max_rel, float(rel[0]))
            cmp.max_ratio = max(cmp.max_ratio, diff / r.allowed if r.allowed > 0 else np.inf)
        if not r.ok:
            cmp.direction_failure = (
                None
                if r.kink
                else (
                    f"along a random direction: <analytic, d> = {r.analytic:.10g}, numeric "
                    f"{r.numeric:.10g} (allowed difference {r.allowed:.3g})"
                )
            )
            fast.bisect(members, d)
            break
    if fast.located:
        fast.judge_located()
    elif cmp.direction_failure is not None:
        cmp.mismatched += 1


#: Fast mode's directions are made and screened in batches of at most this many
#: elements in all (a batch of groups of a large input would not fit in memory).
_DIRECTION_BATCH_ELEMENTS = 1 << 20


def _judged_directions(
    fast: _FastMode, rng: np.random.Generator, directions: int, group_size: int | None
) -> Iterator[tuple[np.ndarray, np.ndarray, _Directional]]:
    """(direction, the elements it covers, its judgement), in order: ``directions``
    over every element (the second half only if one of the first is not a clear
    agreement, :data:`CLEAR_AGREEMENT`), or one per group of a random partition into
    groups of at most ``group_size``; each batch screened at once
    (:meth:`_FastMode.screen`)."""
    n = fast.x.size
    if group_size is None or group_size >= n:
        groups = [np.arange(n)] * directions
        # Half the directions first; the rest only where one of those is not a clear
        # agreement (see CLEAR_AGREEMENT).
        first = max(1, directions // 2)
    else:
        groups = [np.sort(g) for g in np.array_split(rng.permutation(n), -(-n // group_size))]
        first = len(groups)
    rows = _rows(n)
    bounds = [*range(0, first, rows), *range(first, len(groups), rows), len(groups)]
    clear = True
    for start, end in pairwise(bounds):
        if start >= first and clear:
            return  # every direction so far agreed clearly: the rest are not needed
        chunk = groups[start:end]
        if len(chunk[0]) == n:
            batch = fast.directions(rng, len(chunk))
        else:  # each element in one group: one random value each
            values = fast.directions(rng, 1)[0]
            batch = np.zeros((len(chunk), n))
            for row, members in enumerate(chunk):
                batch[row, members] = values[members]
        for d, members, screened in zip(batch, chunk, fast.screen(batch)):
            r = screened if screened is not None else fast.agrees(d, screened=True)
            clear = clear and r.ok and abs(r.analytic - r.numeric) <= CLEAR_AGREEMENT * r.allowed
            yield d, members, r


def _rows(n: int) -> int:
    """Directions over ``n`` elements per batch."""
    return max(1, _DIRECTION_BATCH_ELEMENTS // max(n, 1))
