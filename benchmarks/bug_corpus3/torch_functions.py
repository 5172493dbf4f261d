"""A third corpus: gradient bugs reported in public projects, each written as the
``torch.autograd.Function`` such a bug lived in, beside its fix (``Bug<Name>`` and
``Fix<Name>``). Each op's comment names the report it follows; the code is written here
from the report's description, not copied. Settings are what each op's author knew."""

from __future__ import annotations

import torch

import gradcheck


# 1. A complex exp whose backward multiplies by exp(z) instead of its conjugate (the
#    holomorphic convention confusion of https://github.com/tensorflow/tensorflow/issues/3348,
#    also https://github.com/pytorch/pytorch/issues/60180).
def _cexp(conj: bool):
    class ComplexExp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            y = torch.exp(z)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * (y.conj() if conj else y)

    return gradcheck.describe(dtype="complex128")(ComplexExp)


BugComplexExpConj = _cexp(conj=False)
FixComplexExpConj = _cexp(conj=True)


def _products_of_others(x):
    """For each element of the last axis, the product of the others (differentiable)."""
    n = x.shape[-1]
    cols = [torch.cat([x[..., :i], x[..., i + 1 :]], -1).prod(-1) for i in range(n)]
    return torch.stack(cols, -1)


# 2. A product over the last axis whose gradient, where a row holds two or more zeros,
#    is a constant zero tensor: right at first order, but its own gradient is lost
#    (https://github.com/pytorch/pytorch/issues/106789).
def _prod2(keeps_graph: bool):
    class ProdLast(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.prod(-1)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            others = _products_of_others(x)
            if not keeps_graph:
                two = ((x == 0).sum(-1, keepdim=True) >= 2).expand_as(x)
                others = torch.where(two, torch.zeros_like(x).detach(), others)
            return grad[..., None] * others

    return gradcheck.describe(min_dims=1, order=2)(ProdLast)


BugProdTwoZerosOrder2 = _prod2(keeps_graph=False)
FixProdTwoZerosOrder2 = _prod2(keeps_graph=True)


# 3. x ** k for an integer k whose backward is k * x ** (k - 1): 0 * inf = nan at
#    x = 0, k = 0 (https://github.com/pytorch/pytorch/issues/8940).
def _pow_int(guarded: bool):
    class PowInt(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x, k)
            return x ** k.to(x.dtype)

        @staticmethod
        def backward(ctx, grad):
            x, k = ctx.saved_tensors
            kf = k.to(x.dtype)
            d = kf * x ** (kf - 1)
            if guarded:
                d = torch.where(k == 0, torch.zeros_like(d), d)
            return grad * d, None

    return gradcheck.describe(integers={1: (0, 3)}, broadcast=False)(PowInt)


BugPowZeroExponent = _pow_int(guarded=False)
FixPowZeroExponent = _pow_int(guarded=True)


# 4. A product over axis 0 whose zero branch drops the reduced axis when it has size 1:
#    a gradient of shape [] for an input of shape [1]
#    (https://github.com/pytorch/pytorch/issues/82644).
def _prod0(keeps_axis: bool):
    class Prod0(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.prod(0)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            if not bool((x == 0).any()):
                return grad.unsqueeze(0) * y.unsqueeze(0) / x
            n = x.shape[0]
            cols = [torch.cat([x[:i], x[i + 1 :]], 0).prod(0) for i in range(n)]
            out = grad.unsqueeze(0) * torch.stack(cols, 0)
            return out if keeps_axis else out.squeeze(0)

    return gradcheck.describe(min_dims=1)(Prod0)


BugProdZeroShape = _prod0(keeps_axis=False)
FixProdZeroShape = _prod0(keeps_axis=True)


# 5. angle of a real input (0 or pi, piecewise constant) whose backward applies the
#    complex formula, grad * x / |x|^2, to reals (review of
#    https://github.com/pytorch/pytorch/pull/44444).
def _angle(zero: bool):
    class RealAngle(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.angle(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            if zero:
                return torch.zeros_like(grad)
            return grad * x / (x * x)

    return RealAngle


BugAngleRealFormula = _angle(zero=False)
FixAngleRealFormula = _angle(zero=True)


# 6. Binary cross-entropy summed over its elements, whose double backward was copied
#    from the mean reduction: divided by the number of elements
#    (https://github.com/pytorch/pytorch/issues/59477).
def _bce(divides: bool):
    class BCEGrad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, g):
            ctx.save_for_backward(x, y, g)
            return g * (x - y) / (x * (1 - x))

        @staticmethod
        def backward(ctx, gg):
            x, y, g = ctx.saved_tensors
            q = x * (1 - x)
            h = (x - y) / q
            dhdx = (q - (x - y) * (1 - 2 * x)) / (q * q)
            scale = 1.0 / x.numel() if divides else 1.0
            return (
                scale * gg * g * dhdx,
                scale * gg * g * (-1.0 / q),
                scale * (gg * h).sum(),
            )

    class BCESum(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return -(y * torch.log(x) + (1 - y) * torch.log1p(-x)).sum()

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            gx = BCEGrad.apply(x, y, grad)
            gy = grad * (torch.log1p(-x) - torch.log(x))
            return gx, gy

    return gradcheck.describe(domain=(0.02, 0.98), broadcast=False, order=2)(BCESum)


BugBceSumDoubleBackward = _bce(divides=True)
FixBceSumDoubleBackward = _bce(divides=False)


# 7. Complex softsign z / (1 + |z|), not holomorphic: its backward takes the upstream
#    gradient where the conjugate belongs in the d/dz-bar term (the complex softsign
#    gradients of https://github.com/pytorch/pytorch/issues/80926).
def _softsign(conj: bool):
    class ComplexSoftsign(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z / (1 + z.abs())

        @staticmethod
        def backward(ctx, grad):
            (z,) = ctx.saved_tensors
            r = z.abs()
            s = 1 / (1 + r)
            zz = torch.where(r > 0, z * z / torch.where(r > 0, r, 1), torch.zeros_like(z))
            other = grad.conj() if conj else grad
            return grad * (s - s * s * r / 2) - other * s * s * zz / 2

    return gradcheck.describe(dtype="complex128")(ComplexSoftsign)


BugSoftsignComplexConj = _softsign(conj=False)
FixSoftsignComplexConj = _softsign(conj=True)


# 8. Attention softmax(q k^T / sqrt(d)) v whose backward reads the upstream gradient as
#    if it were laid out contiguously (https://github.com/Dao-AILab/flash-attention/issues/355,
#    https://github.com/open-mmlab/mmcv/pull/737).
def _attention(contiguous: bool):
    class Attention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v):
            scale = q.shape[-1] ** -0.5
            p = torch.softmax(q @ k.mT * scale, -1)
            ctx.save_for_backward(q, k, v, p)
            ctx.scale = scale
            return p @ v

        @staticmethod
        def backward(ctx, grad):
            q, k, v, p = ctx.saved_tensors
            if contiguous:
                grad = grad.contiguous()
            else:
                strides, step = [], 1
                for size in reversed(grad.shape):
                    strides.insert(0, step)
                    step *= size
                grad = grad.as_strided(grad.shape, strides, grad.storage_offset())
            dv = p.mT @ grad
            dp = grad @ v.mT
            ds = p * (dp - (dp * p).sum(-1, keepdim=True))
            return ds @ k * ctx.scale, ds.mT @ q * ctx.scale, dv

    return gradcheck.describe(shapes=["n,d", "m,d", "m,e"])(Attention)


BugAttentionGradLayout = _attention(contiguous=False)
FixAttentionGradLayout = _attention(contiguous=True)


# 9. The mean of squares whose backward hard-codes two elements: x instead of 2x / n
#    (https://github.com/udacity/deep-learning-v2-pytorch/pull/388).
def _mean_square(general: bool):
    class MeanSquare(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return (x * x).mean()

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            n = x.numel() if general else 2
            return grad * 2 * x / n

    return MeanSquare


BugMeanSquareTwo = _mean_square(general=False)
FixMeanSquareTwo = _mean_square(general=True)


# 10. The Rosenbrock function (1 - x)^2 + 100 (y - x^2)^2, elementwise, with a typo in
#     its hand-written gradient: x where x^2 belongs in d/dy
#     (of the kind fixed in https://github.com/pytorch/pytorch/pull/3881).
def _rosenbrock(typo: bool):
    class Rosenbrock(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return (1 - x) ** 2 + 100 * (y - x * x) ** 2

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            dx = -2 * (1 - x) - 400 * x * (y - x * x)
            dy = 200 * (y - (x if typo else x * x))
            return grad * dx, grad * dy

    return gradcheck.describe(broadcast=False)(Rosenbrock)


BugRosenbrockTypo = _rosenbrock(typo=True)
FixRosenbrockTypo = _rosenbrock(typo=False)
