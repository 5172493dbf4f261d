"""Gradient bugs of the kind reported against public projects' ``nn.Module``s, each
beside its fix: ``bug_<name>``/``fix_<name>`` instances and ``Bug<Name>``/``Fix<Name>``
classes."""

from __future__ import annotations

import torch
from torch import nn

import gradcheck

torch.manual_seed(0)


# 1. Weight normalisation whose norm is detached: the direction's gradient lacks the
#    projection term.
class _WeightNorm(nn.Module):
    def __init__(self, detach: bool):
        super().__init__()
        self.v = nn.Parameter(torch.randn(3, dtype=torch.float64))
        self.g = nn.Parameter(torch.tensor(1.5, dtype=torch.float64))
        self.detach = detach

    def forward(self, x):
        norm = self.v.norm()
        norm = norm.detach() if self.detach else norm
        return x * (self.g * self.v / norm)


bug_weight_norm = _WeightNorm(detach=True)
fix_weight_norm = _WeightNorm(detach=False)


# 2. A gated unit whose gate reads ``.data`` (a leftover from pre-0.4 code): the gate's
#    parameter gets no gradient through it.
class _Gate(nn.Module):
    def __init__(self, use_data: bool):
        super().__init__()
        self.w = nn.Parameter(torch.tensor([0.7, -0.3], dtype=torch.float64))
        self.use_data = use_data

    def forward(self, x):
        w = self.w.data if self.use_data else self.w
        return x * torch.sigmoid(x * w[0] + w[1])


bug_gate_data = _Gate(use_data=True)
fix_gate_data = _Gate(use_data=False)


# 3. A module calling a Function with a wrong backward (a fused swish kernel whose
#    backward drops the second term).
class _SwishFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        ctx.save_for_backward(x, beta)
        return x * torch.sigmoid(beta * x)

    @staticmethod
    def backward(ctx, grad):
        x, beta = ctx.saved_tensors
        s = torch.sigmoid(beta * x)
        gx = grad * (s + beta * x * s * (1 - s))
        gb = (grad * x * x * s * (1 - s)).sum().reshape(beta.shape)
        return gx, gb


class _BadSwishFn(_SwishFn):
    @staticmethod
    def backward(ctx, grad):
        x, beta = ctx.saved_tensors
        s = torch.sigmoid(beta * x)
        return grad * s, (grad * x * s * (1 - s)).sum().reshape(beta.shape)


class _Swish(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.beta = nn.Parameter(torch.tensor(1.2, dtype=torch.float64))
        self.fn = fn

    def forward(self, x):
        return self.fn.apply(x, self.beta)


bug_fused_swish = _Swish(_BadSwishFn)
fix_fused_swish = _Swish(_SwishFn)


# 4. A linear layer rescaled by its weight's norm, detached "to save memory".
@gradcheck.describe(shapes=["n,3"])
class BugScaledLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2, dtype=torch.float64)

    def forward(self, x):
        y = self.lin(x)
        return y * self.lin.weight.detach().norm()


@gradcheck.describe(shapes=["n,3"])
class FixScaledLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2, dtype=torch.float64)

    def forward(self, x):
        y = self.lin(x)
        return y * self.lin.weight.norm()
