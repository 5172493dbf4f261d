"""Sliding windows over the trailing axes of an array, shared by conv and pooling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np


def as_tuple(value: int | Sequence[int], n: int, name: str) -> tuple[int, ...]:
    """``value`` (an int or ``n`` ints) as a tuple of ``n`` positive ints."""
    if np.ndim(value) == 0:  # an int, or a NumPy integer
        out = (int(cast("int", value)),) * n
    else:
        out = tuple(int(v) for v in cast("Sequence[int]", value))
    if len(out) != n:
        raise ValueError(f"`{name}` must be an int or {n} ints; got {value!r}")
    return out


def windows(
    x: np.ndarray,
    window: tuple[int, ...],
    stride: tuple[int, ...],
    dilation: tuple[int, ...],
) -> np.ndarray:
    """A read-only strided view of shape ``x.shape[:-n] + out + window`` holding, at
    output position ``o`` and window offset ``k`` (per trailing axis),
    ``x[..., o * stride + k * dilation]``; ``n = len(window)``."""
    n = len(window)
    spatial = x.shape[-n:]
    out = tuple(
        (s - d * (w - 1) - 1) // st + 1 for s, w, st, d in zip(spatial, window, stride, dilation)
    )
    if any(o <= 0 for o in out):
        raise ValueError(
            f"a window {window} (dilation {dilation}) does not fit in the spatial shape {spatial}"
        )
    lead = x.strides[:-n]
    strides = x.strides[-n:]
    return np.lib.stride_tricks.as_strided(
        x,
        shape=x.shape[:-n] + out + window,
        strides=lead
        + tuple(s * st for s, st in zip(strides, stride))
        + tuple(s * d for s, d in zip(strides, dilation)),
        writeable=False,
    )


def _positive_ints(value: object, n: int, name: str) -> tuple[int, ...]:
    """``value`` (an int or ``n`` ints, all positive) as a tuple of ``n`` ints."""
    items = (value,) * n if isinstance(value, (int, np.integer)) else value
    if not isinstance(items, (Sequence, np.ndarray)) or isinstance(items, str):
        raise TypeError(f"`{name}` must be an int or a sequence of {n} ints; got {value!r}")
    out = tuple(items)
    if len(out) != n or not all(
        isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in out
    ):
        raise ValueError(f"`{name}` must be an int or {n} ints; got {value!r}")
    if any(v < 1 for v in out):
        raise ValueError(f"`{name}` must be positive; got {value!r}")
    return tuple(int(v) for v in out)


def sliding_window_view(
    arr: np.ndarray,
    window_shape: Sequence[int],
    step: int | Sequence[int],
    dilation: int | Sequence[int] | None = None,
) -> np.ndarray:
    """A read-only view of the windows of shape ``window_shape`` placed over the
    trailing axes of ``arr`` every ``step`` elements (``dilation``: the spacing of a
    window's elements, 1 by default), of shape ``grid + arr.shape[:-n] + window_shape``
    (``n = len(window_shape)``; along an axis of size ``x`` there are
    ``(x - D*(W - 1) - 1) // S + 1`` windows): ``out[i, j]`` is the window at grid
    position ``(i, j)`` (MyGrad's layout).

    Examples
    --------
    >>> import numpy as np
    >>> y = sliding_window_view(np.arange(36).reshape(6, 6), (3, 2), step=(2, 2))
    >>> y.shape
    (2, 3, 3, 2)
    >>> y[1, 0].tolist()
    [[12, 13], [18, 19], [24, 25]]
    """
    arr = np.asarray(arr)
    if not isinstance(window_shape, (Sequence, np.ndarray)) or isinstance(window_shape, str):
        raise TypeError(f"`window_shape` must be a sequence of ints; got {window_shape!r}")
    n = len(window_shape)
    if not 1 <= n <= arr.ndim:
        raise ValueError(
            f"`window_shape` must have 1 to {arr.ndim} entries (the array's ndim); "
            f"got {window_shape!r}"
        )
    window = _positive_ints(window_shape, n, "window_shape")
    stride = _positive_ints(step, n, "step")
    dilated = _positive_ints(1 if dilation is None else dilation, n, "dilation")
    if any(w * d > x for w, d, x in zip(window, dilated, arr.shape[-n:])):
        raise ValueError(
            f"a window {window} dilated by {dilated} must fit in the trailing axes "
            f"{arr.shape[-n:]} (window * dilation <= size)"
        )
    view = windows(arr, window, stride, dilated)
    lead = arr.ndim - n
    return np.moveaxis(view, tuple(range(lead, lead + n)), tuple(range(n)))
