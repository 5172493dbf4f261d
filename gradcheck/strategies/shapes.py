"""Shapes with named dimensions, their text form, and reduction axes.

A shape spec is a tuple whose entries are names (``"n"``) or fixed sizes (``3``):
``named_shapes(("n", "k"), ("k", "m"))`` draws ``n``, ``k`` and ``m`` once each, so
the two shapes always fit a matrix product. ``gradcheck verify --shape n,k --shape k,m``
reads its specs with :func:`parse_shape_spec`.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.extra import numpy as hnp

from gradcheck.strategies._validation import check_bool, check_int

__all__ = ["ShapeSpec", "parse_shape_spec", "named_shapes", "valid_axes"]

#: A shape with named dimensions: each entry a name or a fixed size.
ShapeSpec = tuple[str | int, ...]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def parse_shape_spec(text: str) -> ShapeSpec:
    """Read a shape spec from text: comma-separated names and sizes.

    ``""`` (or ``"()"``) is a 0-d shape; a name is a Python identifier; digits are a
    fixed size; surrounding parentheses, spaces and one trailing comma are allowed.

    Raises
    ------
    hypothesis.errors.InvalidArgument
        The text is not a spec; the message says which part is wrong.

    Examples
    --------
    >>> parse_shape_spec("n,k")
    ('n', 'k')
    >>> parse_shape_spec("(3, m)")
    (3, 'm')
    >>> parse_shape_spec("")
    ()
    """
    if not isinstance(text, str):
        raise InvalidArgument(f"a shape spec must be a string like 'n,k'; got {text!r}")
    body = text.strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1].strip()
    if not body:
        return ()
    parts = [p.strip() for p in body.split(",")]
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    spec: list[str | int] = []
    for part in parts:
        if part.isdigit():
            spec.append(int(part))
        elif _NAME.match(part):
            spec.append(part)
        else:
            raise InvalidArgument(
                f"bad shape spec {text!r}: {part!r} is neither a dimension name (like n) "
                f"nor a size (like 3); write the shape as comma-separated names and sizes, "
                f"e.g. 'n,k' or '3,m' ('' for a 0-d shape)"
            )
    return tuple(spec)


def _check_spec(index: int, spec: Any) -> ShapeSpec:
    if isinstance(spec, str):
        return parse_shape_spec(spec)
    if not isinstance(spec, tuple):
        raise InvalidArgument(
            f"shape spec {index} ({spec!r}) must be a tuple of names and sizes, like "
            f"('n', 'k'), or a string like 'n,k'"
        )
    for entry in spec:
        if isinstance(entry, str):
            if not _NAME.match(entry):
                raise InvalidArgument(
                    f"shape spec {index} ({spec!r}): {entry!r} is not a valid dimension name"
                )
        elif isinstance(entry, bool) or not isinstance(entry, int) or entry < 0:
            raise InvalidArgument(
                f"shape spec {index} ({spec!r}): {entry!r} must be a name or a size >= 0"
            )
    return spec


def named_shapes(
    *specs: ShapeSpec | str, min_side: int = 1, max_side: int = 5
) -> st.SearchStrategy[tuple[tuple[int, ...], ...]]:
    """Strategy for a tuple of shapes, one per spec, whose named dimensions agree.

    Each distinct name is drawn once, from ``min_side`` to ``max_side``, and used
    wherever it appears; integers in a spec are fixed sizes. A spec may also be given
    as text (see :func:`parse_shape_spec`). Sizes shrink towards ``min_side``.

    Examples
    --------
    >>> from hypothesis import find
    >>> find(named_shapes(("n", "k"), ("k", "m")), lambda s: s[1][1] > 1)
    ((1, 1), (1, 2))
    >>> find(named_shapes("n,k", "k,3", min_side=2), lambda s: s[0][0] > 2)
    ((3, 2), (2, 3))
    """
    if not specs:
        raise InvalidArgument("named_shapes() needs at least one shape spec, e.g. ('n', 'k')")
    checked = [_check_spec(i, spec) for i, spec in enumerate(specs)]
    min_side = check_int("min_side", min_side)
    max_side = check_int("max_side", max_side)
    if max_side < min_side:
        raise InvalidArgument(f"max_side={max_side} must be at least min_side={min_side}")
    names = list(dict.fromkeys(e for spec in checked for e in spec if isinstance(e, str)))
    sizes = st.fixed_dictionaries({name: st.integers(min_side, max_side) for name in names})

    def build(drawn: dict[str, int]) -> tuple[tuple[int, ...], ...]:
        return tuple(tuple(drawn[e] if isinstance(e, str) else e for e in spec) for spec in checked)

    return sizes.map(build)


def valid_axes(
    ndim: int,
    *,
    min_dim: int = 0,
    max_dim: int | None = None,
    single_axis_only: bool = False,
    permit_none: bool = True,
) -> st.SearchStrategy[int | tuple[int, ...] | None]:
    """Strategy for the ``axis`` argument of a reduction over an ``ndim``-d array.

    Draws ``None`` (all axes; when ``permit_none``), a single int in
    ``[-ndim, ndim)``, or a tuple of distinct axes (from
    :func:`hypothesis.extra.numpy.valid_tuple_axes`, so negative axes too) with
    ``min_dim`` to ``max_dim`` entries. An int counts as one axis. With
    ``single_axis_only`` only ints (and ``None``) are drawn.

    Examples
    --------
    >>> from hypothesis import find
    >>> find(valid_axes(3), lambda ax: not isinstance(ax, int)) is None
    True
    >>> find(valid_axes(3, permit_none=False, min_dim=2), lambda ax: 0 in ax)
    (0, 1)
    >>> find(valid_axes(2, single_axis_only=True, permit_none=False), lambda ax: ax < 0)
    -1
    """
    ndim = check_int("ndim", ndim)
    min_dim = check_int("min_dim", min_dim, max_value=ndim)
    max_dim = ndim if max_dim is None else check_int("max_dim", max_dim, max_value=ndim)
    if max_dim < min_dim:
        raise InvalidArgument(f"max_dim={max_dim} must be at least min_dim={min_dim}")
    check_bool("single_axis_only", single_axis_only)
    check_bool("permit_none", permit_none)
    choices: list[st.SearchStrategy[Any]] = []
    if permit_none:
        choices.append(st.none())
    if ndim > 0 and min_dim <= 1 <= max_dim:
        choices.append(st.integers(-ndim, ndim - 1))
    if not single_axis_only:
        choices.append(hnp.valid_tuple_axes(ndim, min_size=min_dim, max_size=max_dim))
    if not choices:
        raise InvalidArgument(
            f"valid_axes({ndim}, min_dim={min_dim}, max_dim={max_dim}, single_axis_only=True, "
            f"permit_none=False) can draw nothing: a single axis needs ndim >= 1 and "
            f"min_dim <= 1 <= max_dim"
        )
    return st.one_of(choices)
