"""Well-conditioned floating-point elements: the default values of every strategy here.

Finite differences divide a difference of function values by a small step, so inputs
that are huge, subnormal, or a hair away from a point where the function has a kink
(``abs`` at 0, ``sqrt`` at its domain edge) give a numeric gradient that says nothing
about the analytic one. The elements drawn here are finite, normal (no subnormals),
inside a bounded interval, and at least ``margin`` away from every point the caller
asks to avoid.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, cast

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

__all__ = ["DEFAULT_BOUND", "allowed_intervals", "interval_floats"]

#: Where a domain has no bound of its own, values stay within +-DEFAULT_BOUND
#: (moderate magnitudes keep finite-difference errors small).
DEFAULT_BOUND = 10.0


def _inward(value: float, dtype: np.dtype, toward: float) -> float:
    """The value of ``dtype`` nearest ``value`` that lies on the ``toward`` side of it
    (Hypothesis wants bounds exactly representable in the float width)."""
    cast = dtype.type(value)
    if (toward > value and float(cast) < value) or (toward < value and float(cast) > value):
        cast = np.nextafter(cast, dtype.type(toward))
    return float(cast)


def _step_away(p: float, margin: float) -> float:
    """``p + margin``, moved outward until it is at least ``|margin|`` from ``p`` in
    floating point too (``1.0 - 0.1`` is 0.09999999999999998 away from 1)."""
    q = p + margin
    while abs(q - p) < abs(margin):
        q = float(np.nextafter(q, math.copysign(math.inf, margin)))
    return q


def allowed_intervals(
    lo: float, hi: float, avoid: Sequence[float], margin: float
) -> list[tuple[float, float]]:
    """``[lo, hi]`` minus the open balls of radius ``margin`` around each point of
    ``avoid``, as closed intervals, the ones nearest 0 first (so that shrinking, which
    prefers the first branch, reaches small values)."""
    lo = max(lo, -DEFAULT_BOUND) if math.isinf(lo) else lo
    hi = min(hi, DEFAULT_BOUND) if math.isinf(hi) else hi
    intervals = [(lo, hi)]
    for p in sorted(avoid):
        pieces = []
        for a, b in intervals:
            if p + margin <= a or p - margin >= b:
                pieces.append((a, b))
                continue
            below, above = _step_away(p, -margin), _step_away(p, margin)
            if a <= below:
                pieces.append((a, below))
            if above <= b:
                pieces.append((above, b))
        intervals = pieces

    def distance_from_zero(interval: tuple[float, float]) -> tuple[float, bool]:
        a, b = interval
        return (0.0 if a <= 0 <= b else min(abs(a), abs(b)), b < 0)

    return sorted(intervals, key=distance_from_zero)


def interval_floats(
    dtype: np.dtype,
    lo: float = -math.inf,
    hi: float = math.inf,
    *,
    avoid: Sequence[float] = (),
    margin: float = 0.0,
) -> st.SearchStrategy[float]:
    """Finite, normal floats representable in ``dtype``, in ``[lo, hi]`` (infinite
    bounds become +-DEFAULT_BOUND), at least ``margin`` from every point of ``avoid``.

    Raises InvalidArgument when nothing is left to draw from.
    """
    width = cast("Literal[16, 32, 64]", dtype.itemsize * 8)  # a float dtype's bits
    branches = []
    for a, b in allowed_intervals(lo, hi, avoid, margin):
        a, b = _inward(a, dtype, b), _inward(b, dtype, a)
        if a <= b:
            branches.append(
                st.floats(
                    a, b, allow_nan=False, allow_infinity=False, allow_subnormal=False, width=width
                )
            )
    if not branches:
        raise InvalidArgument(
            f"no {dtype} value lies in [{lo}, {hi}] at least margin={margin} away from "
            f"avoid={list(avoid)}; widen the domain or lower the margin"
        )
    return st.one_of(branches)


def default_elements(dtype: np.dtype) -> st.SearchStrategy[object]:
    """The elements an array of ``dtype`` gets unless the caller passes ``elements``:
    well-conditioned floats for floating dtypes, small integers (within -10..10, or
    0..10 unsigned) for integer dtypes, and booleans."""
    if dtype.kind == "f":
        return interval_floats(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return st.integers(max(int(info.min), -10), min(int(info.max), 10))
    if dtype.kind == "b":
        return st.booleans()
    raise InvalidArgument(f"dtype={dtype} has no default elements; pass elements=")


#: The most points :func:`spaced_values` offers (the spacing widens beyond it).
SPACED_LIMIT = 100_000


def spaced_values(
    dtype: np.dtype,
    lo: float = -math.inf,
    hi: float = math.inf,
    *,
    avoid: Sequence[float] = (),
    margin: float,
) -> np.ndarray:
    """Values of ``dtype`` in ``[lo, hi]`` (infinite bounds become +-DEFAULT_BOUND), at
    least ``margin`` from every point of ``avoid`` and from each other, nearest 0
    first: drawing distinct positions among them gives distinct values a margin
    apart by construction, for any number of elements (rejecting draws with two
    values too close, as one would otherwise, almost never succeeds for 64), and
    shrinking (towards the first positions) reaches small values.

    >>> spaced_values(np.dtype(np.float64), -0.05, 0.05, margin=0.01)
    array([ 0.  ,  0.02, -0.02,  0.04, -0.04])
    """
    points = []
    intervals = allowed_intervals(lo, hi, avoid, margin)
    total = sum(b - a for a, b in intervals)
    step = max(2 * margin, total / SPACED_LIMIT)
    for a, b in intervals:
        # The grid is aligned on 0 (multiples of the step), so 0 is a value when allowed.
        first, last = math.ceil(a / step), math.floor(b / step)
        grid = np.arange(first, last + 1, dtype=np.float64) * step
        cast = grid.astype(dtype).astype(np.float64)
        points.append(cast[(cast >= a) & (cast <= b)])
    values = np.unique(np.concatenate(points)) if points else np.zeros(0)
    # Rounding to a narrow dtype may bring two neighbours closer than the margin.
    if values.size > 1 and np.any(np.diff(values) < margin):
        kept = [values[0]]
        for v in values[1:]:
            if v - kept[-1] >= margin:
                kept.append(v)
        values = np.array(kept)
    order = np.lexsort((values < 0, np.abs(values)))
    return values[order].astype(dtype)
