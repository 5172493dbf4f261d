"""The numeric verdict of one check, as named stages (DESIGN.md "One check", steps 3-5).

Each input that takes a gradient goes through the same five stages, each taking the
:class:`~gradcheck.checking.compare.Comparison` the last one gave and returning the one
that stands (itself where the stage has nothing to say):

1. :func:`first_comparison`: the analytic gradient against finite differences, every
   element (``compare_full``) or random directions (``compare_fast``);
2. :func:`noise_remeasured`: a float64 mismatch judged again beside the backward's own
   rounding, measured now (it is measured up front for float32 and float16 only);
3. :func:`refined_at_own_scale`: a re-measured mismatch where the analytic gradient is
   far larger than the finite differences found, estimated again at its own scale;
4. :func:`float64_rerun`: a float32 or float16 judgement weighed against the same
   backward in float64 (:mod:`gradcheck.checking.low_precision`).
5. :func:`forward_apart`: a mismatch that stands, where the forward's value at x
   stands apart from its neighbours' (a singular set within its rounding), is no
   evidence: the example is skipped.

:func:`numerics` runs them over the inputs and makes the result; :func:`execute` is a
whole check's run: the structural steps (:mod:`gradcheck.checking.run`), the numeric
verdict, and the checks that follow a numeric pass.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradcheck.checking.compare import Comparison, compare_fast, compare_full, judge_full
from gradcheck.checking.layout import STRIDED
from gradcheck.checking.low_precision import convicted_wide, judged_as_float64, judged_wide
from gradcheck.checking.numerical import Evaluator
from gradcheck.checking.result import CheckResult, Element, Failure, InputErrors
from gradcheck.checking.run import _Fail, _Inconclusive, _raised, _Run
from gradcheck.checking.screen import screened
from gradcheck.checking.thresholds import (
    APART_ELEMENTS_PROBED,
    NONFINITE_ELEMENTS_PROBED,
    OWN_SCALE_AGREEMENT,
    OWN_SCALE_RATIO,
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
    that was found)."""
    ev = _evaluator(run, v)
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
            comparison = refined_at_own_scale(ev, comparison, chosen)
            comparison = float64_rerun(run, ev, comparison, v, chosen)
            comparisons.append((comparison, g is None))
            if comparison.mismatched and forward_apart(run, ev, comparison):
                break
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
    if comparisons and comparisons[-1][0].apart:
        raise _Inconclusive(Skip.APART)
    return _result(run, comparisons)


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


def _evaluator(run: _Run, v: np.ndarray) -> Evaluator:
    """The finite differences' evaluator; the forward at the example raising is
    the check's end (a domain error: inconclusive; else a failure)."""
    try:
        return run.evaluator(v)
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
        compare_full(ev, comparison, run.settings.complex_step)
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
    comparison.estimated = None
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
    order = [(comparison.i, j) for j in dict.fromkeys(comparison.bad)]
    order += [(comparison.i, j) for j in range(comparison.x.size)]
    order += [
        (i, j)
        for i, x in enumerate(run.xs)
        if i != comparison.i and i not in run.const and x.dtype.kind == "f"
        for j in range(x.size)
    ]
    seen: set[tuple[int, int]] = set()
    for i, j in order:
        if (i, j) in seen:
            continue
        seen.add((i, j))
        if len(seen) > APART_ELEMENTS_PROBED:
            break
        if ev.stands_apart(i, j):
            comparison.apart = True
            return True
    return False


def _own_scale(ev: Evaluator, comparison: Comparison) -> Comparison | None:
    """The mismatch judged again where the analytic gradient is far larger than
    finite differences found (:data:`OWN_SCALE_RATIO` times): there the steps may
    have crossed a singular set nearer than they are long, and measured another
    function. Steps at the scale the analytic gradient implies
    (``Evaluator.at_own_scale``) decide each such element: where they agree with
    it, their estimate replaces the first one; a wrong gradient that large (a
    smooth function, a factor too big) disagrees there too and stays a failure.
    None where no element was re-estimated."""
    if comparison.estimated is None:
        return None
    numeric, error, kink, curvature, noise = (np.array(a) for a in comparison.estimated)
    analytic = comparison.analytic.reshape(-1)
    changed = False
    for j in sorted(set(comparison.bad))[:NONFINITE_ELEMENTS_PROBED]:
        a, n = float(analytic[j]), float(numeric.reshape(-1)[j])
        if not (math.isfinite(a) and abs(a) > OWN_SCALE_RATIO * max(abs(n), error.reshape(-1)[j])):
            continue
        found = ev.at_own_scale(comparison.i, j, a)
        if found is None or not abs(found[0] - a) <= OWN_SCALE_AGREEMENT * abs(a):
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
