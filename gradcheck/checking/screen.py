"""Auto mode's screen: two random directional derivatives that may stand for full
mode's element-by-element comparison of a float64 input.

Full mode makes two forward calls per element; torch's test settings compare one
random projection ``uᵀJv`` per input (two calls). A projection alone trades
sensitivity: its usual tolerance, ``√(Σ t_k² d_k²)``, hides an element's error up to
about ``√n`` times that element's own tolerance ``t_j``. The screen does not: it
passes an input only where each of its directions agrees within **half the smallest
``|d_k|·t_k``** of the input, so that any one element whose error full mode would
find (``|e_j| > t_j``, the bound before full mode's error-estimate allowance) moves
the directional derivative by more than the screen allows, and the input goes to full
mode. Where the screen does not pass an input (a difference too large, a jump ``J``
that may be a kink, the finite differences' own error above that bound, an output
that is not finite), full mode checks it, as without the screen: the screen never
fails anything, and costs 4 forward calls where it does not pass.

What the screen still gives up is the improbable: several wrong elements whose errors
cancel along both random directions at once (the factors are 32 values each, drawn
from the check's seed), or a finite difference whose truncation cancels an error.

Each ``d_k`` is full mode's own step for that element over the base step (a power of
two), times ``1 + m/16`` for a random m in 0..15, with a random sign: the direction
moves every element at least as far as full mode's first pass does, so a kink that
full mode's step reaches is reached here too, and shows in ``J`` (allowed only
:data:`~gradcheck.checking.thresholds.FIRST_JUMP_FRACTION` of the gradient's scale per
unit of the smallest ``|d_k|``, as full mode allows one element). A direction's
perturbations are exact in float64 (a power of two times four bits).
"""

from __future__ import annotations

import math

import numpy as np

from gradcheck.checking.compare import Comparison
from gradcheck.checking.levels import step_sizes
from gradcheck.checking.numerical import Evaluator
from gradcheck.checking.thresholds import (
    FIRST_JUMP_FRACTION,
    LEVEL_RATIO,
    SCREEN_DIRECTIONS,
    SCREEN_FRACTION,
    SCREEN_MIN_SIZE,
    TRUNCATION_GROWTH,
)

__all__ = ["screened"]


def screened(ev: Evaluator, cmp: Comparison, rng: np.random.Generator) -> bool:
    """Whether the screen passes input ``cmp.i``: then ``cmp`` holds its directions'
    largest errors (as fast mode's directions fill it) and nothing is mismatched;
    otherwise ``cmp`` is untouched and the input needs full mode."""
    x = ev.work[cmp.i]
    g = cmp.analytic.reshape(-1)
    if (
        x.size < SCREEN_MIN_SIZE
        or x.dtype != np.float64
        or cmp.x.dtype != np.float64
        or ev.inner is not None
        or not np.isfinite(g).all()
    ):
        return False
    flat = x.reshape(-1)
    h0 = 2.0 ** round(math.log2(np.cbrt(ev.eps)))  # (step_sizes at |x| <= 1)
    base = step_sizes(flat, ev.eps) / h0  # full mode's steps, in units of h0
    raw = rng.integers(0, 32, size=(SCREEN_DIRECTIONS, flat.size))
    d = np.where(raw & 16, -1.0, 1.0) * (1.0 + (raw & 15) / 16.0) * base
    atol = cmp.abs_tol(g)
    t = atol + cmp.rtol * np.abs(g)
    least = np.min(np.abs(d) * t, axis=1)  # the smallest |d_k|·t_k of each direction
    allowed = SCREEN_FRACTION * least
    analytic = d @ g
    numeric, jump, _ = ev.directional(cmp.i, d, h0)
    scale = float(np.max(np.abs(g), initial=0.0))
    jump_allowed = np.maximum(allowed, FIRST_JUMP_FRACTION * scale * np.min(np.abs(d), axis=1))
    with np.errstate(invalid="ignore"):
        smooth = np.abs(jump) <= jump_allowed
        diff = np.abs(analytic - numeric)
    if not smooth.all():
        return False
    if not (diff <= allowed).all():
        # The truncation of one central difference (h²·s''' along d, summed over every
        # element) is what usually exceeds the bound: a second step, 4h, and their
        # Richardson value, which cancels it (2 forward calls more per direction).
        wide, _, _ = ev.directional(cmp.i, d, LEVEL_RATIO * h0)
        with np.errstate(invalid="ignore"):
            numeric = numeric + (numeric - wide) / (TRUNCATION_GROWTH - 1)
            diff = np.abs(analytic - numeric)
        if not (diff <= allowed).all():
            return False
    # The errors as fast mode reports a direction's (the same scale for the same
    # comparison, and for a regression baseline's error ratios): against the
    # direction's usual tolerance, √(Σ d_k² t_k²), not the screen's stricter bound.
    usual = np.sqrt((d * d) @ (t * t))
    cmp.atol_used = atol
    cmp.max_abs = float(diff.max())
    # (each direction's allowance stands for its part beside rtol, as in fast mode)
    rel = cmp.relative_errors(diff, np.abs(numeric), np.abs(analytic), usual, atol)
    cmp.max_rel = float(rel.max())
    with np.errstate(all="ignore"):
        cmp.max_ratio = float(np.max(np.where(usual > 0, diff / usual, 0.0)))
    return True
