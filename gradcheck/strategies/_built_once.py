"""Strategies a composite strategy draws from, built once per set of arguments.

A draw inside a composite strategy builds its strategy each time it runs: 6 µs for
``st.integers`` (Hypothesis's cache lookup and its arguments' checks), more for
``hnp.arrays``, whose first draw validates it again; a 40x50 example of the search makes
a dozen such draws. Here each is built once and reused: the same strategies, so the
same draws (the search's examples do not change).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


@functools.lru_cache(maxsize=4096, typed=True)
def integers_once(low: int, high: int) -> st.SearchStrategy[int]:
    """``st.integers(low, high)``, built once (per type of bound too: as given)."""
    return st.integers(low, high)


BOOLEAN = st.booleans()


@functools.lru_cache(maxsize=64)
def booleans_once(n: int) -> st.SearchStrategy[list[bool]]:
    """A list of ``n`` booleans, its strategy built once."""
    return st.lists(BOOLEAN, min_size=n, max_size=n)


#: (dtype, shape, id of the elements' strategy, unique) -> (that strategy, the arrays')
_ARRAYS: dict[tuple[Any, ...], tuple[Any, st.SearchStrategy[np.ndarray]]] = {}
_ARRAYS_KEPT = 4096


def arrays_once(
    dtype: Any, shape: tuple[int, ...], elements: Any, *, unique: bool = False
) -> st.SearchStrategy[np.ndarray]:
    """``hnp.arrays(dtype, shape, elements=elements, unique=unique)``, built once per
    elements' strategy (held, so that its id names no other while kept)."""
    key = (np.dtype(dtype).str, tuple(shape), id(elements), unique)
    kept = _ARRAYS.get(key)
    if kept is None or kept[0] is not elements:
        if len(_ARRAYS) >= _ARRAYS_KEPT:
            _ARRAYS.clear()
        kept = _ARRAYS[key] = (
            elements,
            hnp.arrays(dtype, shape, elements=elements, unique=unique),
        )
    return kept[1]
