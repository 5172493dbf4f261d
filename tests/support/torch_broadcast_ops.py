"""``x * s + b`` as torch Functions (issue 34): correct, and with the bias or scale
gradient reduced wrongly. (A gradient returned unsummed is summed by torch itself,
which is no bug in torch: these bugs survive that.)"""

from __future__ import annotations

from typing import Any

import torch


def _to(grad: Any, like: Any, out: Any) -> Any:
    return grad.expand(out).sum_to_size(like.shape)


class Affine(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Any, s: Any, b: Any) -> Any:
        ctx.save_for_backward(x, s, b)
        return x * s + b

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        x, s, b = ctx.saved_tensors
        out = torch.broadcast_shapes(x.shape, s.shape, b.shape)
        return _to(grad * s, x, out), _to(grad * x, s, out), _to(grad, b, out)


class AffineBiasSummedOverFirstAxis(Affine):
    """The bias gradient summed over the first axis whatever the bias's shape (its
    size-1 axis lost, or an axis summed that was not broadcast)."""

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        x, s, b = ctx.saved_tensors
        out = torch.broadcast_shapes(x.shape, s.shape, b.shape)
        gb = grad.sum(0) if grad.dim() and tuple(b.shape) != tuple(grad.shape) else grad
        return _to(grad * s, x, out), _to(grad * x, s, out), gb


class AffineScaleAveraged(Affine):
    """The scale gradient averaged, not summed, over the broadcast axes."""

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        x, s, b = ctx.saved_tensors
        out = torch.broadcast_shapes(x.shape, s.shape, b.shape)
        gs = _to(grad * x, s, out) * (s.numel() / max(1, torch.Size(out).numel()))
        return _to(grad * s, x, out), gs, _to(grad, b, out)
