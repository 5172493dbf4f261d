"""PyTorch ops for the adapter tests (imported only where torch is installed)."""

from __future__ import annotations

import torch

import gradcheck


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad


class WrongCube(torch.autograd.Function):
    """d/dx x³ written as 3x: wrong everywhere but at 0 and 1."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x * grad


class Scale(torch.autograd.Function):
    """New-style Function (forward without ctx, setup_context) with a parameter."""

    @staticmethod
    def forward(x, alpha=2.0):
        return x * alpha

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.alpha = inputs[1]

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.alpha, None


class Identity(torch.autograd.Function):
    """Returns its upstream gradient itself: fine in torch, not an aliasing bug."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad


class Flaky(torch.autograd.Function):
    """A backward that reads a global counter: not deterministic."""

    calls = 0

    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, grad):
        Flaky.calls += 1
        return grad * (2.0 + Flaky.calls)


@gradcheck.describe(domain=(-2, 2))
def sin_times(x, y):
    return torch.sin(x) * y


@gradcheck.describe
def wrong_softplus(x):
    """softplus through a custom Function whose backward forgets the sigmoid."""
    return _BadSoftplus.apply(x)


class _BadSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad):
        return grad
