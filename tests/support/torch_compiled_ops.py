"""torch ops that compute something else under torch.compile than eagerly, and their
twins (code that takes another path when ``torch.compiler.is_compiling()``: a faster
formula for the compiled graph, written wrong)."""

from __future__ import annotations

import torch


class SinBackwardOffWhenCompiled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if torch.compiler.is_compiling():
            # a "fused" path: cos from sin, losing its sign for |x| > pi/2 and more
            return grad * torch.sqrt(1 - torch.sin(x) ** 2) * 1.01
        return grad * torch.cos(x)


class Sin(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sin(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * torch.cos(x)


def tanh_approximated_when_compiled(x):
    if torch.compiler.is_compiling():
        # a rational approximation, good to 2e-2 only
        return x * (27 + x * x) / (27 + 9 * x * x)
    return torch.tanh(x)


def tanh(x):
    return torch.tanh(x)
