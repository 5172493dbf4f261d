"""`op_inputs()`: the argument tuples of an op, with values a gradient check can trust."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.extra import numpy as hnp

from gradcheck.checking.signature import op_signature
from gradcheck.engine.operation import Operation
from gradcheck.strategies._built_once import BOOLEAN, arrays_once, booleans_once, integers_once
from gradcheck.strategies._floats import (
    REACH,
    interval_floats,
    marked_values,
    reach_values,
    representable_intervals,
    sample_reach_values,
    spaced_values,
    special_values,
    spread_around,
    weighted_choice,
)
from gradcheck.strategies._validation import (
    check_bool,
    check_domain,
    check_float_dtype,
    check_int,
    check_points,
    check_real,
)
from gradcheck.strategies.shapes import named_shapes

__all__ = ["op_inputs"]


def _arity(target: Any) -> int:
    if isinstance(target, int) and not isinstance(target, bool):
        arity = target
    else:
        try:
            arity = op_signature(target).arity
        except TypeError as exc:
            raise InvalidArgument(
                f"target={target!r} must be an Operation subclass, a function of tensors, "
                f"or an int (the number of inputs)"
            ) from exc
    if arity < 1:
        raise InvalidArgument(f"target={target!r} takes no tensor inputs; op_inputs needs one")
    return arity


def _closed(domain: Any, arity: int) -> list[tuple[bool, bool]]:
    """Per input, which finite bounds belong to its domain (an
    :class:`~gradcheck.search.description.Interval`'s ``closed``; open otherwise)."""
    if domain is None:
        return [(False, False)] * arity
    per_input = isinstance(domain, (tuple, list)) and all(
        isinstance(d, (tuple, list)) for d in domain
    )
    pairs = list(domain) if per_input else [domain] * arity
    closed = [getattr(d, "closed", (False, False)) for d in pairs]
    return [(bool(c[0]), bool(c[1])) for c in closed]


def _domains(domain: Any, arity: int) -> list[tuple[float, float]]:
    """One ``(lo, hi)`` per input."""
    if domain is None:
        return [(-np.inf, np.inf)] * arity
    if (
        isinstance(domain, (tuple, list))
        and len(domain) > 0
        and all(isinstance(d, (tuple, list)) for d in domain)
    ):
        if len(domain) != arity:
            raise InvalidArgument(
                f"domain={domain!r} has {len(domain)} pairs for {arity} inputs; pass one "
                f"(lo, hi) per input or a single (lo, hi) for all"
            )
        return [check_domain(f"domain[{i}]", d) for i, d in enumerate(domain)]
    return [check_domain("domain", domain)] * arity


def _discrete(
    integers: Mapping[int, tuple[int, int]] | None, booleans: Sequence[int], arity: int
) -> dict[int, tuple[np.dtype, st.SearchStrategy[Any]]]:
    """The inputs drawn as integers or booleans: index -> (dtype, elements)."""
    if integers is not None and not isinstance(integers, Mapping):
        raise InvalidArgument(f"integers={integers!r} must map input indices to (lo, hi)")
    out: dict[int, tuple[np.dtype, st.SearchStrategy[Any]]] = {}
    for i, bounds in (integers or {}).items():
        i = check_int("integers index", i, max_value=arity - 1)
        lo, hi = (check_int("integers bound", b, min_value=-(2**62)) for b in bounds)
        if lo >= hi:
            raise InvalidArgument(f"integers={integers!r}: input {i} needs lo < hi")
        out[i] = (np.dtype(np.int64), st.integers(lo, hi - 1))
    for i in booleans:
        i = check_int("booleans index", i, max_value=arity - 1)
        if i in out:
            raise InvalidArgument(f"input {i} is in both integers= and booleans=")
        out[i] = (np.dtype(np.bool_), st.booleans())
    return out


def _min_gap(arrays: Sequence[np.ndarray]) -> float:
    flat = np.sort(np.concatenate([np.ravel(a).astype(np.float64) for a in arrays]))
    return float(np.min(np.diff(flat))) if flat.size > 1 else np.inf


def op_inputs(
    target: type[Operation] | Callable[..., Any] | int,
    *,
    shapes: Sequence[Any] | None = None,
    domain: Any = None,
    dtype: Any = np.float64,
    broadcast: bool = False,
    min_dims: int = 0,
    max_dims: int = 3,
    min_side: int = 1,
    max_side: int = 4,
    avoid: Sequence[float] | None = None,
    margin: float | None = None,
    unique: bool = False,
    elements: st.SearchStrategy[Any] | None = None,
    integers: Mapping[int, tuple[int, int]] | None = None,
    booleans: Sequence[int] = (),
    reach: bool = False,
    reduces: bool = False,
    total_size: tuple[int, int] | None = None,
) -> st.SearchStrategy[tuple[np.ndarray, ...]]:
    """Strategy for the input arrays of an op: a tuple with one array per input.

    The number of inputs is read from ``target`` with
    :func:`gradcheck.checking.signature.op_signature` (or ``target`` is that number).

    Parameters
    ----------
    shapes : sequence, optional
        One shape spec per input: a tuple of sizes and dimension names, or text like
        ``"n,k"``; names are shared between inputs (see :func:`named_shapes`). By
        default every input has the same shape, drawn with
        :func:`hypothesis.extra.numpy.array_shapes`.
    domain : (lo, hi) or a sequence of them, optional
        Where the values lie, for all inputs or one pair per input; ``None`` for a
        bound means unbounded. Values keep ``margin`` away from finite bounds (a
        function is rarely differentiable at the edge of its domain) and stay within
        +-10 where the domain is unbounded.
    dtype : data-type, default numpy.float64
        A floating-point dtype.
    broadcast : bool, default False
        Draw shapes that broadcast against each other, with
        :func:`hypothesis.extra.numpy.mutually_broadcastable_shapes`, instead of equal
        ones (ignored when ``shapes`` is given). With ``reach``, they are drawn from one
        base shape: each input drops some of its leading axes and has some of the
        others at size 1, and the inputs' shapes always differ (see
        :func:`_broadcast_from`).
    min_dims, max_dims, min_side, max_side : int
        Bounds of the drawn shapes (and the sizes named dimensions take).
    avoid : sequence of float, optional
        Points where the op is not differentiable (0 for ``abs``): every value stays at
        least ``margin`` away from each.
    margin : float, optional
        The distance kept from ``avoid`` points, finite domain bounds, and (with
        ``unique``) between any two values; by default 0.01, but at most a hundredth
        of a finite domain's width (a domain of (-2e-9, 2e-9) keeps 4e-11).
    unique : bool, default False
        Make all values of all inputs distinct, at least ``margin`` apart: ties make
        ``max``, ``min``, ``sort`` and friends non-differentiable.
    elements : strategy, optional
        Replace the value strategy altogether (``domain`` and ``avoid`` are then not
        used).
    integers : mapping of int to (lo, hi), optional
        Inputs drawn as int64 in ``range(lo, hi)`` instead of floats (class labels,
        indices), by index.
    booleans : sequence of int
        Inputs drawn as booleans (masks), by index.
    reduces : bool, default False
        The op reduces over an axis (its parameters name one), so a 0-d input shows
        little of it: with ``reach``, 0-d shapes are drawn more rarely still.
    reach : bool, default False
        Also draw the shapes and values gradient bugs hide at (what ``gradcheck verify``
        searches): shapes of up to ``max_dims`` dimensions with size-1 axes as often as
        others and few 0-d ones (one draw in about 16 after the first, 64 with
        ``reduces``); magnitudes log-uniform out to just past where ``exp`` overflows
        the dtype (12 in float16, 95 in float32, 750 in float64) on unbounded sides of
        the domain; 0 and +-1; each closed bound of the domain (an
        :class:`~gradcheck.search.description.Interval`, ``"[0:"``) and values just
        inside every finite bound; and, with ``unique``, near-ties: two values a
        relative 1e-5.5 to 1e-3 apart (below ``margin``; the closest are inside the
        steps of finite differences, where a check skips them).
    total_size : (int, int), optional
        Draw shapes of at least ``total_size[0]`` and about at most ``total_size[1]``
        elements (1 to ``max_dims`` dimensions), instead of ``min_side``/``max_side``
        ones (ignored when ``shapes`` is given).

    Values are finite, normal floats of moderate magnitude (unless ``reach``);
    shrinking goes towards small shapes and simple values. An array of more than
    :data:`SPARSE_LIMIT` (128) elements costs a few draws whatever its size: a drawn
    value that NumPy spreads the bulk around by a drawn width, and up to 31 elements
    (a drawn count) that take marked values (the intervals' ends, 0, +-1...) or any,
    at positions and with values picked from a drawn seed, as are its reach values
    (with ``unique``, a seeded choice among the values a margin apart); shrinking
    narrows the spread (to one value where the failure allows) and lowers the count,
    not element by element.

    Examples
    --------
    >>> from hypothesis import find
    >>> from gradcheck.ops.arithmetic import Multiply
    >>> find(op_inputs(Multiply), lambda xs: xs[0].size > 1)
    (array([0., 0.]), array([0., 0.]))
    >>> x, = find(op_inputs(1, shapes=["n"], domain=(0, None)), lambda xs: xs[0].size > 1)
    >>> x.shape, bool(x.min() >= 0.01)
    ((2,), True)
    """
    arity = _arity(target)
    domains = _domains(domain, arity)
    closed = _closed(domain, arity)
    dtype = check_float_dtype("dtype", dtype)
    check_bool("broadcast", broadcast)
    min_dims = check_int("min_dims", min_dims, max_value=32)
    max_dims = check_int("max_dims", max_dims, min_value=min_dims, max_value=32)
    min_side = check_int("min_side", min_side)
    max_side = check_int("max_side", max_side, min_value=min_side)
    avoid = check_points("avoid", avoid)
    fitted = margin is None  # (the default: fitted to each domain's width)
    margin = check_real("margin", DEFAULT_MARGIN if margin is None else margin, positive=True)
    margins = [domain_margin(lo, hi, margin) if fitted else margin for lo, hi in domains]
    check_bool("unique", unique)
    check_bool("reach", reach)
    check_bool("reduces", reduces)
    discrete = _discrete(integers, booleans, arity)

    dims, sides = (min_dims, max_dims), (min_side, max_side)
    if shapes is None and total_size is not None:
        shape_strategy = _sized_shapes(total_size, broadcast, arity, dims)
    elif shapes is None and reach:
        shape_strategy = _search_shapes(arity, dims, sides, broadcast, reduces)
    else:
        shape_strategy = _shape_strategy(shapes, broadcast, arity, dims, sides)
    # per input, the element strategy, and the intervals a large array's bulk keeps
    # to (None where the values come from the caller's strategy)
    per_input, spreads = _value_strategies(elements, dtype, domains, avoid, margins)
    extras = (
        [
            reach_values(dtype, lo, hi, c, avoid=avoid, margin=m)
            for (lo, hi), c, m in zip(domains, closed, margins)
        ]
        if reach and elements is None
        else [None] * arity
    )

    dtypes = [dtype] * arity
    for i, (kind, el) in discrete.items():
        dtypes[i], per_input[i], extras[i], spreads[i] = kind, el, None, None
    floats = [i for i in range(arity) if i not in discrete]
    grid, bulk = None, 0
    if unique and elements is None and len({domains[i] for i in floats}) == 1:
        grid, bulk = _unique_grid(dtype, domains, closed, floats, avoid, margin, reach)
    spec = _Draws(
        shape_strategy,
        per_input,
        dtypes,
        discrete,
        floats,
        grid,
        margin,
        bulk,
        reach,
        domains,
        avoid,
        extras,
        spreads,
        closed,
        margins,
    )
    return _draw_inputs(spec, unique)


def _unique_grid(
    dtype: np.dtype,
    domains: Sequence[tuple[float, float]],
    closed: Sequence[tuple[bool, bool]],
    floats: Sequence[int],
    avoid: tuple[float, ...],
    margin: float,
    reach: bool,
) -> tuple[np.ndarray, int]:
    """Unique across all float inputs (a tie between two inputs is a kink of an
    elementwise maximum too). With one domain for all, every value is drawn at a
    distinct position of one grid of values a margin apart, so that no two values,
    of one input or of two, are closer than ``margin``, however many there are:
    (the grid, how many of its values are the bulk, before the reach points)."""
    lo, hi = domains[floats[0]] if floats else (-np.inf, np.inf)
    finite_bounds = tuple(b for b in (lo, hi) if np.isfinite(b))
    grid = spaced_values(dtype, lo, hi, avoid=(*avoid, *finite_bounds), margin=margin)
    extra = (
        _reach_points(
            dtype, lo, hi, closed[floats[0]] if floats else (False, False), avoid, margin, grid
        )
        if reach
        else np.zeros(0, dtype)
    )
    grid = np.concatenate([grid, extra]).astype(dtype)
    return grid, grid.size - extra.size


def _shape_strategy(
    shapes: Sequence[Any] | None,
    broadcast: bool,
    arity: int,
    dims: tuple[int, int],
    sides: tuple[int, int],
) -> st.SearchStrategy[Any]:
    """:func:`op_inputs`'s shapes: one tuple of input shapes per draw."""
    (min_dims, max_dims), (min_side, max_side) = dims, sides
    if shapes is not None:
        if not isinstance(shapes, (tuple, list)) or len(shapes) != arity:
            raise InvalidArgument(
                f"shapes={shapes!r} must hold one shape spec per input ({arity} inputs)"
            )
        return named_shapes(*shapes, min_side=min_side, max_side=max_side)
    if broadcast:
        return hnp.mutually_broadcastable_shapes(
            num_shapes=arity,
            min_dims=min_dims,
            max_dims=max_dims,
            min_side=min_side,
            max_side=max_side,
        ).map(lambda b: b.input_shapes)
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    ).map(lambda s: (s,) * arity)


#: With ``reach``, a 0-d draw is drawn again this many times (once more for an op
#: that reduces over an axis): Hypothesis favours short lists, and 0-d inputs took a
#: third of some searches, where a reduction's bug needs a 3-d input.
SCALAR_REDRAWS = 1

#: Values keep DEFAULT_MARGIN from avoided points and open bounds, but at most this
#: fraction of a finite domain's width (see :func:`domain_margin`).
DEFAULT_MARGIN, MARGIN_FRACTION = 1e-2, 1e-2


@st.composite
def _search_shapes(
    draw: st.DrawFn,
    arity: int,
    dims: tuple[int, int],
    sides: tuple[int, int],
    broadcast: bool,
    reduces: bool,
) -> tuple[tuple[int, ...], ...]:
    """The search's shapes (:func:`op_inputs` with ``reach``): a base shape whose
    number of dimensions is drawn uniformly, a 0-d draw drawn again
    (:data:`SCALAR_REDRAWS`), each side uniformly (size 1 a quarter of the time at
    the default sides); broadcast shapes come from it, see :func:`_broadcast_from`."""
    (min_dims, max_dims), (min_side, max_side) = dims, sides
    ndim = draw(integers_once(min_dims, max_dims))
    for _ in range(SCALAR_REDRAWS + int(reduces)):
        if ndim:
            break
        ndim = draw(integers_once(min_dims, max_dims))
    if broadcast and not ndim:
        ndim = 1  # (0-d inputs all have the same shape)
    shape = tuple(draw(integers_once(min_side, max_side)) for _ in range(ndim))
    if not broadcast or arity < 2:
        return (shape,) * arity
    return _broadcast_from(draw, shape, arity, min_dims)


def _broadcast_from(
    draw: st.DrawFn, shape: tuple[int, ...], arity: int, min_dims: int
) -> tuple[tuple[int, ...], ...]:
    """Shapes that broadcast to ``shape``, not all equal: each input drops some leading
    axes (keeping ``min_dims``) and has each other axis kept or made 1, shrinking to
    ``shape`` itself; where they all came out equal, the last input is ``shape`` if
    the others are not, else ``shape`` without its leading axis or, that not allowed,
    with its first side above 1 made 1 (the simplest broadcast)."""
    out = []
    for _ in range(arity):
        drop = draw(integers_once(0, max(0, len(shape) - min_dims)))
        kept = shape[drop:]
        ones = draw(booleans_once(len(kept)))
        out.append(tuple(1 if one else side for side, one in zip(kept, ones)))
    if len(set(out)) == 1:
        if out[0] != shape:
            out[-1] = shape
        elif len(shape) > min_dims:
            out[-1] = shape[1:]
        elif any(side > 1 for side in shape):
            axis = next(a for a, side in enumerate(shape) if side > 1)
            out[-1] = (*shape[:axis], 1, *shape[axis + 1 :])
    return tuple(out)


def _value_strategies(
    elements: st.SearchStrategy[Any] | None,
    dtype: Any,
    domains: Sequence[tuple[float, float]],
    avoid: Sequence[float],
    margins: Sequence[float],
) -> tuple[list[Any], list[Any]]:
    """:func:`op_inputs`'s values: one element strategy per input, and the intervals
    they are drawn from (:func:`representable_intervals`; None for ``elements``)."""
    if elements is not None:
        if not isinstance(elements, st.SearchStrategy):
            raise InvalidArgument(f"elements={elements!r} must be a strategy or None")
        return [elements] * len(domains), [None] * len(domains)
    avoided = [(*avoid, *(b for b in (lo, hi) if np.isfinite(b))) for lo, hi in domains]
    strategies = [
        interval_floats(dtype, lo, hi, avoid=points, margin=m)
        for (lo, hi), points, m in zip(domains, avoided, margins)
    ]
    spreads = [
        representable_intervals(dtype, lo, hi, avoid=points, margin=m)
        for (lo, hi), points, m in zip(domains, avoided, margins)
    ]
    return strategies, spreads


def domain_margin(lo: float, hi: float, margin: float) -> float:
    """The default margin values keep in the domain ``[lo, hi]``: ``margin``, but at most
    :data:`MARGIN_FRACTION` of a finite domain's width, so that a domain on any scale
    can be drawn from (``(-2e-9, 2e-9)``, where an op's inputs lie at 1e-9, had no
    value 0.01 away from both bounds)."""
    width = hi - lo
    return min(margin, MARGIN_FRACTION * width) if math.isfinite(width) and width > 0 else margin


def _sized_shapes(
    total_size: tuple[int, int], broadcast: bool, arity: int, dims: tuple[int, int]
) -> st.SearchStrategy[Any]:
    """:func:`op_inputs`'s shapes of ``total_size`` elements: a count ``n`` in that
    range and the leading sides (1 to 8 for two dimensions, 1 to 4 for more), the last
    side making at least ``n`` elements; with ``broadcast``, the other inputs have some
    of those axes at size 1. Shrinks to the fewest elements, in one dimension."""
    low, high = (check_int("total_size", n) for n in total_size)
    if not 0 < low <= high:
        raise InvalidArgument(f"total_size={total_size!r} needs 0 < lo <= hi")
    min_dims, max_dims = max(dims[0], 1), max(dims[1], dims[0], 1)

    @st.composite
    def draw(data: st.DrawFn) -> tuple[tuple[int, ...], ...]:
        ndim = data(integers_once(min_dims, max_dims))
        n = data(integers_once(low, high))
        top = 8 if ndim == 2 else 4
        lead = [data(integers_once(1, top)) for _ in range(ndim - 1)]
        shape = (*lead, -(-n // int(np.prod(lead))))
        if not broadcast:
            return (shape,) * arity
        others = []
        for _ in range(arity - 1):
            keep = data(booleans_once(ndim))
            others.append(tuple(side if k else 1 for side, k in zip(shape, keep)))
        return (shape, *others)

    return draw()


def _reach_points(
    dtype: Any,
    lo: float,
    hi: float,
    closed: tuple[bool, bool],
    avoid: Sequence[float],
    margin: float,
    grid: np.ndarray,
) -> np.ndarray:
    """Values a unique draw may take besides the grid's: the special values and
    log-spaced magnitudes out to :data:`REACH` (where the domain is unbounded), each at
    least ``margin`` from the grid and from each other."""
    points = list(special_values(dtype, lo, hi, closed, avoid=avoid, margin=margin))
    top = np.log10(REACH[dtype.itemsize * 8])
    for sign, unbounded in ((1.0, np.isinf(hi)), (-1.0, np.isinf(lo))):
        if unbounded:
            points += [sign * m for m in np.logspace(1.0, top, 24)[1:]]
    kept: list[float] = []
    taken = np.sort(grid.astype(np.float64))
    for x in (float(dtype.type(p)) for p in points):
        if not np.isfinite(x) or not lo <= x <= hi:
            continue
        near = taken[np.searchsorted(taken, x) - 1 : np.searchsorted(taken, x) + 1]
        if np.all(np.abs(near - x) >= margin) and all(abs(x - k) >= margin for k in kept):
            kept.append(x)
    return np.array(kept, dtype=dtype)


@dataclass(frozen=True, eq=False)
class _Draws:
    """What :func:`_draw_inputs` draws from, worked out once by :func:`op_inputs`."""

    shapes: st.SearchStrategy[Any]
    per_input: list[Any]
    dtypes: list[Any]
    discrete: Mapping[int, Any]
    floats: list[int]
    grid: np.ndarray | None
    margin: float
    #: the grid's first ``bulk`` values are the well-conditioned ones; the rest are the
    #: reach's (special values, large magnitudes)
    bulk: int = 0
    #: whether a unique draw may hold one near-tie
    reach: bool = False
    domains: Sequence[tuple[float, float]] = ()
    avoid: Sequence[float] = ()
    #: per input, the reach's values (:func:`reach_values`) a few elements take, or None
    extras: Sequence[Any] = ()
    #: per input, the intervals a large array's bulk spreads over
    #: (:func:`~gradcheck.strategies._floats.representable_intervals`), or None
    spreads: Sequence[Any] = ()
    #: per input, whether its domain's bounds are closed (the reach draws them)
    closed: Sequence[tuple[bool, bool]] = ()
    #: per input, the margin kept from its domain's bounds (see :func:`domain_margin`)
    margins: Sequence[float] = ()


#: Relative gaps of a near-tie, as powers of ten: below the usual margin, from just
#: under the base step of finite differences (2**-17 relative: such a point is
#: skipped, not differentiable within the steps' reach) out to 1e-3.
NEAR_TIE_EXPONENTS = (-5.5, -3.0)
#: One unique draw in this many holds a near-tie.
NEAR_TIE_ONE_IN = 4
_NEAR_TIE_POWER = st.floats(*NEAR_TIE_EXPONENTS)
_SIGN = st.sampled_from((1.0, -1.0))


@st.composite
def _draw_inputs(draw: st.DrawFn, spec: _Draws, unique: bool) -> tuple[np.ndarray, ...]:
    input_shapes = draw(spec.shapes, label="shapes")
    per_input, dtypes, floats, grid = spec.per_input, spec.dtypes, spec.floats, spec.grid
    if not unique:
        drawn = [
            draw_array(draw, dt, shape, el, spread)
            for shape, el, dt, spread in zip(input_shapes, per_input, dtypes, spec.spreads)
        ]
        for i, extra in enumerate(spec.extras):
            if extra is not None and drawn[i].size > SPARSE_LIMIT and spec.spreads[i]:
                drawn[i] = _with_sampled_reach(draw, drawn[i], spec, i)
            elif extra is not None and drawn[i].size:
                drawn[i] = _with_reach(draw, drawn[i], extra)
        if spec.reach:
            drawn = [
                _rank_deficient(draw, a) if i in spec.floats else a for i, a in enumerate(drawn)
            ]
        return tuple(drawn)
    arrays: list[Any] = [None] * len(per_input)
    for i in spec.discrete:
        arrays[i] = draw(arrays_once(dtypes[i], input_shapes[i], per_input[i]))
    if grid is not None:
        sizes = [int(np.prod(input_shapes[i])) for i in floats]
        total = sum(sizes)
        assume(total <= grid.size)
        if total > SPARSE_LIMIT:
            flat = grid[_large_positions(draw, spec, total)]
        else:
            position = st.integers(0, (spec.bulk or grid.size) - 1)
            if 0 < spec.bulk < grid.size:  # the reach's values, one draw in four
                position = st.one_of(
                    position, position, position, st.integers(spec.bulk, grid.size - 1)
                )
            positions = st.lists(position, min_size=total, max_size=total, unique=True)
            flat = grid[np.array(draw(positions), dtype=np.intp)]
        if spec.reach:
            flat = _near_tie(draw, spec, flat, spec.domains[floats[0]] if floats else None)
        pieces = np.split(flat, np.cumsum(sizes)[:-1])
        for i, piece in zip(floats, pieces):
            arrays[i] = piece.reshape(input_shapes[i]).copy()
        return tuple(arrays)
    # One domain per input (or the caller's own elements): distinct values per
    # input, then reject draws with two values closer than `margin`.
    for i in floats:
        arrays[i] = draw(arrays_once(dtypes[i], input_shapes[i], per_input[i], unique=True))
    assume(_min_gap([arrays[i] for i in floats]) >= spec.margin)
    return tuple(arrays)


#: Arrays of more elements than this are drawn as a bulk plus a few marked elements
#: (:func:`_large_array`); smaller ones element by element, as
#: :func:`hypothesis.extra.numpy.arrays` does. (The search's large inputs,
#: ``LARGE_SIZE`` in :mod:`gradcheck.search.verifier`, are no larger than this.)
SPARSE_LIMIT = 128
#: How many elements of a large array take a marked value (:func:`marked_values`) or a
#: value of their own: ``2**k - 1``, k drawn from 0 to MARKED_POWERS (none a sixth of
#: the time, at most 31; as often none as a Hypothesis list of average size 5 had).
MARKED_POWERS = 5
#: A large array's bulk spreads around its drawn value by ``span * 2**(level -
#: SPREAD_LEVELS)`` on either side, ``level`` drawn from 0 (no spread: one value, what
#: shrinking goes to) to SPREAD_LEVELS (across the whole domain); ``span`` is the
#: width of the domain (20 for the default +-10).
SPREAD_LEVELS = 8


def draw_array(
    draw: st.DrawFn, dtype: Any, shape: tuple[int, ...], elements: Any, spread: Any
) -> np.ndarray:
    """An array of ``shape`` with values from ``elements``: element by element up to
    :data:`SPARSE_LIMIT` elements, or where ``spread`` (the elements' intervals) is
    None; else :func:`_large_array`."""
    size = int(np.prod(shape))
    if spread is None or size <= SPARSE_LIMIT:
        return draw(arrays_once(dtype, shape, elements))
    return _large_array(draw, dtype, shape, elements, spread)


def _large_array(
    draw: st.DrawFn, dtype: Any, shape: tuple[int, ...], elements: Any, spread: Any
) -> np.ndarray:
    """An array of more than :data:`SPARSE_LIMIT` elements in at most four draws, whatever
    its size.

    :func:`hypothesis.extra.numpy.arrays` draws a fill value, then elements one by one,
    as many as Hypothesis likes: about sqrt(size) on average, but whole runs of 100
    examples with 270 each at 2,000 elements (drawing them cost three times the
    checks), and arrays mostly of one value otherwise. Here one value is drawn, and
    NumPy spreads the bulk around it from a drawn seed, by a drawn width (see
    :data:`SPREAD_LEVELS`): every element different unless the width is 0, and on the
    value's side of an op's domain unless it is wide, so that an op defined for x > 0
    only is checked as often as element-by-element arrays are. Then a drawn count (up
    to 31, :data:`MARKED_POWERS`) of elements, at positions from the same seed, take values
    the same seed picks: half of them :func:`marked_values` (the intervals' ends, 0,
    +-1, the smallest normal: the values Hypothesis's floats favour), half anywhere
    in the intervals. (Drawing each of them from Hypothesis, position and value, cost
    three quarters of a 2,000-element draw: 0.9 ms an example.) Shrinking narrows the
    spread to 0, lowers the count to the elements a failure needs and simplifies the
    value; the seed then shrinks too, to the first that still fails."""
    size = int(np.prod(shape))
    dtype = np.dtype(dtype)
    # (the spread and the count first: a shrink lowers them before it simplifies the
    # value, which it could not move out of a failing region once spread lay there)
    level = draw(integers_once(0, SPREAD_LEVELS), label="bulk spread")
    count = 2 ** draw(integers_once(0, MARKED_POWERS), label="marked elements") - 1
    center = draw(elements, label="bulk value")
    if level == count == 0:
        # (no seed drawn: one value is the shortest draw, what a shrink prefers)
        return np.full(shape, center, dtype=dtype)
    rng = np.random.default_rng(draw(integers_once(0, 2**32 - 1), label="bulk seed"))
    if level == 0:
        flat = np.full(size, center, dtype=dtype)
    else:
        span = max(b for _, b in spread) - min(a for a, _ in spread)
        half_width = span * 2.0 ** (level - SPREAD_LEVELS)
        flat = spread_around(rng, center, half_width, spread, size, dtype)
    if count:
        # the most there may be, of which the first `count`: a shrink that lowers the
        # count keeps the elements before it where they were, with their values
        most = min(2**MARKED_POWERS - 1, size)
        positions = rng.choice(size, size=most, replace=False)[:count]
        flat[positions] = _marked(rng, spread, dtype, most)[: positions.size]
    return flat.reshape(shape)


def _marked(rng: np.random.Generator, spread: Any, dtype: np.dtype, n: int) -> np.ndarray:
    """``n`` values for a large array's marked elements, picked by ``rng``: each a
    value of :func:`marked_values` or, as often, uniform in one of the intervals
    (chosen by width)."""
    marked = marked_values(spread, dtype)
    lows = np.array([a for a, _ in spread])
    widths = np.array([b - a for a, b in spread])
    which = weighted_choice(rng, widths / widths.sum(), n) if widths.sum() else 0
    anywhere = lows[which] + widths[which] * rng.random(n)
    picked = marked[rng.integers(0, marked.size, size=n)]
    out: np.ndarray = np.where(rng.random(n) < 0.5, picked, anywhere).astype(dtype)
    # (a uniform value may round to a subnormal one, which the elements never are)
    tiny = (out != 0) & (np.abs(out) < np.finfo(dtype).tiny)
    out[tiny] = picked[tiny]
    return out


def _large_positions(draw: st.DrawFn, spec: _Draws, total: int) -> np.ndarray:
    """``total`` distinct positions in ``spec.grid`` (more than :data:`SPARSE_LIMIT`)
    at the cost of a few draws, where drawing each (:func:`_draw_inputs`'s smaller
    case) costs seconds per example: a random choice, from a drawn seed, among the
    grid's well-conditioned values nearest 0, how far out drawn as a large array's
    spread (:data:`SPREAD_LEVELS`; level 0, where shrinking goes: the ``total``
    nearest); then up to :data:`REACH_ELEMENTS` of them moved to the reach's values."""
    assert spec.grid is not None
    # (more elements than well-conditioned values: some of the reach's are needed)
    pool = max(spec.bulk or spec.grid.size, total)
    level = draw(integers_once(0, SPREAD_LEVELS), label="bulk spread")
    span = total + (pool - total) * (2**level - 1) // (2**SPREAD_LEVELS - 1)
    seed = draw(integers_once(0, 2**32 - 1), label="bulk seed")
    positions = np.random.default_rng(seed).choice(span, size=total, replace=False)
    if 0 < spec.bulk < spec.grid.size:
        moved = st.tuples(st.integers(0, total - 1), st.integers(spec.bulk, spec.grid.size - 1))
        unique = (lambda m: m[0], lambda m: m[1])
        taken = set(positions.tolist())
        for slot, extra in draw(
            st.lists(moved, max_size=REACH_ELEMENTS, unique_by=unique), label="reach elements"
        ):
            if extra not in taken:  # (every value once)
                taken.discard(int(positions[slot]))
                positions[slot] = extra
                taken.add(extra)
    return positions.astype(np.intp)


#: The most elements of one input that take the reach's values in one example.
REACH_ELEMENTS = 4


def _with_reach(draw: st.DrawFn, array: np.ndarray, extra: Any) -> np.ndarray:
    """``array`` with some of its elements (a count shrinking to none) replaced by the
    reach's values: drawn after the array, so that a failure that needs none of them
    shrinks as the well-conditioned values alone do."""
    count = draw(integers_once(0, min(array.size, REACH_ELEMENTS)), label="reach count")
    if not count:
        return array
    out = array.copy()
    flat = out.reshape(-1)
    for _ in range(count):
        flat[draw(integers_once(0, array.size - 1))] = draw(extra)
    return out


#: One square matrix (an input whose last two axes are equal, 2 or longer) in this
#: many is made singular by :func:`_rank_deficient`.
RANK_DEFICIENT_ONE_IN = 4


def _rank_deficient(draw: st.DrawFn, array: np.ndarray) -> np.ndarray:
    """``array``, a stack of square matrices, with, in one draw in
    :data:`RANK_DEFICIENT_ONE_IN`, one row (or column) copied onto another in every
    matrix of the stack: a singular matrix of rank ``n - 1`` at most, which an op of
    linear algebra meets in training (a repeated sample, a dead feature) and where
    its gradient is often special-cased (a determinant's is the adjugate there, not
    ``det(A) inv(A)^T``: torch's is zero). Every value stays one the draw gave, in
    the domain; another array (not square) is left as it is, with nothing drawn."""
    if array.ndim < 2 or array.shape[-1] != array.shape[-2] or array.shape[-1] < 2:
        return array
    if draw(integers_once(0, RANK_DEFICIENT_ONE_IN - 1), label="rank-deficient") != 0:
        return array
    n = array.shape[-1]
    i = draw(integers_once(0, n - 1))
    j = draw(integers_once(0, n - 2))
    j += j >= i
    out = array.copy()
    if draw(BOOLEAN):
        out[..., j, :] = out[..., i, :]  # a repeated row
    else:
        out[..., :, j] = out[..., :, i]  # a repeated column
    return out


def _with_sampled_reach(draw: st.DrawFn, array: np.ndarray, spec: _Draws, i: int) -> np.ndarray:
    """:func:`_with_reach` for an array of more than :data:`SPARSE_LIMIT` elements (the
    ``i``-th input): a drawn count, and the elements and their values picked from a
    drawn seed (:func:`~gradcheck.strategies._floats.sample_reach_values`), two draws
    where drawing each element's position and value cost 0.4 ms an example at 2,000
    elements. The count shrinks to none as :func:`_with_reach`'s does."""
    count = draw(integers_once(0, REACH_ELEMENTS), label="reach count")
    if not count:
        return array
    rng = np.random.default_rng(draw(integers_once(0, 2**32 - 1), label="reach seed"))
    lo, hi = spec.domains[i]
    margin = spec.margins[i] if spec.margins else spec.margin
    values = sample_reach_values(
        rng, count, array.dtype, lo, hi, spec.closed[i], avoid=spec.avoid, margin=margin
    )
    out = array.copy()
    out.reshape(-1)[rng.choice(array.size, size=values.size, replace=False)] = values
    return out


def _near_tie(
    draw: st.DrawFn, spec: _Draws, flat: np.ndarray, domain: tuple[float, float] | None
) -> np.ndarray:
    """``flat`` with, in one draw in four, one value moved to a near-tie with another:
    a relative gap of 10**u, u in :data:`NEAR_TIE_EXPONENTS` (a mask that tells ties
    apart with a tolerance is wrong there), when the moved value stays in the domain,
    ``margin`` from avoided points and from every other value."""
    if flat.size < 2 or draw(integers_once(0, NEAR_TIE_ONE_IN - 1), label="near-tie") != 0:
        return flat
    i = draw(integers_once(0, flat.size - 1))
    j = draw(integers_once(0, flat.size - 2))
    j += j >= i
    u = draw(_NEAR_TIE_POWER)
    sign = draw(_SIGN)
    base = float(flat[i])
    moved = flat.dtype.type(base + sign * 10.0**u * max(1.0, abs(base)))
    lo, hi = domain if domain is not None else (-np.inf, np.inf)
    others = np.delete(flat, [i, j]).astype(np.float64)
    if (
        moved == base
        or not lo < float(moved) < hi
        or any(abs(float(moved) - p) < spec.margin for p in spec.avoid)
        or np.any(np.abs(others - float(moved)) < spec.margin)
    ):
        return flat
    out = flat.copy()
    out[j] = moved
    return out
