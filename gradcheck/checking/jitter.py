"""Rounding as a run's gradient shows it: the inputs moved by a few units in their last
place (:func:`few_ulps`), and how far the moved runs' gradients may be from the
example's own (:func:`unless_outlier`). Used by :mod:`gradcheck.checking.run`'s
rounding jitter."""

from __future__ import annotations

import numpy as np

from gradcheck.checking.thresholds import OUTLIER_FACTOR, ROUNDING_MOVE_ULPS


def few_ulps(x: np.ndarray, rng: np.random.Generator, zero: float | None = None) -> np.ndarray:
    """``x`` with each float element moved up or down by 1 to :data:`ROUNDING_MOVE_ULPS`
    units in its last place (a zero by as many times ``zero`` of the input's largest
    element, by default eps: a subnormal step would change nothing).

    The float64 measure (made only where a mismatch needs it) leaves zeros where they
    are (``zero=0``): a zero is exact, and a branch at x == 0 is where bugs live (xlogy's
    forward mask reused for d/dx gives 0 instead of log y there, pytorch#80770); moved
    off it, the gradient would jump by the very error to be caught."""
    if x.dtype.kind != "f":
        return x
    scale = float(np.max(np.abs(x), initial=0.0)) or 1.0
    zero = float(np.finfo(x.dtype).eps) if zero is None else zero
    with np.errstate(all="ignore"):
        ulp = np.where(x != 0, np.spacing(np.abs(x)), zero * scale)
        moves = rng.integers(1, ROUNDING_MOVE_ULPS + 1, x.shape) * rng.choice([-1, 1], x.shape)
        out = (x + moves * ulp).astype(x.dtype)
    return np.where(np.isfinite(out), out, x)


def unless_outlier(g0: np.ndarray, runs: list[np.ndarray], jitter: np.ndarray) -> np.ndarray:
    """``jitter`` (how far the moved gradients ``runs`` are from ``g0``, at most),
    except at the elements where ``g0`` alone is off: its typical distance from the
    moved ones (the median) beyond :data:`OUTLIER_FACTOR` times their typical
    distance from each other, which is then the rounding allowed there.

    Rounding moves every run's gradient, the example's as much as the moved ones', so
    the two distances are alike. Where the moved gradients agree with each other and
    the example's is off, it sits on a set of measure zero where the backward takes
    another path (a singular matrix's determinant, torch's 0 there; a parameter
    exactly 0): no rounding, and what the moves show is a gradient of another point.
    The medians let a move or two that stayed on the set (a repeated row moved alike)
    count for nothing."""
    stack = np.stack(runs)
    with np.errstate(all="ignore"):
        from_g0 = np.median(np.abs(stack - g0), axis=0)
        a, b = np.triu_indices(len(runs), 1)
        between = np.median(np.abs(stack[a] - stack[b]), axis=0)
        off = np.isfinite(from_g0) & np.isfinite(between) & (from_g0 > OUTLIER_FACTOR * between)
    return np.where(off, np.minimum(jitter, OUTLIER_FACTOR * between), jitter)
