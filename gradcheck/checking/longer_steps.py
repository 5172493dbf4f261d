"""Longer steps for an element whose match stands on its error estimate's rounding.

Full mode passes an element where ``|analytic - numeric|`` is within the tolerance
plus a multiple of the finite differences' error estimate. Where the estimate is
rounding (the forward's value is far larger than its changes over the ladder's steps:
1/sqrt(1 + x²) at x = 1e-9 changes by 1e-18 over a step of 1e-9, atan at 1e9 by 1e-10
over 2e5), that multiple can be a few percent of the gradient, and a backward 1e-3
off passes on it. Such an element is estimated again over the ladder extended upward
(:data:`~gradcheck.checking.thresholds.LONGER_LEVELS` more levels, 2 forward calls
each, besides the ladder's own), and the new estimate replaces the old where it is
finer and agrees with it within both estimates' errors; otherwise the old one stands.
A kink seen only by the longer steps is no kink of the element (they reach further
than the ladder that saw it smooth), and leaves the old estimate too, as does a value
of exactly 0 (no output moved at any of the steps), or a forward that raised at one of
them (a step past the op's domain, which the ladder's steps did not reach). A re-estimate is
evidence of relative errors above :data:`~gradcheck.checking.thresholds.LONGER_RESOLVED`
only: a backward of a function that flat loses digits to cancellation too.

An element that passes within the tolerance itself (or within half what a
re-estimate is evidence of), or fails, costs nothing here: the longer steps could only
pass it, and a failure is what the stages after the first re-measure.
"""

from __future__ import annotations

import numpy as np

from gradcheck.checking.compare import Comparison, analytic_rounding
from gradcheck.checking.levels import step_sizes
from gradcheck.checking.numerical import Evaluator
from gradcheck.checking.thresholds import ERROR_ESTIMATE_FACTOR, LONGER_LEVELS, LONGER_RESOLVED

__all__ = ["refined_longer"]


def refined_longer(ev: Evaluator, cmp: Comparison, estimated: tuple[np.ndarray, ...]) -> int:
    """Re-estimate, in place of their values in ``estimated`` (full mode's flat
    ``(numeric, error, kink, curvature, noise)`` of input ``cmp.i``), the elements
    that pass only within their estimate's rounding noise; the number replaced."""
    numeric, error, kink, curvature, noise = estimated
    analytic = cmp.analytic.reshape(-1)
    atol = cmp.abs_tol(np.where(kink, 0.0, numeric) if kink.any() else numeric)
    with np.errstate(all="ignore"):
        diff = np.abs(analytic - numeric)
        proper = atol + cmp.rtol * np.abs(numeric) + analytic_rounding(cmp, curvature)
        # (an error below half what a re-estimate is evidence of passes after it too)
        which = np.flatnonzero(
            ~kink
            & (diff > proper + LONGER_RESOLVED / 2 * np.abs(numeric))
            & (diff <= proper + ERROR_ESTIMATE_FACTOR * error)
            & (ERROR_ESTIMATE_FACTOR * noise > proper)
        )
    if not which.size:
        return 0
    x = ev.work[cmp.i].reshape(-1)
    threshold = cmp.jump_threshold(np.where(kink, 0.0, numeric))
    replaced = 0
    saved = ev.work[cmp.i].copy()
    for j, h in zip(which.tolist(), step_sizes(x[which], ev.eps).tolist()):
        try:
            one = ev.refine(cmp.i, j, h, threshold, abs(float(x[j])), upper=LONGER_LEVELS)
        except Exception:
            # (a step past the op's domain: a binary cross-entropy at x = 0.023, whose
            # longer steps reach 0.025, raises at x < 0; the ladder's own steps did not)
            ev.work[cmp.i][...] = saved
            continue
        # (a value of exactly 0: no output moved at any step, as where the output
        # rounds at a quantum the steps never cross, (1e-7·x + 1e9) - 1e9: no evidence)
        finer = one.value != 0 and np.isfinite(one.value) and not one.kink and one.error < error[j]
        agrees = abs(one.value - numeric[j]) <= ERROR_ESTIMATE_FACTOR * (error[j] + one.error)
        if not (finer and agrees):
            continue
        least = LONGER_RESOLVED * abs(one.value) / ERROR_ESTIMATE_FACTOR
        numeric[j], curvature[j] = one.value, one.curvature
        error[j], noise[j] = max(one.error, least), max(one.noise, least)
        replaced += 1
    return replaced
