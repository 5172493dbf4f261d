"""torch Functions whose backward is a Function of its own (a custom double backward)
with a ``jvp``: forward-over-reverse (``--order 2 --modes fwd``, torch's
``gradgradcheck(check_fwd_over_rev=True)``) runs that ``jvp``; reverse-over-reverse
runs its ``backward``. Each wrong op has its correct twin."""

from __future__ import annotations

import torch


def _sin_backward(jvp_factor: float) -> type:
    class SinBackward(torch.autograd.Function):
        """(x, g) -> g·cos(x), the backward of sin, with a right backward and a jvp
        whose x part is ``jvp_factor`` times the true one."""

        @staticmethod
        def forward(x, g):
            return g * torch.cos(x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)
            ctx.save_for_forward(*inputs)

        @staticmethod
        def backward(ctx, w):
            x, g = ctx.saved_tensors
            return -w * g * torch.sin(x), w * torch.cos(x)

        @staticmethod
        def jvp(ctx, tx, tg):
            x, g = ctx.saved_tensors
            return -jvp_factor * tx * g * torch.sin(x) + tg * torch.cos(x)

    return SinBackward


def _sin(backward_fn: type) -> type:
    class Sin(torch.autograd.Function):
        """sin, right at first order in both modes; its backward is ``backward_fn``."""

        @staticmethod
        def forward(x):
            return torch.sin(x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return backward_fn.apply(x, g)

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return t * torch.cos(x)

    return Sin


#: The backward's jvp misses a factor 2 in x (its backward is right): only
#: fwd-over-rev sees it.
SinBackwardJvpWrong = _sin(_sin_backward(2.0))
SinBackwardJvpWrong.__name__ = SinBackwardJvpWrong.__qualname__ = "SinBackwardJvpWrong"
SinBackwardJvpRight = _sin(_sin_backward(1.0))
SinBackwardJvpRight.__name__ = SinBackwardJvpRight.__qualname__ = "SinBackwardJvpRight"


class SinBackwardNoJvp(torch.autograd.Function):
    """The backward of sin without a jvp: forward mode through it raises."""

    @staticmethod
    def forward(x, g):
        return g * torch.cos(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, w):
        x, g = ctx.saved_tensors
        return -w * g * torch.sin(x), w * torch.cos(x)


SinBackwardWithoutJvp = _sin(SinBackwardNoJvp)
SinBackwardWithoutJvp.__name__ = SinBackwardWithoutJvp.__qualname__ = "SinBackwardWithoutJvp"
