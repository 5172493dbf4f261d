"""A second, held-out corpus: gradient bugs of the kinds reported against public
projects' ``torch.autograd.Function``s and torch functions, each beside its fix
(``Bug<Name>``/``bug_<name>`` and ``Fix<Name>``/``fix_<name>``), none of them a repeat of
``benchmarks/bug_corpus``. Settings are what each op's author knew (shapes, dtype,
integer inputs); nothing is tuned to make a bug easier to find.
"""

from __future__ import annotations

import torch

import gradcheck


# 1. cumprod whose backward divides the reversed cumsum by x: nan where x has a zero
#    (torch's own cumprod backward had this before it special-cased zeros).
def _cumprod(divides: bool):
    class CumProd(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.cumprod(x, dim=-1)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            if x.ndim == 0:
                return grad
            if divides:
                return (grad * y).flip(-1).cumsum(-1).flip(-1) / x
            out = torch.zeros_like(x)
            for i in range(x.shape[-1]):
                others = x.clone()
                others[..., i] = 1.0
                c = torch.cumprod(others, dim=-1)
                out[..., i] = (grad * c)[..., i:].sum(-1)
            return out

    return CumProd


BugCumprodZeros = _cumprod(divides=True)
FixCumprodZeros = _cumprod(divides=False)


# 2. logsumexp whose backward forgets the max shift the forward used: exp(x) overflows
#    for x > 709 and the gradient is inf/inf = nan.
def _logsumexp(shifted: bool):
    class LogSumExp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.logsumexp(x, dim=-1)
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            if shifted:
                return grad[..., None] * torch.exp(x - y[..., None])
            e = torch.exp(x)
            return grad[..., None] * e / e.sum(-1, keepdim=True)

    return gradcheck.describe(min_dims=1)(LogSumExp)


BugLogsumexpOverflow = _logsumexp(shifted=False)
FixLogsumexpOverflow = _logsumexp(shifted=True)


# 3. Training-mode batch norm (over axis 0) whose backward keeps only g / std: both
#    mean terms are missing.
def _batch_norm(full: bool):
    eps = 1e-5

    class BatchNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            mu = x.mean(0, keepdim=True)
            rstd = torch.rsqrt(((x - mu) ** 2).mean(0, keepdim=True) + eps)
            xhat = (x - mu) * rstd
            ctx.save_for_backward(xhat, rstd)
            return xhat

        @staticmethod
        def backward(ctx, grad):
            xhat, rstd = ctx.saved_tensors
            if not full:
                return grad * rstd
            return rstd * (
                grad - grad.mean(0, keepdim=True) - xhat * (grad * xhat).mean(0, keepdim=True)
            )

    return gradcheck.describe(shapes=["n,c"])(BatchNorm)


BugBatchNormMeanTerms = _batch_norm(full=False)
FixBatchNormMeanTerms = _batch_norm(full=True)


# 4. repeat_interleave (each element twice along axis 0) whose backward folds the
#    gradient as (2, n) instead of (n, 2).
def _repeat2(layout_ok: bool):
    class RepeatTwice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.n = x.shape[0]
            return torch.repeat_interleave(x, 2, dim=0)

        @staticmethod
        def backward(ctx, grad):
            rest = grad.shape[1:]
            if layout_ok:
                return grad.reshape(ctx.n, 2, *rest).sum(1)
            return grad.reshape(2, ctx.n, *rest).sum(0)

    return gradcheck.describe(min_dims=1)(RepeatTwice)


BugRepeatInterleaveLayout = _repeat2(layout_ok=False)
FixRepeatInterleaveLayout = _repeat2(layout_ok=True)


# 5. A max pool over overlapping windows (width 3, stride 1) whose backward scatters
#    with assignment: an element that is the max of several windows gets one share.
def _max_pool(accumulate: bool):
    class MaxPool1d(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            win = x.unfold(-1, 3, 1)
            values, arg = win.max(-1)
            idx = arg + torch.arange(win.shape[-2])
            ctx.save_for_backward(idx)
            ctx.shape = x.shape
            return values

        @staticmethod
        def backward(ctx, grad):
            (idx,) = ctx.saved_tensors
            out = grad.new_zeros(ctx.shape)
            if accumulate:
                return out.scatter_add(-1, idx, grad)
            return out.scatter(-1, idx, grad)

    return gradcheck.describe(shapes=["n,6"])(MaxPool1d)


BugMaxPoolOverlap = _max_pool(accumulate=False)
FixMaxPoolOverlap = _max_pool(accumulate=True)


# 6. im2col for a width-3 window, stride 1, whose col2im puts each window element back
#    at the mirrored offset (k - 1 - j instead of j).
def _im2col(mirrored: bool):
    class Im2Col(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.shape = x.shape
            return x.unfold(-1, 3, 1)

        @staticmethod
        def backward(ctx, grad):
            out = grad.new_zeros(ctx.shape)
            windows = grad.shape[-2]
            for j in range(3):
                k = 2 - j if mirrored else j
                out[..., k : k + windows] += grad[..., j]
            return out

    return gradcheck.describe(shapes=["n,7"])(Im2Col)


BugIm2ColOffset = _im2col(mirrored=True)
FixIm2ColOffset = _im2col(mirrored=False)


# 7. A bilinear form x^T A y by einsum whose gradient for A is the transpose of the
#    right one (silent for a square A).
def _bilinear(transposed: bool):
    class Bilinear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, a, y):
            ctx.save_for_backward(x, a, y)
            return torch.einsum("bi,ij,bj->b", x, a, y)

        @staticmethod
        def backward(ctx, grad):
            x, a, y = ctx.saved_tensors
            gx = torch.einsum("b,ij,bj->bi", grad, a, y)
            gy = torch.einsum("b,bi,ij->bj", grad, x, a)
            spec = "b,bi,bj->ji" if transposed else "b,bi,bj->ij"
            return gx, torch.einsum(spec, grad, x, y), gy

    return gradcheck.describe(shapes=["b,n", "n,n", "b,n"])(Bilinear)


BugBilinearTranspose = _bilinear(transposed=True)
FixBilinearTranspose = _bilinear(transposed=False)


# 8. x ** p with a tensor exponent whose exponent gradient drops the output factor:
#    g * log(x) instead of g * x**p * log(x).
def _pow(with_output: bool):
    class Pow(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, p):
            y = x**p
            ctx.save_for_backward(x, p, y)
            return y

        @staticmethod
        def backward(ctx, grad):
            x, p, y = ctx.saved_tensors
            gp = grad * y * torch.log(x) if with_output else grad * torch.log(x)
            return grad * p * x ** (p - 1), gp

    return gradcheck.describe(domain=[(0.1, 3.0), (-2.0, 2.0)], broadcast=False)(Pow)


BugPowExponentGrad = _pow(with_output=False)
FixPowExponentGrad = _pow(with_output=True)


# 9. clamp with tensor bounds whose backward gives the bounds no gradient (only x's).
def _clamp(bounds_grad: bool):
    class Clamp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, lo, hi):
            ctx.save_for_backward(x, lo, hi)
            return torch.minimum(torch.maximum(x, lo), hi)

        @staticmethod
        def backward(ctx, grad):
            x, lo, hi = ctx.saved_tensors
            below = x < lo
            above = (x > hi) & ~below
            inside = ~below & ~above
            if not bounds_grad:
                return grad * inside, torch.zeros_like(lo), torch.zeros_like(hi)
            return grad * inside, grad * below, grad * above

    return gradcheck.describe(domain=[(-3.0, 3.0), (-2.0, -0.5), (0.5, 2.0)], broadcast=False)(
        Clamp
    )


BugClampTensorBounds = _clamp(bounds_grad=False)
FixClampTensorBounds = _clamp(bounds_grad=True)


# 10. lerp(a, b, w) whose weight gradient has the sign flipped: g * (a - b).
def _lerp(sign: float):
    class Lerp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, w):
            ctx.save_for_backward(a, b, w)
            return a + w * (b - a)

        @staticmethod
        def backward(ctx, grad):
            a, b, w = ctx.saved_tensors
            return grad * (1 - w), grad * w, sign * grad * (b - a)

    return gradcheck.describe(broadcast=False)(Lerp)


BugLerpWeightSign = _lerp(-1.0)
FixLerpWeightSign = _lerp(1.0)


# 11. |z| of a complex input whose backward conjugates (torch's convention is g * z / |z|,
#     and 0 at z = 0).
def _cabs(conj: bool):
    class ComplexAbs(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z.abs()

        @staticmethod
        def backward(ctx, grad):
            (z,) = ctx.saved_tensors
            zz = z.conj() if conj else z
            r = z.abs()
            # sgn(z) = z / |z|, and 0 at z = 0 (torch's abs gives that subgradient
            # there; z / |z| alone is 0 / 0 = nan)
            return grad * torch.where(r > 0, zz / r, 0)

    return gradcheck.describe(dtype="complex128")(ComplexAbs)


BugComplexAbsConj = _cabs(conj=True)
FixComplexAbsConj = _cabs(conj=False)


# 12. polar(r, theta) -> r e^{i theta} whose angle gradient has the wrong sign.
def _polar(sign: float):
    class Polar(torch.autograd.Function):
        @staticmethod
        def forward(ctx, r, theta):
            ctx.save_for_backward(r, theta)
            return torch.polar(r, theta)

        @staticmethod
        def backward(ctx, grad):
            r, theta = ctx.saved_tensors
            e = torch.polar(torch.ones_like(r), theta)
            gr = (grad.conj() * e).real
            gt = sign * (grad.conj() * 1j * r * e).real
            return gr, gt

    return gradcheck.describe(domain=[(0.1, 3.0), (-3.0, 3.0)], broadcast=False)(Polar)


BugPolarAngleSign = _polar(-1.0)
FixPolarAngleSign = _polar(1.0)


# 13. The eigenvalues of sym(A) = (A + A^T) / 2 whose backward writes V^T diag(g) V for
#     V diag(g) V^T (a row/column eigenvector mix-up).
def _eigvals(transposed: bool):
    class SymEigvals(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            w, v = torch.linalg.eigh((a + a.mT) / 2)
            ctx.save_for_backward(v)
            return w

        @staticmethod
        def backward(ctx, grad):
            (v,) = ctx.saved_tensors
            if transposed:
                return v.mT @ torch.diag_embed(grad) @ v
            return v @ torch.diag_embed(grad) @ v.mT

    return gradcheck.describe(shapes=["n,n"])(SymEigvals)


BugEighTranspose = _eigvals(transposed=True)
FixEighTranspose = _eigvals(transposed=False)


# 14. A lower-triangular solve whose gradient for L is not masked to the lower
#     triangle the forward reads.
def _trisolve(masked: bool):
    class LowerSolve(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            low = torch.tril(a) + 4 * torch.eye(a.shape[-1], dtype=a.dtype)
            x = torch.linalg.solve_triangular(low, b, upper=False)
            ctx.save_for_backward(low, x)
            return x

        @staticmethod
        def backward(ctx, grad):
            low, x = ctx.saved_tensors
            gb = torch.linalg.solve_triangular(low.mT, grad, upper=True)
            ga = -gb @ x.mT
            return (torch.tril(ga) if masked else ga), gb

    return gradcheck.describe(shapes=["n,n", "n,k"], domain=(-1.0, 1.0))(LowerSolve)


BugTriangularSolveMask = _trisolve(masked=False)
FixTriangularSolveMask = _trisolve(masked=True)


# 15. Dropout whose backward draws a new mask from the generator instead of saving the
#     forward's (the forward reseeds, so it is a function of x).
def _dropout(saves_mask: bool):
    gen = torch.Generator()

    class Dropout(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            gen.manual_seed(1234)
            mask = (torch.rand(x.shape, generator=gen) > 0.5).to(x.dtype)
            ctx.save_for_backward(mask)
            return x * mask * 2

        @staticmethod
        def backward(ctx, grad):
            (mask,) = ctx.saved_tensors
            if not saves_mask:
                mask = (torch.rand(grad.shape, generator=gen) > 0.5).to(grad.dtype)
            return grad * mask * 2

    return Dropout


BugDropoutNewMask = _dropout(saves_mask=False)
FixDropoutNewMask = _dropout(saves_mask=True)


# 16. A row normalisation whose backward views the upstream gradient (fine when it is
#     contiguous, a RuntimeError for a transposed one); the fix reshapes.
def _row_scale(reshape: bool):
    class RowScale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * torch.arange(1, x.numel() + 1, dtype=x.dtype).reshape(x.shape)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            flat = grad.reshape(-1) if reshape else grad.view(-1)
            scale = torch.arange(1, x.numel() + 1, dtype=x.dtype)
            return (flat * scale).reshape(x.shape)

    return RowScale


BugViewNonContiguous = _row_scale(reshape=False)
FixViewNonContiguous = _row_scale(reshape=True)


# 17. An embedding with padding_idx 0 whose forward zeroes the padding rows' output
#     but whose backward still accumulates into row 0.
def _padded_embedding(masks: bool):
    class PaddedEmbedding(torch.autograd.Function):
        @staticmethod
        def forward(ctx, weight, idx):
            ctx.save_for_backward(idx)
            ctx.rows = weight.shape[0]
            return weight[idx] * (idx != 0)[:, None].to(weight.dtype)

        @staticmethod
        def backward(ctx, grad):
            (idx,) = ctx.saved_tensors
            out = grad.new_zeros((ctx.rows, grad.shape[1]))
            out.index_add_(0, idx, grad)
            if masks:
                out[0] = 0
            return out, None

    return gradcheck.describe(shapes=["5,d", "n"], integers={1: (0, 5)})(PaddedEmbedding)


BugEmbeddingPaddingIdx = _padded_embedding(masks=False)
FixEmbeddingPaddingIdx = _padded_embedding(masks=True)


# 18. Entropy term x log x through torch.where: where x <= 0 the unused branch's
#     gradient is nan, and nan * 0 is nan (the where-NaN gradient, torch issue lore).
@gradcheck.describe
def bug_xlogx_where(x):
    return torch.where(x > 0, x * torch.log(x), torch.zeros_like(x))


@gradcheck.describe
def fix_xlogx_where(x):
    safe = torch.where(x > 0, x, torch.ones_like(x))
    return torch.where(x > 0, safe * torch.log(safe), torch.zeros_like(x))


# 19. log-sigmoid in float32 whose backward is 1 - sigmoid(x) by subtraction: for
#     x > 17 it rounds to 0 where the gradient is exp(-x) (float32 cancellation).
def _log_sigmoid(stable: bool):
    class LogSigmoid(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.nn.functional.logsigmoid(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            if stable:
                return grad * torch.sigmoid(-x)
            return grad * (1 - 1 / (1 + torch.exp(-x)))

    return gradcheck.describe(dtype="float32")(LogSigmoid)


BugLogSigmoidCancel = _log_sigmoid(stable=False)
FixLogSigmoidCancel = _log_sigmoid(stable=True)


# 20. A linear layer y = x W^T + b whose bias gradient is summed over the wrong axis of
#     a square batch (silent when batch == features).
def _linear(axis: int):
    class Linear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, b):
            ctx.save_for_backward(x, w)
            return x @ w.mT + b

        @staticmethod
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            return grad @ w, grad.mT @ x, grad.sum(axis)

    return gradcheck.describe(shapes=["n,k", "m,k", "m"])(Linear)


BugLinearBiasAxis = _linear(1)
FixLinearBiasAxis = _linear(0)
