"""The low-precision judgements: a float32 or float16 check weighed against the same
backward run in float64.

A low dtype's tolerances are wide (float16: 1e-2 of the gradient's scale), and its
finite differences noisy. Three judgements look past them, each a step of the
verdict's last stage (:func:`gradcheck.checking.verdict.float64_rerun`):

* :func:`judged_wide`: a mismatch that is the dtype's precision, not the formula (the
  float64 run of the backward agrees with finite differences, and the low gradient
  lies within :data:`~gradcheck.checking.thresholds.WIDE_ULPS` of it) passes;
* :func:`convicted_wide`: a pass whose float64 run fails a float64 check, the low
  gradient carrying the same error, fails;
* :func:`judged_as_float64`: a pass of an op that computes in the low dtype even when
  given float64 is judged with float64's tolerances beside the same error estimates.

:func:`wide_gradient` runs the backward on float64 copies of the inputs, once per check.
"""

from __future__ import annotations

import numpy as np

from gradcheck.checking.compare import (
    Comparison,
    judge_full,
)
from gradcheck.checking.numerical import (
    Estimate,
    Evaluator,
    exact_in,
    refine_elements,
)
from gradcheck.checking.run import _Run
from gradcheck.checking.thresholds import (
    ROUNDING_MOVE_ULPS,
    WIDE_ULPS,
)
from gradcheck.checking.tolerance import Tolerance, tolerance_for


def wide_gradient(run: _Run, v: np.ndarray, i: int) -> np.ndarray | None:
    """Input ``i``'s gradient from the backward run on float64 copies of the
    inputs (with ``v`` in float64), once per check; None where the op does not run
    in float64 (it raised, or its output is not float64)."""
    if run._wide is None:
        wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in run.xs]
        try:
            out, grads = run.tgt.run(
                wide,
                run.params,
                v.astype(np.float64),
                constants=sorted(run.const),
                outputs=run.outputs,
            )
        except Exception:
            out, grads = None, []
        finally:
            run.forward_calls += 1
            run.backward_calls += 1
        if np.asarray(out).dtype != np.float64:
            grads = []
        run._wide = (wide, list(grads))
    grads = run._wide[1]
    g64 = grads[i] if i < len(grads) else None
    return None if g64 is None else np.asarray(g64, dtype=np.float64)


def judged_wide(
    run: _Run,
    i: int,
    x: np.ndarray,
    v: np.ndarray,
    comparison: Comparison,
    tol: Tolerance,
    v_max: float,
) -> Comparison:
    """A float32 or float16 mismatch that is the dtype's precision, not the
    backward's formula: the same backward run on float64 copies of the inputs
    agrees with finite differences, and the low-precision gradient lies within
    :data:`WIDE_ULPS` of its units in the last place (on the scale of 1 or of the
    gradient) from it. Then that judgement stands (0.5·x·(1 + tanh u) in float32 at
    x = -5.25, where tanh rounds to -1: every term cancels to its rounding, and no
    move of the inputs' last bits shows it); else the mismatch."""
    g, g64 = comparison.analytic, wide_gradient(run, v, i)
    if g64 is None or g64.shape != g.shape:
        return comparison
    scale = max(1.0, float(np.max(np.abs(g64), initial=0.0)))
    with np.errstate(all="ignore"):
        off = float(np.max(np.abs(g - g64), initial=0.0))
    if not off <= WIDE_ULPS * float(np.finfo(x.dtype).eps) * scale:
        return comparison
    estimated = comparison.estimated
    if estimated is None:
        return comparison
    again = Comparison(i, x, g64, tol, v_max, comparison.jitter)
    judge_full(again, estimated)
    return comparison if again.mismatched else again


def convicted_wide(
    run: _Run, i: int, x: np.ndarray, v: np.ndarray, comparison: Comparison, ev: Evaluator
) -> Comparison | None:
    """A float32 or float16 gradient that passed its dtype's tolerances, where a
    float64 check of the same backward fails, and the low-precision gradient
    carries that error: the failing float64 judgement (a Comparison whose failure
    says so); else None.

    A low-precision gradient is right only to its dtype's rounding, so its
    tolerances are wide (float16: 1e-2 of the gradient's scale), and an error
    below them, though far above what the float64 finite differences resolve
    (a wrong reduction off by 8% of one element, a zeroed element of 6e-6 beside
    elements of 0.5), passes. The same backward run on float64 copies of the
    inputs shows the formula's error without that rounding; judged as a float64
    check would judge it (the elements it flags refined at float64's threshold,
    and allowed the float64 backward's measured rounding), it is a failure where
    the low-precision gradient is off the same way (within half the error).

    Not judged so: an op whose float64 run computes in the low dtype (a forward
    that the finite differences evaluate in it, see
    :meth:`~gradcheck.checking.numerical.Evaluator`; a gradient exactly
    representable in it: a float16 backward cast back), whose float64 numbers say
    nothing finer than the dtype's own."""
    if comparison.estimated is None or ev.eval_dtype != np.float64:
        return None
    g64 = wide_gradient(run, v, i)
    if g64 is None or g64.shape != comparison.analytic.shape:
        return None
    if exact_in(g64, x.dtype):
        return None
    if comparison.estimated is None:
        return None
    numeric, error, kink, curvature, noise = (np.array(a) for a in comparison.estimated)
    x64 = x.astype(np.float64)
    tol = tolerance_for(np.dtype(np.float64), None, None)
    v_max = float(np.max(np.abs(v), initial=0.0))
    wide = Comparison(i, x64, g64, tol, v_max)
    judge_full(wide, (numeric, error, kink, curvature, noise))
    if not wide.mismatched:
        return None
    # The flagged elements at float64's jump threshold (the low dtype's may have
    # left a small kink unmarked, or settled an element by its first difference).
    which = np.array(sorted(set(wide.bad)))
    est = Estimate(numeric, error, kink, curvature, np.zeros(numeric.size, bool), 0, noise)
    threshold = wide.jump_threshold(np.where(kink, 0.0, numeric))
    refine_elements(ev, i, est, which, threshold)
    estimated = (est.value, est.error, est.kink, est.curvature, est.noise)
    assert run._wide is not None  # (made by wide_gradient)
    arrays, grads = run._wide
    jitter = run.rounding_jitter(v.astype(np.float64), grads, every=True, arrays=arrays)
    wide = Comparison(i, x64, g64, tol, v_max, jitter[i])
    judge_full(wide, estimated)
    bad = np.array(wide.bad, dtype=int)
    if not bad.size:
        return None
    low = comparison.analytic.reshape(-1)
    with np.errstate(invalid="ignore"):
        carried = np.abs(low[bad] - g64.reshape(-1)[bad]) <= 0.5 * np.abs(
            g64.reshape(-1)[bad] - est.value[bad]
        )
    if not carried.any():
        return None
    wide.estimated = estimated
    wide.low = (comparison.analytic, str(x.dtype))
    return wide


def judged_as_float64(
    run: _Run, i: int, x: np.ndarray, comparison: Comparison, ev: Evaluator, v_max: float
) -> Comparison | None:
    """A float32 or float16 gradient that passed its dtype's tolerances, of an op
    whose forward computes in that dtype even when given float64 (``f(x.half())``
    cast back: the finite differences run in it, :attr:`Evaluator.inner`), judged
    as a float64 check of the same op judges it: with float64's tolerances beside
    the same error estimates, which hold that dtype's noise already, and the
    allowances for the gradient's own rounding in its dtype (its measured jitter,
    the rounding of intermediates of the upstream gradient's size, eps·|x|·|s''|).
    The failing judgement, or None.

    The dtype's tolerances (float16: 1e-2 of the gradient's scale, and 1e-2
    relative) are for finite differences that its noise would otherwise judge too
    strictly; here the error estimate counts that noise, and on top of it they
    passed a backward off by 5 to 10% (exp, x·y computed in float16), which the
    float64 check of the same op fails. (:func:`convicted_wide` does not judge
    such an op: its float64 run computes in the low dtype.)"""
    if comparison.estimated is None or ev.inner is None:
        return None
    tol = tolerance_for(np.dtype(np.float64), None, None)
    # The measured jitter moved the inputs by up to ROUNDING_MOVE_ULPS of their
    # ulps, a move that float64 steps never see but that in float16 changes the
    # exact gradient of exp at 4 by 1.5%: per ulp, as eps·|x|·|s''| counts it.
    jitter = None if comparison.jitter is None else comparison.jitter / ROUNDING_MOVE_ULPS
    again = Comparison(i, x, comparison.analytic, tol, v_max, jitter)
    judge_full(again, comparison.estimated)
    if not again.mismatched:
        return None
    # The flagged elements refined at the float64 judgement's own jump threshold
    # (the dtype's may have settled them by their first difference).
    numeric, error, kink, curvature, noise = (np.array(e) for e in comparison.estimated)
    which = np.array(sorted(set(again.bad)))
    est = Estimate(numeric, error, kink, curvature, np.zeros(numeric.size, bool), 0, noise)
    refine_elements(ev, i, est, which, again.jump_threshold(np.where(kink, 0.0, numeric)))
    estimated = (est.value, est.error, est.kink, est.curvature, est.noise)
    again = Comparison(i, x, comparison.analytic, tol, v_max, jitter)
    judge_full(again, estimated)
    if not again.mismatched:
        return None
    again.estimated = estimated
    return again
