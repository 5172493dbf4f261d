"""The numeric verdict of one check, as named stages (DESIGN.md "One check", steps 3-5).

Each input that takes a gradient goes through the same five stages, each taking the
:class:`~gradcheck.checking.compare.Comparison` the last one gave and returning the one
that stands (itself where the stage has nothing to say):

1. :func:`first_comparison`: the analytic gradient against finite differences, every
   element (``estimate_full``, then ``judge_full``) or random directions
   (``compare_fast``);
2. :func:`noise_remeasured`: a float64 mismatch judged again beside the backward's own
   rounding, measured now (it is measured up front for float32 and float16 only);
3. :func:`refined_at_own_scale`: a re-measured mismatch where the analytic gradient is
   far larger than the finite differences found, estimated again at its own scale;
4. :func:`float64_rerun`: a float32 or float16 judgement weighed against the same
   backward in float64 (:mod:`gradcheck.checking.low_precision`).
5. :func:`forward_apart`: a mismatch that stands, where the forward's value at x
   stands apart from its neighbours' (a singular set within its rounding), is no
   evidence: the example is skipped.
6. :func:`ties_not_a_gradient`: a mismatch that stands only on tied elements, where
   the partial derivatives there are shown to be no gradient (the op is not
   differentiable at the tie: torch's median of [0, 0, 0]), and the analytic gradient
   is right along the direction that keeps the tie: those elements are kinks.

:func:`numerics` runs them over the inputs and makes the result; :func:`execute` is a
whole check's run: the structural steps (:mod:`gradcheck.checking.run`), the numeric
verdict, and the checks that follow a numeric pass.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from gradcheck.checking.compare import Comparison, compare_fast, estimate_full, judge_full
from gradcheck.checking.layout import STRIDED
from gradcheck.checking.levels import _extra_levels, step_sizes
from gradcheck.checking.longer_steps import refined_longer
from gradcheck.checking.low_precision import convicted_wide, judged_as_float64, judged_wide
from gradcheck.checking.numerical import Evaluator
from gradcheck.checking.result import CheckResult, Element, Failure, InputErrors
from gradcheck.checking.run import _Fail, _Inconclusive, _raised, _Run
from gradcheck.checking.screen import screened
from gradcheck.checking.thresholds import (
    BACKWARD_ROUNDING_FACTOR,
    ERROR_ESTIMATE_FACTOR,
    INPUT_ROUNDING_FACTOR,
    LEVEL_RATIO,
    LOWEST_LEVEL,
    NONFINITE_ELEMENTS_PROBED,
    OWN_SCALE_AGREEMENT,
    OWN_SCALE_MIN_ULPS,
    OWN_SCALE_RATIO,
    SMALL_X_LEVELS,
    SMALL_X_RESOLVED,
    TIE_BLOCK_MAX,
    TIE_BLOCKS_PROBED,
    TIE_LEVELS,
    TIE_LEVELS_UP,
    TIE_NOISE_MARGIN,
    TIE_STEADINESS,
    TRUNCATION_GROWTH,
    WORST_ELEMENTS,
)
from gradcheck.checking.tolerance import tolerance_for
from gradcheck.checking.vocabulary import Kind, Mode, Skip, Verdict
from gradcheck.errors import CheckUsageError, ComplexStepUnsupported, TargetRaised

__all__ = [
    "execute",
    "first_comparison",
    "forward_apart",
    "float64_rerun",
    "noise_remeasured",
    "numerics",
    "refined_at_own_scale",
    "ties_not_a_gradient",
]


def execute(run: _Run, atol: float | None, rtol: float | None) -> CheckResult:
    """One check: the structural steps, the numeric verdict, and, where it passed,
    the runs that must give the gradients it confirmed."""
    try:
        v, grads = run.structure()
        result = numerics(run, v, grads, atol, rtol)
        if result.failure is None:
            run.each_input_constant(v, grads, atol, rtol)
            run.undefined_upstream(v, atol, rtol)
            if STRIDED.get():  # (gradcheck.checking.layout: a share of checks)
                run.noncontiguous_inputs(v, grads, atol, rtol)
        return result
    except _Fail as fail:
        return run.result(Verdict.FAILED, failure=fail.failure)
    except _Inconclusive as nothing:
        return run.result(Verdict.INCONCLUSIVE, note=nothing.reason)


def numerics(
    run: _Run, v: np.ndarray, grads: list[Any], atol: float | None, rtol: float | None
) -> CheckResult:
    """The numeric verdict: each input's gradient through the stages, then the
    result (failed at the first mismatch, not differentiable where kinks were all
    that was found). Where that would fail or find a kink, a forward taken for a
    float64 one that rounds its inputs to float16 inside (``Evaluator.rounds_to_half``,
    asked then only, and only where every input is float32 or narrower: a float64
    input carries float64's resolution into the forward, and the probe took cancelling
    float64 forwards for such ones, a cross-entropy at a logit of 35 and logabsdet
    near a singular matrix, whose wrong backwards float16's noise then passed) is
    checked again as one: stepped in float32 at x rounded to float16, with float16's
    noise."""
    ev = _evaluator(run, v)
    comparisons = _compared(run, ev, v, grads, atol, rtol)
    if _narrow_inputs(run) and any(c.mismatched or c.kinks for c, _ in comparisons):
        calls = ev.calls
        inner = ev.rounds_to_half()
        run.forward_calls += ev.calls - calls
        if inner is not None:
            comparisons = _float16_retry(run, v, inner, grads, atol, rtol, comparisons)
    if comparisons and comparisons[-1][0].apart:
        raise _Inconclusive(Skip.APART)
    return _result(run, comparisons)


def _narrow_inputs(run: _Run) -> bool:
    """Whether every inexact input of the check is of float32's precision or less."""
    inexact = [x.dtype for x in run.xs if x.dtype.kind in "fc"]
    return bool(inexact) and all(np.finfo(dt).bits <= 32 for dt in inexact)


def _float16_retry(
    run: _Run,
    v: np.ndarray,
    inner: Any,
    grads: list[Any],
    atol: float | None,
    rtol: float | None,
    before: list[tuple[Comparison, bool]],
) -> list[tuple[Comparison, bool]]:
    """The comparisons again for a forward found to round its inputs to float16
    (``inner``), where they replace ``before``: always where ``before`` found kinks
    only; where it found a mismatch, only if they clear it whole (no mismatch, kink or
    forward apart, no skip). A probe may take a float64 forward for one rounding to
    float16 (logabsdet near a singular matrix), whose float16 noise then hid a wrong
    backward as not differentiable or inconclusive: a mismatch is never traded for
    a verdict that passes it by."""
    mismatched = any(c.mismatched for c, _ in before)
    try:
        again = _compared(run, _evaluator(run, v, inner), v, grads, atol, rtol)
    except _Inconclusive:
        if mismatched:
            return before
        raise
    if mismatched and any(c.mismatched or c.kinks or c.apart for c, _ in again):
        return before
    return again


def _compared(
    run: _Run,
    ev: Evaluator,
    v: np.ndarray,
    grads: list[Any],
    atol: float | None,
    rtol: float | None,
) -> list[tuple[Comparison, bool]]:
    """Each input's final comparison (with whether its gradient was missing), through
    the stages, with the finite differences of ``ev``."""
    v_max = float(np.max(np.abs(v), initial=0.0))
    chosen = atol is not None or rtol is not None  # (what the user accepts, as given)
    # Per input, the backward's measured rounding (float32 and float16 up front; a
    # float64 input's once a mismatch needs it, then for the inputs after it too).
    jitter = run.rounding_jitter(v, grads)
    jitter = _with_input_rounding(run, ev, v, grads, jitter)
    comparisons: list[tuple[Comparison, bool]] = []
    try:
        for i, x in enumerate(run.xs):
            if i in run.const:
                continue
            g = grads[i]
            analytic = np.zeros(x.shape) if g is None else np.asarray(g, dtype=np.float64)
            tol = tolerance_for(run.precision(x), atol, rtol)
            comparison = first_comparison(
                run, ev, Comparison(i, x, analytic, tol, v_max, jitter[i])
            )
            comparison = noise_remeasured(run, comparison, v, grads, jitter)
            first = comparison.estimated, comparison.analytic  # (stage 3 spends them)
            comparison = refined_at_own_scale(ev, comparison, chosen)
            comparison = float64_rerun(run, ev, comparison, v, chosen)
            if comparison.mismatched and forward_apart(run, ev, comparison):
                comparisons.append((comparison, g is None))
                break
            comparison = ties_not_a_gradient(ev, comparison, first)
            comparisons.append((comparison, g is None))
    except ComplexStepUnsupported as exc:
        raise CheckUsageError(str(exc)) from None
    except (SystemExit, KeyboardInterrupt) as exc:
        # left to the search (kind exited), which says where: a step from the example
        exc.gradcheck_perturbed = True  # type: ignore[union-attr]
        raise
    except Exception as exc:
        if run.outside(exc):
            raise _Inconclusive(Skip.DOMAIN_ERROR) from None
        raise _Fail(
            _raised(Kind.FORWARD_ERROR, TargetRaised("forward at a perturbed input", exc))
        ) from None
    finally:
        run.forward_calls += ev.calls
    return comparisons


def _with_input_rounding(
    run: _Run, ev: Evaluator, v: np.ndarray, grads: list[Any], jitter: list[np.ndarray | None]
) -> list[np.ndarray | None]:
    """``jitter`` with, per input, how far its gradient moves when the inputs are
    rounded to the narrower dtype that the forward rounds them to inside
    (:attr:`Evaluator.input_rounding`; the finite differences run at those rounded
    inputs, where the forward computes). A backward may take its gradient at x or at
    x rounded as the forward rounds it, and both are right: 1 - z·z computed in
    complex32 from a complex64 z, whose backward -2·conj(z) is at z, differs from the
    numeric -2·conj(round(z)) by 2·|z - round(z)|, 0.0042·|v| at z = 56.23 (float16's
    ulp there is 1/32), read as a mismatch. A wrong formula moves by as little under
    that rounding, and stays a mismatch. Unchanged where no such dtype is known or the
    inputs are no finer than it (float16 inputs), or the backward raised there."""
    narrow = ev.input_rounding
    if narrow is None:
        return jitter
    finer = [x.dtype.kind == "f" and x.dtype.itemsize > narrow.itemsize for x in run.xs]
    if not any(finer):
        return jitter
    with np.errstate(all="ignore"):
        rounded = [x.astype(narrow).astype(x.dtype) if f else x for x, f in zip(run.xs, finer)]
    if all(np.array_equal(r, x, equal_nan=True) for r, x in zip(rounded, run.xs)):
        return jitter
    try:
        _, again = run.tgt.run(
            rounded, run.params, v, constants=sorted(run.const), outputs=run.outputs
        )
    except Exception:
        return jitter
    finally:
        run.forward_calls += 1
        run.backward_calls += 1
    out = list(jitter)
    for i, (g0, g1) in enumerate(zip(grads, again)):
        if g0 is None or g1 is None or np.shape(g0) != np.shape(g1):
            continue
        with np.errstate(all="ignore"):
            d = np.abs(np.asarray(g1, np.float64) - np.asarray(g0, np.float64)).reshape(-1)
        d = np.where(np.isfinite(d), d, 0.0)
        if not d.any():
            continue
        out[i] = d if out[i] is None else np.maximum(np.asarray(out[i]).reshape(-1), d)
    return out


def _evaluator(run: _Run, v: np.ndarray, computes_in: np.dtype | None = None) -> Evaluator:
    """The finite differences' evaluator; the forward at the example raising is
    the check's end (a domain error: inconclusive; else a failure)."""
    try:
        return run.evaluator(v, computes_in)
    except (SystemExit, KeyboardInterrupt) as exc:
        # the forward ran at the example before: this is a step from it (the search
        # reports it, kind exited, and says so)
        exc.gradcheck_perturbed = True  # type: ignore[union-attr]
        raise
    except Exception as exc:
        if run.outside(exc):
            raise _Inconclusive(Skip.DOMAIN_ERROR) from None
        raise _Fail(_raised(Kind.FORWARD_ERROR, TargetRaised("forward", exc))) from None


def _result(run: _Run, comparisons: list[tuple[Comparison, bool]]) -> CheckResult:
    """The result of the inputs' final comparisons (each with whether its gradient
    was missing)."""
    per_input: list[InputErrors] = []
    elements: list[Element] = []
    kinks: list[tuple[int, tuple[int, ...]]] = []
    failure: Failure | None = None
    for comparison, missing in comparisons:
        per_input.append(comparison.summary())
        elements.extend(comparison.elements)
        kinks.extend((comparison.i, idx) for idx in comparison.kinks)
        if failure is None and comparison.mismatched:
            failure = comparison.failure(missing=missing)
    worst = sorted(elements, key=lambda e: -e.ratio)[:WORST_ELEMENTS]
    compared = sum(e.size - e.kinks for e in per_input)
    verdict, note = Verdict.PASSED, ""
    if failure is not None:
        verdict = Verdict.FAILED
    elif kinks:
        verdict = Verdict.NOT_DIFFERENTIABLE if compared else Verdict.INCONCLUSIVE
        note = Skip.NOT_DIFFERENTIABLE
    fields = {"per_input": per_input, "worst": worst, "kinks": kinks, "note": note}
    return run.result(verdict, failure=failure, **fields)


# -- the stages ----------------------------------------------------------------------
def first_comparison(run: _Run, ev: Evaluator, comparison: Comparison) -> Comparison:
    """Stage 1: the analytic gradient against finite differences, element by element
    (full mode, or the complex step), or along random directions (fast mode)."""
    settings = run.settings
    if settings.mode == Mode.FAST and not settings.complex_step:
        compare_fast(ev, comparison, run.rng, settings.directions, settings.group_size)
    elif (
        settings.screen and not settings.complex_step and screened(ev, comparison, run.screen_rng())
    ):
        pass  # (two directions within what one wrong element would exceed)
    else:
        estimated = estimate_full(ev, comparison, settings.complex_step)
        if not settings.complex_step:
            refined_longer(ev, comparison, estimated)
        comparison.estimated = estimated
        judge_full(comparison, estimated)
    return comparison


def noise_remeasured(
    run: _Run,
    comparison: Comparison,
    v: np.ndarray,
    grads: list[Any],
    jitter: list[np.ndarray | None],
) -> Comparison:
    """Stage 2: a mismatch of a gradient whose rounding was not measured up front (a
    float64 one), judged again beside it.

    A float64 backward is right to its rounding too, which matters where it is
    ill-conditioned (an inverse of a matrix of entries 1e-159 errs by 1 where the
    gradient is 0, next to elements of 2e158): measured only where a mismatch needs
    it, for every input at once (``jitter`` is updated in place: the inputs after this
    one are compared beside it from the start)."""
    if not (comparison.mismatched and comparison.jitter is None and comparison.estimated):
        return comparison
    measured = run.rounding_jitter(v, grads, every=True)
    jitter[:] = [m if j is None else j for j, m in zip(jitter, measured)]
    c = comparison
    again = Comparison(c.i, c.x, c.analytic, c.tol, c.v_max, jitter[c.i])
    judge_full(again, comparison.estimated)
    again.estimated = comparison.estimated
    again.remeasured = True
    return again


def refined_at_own_scale(ev: Evaluator, comparison: Comparison, chosen: bool) -> Comparison:
    """Stage 3: a re-measured mismatch (stage 2) judged again where the analytic
    gradient is far larger than finite differences found (see :func:`_own_scale`),
    with the default tolerances only. Its estimates are then spent: the float64
    reruns of stage 4 are for a float32 or float16 gradient's first judgement."""
    if not comparison.remeasured:
        return comparison
    if comparison.mismatched and not chosen:
        comparison = _own_scale(ev, comparison) or comparison
    comparison.spent, comparison.estimated = comparison.estimated, None
    return comparison


def float64_rerun(
    run: _Run, ev: Evaluator, comparison: Comparison, v: np.ndarray, chosen: bool
) -> Comparison:
    """Stage 4, for a float32 or float16 gradient: a mismatch that the same backward
    in float64 shows to be the dtype's precision passes (:func:`judged_wide`); with
    the default tolerances (those the user chose are what they accept), a pass that a
    float64 judgement fails, fails (:func:`convicted_wide`, :func:`judged_as_float64`)."""
    i, x, v_max = comparison.i, comparison.x, comparison.v_max
    if x.dtype.itemsize >= 8:
        return comparison
    if comparison.mismatched and comparison.estimated:
        return judged_wide(run, i, x, v, comparison, comparison.tol, v_max)
    if chosen:
        return comparison
    return (
        convicted_wide(run, i, x, v, comparison, ev)
        or judged_as_float64(run, i, x, comparison, ev, v_max)
        or comparison
    )


def forward_apart(run: _Run, ev: Evaluator, comparison: Comparison) -> bool:
    """Stage 5, for a mismatch that stands: whether the forward's value at x stands apart
    from its neighbours' along some element (:meth:`Evaluator.stands_apart`; the
    mismatched elements first, then the input's others, then the other inputs', at most
    :data:`APART_ELEMENTS_PROBED`). There x lies on a singular set to within the
    forward's rounding (trace(inv(A)) at a matrix whose LU pivot is a rounding error),
    every step crosses it, and neither the finite differences nor the gradient the
    backward computed from that forward are evidence: the example is skipped
    (:data:`Skip.APART`). A forward continuous at x leaves the mismatch a failure."""
    if ev.apart_somewhere(comparison.i, dict.fromkeys(comparison.bad), run.const):
        comparison.apart = True
        return True
    return False


def ties_not_a_gradient(
    ev: Evaluator, comparison: Comparison, first: tuple[Any, np.ndarray]
) -> Comparison:
    """Stage 6, for a full-mode mismatch that stands and no forward apart: where every
    mismatched element is tied in value with others (a block ``B``), whether the op is
    not differentiable at the tie, and the analytic gradient one of its subgradients.

    Where ``s`` is differentiable at x, its derivative along ``1_B`` (every element of
    the block moved together) is the sum of its partial derivatives over ``B``, and
    so is the difference quotient at every small step ``h``, up to a remainder that
    vanishes with ``h``. At a tie of a sort, median or max the partial derivatives
    exist (median([0, 0, 0]) stands still when one element moves, either way) but
    do not add up: along ``1_B`` the median moves by ``h``. The quotients there are
    those of the pieces the tie joins, exact at every small step: their
    non-additivity ``D(h) - sum_k Q_k(h)`` is the same at :data:`TIE_LEVELS` steps,
    each a quarter of the last, and :data:`TIE_NOISE_MARGIN` times above their
    rounding. A kink or singular set at some distance from x (the zero of abs at
    inputs of 1e-6, a matrix 2e-48 from singular) shows no such steadiness: below its
    distance the non-additivity vanishes, across it it changes with the step. Along
    ``1_B`` the tie holds, so every piece has the same slope there, and torch's
    choice among them (or any mean of them) gives ``<g, 1_B> = D``: the analytic
    gradient must agree with ``D`` within the comparison's own tolerance, so a wrong
    gradient at a tie (a median off by 1%) stays a failure. What the block's
    elements cannot show (how ``g`` is spread over a tie) is checked away from ties.

    The estimates are those the comparison that stands was judged by (its own, or
    those stage 3 spent: :attr:`Comparison.spent`, with the elements it estimated
    again at their own scale); else ``first``, the first estimates and the analytic
    gradient they were judged against, where the comparison is of that gradient. Where
    a block's joint direction shows the gradient wrong along it, the comparison keeps
    what it showed (:attr:`Comparison.along_tie`, which its failure reports). A
    mismatch on an element that shares its value with none,
    of fast mode, or of a float64 rerun without estimates stays as it is."""
    c = comparison
    estimated = next((e for e in (c.estimated, c.spent) if e is not None), None)
    if estimated is None and c.analytic is first[1]:
        estimated = first[0]
    if not (c.mismatched and estimated is not None and c.x.dtype.kind == "f"):
        return comparison
    blocks = _tie_blocks(ev, c)
    if blocks is None:
        return comparison
    numeric, error, kink, curvature, noise = (np.array(a).reshape(-1) for a in estimated)
    atol = c.abs_tol(np.where(kink, 0.0, numeric))
    for members in blocks:
        if not _tie_explains(ev, c, members, atol, curvature):
            return comparison
    kink = kink.copy()
    kink[np.asarray(c.bad, dtype=np.int64)] = True
    again = Comparison(c.i, c.x, c.analytic, c.tol, c.v_max, c.jitter)
    judge_full(again, (numeric, error, kink, curvature, noise))
    again.estimated = (numeric, error, kink, curvature, noise)
    again.remeasured, again.low = c.remeasured, c.low
    return again if not again.mismatched else comparison


def _tie_blocks(ev: Evaluator, c: Comparison) -> list[np.ndarray] | None:
    """The blocks of elements tied with the mismatched ones (flat indices; the same
    elements tied in the input as given and as evaluated), or None where a mismatched
    element shares its value with none, or the blocks are too many or too large."""
    given = c.x.reshape(-1)
    work = ev.work[c.i].reshape(-1)
    bad = np.unique(np.asarray(c.bad, dtype=np.int64))
    blocks: list[np.ndarray] = []
    for j in bad:
        if any(j in members for members in blocks):
            continue
        members = np.flatnonzero(given == given[j])
        same = np.flatnonzero(work == work[j])
        if not (2 <= members.size <= TIE_BLOCK_MAX and np.array_equal(members, same)):
            return None
        blocks.append(members)
        if len(blocks) > TIE_BLOCKS_PROBED:
            return None
    return blocks or None


def _tie_explains(
    ev: Evaluator, c: Comparison, members: np.ndarray, atol: float, curvature: np.ndarray
) -> bool:
    """Whether the tie of ``members`` is a kink of ``s`` and the analytic gradient is
    right along it (see :func:`ties_not_a_gradient`): along ``1_B`` the derivative
    agrees with ``<g, 1_B>`` within the comparison's allowance, and the quotients'
    non-additivity (or, where they add up, their one-sided jumps) is larger than that
    allowance and steady over the levels."""
    work = ev.work[c.i].reshape(-1)
    others = np.abs(np.delete(work, members).astype(np.float64) - work[members[0]])
    top = float(others.min()) / LEVEL_RATIO if others.size else math.inf
    memo: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    joint = _joint_derivative(ev, c, members, atol, top, memo)
    if joint is None:
        return False
    value, error, step = joint
    analytic = c.analytic.reshape(-1).astype(np.float64)[members]
    x = np.abs(c.x.reshape(-1).astype(np.float64)[members])
    with np.errstate(all="ignore"):  # (as judge_full's, but the jitter: at a tie the
        # analytic gradient moves with the inputs' last bits as the tie breaks)
        extra = INPUT_ROUNDING_FACTOR * c.eps * x * np.abs(curvature[members])
    extra = np.where(np.isfinite(extra), extra, 0.0)
    allowed = (
        math.sqrt(members.size) * atol
        + c.rtol * abs(value)
        + ERROR_ESTIMATE_FACTOR * error
        + float(extra.sum())
        + BACKWARD_ROUNDING_FACTOR * c.eps * float(np.abs(analytic).sum())
    )
    if not abs(float(analytic.sum()) - value) <= allowed:
        c.along_tie = (members, value, float(analytic.sum()))
        return False
    start = min(step, top / LEVEL_RATIO**TIE_LEVELS)  # (TIE_LEVELS fit)
    apart = _non_additivity(ev, c.i, members, start, top, memo)
    return apart is not None and abs(apart) > allowed


def _joint_derivative(
    ev: Evaluator,
    c: Comparison,
    members: np.ndarray,
    atol: float,
    top: float,
    memo: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> tuple[float, float, float] | None:
    """The derivative of ``s`` along ``1_B`` (``members`` moved together), its error
    and the smaller step it came from; None where it is no finite number, a kink or
    of a low order.

    The element's own levels (:meth:`Evaluator.refine`) give it where their steps stay
    below ``top``, a quarter of the distance to the input's nearest other value.
    Where they reach across it (a tie at 0, whose steps are absolute, beside values
    1.9e-270 away: the same input as at 1, where they do not), what they measure is
    not the derivative at x: the levels below ``top`` do (:data:`TIE_LEVELS` of them,
    each a quarter of the next), its error their spread and rounding (the rounding of
    the outputs these steps reach, as :func:`_non_additivity`'s)."""
    d = np.zeros(c.x.size)
    d[members] = 1.0
    size = abs(float(ev.work[c.i].reshape(-1)[members[0]]))
    h0 = float(step_sizes(np.array([size]), ev.eps)[0])
    est = ev.refine(c.i, d, h0, atol, size, step_points=False)
    usable = math.isfinite(est.value) and math.isfinite(est.error)
    if usable and not (est.kink or est.low_order) and (float(est.step) or h0) < top:
        return est.value, est.error, float(est.step) or h0
    if not math.isfinite(top):
        return None
    steps = [top / LEVEL_RATIO ** (TIE_LEVELS - k) for k in range(TIE_LEVELS)]
    if not steps[0] > OWN_SCALE_MIN_ULPS * float(np.spacing(np.float64(size))):
        return None  # (x ± those steps round to x's few neighbours)
    joint = [_tie_level(ev, c.i, members, h, memo) for h in steps]
    found = _extrapolated([(float(D[0]), float(each[0])) for D, _, each in joint])
    return None if found is None else (*found, steps[0])


def _extrapolated(levels: list[tuple[float, float]]) -> tuple[float, float] | None:
    """A derivative from central differences at steps each :data:`LEVEL_RATIO` times
    the last (``levels``: each one's value and rounding, the smallest step first),
    with its error: the smallest step's value, its error the levels' spread (its
    truncation is a fifteenth of the next level's difference from it) and rounding,
    or Richardson's extrapolation of the two smallest (the h² term cancelled), its
    error the difference from the next pair's and the rounding of both, or the
    largest step's value, its error twice the levels' spread (its truncation is the
    spread's LEVEL_RATIO**2 / (LEVEL_RATIO**2 - 1) where the differences follow h²) and
    its own rounding, whichever error is the smallest (a median's quotients are the
    same at every step, where extrapolation only doubles the rounding, and the largest
    step's rounding is the least: a middle element 1.8e-48 from its neighbour at
    1.2e-38, whose smallest step's rounding, 2e-3 of the gradient, read a backward
    1.001x off as within it); None where one is not finite."""
    d = [value for value, _ in levels]
    rounding = max(r for _, r in levels)
    if not (all(math.isfinite(value) for value in d) and math.isfinite(rounding)):
        return None
    rich = [(TRUNCATION_GROWTH * a - b) / (TRUNCATION_GROWTH - 1) for a, b in itertools.pairwise(d)]
    plain = (d[0], max(abs(value - d[0]) for value in d) + rounding)
    extrapolated = (rich[0], abs(rich[0] - rich[1]) + 2 * rounding)
    largest = (d[-1], 2 * max(abs(value - d[-1]) for value in d) + levels[-1][1])
    return min(plain, extrapolated, largest, key=lambda found: found[1])


def _tie_level(
    ev: Evaluator,
    i: int,
    members: np.ndarray,
    step: float,
    memo: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One level of the tie's rows (``1_B``, then each element of ``B``) at ``step``:
    (D, J, rounding) per row (:meth:`Evaluator.reaching`), kept in ``memo`` by step."""
    if step not in memo:
        rows = np.zeros((members.size + 1, ev.work[i].size))
        rows[0, members] = 1.0
        rows[np.arange(1, members.size + 1), members] = 1.0
        found = ev.reaching(i, rows, step)
        memo[step] = found[:, 0], found[:, 1], found[:, 2]
    return memo[step]


def _non_additivity(
    ev: Evaluator,
    i: int,
    members: np.ndarray,
    h: float,
    top: float,
    memo: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> float | None:
    """The non-additivity ``D(h) - sum_k Q_k(h)`` of ``s``'s quotients along ``1_B``
    and along each element of ``B`` (``members``), at steps from ``h`` up by
    :data:`LEVEL_RATIO`, below ``top`` (a quarter of the distance to the input's
    nearest other value) and at most :data:`TIE_LEVELS_UP` levels up: its value at
    the first :data:`TIE_LEVELS` levels that are each :data:`TIE_NOISE_MARGIN` times
    above their rounding, where every level agrees with it (within
    :data:`TIE_STEADINESS` and the rounding of both) (:func:`_steady`).

    Where the quotients add up, the sum of the elements' jumps ``sum_k J_k(h)`` (each
    the difference of its one-sided quotients) by the same rule: at a pair of zeros
    tied in a row of [0, 0, 1, 1], the median's lower middle value, each element
    moved alone moves it one way only (``Q_k = v/2`` each, adding up to ``D = v``),
    and ``J_k = v`` at every step below 1. A differentiable op's jumps are O(h).
    Else None.

    The rounding is that of the outputs these steps reach (``|f(x)|`` and what each
    row's difference moves them by), not the forward's measured rounding sizes:
    those are measured over the neighbourhood the largest refinement steps reach,
    which a tie beside a value 1e-20 away never sees (its steps are below 1e-21,
    and a floor of eps·1 over such a step would hide every level). Rounding of
    intermediates larger than the outputs, where it were present, moves like 1/h
    from level to level and is not steady."""
    apart: list[tuple[float, float]] = []
    jumps: list[tuple[float, float]] = []
    for level in range(TIE_LEVELS_UP + 1):
        step = h * LEVEL_RATIO**level
        if not step < top:
            break
        D, J, each = _tie_level(ev, i, members, step, memo)
        apart.append((float(D[0] - D[1:].sum()), float(each.sum())))
        jumps.append((float(J[1:].sum()), 2 * float(each[1:].sum())))
        if sum(abs(a) > TIE_NOISE_MARGIN * r for a, r in apart) == TIE_LEVELS:
            break
    found = _steady(apart)
    return found if found is not None else _steady(jumps)


def _steady(seen: list[tuple[float, float]]) -> float | None:
    """A statistic's value over the levels (``seen``: its value and rounding at each),
    where its first :data:`TIE_LEVELS` values that are :data:`TIE_NOISE_MARGIN` times
    above their rounding are found and every level agrees with the first of them
    (within :data:`TIE_STEADINESS` and the rounding of both); else None."""
    if not all(math.isfinite(a) and math.isfinite(r) for a, r in seen):
        return None
    clean = [a for a, r in seen if abs(a) > TIE_NOISE_MARGIN * r][:TIE_LEVELS]
    if len(clean) < TIE_LEVELS:
        return None
    last = [r for a, r in seen if abs(a) > TIE_NOISE_MARGIN * r][TIE_LEVELS - 1]
    value = clean[0]
    bound = TIE_STEADINESS * abs(value)
    if all(abs(a - value) <= bound + r + last for a, r in seen):
        return value
    return None


def _own_scale(ev: Evaluator, comparison: Comparison) -> Comparison | None:
    """The mismatch judged again where the finite differences' steps were far longer
    than the scale the function may vary on at x: where the analytic gradient is far
    larger than they found (:data:`OWN_SCALE_RATIO` times), the steps may have
    crossed a singular set nearer than they are long, and measured another function;
    and an element 0 < |x| < 8e-25, below the levels' reach, may lie that close to
    kinks (a median's middle element of 8.9e-73 between 0 and 1.2e-38, whose every
    level moved it across both and read a flat 0). Steps at the scale the analytic
    gradient implies (``Evaluator.at_own_scale``), or at the element's own relative
    step or below its distance to the input's nearest other value
    (:func:`_at_own_small_step`), decide each such element: where they agree
    with it, their estimate replaces the first one, and the element is judged again
    at the usual tolerance; a wrong gradient (a smooth function, a factor too big)
    disagrees there too and stays a failure. None where no element was re-estimated."""
    if comparison.estimated is None:
        return None
    numeric, error, kink, curvature, noise = (np.array(a) for a in comparison.estimated)
    analytic = comparison.analytic.reshape(-1)
    threshold = comparison.jump_threshold(np.where(kink, 0.0, numeric))
    changed = False
    for j in sorted(set(comparison.bad))[:NONFINITE_ELEMENTS_PROBED]:
        a, n = float(analytic[j]), float(numeric.reshape(-1)[j])
        if not math.isfinite(a):
            continue
        found = None
        if abs(a) > OWN_SCALE_RATIO * max(abs(n), error.reshape(-1)[j]):
            found = ev.at_own_scale(comparison.i, j, a)
        if found is None or not abs(found[0] - a) <= OWN_SCALE_AGREEMENT * abs(a):
            small = _at_own_small_step(ev, comparison.i, j)
            if small is None or not abs(small[0] - a) <= OWN_SCALE_AGREEMENT * abs(a):
                continue
            found = small[:2]
            if not found[1] <= max(threshold, SMALL_X_RESOLVED * abs(found[0])):
                # (steps below every level's resolve s no finer than found[1] here:
                # where that cannot tell the gradient from it, nothing is known at
                # this element, numerically: the levels measured another function)
                if small[2] and abs(found[0] - a) <= ERROR_ESTIMATE_FACTOR * found[1]:
                    kink.reshape(-1)[j] = changed = True
                continue
        numeric.reshape(-1)[j], error.reshape(-1)[j] = found
        kink.reshape(-1)[j] = False
        curvature.reshape(-1)[j] = 0.0
        changed = True
    if not changed:
        return None
    c = comparison
    again = Comparison(c.i, c.x, c.analytic, c.tol, c.v_max, c.jitter)
    judge_full(again, (numeric, error, kink, curvature, noise))
    again.estimated = (numeric, error, kink, curvature, noise)
    return again


def _at_own_small_step(ev: Evaluator, i: int, j: int) -> tuple[float, float, bool] | None:
    """The derivative of ``s`` along element ``j`` (flat) of input ``i`` from central
    differences on the scales it may vary on there: steps from the element's
    relative step eps**(1/3)·|x| (for 0 < |x| < 8e-25, LEVEL_RATIO**-:data:`SMALL_X_LEVELS`,
    where the levels stop above it) or a quarter of the distance to the input's
    nearest other value over LEVEL_RATIO**:data:`TIE_LEVELS`, whichever is smaller
    (an element at 0 has steps of eps**(1/3) in any units: a median's middle element
    at 0 between -3e-206 and 1.4e-45, whose every level moved it across both and read
    a flat 0, is the same function as at 0 between -3 and 1e161), :data:`TIE_LEVELS`
    levels up from there, with the rounding of the outputs they reach
    (:meth:`Evaluator.reaching`): where their quotients are steady (:func:`_steady`)
    and the one-sided ones agree (each level's jump within :data:`TIE_STEADINESS` of
    the value and its rounding), as (value, error: :func:`_extrapolated`, whether the
    steps lie below every level's); else None. A function smooth on that scale gives
    the same quotient at each (to O(h²)); rounding, a quantum or a kink the steps
    reach across do not."""
    work = ev.work[i].reshape(-1)
    size = abs(float(work[j]))
    others = np.abs(work[work != work[j]].astype(np.float64) - float(work[j]))
    with np.errstate(divide="ignore"):  # (0 where a size is subnormal: no step)
        steps = [float(others.min()) / LEVEL_RATIO ** (TIE_LEVELS + 1)] if others.size else []
        if 0 < size < LEVEL_RATIO**-SMALL_X_LEVELS:
            steps.append(float(np.cbrt(ev.eps)) * size)
        if not steps:
            return None
        h = float(np.exp2(np.floor(np.log2(min(steps)))))
    if not h > OWN_SCALE_MIN_ULPS * float(np.spacing(size)):
        return None  # (x ± h would round to x's few neighbours: nothing to resolve)
    row = np.zeros((1, work.size))
    row[0, j] = 1.0
    seen = [ev.reaching(i, row, h * LEVEL_RATIO**k)[0] for k in range(TIE_LEVELS)]
    value = _steady([(float(d), float(r)) for d, _, r in seen])
    if value is None or not all(
        abs(float(jump)) <= TIE_STEADINESS * abs(value) + 2 * float(r) for _, jump, r in seen
    ):
        return None
    found = _extrapolated([(float(d), float(r)) for d, _, r in seen])
    base = float(step_sizes(np.array([size]), ev.eps)[0])
    lowest = base * LEVEL_RATIO ** (LOWEST_LEVEL - int(_extra_levels(np.array([size]))[0]))
    return None if found is None else (*found, h * LEVEL_RATIO ** (TIE_LEVELS - 1) < lowest)
