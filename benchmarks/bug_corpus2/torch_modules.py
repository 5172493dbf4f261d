"""Held-out: gradient bugs of the kinds reported against public projects' ``nn.Module``s,
each beside its fix (``bug_<name>``/``fix_<name>`` instances)."""

from __future__ import annotations

import torch
from torch import nn

torch.manual_seed(0)


# 1. A batch norm that uses the running mean it has just updated in the same forward
#    (train mode): every call changes the next call's output.
class _RunningNorm(nn.Module):
    def __init__(self, stateful: bool):
        super().__init__()
        self.register_buffer("running", torch.zeros((), dtype=torch.float64))
        self.scale = nn.Parameter(torch.tensor(1.3, dtype=torch.float64))
        self.stateful = stateful

    def forward(self, x):
        mean = x.mean()
        if self.stateful:
            with torch.no_grad():
                self.running.mul_(0.9).add_(0.1 * mean)
            return (x - self.running) * self.scale
        return (x - mean) * self.scale


bug_running_mean_in_forward = _RunningNorm(stateful=True)
fix_running_mean_in_forward = _RunningNorm(stateful=False)


# 2. A PReLU module over a fused Function whose slope gradient forgets the factor x:
#    sum(g * (x < 0)) instead of sum(g * x * (x < 0)).
def _prelu_fn(with_x: bool):
    class PReluFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, a):
            ctx.save_for_backward(x, a)
            return torch.where(x > 0, x, a * x)

        @staticmethod
        def backward(ctx, grad):
            x, a = ctx.saved_tensors
            neg = (x <= 0).to(x.dtype)
            ga = grad * neg * x if with_x else grad * neg
            return grad * torch.where(x > 0, torch.ones_like(x), a), ga.sum().reshape(a.shape)

    return PReluFn


class _PRelu(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.a = nn.Parameter(torch.tensor(0.25, dtype=torch.float64))
        self.fn = fn

    def forward(self, x):
        return self.fn.apply(x, self.a)


bug_prelu_slope = _PRelu(_prelu_fn(with_x=False))
fix_prelu_slope = _PRelu(_prelu_fn(with_x=True))


# 3. A temperature-scaled softmax whose learnable temperature is detached in the
#    forward ("it only scales").
class _TempSoftmax(nn.Module):
    def __init__(self, detach: bool):
        super().__init__()
        self.log_t = nn.Parameter(torch.tensor(0.3, dtype=torch.float64))
        self.detach = detach

    def forward(self, x):
        t = self.log_t.exp()
        t = t.detach() if self.detach else t
        return torch.softmax(x / t, dim=-1)


bug_temperature_detached = _TempSoftmax(detach=True)
fix_temperature_detached = _TempSoftmax(detach=False)
