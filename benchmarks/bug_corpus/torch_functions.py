"""Gradient bugs of the kind reported against public projects' ``torch.autograd.Function``s,
each beside its fix (``Bug<Name>`` and ``Fix<Name>``), written as the Functions were.

Settings are what the author of each op knew and would say (its shapes, its dtype, its
integer inputs); nothing is tuned to make a bug easier to find.
"""

from __future__ import annotations

import torch

import gradcheck


def _sum_to(grad: torch.Tensor, shape: torch.Size, *, mean: bool = False) -> torch.Tensor:
    """``grad`` reduced over the axes a tensor of ``shape`` was broadcast along; ``mean``
    is the bug: the reduction averages instead of summing."""
    lead = grad.ndim - len(shape)
    axes = list(range(lead))
    axes += [lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1]
    if not axes:
        return grad
    reduced = grad.mean(axes, keepdim=True) if mean else grad.sum(axes, keepdim=True)
    return reduced.reshape(shape)


# 1. A scale-and-shift whose broadcast reduction averages (seen in hand-written
#    affine/FiLM layers): right whenever nothing is broadcast.
def _affine(mean: bool):
    class Affine(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, s, b):
            ctx.save_for_backward(x, s)
            ctx.shapes = (x.shape, s.shape, b.shape)
            return x * s + b

        @staticmethod
        def backward(ctx, grad):
            x, s = ctx.saved_tensors
            xs, ss, bs = ctx.shapes
            return (
                _sum_to(grad * s, xs, mean=mean),
                _sum_to(grad * x, ss, mean=mean),
                _sum_to(grad, bs, mean=mean),
            )

    return Affine


BugAffineMeanReduce = _affine(mean=True)
FixAffineMeanReduce = _affine(mean=False)


# 2. A complex multiply whose backward forgets the conjugate.
def _cmul(conj: bool):
    class ComplexMul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z, w):
            ctx.save_for_backward(z, w)
            return z * w

        @staticmethod
        def backward(ctx, grad):
            z, w = ctx.saved_tensors
            if conj:
                return grad * w.conj(), grad * z.conj()
            return grad * w, grad * z

    return gradcheck.describe(dtype="complex128")(ComplexMul)


BugComplexMulConj = _cmul(conj=False)
FixComplexMulConj = _cmul(conj=True)


# 3. Leaky ReLU whose negative branch has the wrong sign.
def _leaky(sign: float):
    class LeakyRelu(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.where(x > 0, x, 0.01 * x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return torch.where(x > 0, grad, sign * 0.01 * grad)

    return LeakyRelu


BugLeakyReluSign = _leaky(-1.0)
FixLeakyReluSign = _leaky(1.0)


# 4. Sigmoid whose backward writes into the output it saved: the first backward is
#    right, a second one on the same graph is not.
class BugSigmoidSavedInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y.mul_(1 - y)


class FixSigmoidSavedInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y * (1 - y)


# 5. ReLU whose backward zeroes the upstream gradient in place.
class BugReluGradInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        grad[x < 0] = 0
        return grad


class FixReluGradInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        grad = grad.clone()
        grad[x < 0] = 0
        return grad


# 6. A kernel that reads the upstream gradient's memory in storage order (a C++/CUDA
#    extension that assumes contiguity), emulated with as_strided.
def _raw_scale(contiguous: bool):
    class RawScale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, grad):
            if contiguous:
                grad = grad.contiguous()
            flat = torch.as_strided(grad, (grad.numel(),), (1,))
            return (flat * 3).reshape(grad.shape)

    return RawScale


BugRawMemoryGrad = _raw_scale(contiguous=False)
FixRawMemoryGrad = _raw_scale(contiguous=True)


# 7. Mean over the last axis whose backward forgets the 1/n.
def _mean_last(scale: bool):
    class MeanLast(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.shape = x.shape
            return x.mean(-1)

        @staticmethod
        def backward(ctx, grad):
            if not ctx.shape:  # (a 0-d x is its own mean)
                return grad
            n = ctx.shape[-1]
            g = grad.unsqueeze(-1).expand(ctx.shape)
            return g / n if scale else g

    return MeanLast


BugMeanMissingN = _mean_last(scale=False)
FixMeanMissingN = _mean_last(scale=True)


# 8. Softmax over the last axis whose backward sums over the first.
def _softmax(axis: int):
    class Softmax(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.softmax(x, dim=-1)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return y * (grad - (grad * y).sum(axis, keepdim=True))

    return Softmax


BugSoftmaxAxis = _softmax(0)
FixSoftmaxAxis = _softmax(-1)


# 9. RMSNorm whose backward leaves out the eps the forward added.
def _rms(eps_in_backward: bool):
    eps = 1e-5

    class RmsNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            n = x.shape[-1] if x.ndim else 1
            ms = (x * x).mean(-1, keepdim=True) + (eps if eps_in_backward else 0.0)
            r = torch.rsqrt(ms)
            return r * grad - x * r**3 * (grad * x).sum(-1, keepdim=True) / n

    return RmsNorm


BugRmsNormEps = _rms(eps_in_backward=False)
FixRmsNormEps = _rms(eps_in_backward=True)


# 10. Smooth L1 whose branch test forgets the absolute value.
def _smooth_l1(use_abs: bool):
    class SmoothL1(torch.autograd.Function):
        @staticmethod
        def forward(ctx, d):
            ctx.save_for_backward(d)
            a = d.abs()
            return torch.where(a < 1.0, 0.5 * d * d, a - 0.5)

        @staticmethod
        def backward(ctx, grad):
            (d,) = ctx.saved_tensors
            inside = d.abs() < 1.0 if use_abs else d < 1.0
            return grad * torch.where(inside, d, d.sign())

    return SmoothL1


BugSmoothL1Branch = _smooth_l1(use_abs=False)
FixSmoothL1Branch = _smooth_l1(use_abs=True)


# 11. atan2 with the two partial derivatives' signs swapped.
def _atan2(sign: float):
    class Atan2(torch.autograd.Function):
        @staticmethod
        def forward(ctx, y, x):
            ctx.save_for_backward(y, x)
            return torch.atan2(y, x)

        @staticmethod
        def backward(ctx, grad):
            y, x = ctx.saved_tensors
            r2 = x * x + y * y
            return sign * grad * x / r2, -sign * grad * y / r2

    return Atan2


BugAtan2Sign = _atan2(-1.0)
FixAtan2Sign = _atan2(1.0)


# 12. An embedding lookup whose backward assigns instead of accumulating: repeated
#     indices lose all but one contribution.
def _embedding(accumulate: bool):
    class Embedding(torch.autograd.Function):
        @staticmethod
        def forward(ctx, weight, idx):
            ctx.save_for_backward(idx)
            ctx.rows = weight.shape[0]
            return weight[idx]

        @staticmethod
        def backward(ctx, grad):
            (idx,) = ctx.saved_tensors
            out = grad.new_zeros((ctx.rows, *grad.shape[1:]))
            if accumulate:
                out.index_add_(0, idx, grad)
            else:
                out[idx] = grad
            return out, None

    return gradcheck.describe(shapes=["4,d", "n"], integers={1: (0, 4)})(Embedding)


BugEmbeddingDuplicates = _embedding(accumulate=False)
FixEmbeddingDuplicates = _embedding(accumulate=True)


# 13. Two outputs with materialized gradients off: the backward uses the gradient of an
#     output nobody used, which is then None.
def _sincos(handles_none: bool):
    class SinCos(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return torch.sin(x), torch.cos(x)

        @staticmethod
        def backward(ctx, gs, gc):
            (x,) = ctx.saved_tensors
            if handles_none:
                out = torch.zeros_like(x)
                if gs is not None:
                    out = out + gs * torch.cos(x)
                if gc is not None:
                    out = out - gc * torch.sin(x)
                return out
            return gs * torch.cos(x) - gc * torch.sin(x)

    return SinCos


BugSinCosNoneGrad = _sincos(handles_none=False)
FixSinCosNoneGrad = _sincos(handles_none=True)


# 14. A row-wise dot product whose backward squeezes every size-1 axis of the upstream
#     gradient (torch.squeeze() without dim), wrong on a size-1 middle axis.
def _row_dot(squeeze_all: bool):
    class RowDot(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a, b = torch.broadcast_tensors(a, b)
            ctx.save_for_backward(a, b)
            return (a * b).sum(-1)

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            g = grad.squeeze().unsqueeze(-1) if squeeze_all else grad.unsqueeze(-1)
            return g * b, g * a

    return RowDot


BugRowDotSqueeze = _row_dot(squeeze_all=True)
FixRowDotSqueeze = _row_dot(squeeze_all=False)


# 15. A sum over axis 1 whose backward re-inserts the axis at the end.
def _sum_axis1(last: bool):
    class SumAxis1(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.shape = x.shape
            return x.sum(1)

        @staticmethod
        def backward(ctx, grad):
            g = grad.unsqueeze(-1) if last else grad.unsqueeze(1)
            return g * torch.ones(ctx.shape, dtype=grad.dtype)

    return SumAxis1


BugSumAxisReinsert = _sum_axis1(last=True)
FixSumAxisReinsert = _sum_axis1(last=False)


# 16. A backward computed under no_grad: right at order 1, its own gradient is 0.
def _softplus(detached: bool):
    class Softplus(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.nn.functional.softplus(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            if detached:
                with torch.no_grad():
                    return grad * torch.sigmoid(x)
            return grad * torch.sigmoid(x)

    return gradcheck.describe(order=2)(Softplus)


BugSoftplusDoubleBackward = _softplus(detached=True)
FixSoftplusDoubleBackward = _softplus(detached=False)


# 17. Cumulative sum whose backward is a forward cumsum of the gradient, not a reversed one.
def _cumsum(reverse: bool):
    class CumSum(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.cumsum(-1)

        @staticmethod
        def backward(ctx, grad):
            if reverse:
                return grad.flip(-1).cumsum(-1).flip(-1)
            return grad.cumsum(-1)

    return CumSum


BugCumsumReverse = _cumsum(reverse=False)
FixCumsumReverse = _cumsum(reverse=True)


# 18. Cross-entropy with label smoothing whose backward leaves out the smoothing.
def _smoothed_ce(smoothing_in_backward: bool):
    eps = 0.1

    class SmoothedCrossEntropy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, logits, labels):
            logp = torch.log_softmax(logits, dim=-1)
            k = logits.shape[-1]
            target = torch.full_like(logp, eps / k)
            target.scatter_(-1, labels[:, None], 1 - eps + eps / k)
            ctx.save_for_backward(logp, target, labels)
            return -(target * logp).sum()

        @staticmethod
        def backward(ctx, grad):
            logp, target, labels = ctx.saved_tensors
            if not smoothing_in_backward:
                target = torch.zeros_like(logp).scatter_(-1, labels[:, None], 1.0)
            return grad * (logp.exp() - target), None

    return gradcheck.describe(shapes=["n,3", "n"], integers={1: (0, 3)})(SmoothedCrossEntropy)


BugLabelSmoothingCE = _smoothed_ce(smoothing_in_backward=False)
FixLabelSmoothingCE = _smoothed_ce(smoothing_in_backward=True)


# 19. A masked fill whose backward passes the gradient where the mask is set.
def _masked_fill(inverted: bool):
    class MaskedFill(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, mask):
            ctx.save_for_backward(mask)
            return x.masked_fill(mask, 0.0)

        @staticmethod
        def backward(ctx, grad):
            (mask,) = ctx.saved_tensors
            keep = mask if inverted else ~mask
            return grad * keep, None

    return gradcheck.describe(booleans=[1])(MaskedFill)


BugMaskedFillInverted = _masked_fill(inverted=True)
FixMaskedFillInverted = _masked_fill(inverted=False)


# 20. SiLU in float16 whose backward keeps only the first term of the product rule.
def _silu(full: bool):
    class Silu(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * torch.sigmoid(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            s = torch.sigmoid(x)
            return grad * (s * (1 + x * (1 - s)) if full else s)

    return gradcheck.describe(dtype="float16")(Silu)


BugSiluFloat16 = _silu(full=False)
FixSiluFloat16 = _silu(full=True)
