"""Shared pieces of the op tests of the elementwise, reduction and creation families.

Every gradient comparison of these tests goes through
:func:`tests.support.gradients.check_gradients` (re-exported here), the project's checker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import hypothesis.extra.numpy as hnp
import numpy as np
from hypothesis import strategies as st

import gradcheck as mg
from tests.support.gradients import check_gradients

Interval = tuple[float, float]


def floats_in(*intervals: Interval) -> st.SearchStrategy[float]:
    """Floats in the union of closed ``intervals`` (each ``(low, high)``)."""
    return st.one_of(
        *(st.floats(lo, hi, allow_nan=False, allow_infinity=False) for lo, hi in intervals)
    )


def arrays_in(
    *intervals: Interval,
    shape: Any = None,
    dtype: Any = np.float64,
    min_dims: int = 0,
    max_dims: int = 3,
    min_side: int = 1,
    max_side: int = 4,
    unique: bool = False,
) -> st.SearchStrategy[np.ndarray]:
    """Arrays (of generated shape unless ``shape`` is given) with elements in the
    union of ``intervals``."""
    if shape is None:
        shape = hnp.array_shapes(
            min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
        )
    # Drawn in float64 and cast: interval ends need not be float32 numbers.
    arrays = hnp.arrays(np.float64, shape, elements=floats_in(*intervals), unique=unique)
    return arrays if np.dtype(dtype) == np.float64 else arrays.map(lambda a: a.astype(dtype))


def offset_grid(offset: float, *, steps: int = 8) -> st.SearchStrategy[float]:
    """Floats ``0.5 * k + offset`` for integer ``|k| <= steps``: two grids with
    different offsets (mod 0.5) never share a value, so ops compared on them never
    meet a tie."""
    return st.integers(-steps, steps).map(lambda k: 0.5 * k + offset)


def axes_for(ndim: int) -> st.SearchStrategy[Any]:
    """``axis`` arguments of a reduction over an array of ``ndim`` dimensions: None,
    an int (negative ones too) or a tuple of distinct ints."""
    choices: list[st.SearchStrategy[Any]] = [st.none()]
    if ndim:
        choices.append(st.integers(-ndim, ndim - 1))
        choices.append(hnp.valid_tuple_axes(ndim))
    return st.one_of(*choices)


def names_in(modules: Sequence[Any]) -> list[str]:
    return [name for module in modules for name in module.__all__]


def assert_forward_matches(
    op: Callable[..., mg.Tensor], reference: Callable[..., Any], *arrays: Any, **kwargs: Any
) -> mg.Tensor:
    """``op(*tensors, **kwargs)`` has NumPy's values, shape and dtype; returns it."""
    out = op(*(mg.Tensor(a) for a in arrays), **kwargs)
    expected = np.asarray(reference(*arrays, **kwargs))
    assert isinstance(out, mg.Tensor)
    assert out.shape == expected.shape
    assert out.dtype == expected.dtype, (out.dtype, expected.dtype)
    rtol = 1e-5 if expected.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out.data, expected, rtol=rtol, atol=0)
    return out


def check_unary(
    op: Callable[..., mg.Tensor],
    reference: Callable[..., Any],
    domain: Sequence[Interval],
    data: st.DataObject,
) -> None:
    """Forward against NumPy in float64 and float32, and backward against finite
    differences, for an elementwise op on a generated array inside ``domain``."""
    x = data.draw(arrays_in(*domain), label="x")
    assert_forward_matches(op, reference, x)
    assert_forward_matches(op, reference, x.astype(np.float32))
    check_gradients(op, x)
    assert_float32_gradients(op, x)


def assert_float32_gradients(op: Callable[..., mg.Tensor], *arrays: np.ndarray) -> None:
    """float32 inputs get float32 gradients (no silent promotion to float64)."""
    tensors = [mg.Tensor(a.astype(np.float32)) for a in arrays]
    out = op(*tensors)
    out.backward(np.ones(out.shape, dtype=np.float32))
    for i, t in enumerate(tensors):
        assert t.grad is not None and t.grad.dtype == np.float32, (i, t.grad)


def distinct_arrays(
    *, min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4
) -> st.SearchStrategy[np.ndarray]:
    """Float64 arrays of pairwise distinct elements, at least 0.1 apart: far enough
    for finite differences never to cross a tie (of max, min...)."""
    shape = hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )
    elements = st.integers(-80, 80).map(lambda k: 0.1 * k + 0.01)
    return hnp.arrays(np.float64, shape, elements=elements, unique=True)
