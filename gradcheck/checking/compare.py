"""Analytic against numeric, for one input: tolerances, element verdicts, kinks.

:func:`compare_full` judges every element (finite differences from
:func:`gradcheck.checking.numerical.full_estimate`); :func:`compare_fast` judges random
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

from dataclasses import dataclass

import numpy as np

from gradcheck.checking.numerical import (
    Estimate,
    Evaluator,
    full_estimate,
    refine_elements,
    step_sizes,
)
from gradcheck.checking.result import Element, Failure, InputErrors
from gradcheck.checking.vocabulary import Kind

__all__ = ["Comparison", "compare_full", "compare_fast", "judge_full", "WORST_ELEMENTS"]

#: The multiple of the finite-difference error estimate added to the tolerance.
ERROR_ESTIMATE_FACTOR = 3.0
#: Multiple of eps·|x|·|s''| allowed for the rounding of the inputs of the analytic
#: gradient (its backward error); matters for float16 and float32 only.
INPUT_ROUNDING_FACTOR = 4.0
#: Multiple of eps·max|v| allowed in absolute terms by default: the rounding of
#: intermediates of the upstream gradient's size.
UPSTREAM_ROUNDING_FACTOR = 4.0
#: Elements listed as "worst" in a result.
WORST_ELEMENTS = 5
#: Elements that fast mode isolates by bisection, at most, per input.
FAST_MODE_MAX_LOCATED = 8


class Comparison:
    """Analytic against numeric for one input: tolerances, elements, verdicts."""

    def __init__(
        self,
        i: int,
        x: np.ndarray,
        analytic: np.ndarray,
        rtol: float,
        atol: float,
        relative: bool,
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
        self.i, self.analytic, self.rtol, self.atol, self.relative = (
            i,
            analytic,
            rtol,
            atol,
            relative,
        )
        self.elements: list[Element] = []
        self.kinks: list[tuple[int, ...]] = []
        self.mismatched = 0
        self.below_floor = 0
        self.max_abs = 0.0
        self.max_numeric = 0.0  # the largest |numeric gradient| compared
        self.max_ratio = 0.0
        self.size = analytic.size
        self.direction_failure: str | None = None
        self.atol_used = atol
        #: Full mode's estimates (numeric, error, kink, curvature, noise), flat.
        self.estimated: tuple[np.ndarray, ...] | None = None

    def abs_tol(self, numeric: np.ndarray) -> float:
        """The absolute tolerance for this input, given (an estimate of) its numeric
        gradient: scaled by the gradient's size for the default."""
        if not self.relative:
            return self.atol
        finite = np.abs(numeric[np.isfinite(numeric)])
        scale = float(finite.max()) if finite.size else 0.0
        # A backward rounds intermediates of the size of the upstream gradient: 1 - t²
        # for tanh near saturation loses all relative precision in float16, though the
        # op is right. A few eps of max|v| absolute is allowed for that. And below the
        # dtype's smallest normal number a gradient loses relative precision (a float16
        # gradient of 1e-8 underflows to 0): no claim is made there.
        return (
            self.atol * scale
            + UPSTREAM_ROUNDING_FACTOR * self.eps * self.v_max
            + self.smallest_normal
        )

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
        with np.errstate(all="ignore"):
            diff = np.abs(analytic - numeric)
            allowed = atol + self.rtol * np.abs(numeric) + ERROR_ESTIMATE_FACTOR * error + extra
            ratio = np.where(np.isfinite(diff), diff / allowed, np.inf)
            rel = diff / np.maximum(np.abs(numeric), np.finfo(np.float64).tiny)
            floor = np.broadcast_to(ERROR_ESTIMATE_FACTOR * noise + extra, diff.shape)
        smooth = ~kink
        bad = smooth & ~(ratio <= 1.0)
        self.mismatched += int(bad.sum())
        self.below_floor += int(
            np.sum(smooth & (floor > 0) & (np.maximum(np.abs(analytic), np.abs(numeric)) <= floor))
        )
        for j in flat_index[kink]:
            self.kinks.append(tuple(int(k) for k in np.unravel_index(j, shape)))
        if smooth.any():
            self.max_abs = max(self.max_abs, float(diff[smooth].max()))
            self.max_numeric = max(self.max_numeric, float(np.abs(numeric[smooth]).max()))
            self.max_ratio = max(self.max_ratio, float(ratio[smooth].max()))
        order = np.argsort(-np.where(smooth, ratio, -1.0), kind="stable")[:WORST_ELEMENTS]
        for o in order:
            if not smooth[o]:
                continue
            self.elements.append(
                Element(
                    input=self.i,
                    index=tuple(int(k) for k in np.unravel_index(flat_index[o], shape)),
                    analytic=float(analytic[o]),
                    numeric=float(numeric[o]),
                    abs_error=float(diff[o]),
                    rel_error=float(rel[o]),
                    ratio=float(ratio[o]),
                    floor=float(floor[o]),
                )
            )

    def norm_relative_error(self) -> float:
        """The largest error relative to the largest gradient element (norm-wise, so
        that an element whose gradient is ~0 does not make it explode; per-element
        relative errors are in the worst-elements table). A gradient smaller than
        atol / rtol, where the absolute tolerance governs, counts as that size."""
        if not self.max_abs:
            return 0.0
        floor = self.atol_used / self.rtol if self.rtol > 0 else 0.0
        return self.max_abs / max(self.max_numeric, floor, np.finfo(np.float64).tiny)

    def summary(self) -> InputErrors:
        return InputErrors(
            input=self.i,
            max_abs_error=self.max_abs,
            max_rel_error=self.norm_relative_error(),
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
            if e.floor >= 0.5 * allowed > 0:
                message += (
                    f" (the difference allowed there, {allowed:.3g}, is mostly rounding: "
                    f"finite differences resolve this gradient no finer than {e.floor:.3g} "
                    f"here, and the error is above that)"
                )
        else:
            message = f"the gradient of input {self.i} differs from finite differences " + (
                self.direction_failure or ""
            )
        return Failure(
            Kind.MISMATCH,
            message,
            input=self.i,
            worst=worst,
            mismatched=self.mismatched,
            size=self.size,
        )


def compare_full(ev: Evaluator, cmp: Comparison, complex_step: bool) -> None:
    cmp.estimated = _estimate_full(ev, cmp, complex_step)
    judge_full(cmp, cmp.estimated)


def _estimate_full(ev: Evaluator, cmp: Comparison, complex_step: bool) -> tuple[np.ndarray, ...]:
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
    :func:`compare_full` (which a judge with other allowances may reuse)."""
    numeric, error, kink, curvature, noise = estimated
    # Backward error of the analytic gradient: computed in the op's dtype, it is at
    # best the gradient at a point off by a rounding of each input, eps·|x|, which
    # moves it by about s''·eps·|x|. This is what float16 sin(25 x) needs.
    x = np.abs(cmp.x).astype(np.float64).reshape(-1)
    with np.errstate(all="ignore"):
        extra = INPUT_ROUNDING_FACTOR * cmp.eps * x * np.abs(curvature.reshape(-1))
    extra = np.where(np.isfinite(extra), extra, 0.0)
    if cmp.jitter is not None:
        extra = np.maximum(extra, INPUT_ROUNDING_FACTOR * cmp.jitter)
    cmp.record(
        np.arange(numeric.size),
        cmp.analytic.reshape(-1),
        numeric,
        error,
        kink,
        cmp.abs_tol(np.where(kink, 0.0, numeric)),
        extra,
        noise,
    )


#: Rounds of :func:`_refine_the_unsettled` at most (each can only lower the scale).
_RESETTLE_ROUNDS = 3


def _refine_the_unsettled(ev: Evaluator, cmp: Comparison, est: Estimate) -> None:
    """Refine the elements the first pass settled but the final tolerance would not.

    The first pass settles an element within a tolerance scaled by the input's largest
    first-pass gradient; a kink's first pass (atan2(±h, 0) = ±pi/2: D ~ 1/h) can make
    that scale huge, and once refined (and left out of the scale, being a kink) the
    scale, and so the tolerance of every element, comes down. A settled element must
    still be within it, or be refined too."""
    for _ in range(_RESETTLE_ROUNDS):
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
    directions whose every |d_j| is a power of two times the element's scale, judged
    like full mode's elements, and the elements located by bisection."""

    def __init__(self, ev: Evaluator, cmp: Comparison) -> None:
        self.ev, self.cmp = ev, cmp
        self.x = ev.work[cmp.i].reshape(-1).astype(np.float64)
        self.g = cmp.analytic.reshape(-1)
        # Powers of two throughout (see gradcheck.checking.numerical.step_sizes): h0, the
        # levels and every |d_j| are, so each perturbation h·d_j is exact in coarse
        # intermediates.
        self.h0 = float(step_sizes(np.zeros(1), ev.eps)[0])
        self.scale = np.maximum(np.abs(self.x), 1.0)
        # Tolerance per element, with the analytic gradient standing in for the numeric.
        self.atol = cmp.abs_tol(self.g)
        cmp.atol_used = self.atol
        self.t = self.atol + cmp.rtol * np.abs(self.g)
        self.located: list[int] = []

    def direction(self, rng: np.random.Generator) -> np.ndarray:
        gauss = rng.standard_normal(self.x.size)
        return np.sign(gauss) * np.exp2(np.round(np.log2(np.abs(gauss) * self.scale + 1e-300)))

    def agrees(self, e: np.ndarray) -> _Directional:
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

    def bisect(self, members: np.ndarray, d: np.ndarray) -> None:
        """Halve ``members`` (indices into ``d``), following the halves that disagree,
        down to at most two elements each; at most :data:`FAST_MODE_MAX_LOCATED` in all."""
        if len(self.located) >= FAST_MODE_MAX_LOCATED:
            return
        if members.size <= 2:
            self.located.extend(int(j) for j in members)
            return
        for half in (members[: members.size // 2], members[members.size // 2 :]):
            e = np.zeros_like(d)
            e[half] = d[half]
            if not self.agrees(e).ok:
                self.bisect(half, d)

    def judge_located(self) -> None:
        """Judge the located elements one by one, as full mode would."""
        cmp, x = self.cmp, self.x
        threshold = cmp.jump_threshold(self.g)
        idx = np.array(sorted(set(self.located)))
        steps = step_sizes(x[idx], self.ev.eps)
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


def compare_fast(ev: Evaluator, cmp: Comparison, rng: np.random.Generator, directions: int) -> None:
    """Directional derivatives along random signed directions; when one disagrees
    (or crosses a kink), bisect the elements to find the ones responsible."""
    fast = _FastMode(ev, cmp)
    for _ in range(directions):
        d = fast.direction(rng)
        r = fast.agrees(d)
        if not r.kink:  # a direction across a kink says nothing about the error
            diff = abs(r.analytic - r.numeric)
            cmp.max_abs = max(cmp.max_abs, diff)
            cmp.max_numeric = max(cmp.max_numeric, abs(r.numeric))
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
            fast.bisect(np.arange(fast.x.size), d)
            break
    if fast.located:
        fast.judge_located()
    elif cmp.direction_failure is not None:
        cmp.mismatched += 1
