"""`op_inputs()`: the argument tuples of an op, with values a gradient check can trust."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.extra import numpy as hnp

from gradcheck.checking.signature import op_signature
from gradcheck.operation import Operation
from gradcheck.strategies._floats import interval_floats
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
    margin: float = 1e-2,
    unique: bool = False,
    elements: st.SearchStrategy[Any] | None = None,
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
        ones (ignored when ``shapes`` is given).
    min_dims, max_dims, min_side, max_side : int
        Bounds of the drawn shapes (and the sizes named dimensions take).
    avoid : sequence of float, optional
        Points where the op is not differentiable (0 for ``abs``): every value stays at
        least ``margin`` away from each.
    margin : float, default 0.01
        The distance kept from ``avoid`` points, finite domain bounds, and (with
        ``unique``) between any two values.
    unique : bool, default False
        Make all values of all inputs distinct, at least ``margin`` apart: ties make
        ``max``, ``min``, ``sort`` and friends non-differentiable.
    elements : strategy, optional
        Replace the value strategy altogether (``domain`` and ``avoid`` are then not
        used).

    Values are finite, normal floats of moderate magnitude; shrinking goes towards
    small shapes and simple values.

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
    dtype = check_float_dtype("dtype", dtype)
    check_bool("broadcast", broadcast)
    min_dims = check_int("min_dims", min_dims, max_value=32)
    max_dims = check_int("max_dims", max_dims, min_value=min_dims, max_value=32)
    min_side = check_int("min_side", min_side)
    max_side = check_int("max_side", max_side, min_value=min_side)
    avoid = check_points("avoid", avoid)
    margin = check_real("margin", margin, positive=True)
    check_bool("unique", unique)

    if shapes is not None:
        if not isinstance(shapes, (tuple, list)) or len(shapes) != arity:
            raise InvalidArgument(
                f"shapes={shapes!r} must hold one shape spec per input ({arity} inputs)"
            )
        shape_strategy = named_shapes(*shapes, min_side=min_side, max_side=max_side)
    elif broadcast:
        shape_strategy = hnp.mutually_broadcastable_shapes(
            num_shapes=arity,
            min_dims=min_dims,
            max_dims=max_dims,
            min_side=min_side,
            max_side=max_side,
        ).map(lambda b: b.input_shapes)
    else:
        shape_strategy = hnp.array_shapes(
            min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
        ).map(lambda s: (s,) * arity)

    if elements is not None:
        if not isinstance(elements, st.SearchStrategy):
            raise InvalidArgument(f"elements={elements!r} must be a strategy or None")
        per_input = [elements] * arity
    else:
        per_input = [
            interval_floats(
                dtype,
                lo,
                hi,
                avoid=(*avoid, *(b for b in (lo, hi) if np.isfinite(b))),
                margin=margin,
            )
            for lo, hi in domains
        ]

    @st.composite
    def draw_inputs(draw: st.DrawFn) -> tuple[np.ndarray, ...]:
        input_shapes = draw(shape_strategy, label="shapes")
        if not unique:
            return tuple(
                draw(hnp.arrays(dtype, shape, elements=el))
                for shape, el in zip(input_shapes, per_input)
            )
        # Unique across all inputs (a tie between two inputs is a kink of an
        # elementwise maximum too). With one domain for all, draw every value in one
        # flat unique array and split it, so that no two inputs share a value; then
        # reject draws with two values closer than `margin` (rare once exact
        # duplicates are gone).
        if len(set(domains)) == 1:
            sizes = [int(np.prod(shape)) for shape in input_shapes]
            flat = draw(hnp.arrays(dtype, sum(sizes), elements=per_input[0], unique=True))
            pieces = np.split(flat, np.cumsum(sizes)[:-1])
            arrays = tuple(p.reshape(shape).copy() for p, shape in zip(pieces, input_shapes))
        else:
            arrays = tuple(
                draw(hnp.arrays(dtype, shape, elements=el, unique=True))
                for shape, el in zip(input_shapes, per_input)
            )
        assume(_min_gap(arrays) >= margin)
        return arrays

    return draw_inputs()
