"""Hypothesis strategies for op inputs, shared by the structural op tests."""

from __future__ import annotations

from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st


def floats_array(shape: Any, *, bound: float = 3.0) -> st.SearchStrategy[np.ndarray]:
    """float64 arrays of ``shape`` (a shape or a strategy of shapes) with elements in
    ``[-bound, bound]``; Hypothesis picks (and shrinks) the values."""
    return hnp.arrays(
        np.float64, shape, elements=st.floats(-bound, bound, allow_nan=False, width=64)
    )


@st.composite
def generic_array(draw: st.DrawFn, shape: tuple[int, ...], *, scale: float = 1.0) -> np.ndarray:
    """Standard normal values (times ``scale``) of ``shape`` from a drawn seed: with
    probability 1 no two elements are equal and none is 0, which keeps ops with ties
    and kinks (max, sort, norms, relu...) away from them."""
    seed = draw(st.integers(0, 2**32 - 1))
    return scale * np.random.default_rng(seed).standard_normal(shape)


def small_shapes(min_dims: int = 0, max_dims: int = 3, min_side: int = 1) -> st.SearchStrategy:
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=3)
