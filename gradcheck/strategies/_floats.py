"""Well-conditioned floating-point elements: the default values of every strategy here.

Finite differences divide a difference of function values by a small step, so inputs
that are huge, subnormal, or a hair away from a point where the function has a kink
(``abs`` at 0, ``sqrt`` at its domain edge) give a numeric gradient that says nothing
about the analytic one. The elements drawn here are finite, normal (no subnormals),
inside a bounded interval, and at least ``margin`` away from every point the caller
asks to avoid.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Literal, cast

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

__all__ = [
    "DEFAULT_BOUND",
    "allowed_intervals",
    "interval_floats",
    "marked_values",
    "representable_intervals",
    "spread_around",
    "reach_floats",
    "reach_values",
    "sample_reach_values",
]

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
    branches = [
        st.floats(a, b, allow_nan=False, allow_infinity=False, allow_subnormal=False, width=width)
        for a, b in representable_intervals(dtype, lo, hi, avoid=avoid, margin=margin)
    ]
    if not branches:
        raise InvalidArgument(
            f"no {dtype} value lies in [{lo}, {hi}] at least margin={margin} away from "
            f"avoid={list(avoid)}; widen the domain or lower the margin"
        )
    return st.one_of(branches)


def representable_intervals(
    dtype: np.dtype,
    lo: float = -math.inf,
    hi: float = math.inf,
    *,
    avoid: Sequence[float] = (),
    margin: float = 0.0,
) -> list[tuple[float, float]]:
    """The intervals :func:`interval_floats` draws from, their ends values of
    ``dtype``: where :func:`spread_around` keeps values."""
    out = []
    for a, b in allowed_intervals(lo, hi, avoid, margin):
        a, b = _inward(a, dtype, b), _inward(b, dtype, a)
        if a <= b:
            out.append((a, b))
    return out


def spread_around(
    rng: np.random.Generator,
    center: float,
    half_width: float,
    intervals: Sequence[tuple[float, float]],
    n: int,
    dtype: np.dtype,
) -> np.ndarray:
    """``n`` values of ``dtype`` drawn uniformly from ``center +- half_width``; those
    that fall outside ``intervals`` (or are subnormal, which :func:`interval_floats`
    never draws) are ``center`` instead, which must lie in them: the bulk of a large
    array, made at NumPy's speed, that stays where its center is (on the side of 0
    an op is defined on, say) unless the spread is wide."""
    values = (center + half_width * rng.uniform(-1.0, 1.0, n)).astype(dtype)
    wide = values.astype(np.float64)
    inside = np.zeros(n, dtype=bool)
    for a, b in intervals:
        inside |= (wide >= a) & (wide <= b)
    inside &= (values == 0) | (np.abs(wide) >= np.finfo(dtype).tiny)
    out: np.ndarray = np.where(inside, values, dtype.type(center))
    return out


def weighted_choice(rng: np.random.Generator, p: np.ndarray, n: int) -> np.ndarray:
    """``rng.choice(p.size, size=n, p=p)``, the same numbers from the same stream (the
    cumulative weights searched at ``n`` uniform draws, as NumPy's ``Generator.choice``
    does it) without its checks of ``p``: a quarter of the cost, which at one or
    two intervals is all there is (about 0.1 ms an example of a large array). ``p``:
    non-negative float64 weights summing to 1."""
    cdf = p.cumsum()
    cdf /= cdf[-1]
    return cdf.searchsorted(rng.random(n), side="right")


#: Values a large array's marked elements take where an interval holds them (besides
#: the intervals' ends): those Hypothesis's floats favour, of moderate magnitude.
MARKED = (0.0, 1.0, 0.5, 1.5, 2.0, 1 / 3, 1e-6, 1e-3, 0.1, 1.1, 1.9, 10.0)


@functools.lru_cache(maxsize=256)
def _marked_cached(spread: tuple[tuple[float, float], ...], dtype: str) -> np.ndarray:
    kind = np.dtype(dtype)
    tiny = float(np.finfo(kind).tiny)
    points = [p for a, b in spread for p in (a, b)]
    points += [sign * m for m in (*MARKED, tiny, float(np.finfo(kind).eps)) for sign in (1, -1)]
    kept: list[float] = []
    for p in points:
        x = float(kind.type(p))
        inside = any(a <= x <= b for a, b in spread)
        if inside and (x == 0 or abs(x) >= tiny) and x not in kept:
            kept.append(x)
    return np.array(kept, dtype=kind)


def marked_values(spread: Sequence[tuple[float, float]], dtype: np.dtype) -> np.ndarray:
    """The values of ``dtype`` in the intervals ``spread`` (:func:`representable_intervals`)
    where gradient bugs are met more often than at random ones: each interval's ends,
    0, +-1 and the others of :data:`MARKED`, the smallest normal value and the
    machine epsilon, those the intervals hold (never empty: the ends are there).

    >>> marked_values([(-2.0, -0.5), (0.5, 2.0)], np.dtype(np.float64))[:6]
    array([-2. , -0.5,  0.5,  2. ,  1. , -1. ])
    """
    return _marked_cached(tuple((float(a), float(b)) for a, b in spread), np.dtype(dtype).str)


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


# --- the search's reach --------------------------------------------------------------

#: How far the search's magnitudes go where a domain has no bound, per float width:
#: just past where ``exp`` overflows (11.1 in float16, 88.7 in float32, 709.8 in
#: float64), where a backward's own intermediates overflow first.
REACH = {16: 12.0, 32: 95.0, 64: 750.0}
#: Distances of the values drawn just inside a finite bound, relative to
#: ``max(1, |bound|)`` (never below a few units in the last place of the dtype).
INSIDE = (1e-6, 1e-3)
#: The special values drawn where the domain allows them.
SPECIAL = (0.0, 1.0, -1.0)
#: Weight of the well-conditioned values among the reach's branches (the magnitudes and
#: the special values have weight 1 each).
BULK_WEIGHT = 3


def _free(x: float, avoid: Sequence[float], margin: float) -> bool:
    return all(abs(x - p) >= margin for p in avoid)


def special_values(
    dtype: np.dtype,
    lo: float,
    hi: float,
    closed: tuple[bool, bool] = (False, False),
    *,
    avoid: Sequence[float] = (),
    margin: float = 0.0,
) -> list[float]:
    """The values of ``dtype`` where gradient bugs are often met, that the domain allows:
    0, +-1 (``margin`` inside open bounds, ``margin`` from ``avoid``), each closed bound,
    values just inside each finite bound (:data:`INSIDE`), and, on each unbounded side,
    just past and a little before where ``exp`` overflows the dtype, in that order.

    >>> special_values(np.dtype(np.float64), 0.0, math.inf, (True, False))
    [0.0, 1.0, 1e-06, 0.001, 709.792712893384, 709.282712893384]
    >>> special_values(np.dtype(np.float64), -1.0, 1.0, margin=0.01)
    [0.0, -0.999999, -0.999, 0.999999, 0.999]
    """
    eps = float(np.finfo(dtype).eps)
    out: list[float] = []
    for x in SPECIAL:
        above = x == lo if closed[0] and x == lo else x > lo and x - lo >= margin
        below = x == hi if closed[1] and x == hi else x < hi and hi - x >= margin
        if above and below and _free(x, avoid, margin):
            out.append(x)
    bounds = [(lo, 1.0, closed[0]), (hi, -1.0, closed[1])]
    for bound, _, is_closed in bounds:
        if math.isfinite(bound) and is_closed and _free(bound, avoid, 0.0):
            out.append(bound)
    for bound, inward, _ in bounds:
        if not math.isfinite(bound):
            continue
        for d in INSIDE:
            step = max(d, 8 * eps) * max(1.0, abs(bound))
            x = float(dtype.type(bound + inward * step))
            if lo < x < hi and _free(x, avoid, margin):
                out.append(x)
    # Where exp overflows the dtype (88.72 in float32), just past it and a little
    # before, on each unbounded side: a backward's own e**x overflows first.
    edge = math.log(float(np.finfo(dtype).max))
    for sign, unbounded in ((1.0, math.isinf(hi)), (-1.0, math.isinf(lo))):
        if unbounded:
            out += [x for x in (sign * (edge + 0.01), sign * (edge - 0.5)) if lo < x < hi]
    cast = [float(dtype.type(x)) for x in out]
    return [x for i, x in enumerate(cast) if x not in cast[:i] and np.isfinite(x)]


def _signed_power(dtype: np.dtype, sign: float, u: float) -> float:
    return float(dtype.type(sign * 10.0**u))


def _magnitude_ranges(dtype: np.dtype, lo: float, hi: float) -> list[tuple[float, float, float]]:
    """(sign, lowest, highest exponent of ten) of :func:`magnitudes` on each unbounded
    side of ``[lo, hi]``."""
    top = math.log10(REACH[dtype.itemsize * 8])
    ranges = []
    for sign, unbounded in ((1.0, math.isinf(hi)), (-1.0, math.isinf(lo))):
        if not unbounded:
            continue
        start = math.log10(max(DEFAULT_BOUND, sign * (lo if sign > 0 else hi)))
        if start < top:
            ranges.append((sign, start, top))
    return ranges


def magnitudes(
    dtype: np.dtype, lo: float, hi: float, *, avoid: Sequence[float] = (), margin: float = 0.0
) -> st.SearchStrategy[float] | None:
    """Values of magnitude log-uniform from :data:`DEFAULT_BOUND` out to
    :data:`REACH` on each unbounded side of ``[lo, hi]``; None where both are bounded."""
    sides = []
    for sign, start, top in _magnitude_ranges(dtype, lo, hi):
        exponent = st.floats(start, top, allow_nan=False, allow_infinity=False)
        sides.append(exponent.map(functools.partial(_signed_power, dtype, sign)))
    if not sides:
        return None
    return st.one_of(sides).filter(lambda x: lo < x < hi and _free(x, avoid, margin))


def reach_values(
    dtype: np.dtype,
    lo: float = -math.inf,
    hi: float = math.inf,
    closed: tuple[bool, bool] = (False, False),
    *,
    avoid: Sequence[float] = (),
    margin: float = 0.0,
) -> st.SearchStrategy[float] | None:
    """The values gradient bugs hide at, beyond :func:`interval_floats`'s: magnitudes
    out to :data:`REACH` where the domain is unbounded, and :func:`special_values`
    (0, +-1, closed bounds, values just inside bounds); None when there are none."""
    branches = []
    wide = magnitudes(dtype, lo, hi, avoid=avoid, margin=margin)
    if wide is not None:
        branches.append(wide)
    specials = special_values(dtype, lo, hi, closed, avoid=avoid, margin=margin)
    if specials:
        branches.append(st.sampled_from(specials))
    return st.one_of(branches) if branches else None


@functools.lru_cache(maxsize=256)
def _reach_table(
    dtype: str,
    lo: float,
    hi: float,
    closed: tuple[bool, bool],
    avoid: tuple[float, ...],
    margin: float,
) -> tuple[list[float], list[tuple[float, float, float]]]:
    kind = np.dtype(dtype)
    specials = special_values(kind, lo, hi, closed, avoid=avoid, margin=margin)
    return specials, _magnitude_ranges(kind, lo, hi)


def sample_reach_values(
    rng: np.random.Generator,
    n: int,
    dtype: np.dtype,
    lo: float = -math.inf,
    hi: float = math.inf,
    closed: tuple[bool, bool] = (False, False),
    *,
    avoid: Sequence[float] = (),
    margin: float = 0.0,
) -> np.ndarray:
    """Up to ``n`` of :func:`reach_values`'s values, picked by ``rng`` instead of drawn
    (a large array's reach elements: a few NumPy calls where Hypothesis's draws cost a
    tenth of a millisecond each): each a magnitude log-uniform on an unbounded side or
    one of :func:`special_values`, the two branches equally often where both exist;
    a magnitude at an avoided point is dropped (fewer than ``n`` values then).

    >>> rng = np.random.default_rng(0)
    >>> values = sample_reach_values(rng, 4, np.dtype(np.float64), 0.0, math.inf, (True, False))
    >>> values.size == 4 and bool(np.all(values >= 0.0))
    True
    """
    kind = np.dtype(dtype)
    specials, ranges = _reach_table(
        kind.str, float(lo), float(hi), tuple(closed), tuple(float(p) for p in avoid), margin
    )
    out = []
    for _ in range(n):
        if specials and (not ranges or rng.random() < 0.5):
            out.append(specials[int(rng.integers(len(specials)))])
            continue
        if not ranges:
            break
        sign, start, top = ranges[int(rng.integers(len(ranges)))]
        x = _signed_power(kind, sign, float(rng.uniform(start, top)))
        if lo < x < hi and _free(x, avoid, margin):
            out.append(x)
    return np.array(out, dtype=kind)


def reach_floats(
    dtype: np.dtype,
    lo: float = -math.inf,
    hi: float = math.inf,
    closed: tuple[bool, bool] = (False, False),
    *,
    avoid: Sequence[float] = (),
    margin: float = 0.0,
) -> st.SearchStrategy[float]:
    """One element as the search draws it: :func:`interval_floats`'s well-conditioned
    values first (shrinking goes there), or one of :func:`reach_values`."""
    finite = tuple(b for b in (lo, hi) if np.isfinite(b))
    bulk = interval_floats(dtype, lo, hi, avoid=(*avoid, *finite), margin=margin)
    extra = reach_values(dtype, lo, hi, closed, avoid=avoid, margin=margin)
    return bulk if extra is None else st.one_of([bulk] * BULK_WEIGHT + [extra])
