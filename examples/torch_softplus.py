"""The softplus of ``softplus.py`` as a ``torch.autograd.Function`` (needs PyTorch).

gradcheck runs it through torch itself (forward on float64 CPU tensors, backward by
torch's autograd), with the same search, shrinking and reports::

    gradcheck verify examples/torch_softplus.py:TorchSoftplus
"""

from __future__ import annotations

import torch

import gradcheck


@gradcheck.describe(domain=(-30.0, 30.0))
class TorchSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta=1.0):
        ctx.save_for_backward(x)
        ctx.beta = beta
        return torch.nn.functional.softplus(x, beta=beta, threshold=1e9)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * torch.sigmoid(ctx.beta * x), None  # no gradient for beta
