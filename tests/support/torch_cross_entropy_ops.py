"""Cross-entropies of three logits as users write them in torch (issue 34, items 7 and
9): the negative log-likelihood of a softmax, ``-(x[label] - logsumexp(x))``, with the
largest logit shifted out. Checked with ``--shape 3 --domain=-5:40 --order 2``, their
backwards cancel: ``(p - onehot)·v`` at logits 24 apart is -7.5e-11·v, made of terms of
the size of ``v``. Each has its truth in its docstring."""

from __future__ import annotations

import torch

LABEL = 1


def nll_ce(x):
    """Right: the max shift as a constant, then the log-sum-exp of what is left."""
    m = x.max().detach()
    z = x - m
    return -(z[LABEL] - torch.log(torch.exp(z).sum()))


def nll_ce_plus_max(x):
    """Right: ``m + log(sum exp(x - m))``, the max differentiated too."""
    m = x.max()
    return -(x[LABEL] - (m + torch.log(torch.exp(x - m).sum())))


def _cross_entropy(scale_first: float = 1.0, scale_second: float = 1.0, label: int = 0):
    """A cross-entropy Function whose backward is differentiable: ``g·(softmax -
    onehot)`` times ``scale_first``, the softmax's own derivative times
    ``scale_second`` (its value unchanged): 1, 1 is the correct op."""

    class CrossEntropy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return -torch.nn.functional.log_softmax(z, dim=-1)[..., label].sum()

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            still = z.detach()
            p = torch.softmax(still + scale_second * (z - still), dim=-1)
            onehot = torch.zeros_like(z)
            onehot[..., label] = 1
            return g * (p - onehot) * scale_first

    return CrossEntropy


CrossEntropy = _cross_entropy()
#: Wrong: the second derivative (the softmax's own) off by 1%.
CrossEntropySecondOff = _cross_entropy(scale_second=1.01)
#: Wrong: the gradient off by 1e-3.
CrossEntropyFirstOff = _cross_entropy(scale_first=1.001)
