"""Indices for an array of a given shape: basic (ints, slices, None, Ellipsis) and
advanced (integer arrays, boolean masks), on top of Hypothesis's."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.extra import numpy as hnp

from gradcheck.strategies._validation import check_bool, check_int, check_shape

__all__ = ["basic_indices", "advanced_indices"]


def _fixed_shape(shape: Any) -> tuple[int, ...]:
    checked = check_shape("shape", shape)
    if isinstance(checked, st.SearchStrategy):
        raise InvalidArgument("shape must be a tuple of ints here, not a strategy")
    fixed: tuple[int, ...] = checked
    return fixed


def basic_indices(
    shape: Any,
    *,
    min_dims: int = 0,
    max_dims: int | None = None,
    allow_newaxis: bool = False,
    allow_ellipsis: bool = True,
) -> st.SearchStrategy[Any]:
    """Strategy for basic indices of an array of ``shape``: what
    :func:`hypothesis.extra.numpy.basic_indices` draws (ints, slices, ``None``,
    ``...``), with the same arguments. Basic indices select each element at most once.

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import given
    >>> @given(basic_indices((3, 4)))
    ... def test_a_basic_index_selects_each_element_once(index):
    ...     x = np.arange(12).reshape(3, 4)
    ...     picked = x[index].ravel()
    ...     assert len(set(picked.tolist())) == picked.size
    >>> test_a_basic_index_selects_each_element_once()
    """
    shape = _fixed_shape(shape)
    # Hypothesis's overloads of basic_indices take literal True/False only, not a bool
    strategy: st.SearchStrategy[Any] = hnp.basic_indices(  # type: ignore[call-overload]
        shape,
        min_dims=min_dims,
        max_dims=max_dims,
        allow_newaxis=allow_newaxis,
        allow_ellipsis=allow_ellipsis,
    )
    return strategy


def advanced_indices(
    shape: Any,
    *,
    min_dims: int = 1,
    max_dims: int = 2,
    min_side: int = 1,
    max_side: int = 3,
    allow_masks: bool = True,
) -> st.SearchStrategy[Any]:
    """Strategy for advanced indices of an array of ``shape``.

    Draws a tuple of integer arrays from
    :func:`hypothesis.extra.numpy.integer_array_indices` (its result has ``min_dims``
    to ``max_dims`` dimensions of ``min_side`` to ``max_side``; an element may be
    selected more than once, which is what makes the gradient of indexing accumulate),
    or, with ``allow_masks``, a boolean mask of the whole ``shape``. Every side of
    ``shape`` must be at least 1 (an empty axis has nothing to select).

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import given
    >>> @given(advanced_indices((2, 3)))
    ... def test_an_advanced_index_selects_existing_elements(index):
    ...     x = np.arange(6).reshape(2, 3)
    ...     assert set(x[index].ravel().tolist()) <= set(range(6))
    >>> test_an_advanced_index_selects_existing_elements()
    """
    shape = _fixed_shape(shape)
    if not shape or min(shape) < 1:
        raise InvalidArgument(
            f"shape={shape} must have at least one axis and no side of 0 for advanced "
            f"indices; use basic_indices for such shapes"
        )
    min_dims = check_int("min_dims", min_dims)
    max_dims = check_int("max_dims", max_dims, min_value=min_dims)
    min_side = check_int("min_side", min_side)
    max_side = check_int("max_side", max_side, min_value=min_side)
    check_bool("allow_masks", allow_masks)
    result_shapes = hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )
    strategy: st.SearchStrategy[Any] = hnp.integer_array_indices(shape, result_shape=result_shapes)
    if allow_masks:
        strategy = strategy | hnp.arrays(np.bool_, shape)
    return strategy
