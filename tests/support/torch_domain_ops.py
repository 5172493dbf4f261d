"""torch ops for tests/checking/adapters/test_torch_domain.py (issue 34 items 8 and 11)."""

from __future__ import annotations

import torch


def inverse(x):
    """torch raises torch.linalg.LinAlgError at a singular matrix."""
    return torch.linalg.inv(x)


def sine_of_arrays(x):
    """Runs at arrays only: raises at a 0-d input, whatever the values."""
    if x.ndim == 0:
        raise ValueError("needs an array")
    return torch.sin(x) * 2


def scaled_pair(x, y):
    """Output k depends on input k only."""
    return (torch.mul(x, 2), y * 3)


def broadcast_pair(x, y):
    return torch.broadcast_tensors(x, y)


def meshgrid_pair(x, y):
    return torch.meshgrid(x, y, indexing="ij")


def zeros_of(x):
    """Depends on no input: its gradient is undefined in torch (None), which means zero."""
    return torch.zeros_like(x)


def sign(x):
    """Its gradient for real inputs is torch's ZeroTensor."""
    return torch.sgn(x)


class ViewsUpstream(torch.autograd.Function):
    """x * 3, whose backward reads the upstream gradient as a flat view of its memory
    (right only for a contiguous one)."""

    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, grad):
        flat = grad.view(-1)
        return (flat * 3).view(grad.shape)


class StridesUpstream(torch.autograd.Function):
    """x * 3, whose backward reads the upstream gradient's elements in its storage
    order, as code that assumes contiguous strides does."""

    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, grad):
        raw = torch.as_strided(grad, grad.shape, torch.empty(grad.shape).stride())
        return raw * 3


class ReshapesUpstream(torch.autograd.Function):
    """The correct twin: reshape copies where it must."""

    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, grad):
        return (grad.reshape(-1) * 3).reshape(grad.shape)
