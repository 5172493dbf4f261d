"""Torch Functions for the checks beyond first-order reverse mode (issue 20): upstream
gradients changed in place, saved tensors changed in place, second order, forward mode,
complex and bfloat16 inputs. Each has its truth in its docstring."""

from __future__ import annotations

from typing import ClassVar

import torch
from torch.autograd import Function


# --- a backward that changes its upstream gradient in place (five ways) ---------------
class SquareScalesUpstream(Function):
    """x², right gradient, then ``grad.mul_(2)``."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        out = 2 * x * grad
        grad.mul_(2)
        return out


class ProductZeroesUpstream(Function):
    """x·y, right gradients, then ``grad.zero_()``."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        gx, gy = grad * y, grad * x
        grad.zero_()
        return gx, gy


class ExpAddsToUpstream(Function):
    """exp(x), right gradient computed first, then ``grad += 1``."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        out = grad * y
        grad += 1
        return out


class TwoOutputsClampsUpstream(Function):
    """(sin x, cos x), right gradient, then the second output's ``grad.clamp_(0)``."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin(), x.cos()

    @staticmethod
    def backward(ctx, g_sin, g_cos):
        (x,) = ctx.saved_tensors
        out = g_sin * x.cos() - g_cos * x.sin()
        g_cos.clamp_(min=0.0)
        return out


class DoubleInPlace(Function):
    """2x whose backward scales ``grad`` in place and returns it: the value is right."""

    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, grad):
        return grad.mul_(2)


class Tanh(Function):
    """tanh, right, its backward leaves ``grad`` alone."""

    @staticmethod
    def forward(ctx, x):
        y = x.tanh()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (1 - y * y)


# --- saved tensors changed in place: a second backward on the same graph differs -------
class NudgesSaved(Function):
    """x², whose backward scales the tensor it keeps on ctx by 1 + 2**-52 in place (one
    ulp; torch's version counter does not watch ctx attributes): the first backward is
    right, the second on the same graph differs in the last bit."""

    @staticmethod
    def forward(ctx, x):
        ctx.twice = 2 * x
        return x * x

    @staticmethod
    def backward(ctx, grad):
        out = ctx.twice * grad
        ctx.twice.mul_(1 + 2.0**-52)
        return out


# --- second order -------------------------------------------------------------------
class SavesIntermediate(Function):
    """(3x)², whose backward uses 3x saved on ctx: no graph to x, so its double backward
    misses the 18·v term (first order right): pytorch#76185's pattern."""

    @staticmethod
    def forward(ctx, x):
        ctx.tripled = 3 * x
        return ctx.tripled**2

    @staticmethod
    def backward(ctx, grad):
        return 6 * ctx.tripled * grad


class RecomputesIntermediate(Function):
    """(3x)², the intermediate recomputed from the saved input: twice differentiable."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (3 * x) ** 2

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 18 * x * grad


class DetachesUpstream(Function):
    """x³ whose backward detaches ``grad``: first order right, but its gradient with
    respect to the upstream gradient is zero instead of 3x²."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x * x * grad.detach()


class CubeWrongBelowZero(Function):
    """x³ whose first derivative is doubled where x < 0 (issue 34): its backward is
    twice differentiable on each side, so only the first-order check sees the bug."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        slope = 3 * x * x
        return grad * torch.where(x < 0, 2 * slope, slope)


class Cube(Function):
    """x³, right at both orders: the twin of :class:`CubeWrongBelowZero`."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x * x * grad


# --- forward mode -------------------------------------------------------------------
class ExpWrongJvpAboveOne(Function):
    """exp, right backward; its jvp is 10% too large where x > 1 only."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y, x)
        ctx.save_for_forward(y, x)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, _ = ctx.saved_tensors
        return grad * y

    @staticmethod
    def jvp(ctx, t):
        y, x = ctx.saved_tensors
        return t * y * torch.where(x > 1, 1.1, 1.0)


class ExpJvp(ExpWrongJvpAboveOne):
    """exp, right backward and jvp."""

    @staticmethod
    def jvp(ctx, t):
        y, _ = ctx.saved_tensors
        return t * y


# --- complex (torch's convention: the gradient of z is dL/dx + i dL/dy) ---------------
class ComplexSquare(Function):
    """z², holomorphic: grad · conj(2z)."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        return grad * (2 * z).conj()


class ComplexSquareNoConj(ComplexSquare):
    """z² with the conjugation forgotten: grad · 2z."""

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        return grad * 2 * z


class AbsSquared(Function):
    """|z|², not holomorphic, a real output: 2 · grad · z."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return (z * z.conj()).real

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        return 2 * grad * z


class TimesConj(Function):
    """z · conj(w), two complex inputs, not holomorphic in w: the gradient of z is
    grad · w (conj of d/dz = conj(w)), of w is conj(grad) · z."""

    @staticmethod
    def forward(ctx, z, w):
        ctx.save_for_backward(z, w)
        return z * w.conj()

    @staticmethod
    def backward(ctx, grad):
        z, w = ctx.saved_tensors
        return grad * w, grad.conj() * z


class RealToComplex(Function):
    """x + 0i from a real x: the gradient is the real part of grad."""

    @staticmethod
    def forward(ctx, x):
        return torch.complex(x, torch.zeros_like(x))

    @staticmethod
    def backward(ctx, grad):
        return grad.real


# --- bfloat16 -----------------------------------------------------------------------
class SoftplusInItsDtype(Function):
    """softplus; records the dtype it ran in (``ran_in``)."""

    ran_in: ClassVar[list] = []

    @staticmethod
    def forward(ctx, x):
        SoftplusInItsDtype.ran_in.append(x.dtype)
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * torch.sigmoid(x)


class SoftplusWrongBy20Percent(SoftplusInItsDtype):
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 1.2 * grad * torch.sigmoid(x)
