"""torch sorts as a user writes them (issue 40 item 3, issue 34): a sort's kinks are its
ties, where Hypothesis's draws often land. ``Sort`` scatters the upstream gradient back
to where each value came from; its twins are wrong."""

from __future__ import annotations

import torch


class Sort(torch.autograd.Function):
    """A sort along the last axis, the upstream gradient scattered back."""

    @staticmethod
    def forward(ctx, x):
        values, idx = torch.sort(x, dim=-1)
        ctx.save_for_backward(idx)
        return values

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        return torch.zeros_like(g).scatter_(-1, idx, g)


class SortGathered(Sort):
    """The bug: gathers where it should scatter."""

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        return torch.gather(g, -1, idx)


class SortScaled(Sort):
    """The bug: the gradient 0.1% too large."""

    @staticmethod
    def backward(ctx, g):
        (idx,) = ctx.saved_tensors
        return torch.zeros_like(g).scatter_(-1, idx, g) * 1.001
