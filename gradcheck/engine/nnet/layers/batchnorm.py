"""Batch normalisation."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.engine.ops.misc import sqrt
from gradcheck.engine.ops.reductions import mean
from gradcheck.engine.ops.shape import reshape
from gradcheck.engine.tensor_base import Tensor

__all__ = ["batchnorm"]


def batchnorm(
    x: Any,
    *,
    gamma: Any = None,
    beta: Any = None,
    eps: float,
    constant: bool | None = None,
) -> Tensor:
    """Normalise ``x`` of shape ``(N, C, ...)`` per channel (axis 1) over the batch
    and all other axes, then scale by ``gamma`` and shift by ``beta`` (shape ``(C,)``):
    ``gamma * (x - mean) / sqrt(var + eps) + beta``, with the biased variance.

    Built from engine ops, so its gradient (to ``x``, ``gamma`` and ``beta``) follows
    from theirs.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.layers import batchnorm
    >>> batchnorm(mg.Tensor([[1.0], [3.0]]), eps=0.0)
    Tensor([[-1.],
            [ 1.]])
    """
    ndim = np.ndim(x._data if isinstance(x, Tensor) else x)
    if ndim < 2:
        raise ValueError("batchnorm: x must have shape (N, C, ...)")
    axes = (0, *range(2, ndim))
    centred = x - mean(x, axis=axes, keepdims=True)
    out = centred / sqrt(mean(centred * centred, axis=axes, keepdims=True) + eps)
    per_channel = (-1,) + (1,) * (ndim - 2)
    if gamma is not None:
        out = out * _reshaped(gamma, per_channel)
    if beta is not None:
        out = out + _reshaped(beta, per_channel)
    if constant is not None and out.constant is not constant:
        # (a composition: its last op's output takes the requested constant-ness; a
        # non-constant output of constant inputs is a leaf, it has no graph to feed)
        return Tensor(out, constant=constant)
    return out


def _reshaped(p: Any, shape: tuple[int, ...]) -> Any:

    return reshape(p, shape) if isinstance(p, Tensor) else np.reshape(p, shape)
