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
