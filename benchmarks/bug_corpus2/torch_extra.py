"""Held-out, second part: more gradient bugs of kinds reported against public projects'
``torch.autograd.Function``s, none a repeat of ``benchmarks/bug_corpus`` or of this
directory's other files, each beside its fix (``Bug<Name>`` and ``Fix<Name>``).
Settings are what each op's author knew (shapes, dtype, masks)."""

from __future__ import annotations

import torch

import gradcheck


# 1. An LSTM cell update c' = sigmoid(f) * c + sigmoid(i) * tanh(g) whose backward takes
#    the forget gate's gradient from the updated cell state c' (saved after an in-place
#    update of c) where it needs the previous one c.
def _lstm_cell(previous_state: bool):
    class LSTMCellState(torch.autograd.Function):
        @staticmethod
        def forward(ctx, f, i, g, c):
            sf, si, tg = torch.sigmoid(f), torch.sigmoid(i), torch.tanh(g)
            c_new = sf * c + si * tg
            ctx.save_for_backward(sf, si, tg, c if previous_state else c_new)
            return c_new

        @staticmethod
        def backward(ctx, grad):
            sf, si, tg, c = ctx.saved_tensors
            d_f = grad * c * sf * (1 - sf)
            d_i = grad * tg * si * (1 - si)
            d_g = grad * si * (1 - tg * tg)
            d_c = grad * sf
            return d_f, d_i, d_g, d_c

    return gradcheck.describe(broadcast=False)(LSTMCellState)


BugLSTMForgetGate = _lstm_cell(previous_state=False)
FixLSTMForgetGate = _lstm_cell(previous_state=True)


# 2. A shift along the last axis with edge replication, y[j] = x[min(j + 1, n - 1)] (a
#    gather), whose backward scatters grad[j] to j + 1 by slicing and so drops the last
#    output's share of the boundary element (it is gathered twice).
def _shift(boundary: bool):
    class ShiftLeftReplicate(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            n = x.shape[-1]
            idx = torch.clamp(torch.arange(n) + 1, max=n - 1)
            ctx.n = n
            return x[..., idx]

        @staticmethod
        def backward(ctx, grad):
            n = ctx.n
            if boundary:
                idx = torch.clamp(torch.arange(n) + 1, max=n - 1)
                out = torch.zeros_like(grad)
                return out.index_add(-1, idx, grad)
            out = torch.zeros_like(grad)
            out[..., 1:] = grad[..., : n - 1]
            return out

    return gradcheck.describe(min_dims=1)(ShiftLeftReplicate)


BugGatherBoundary = _shift(boundary=False)
FixGatherBoundary = _shift(boundary=True)


# 3. Softmax over the last axis whose backward sums g * y over axis 0 (the batch).
def _softmax(dim: int):
    class Softmax(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.softmax(x, dim=-1)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return y * (grad - (grad * y).sum(dim, keepdim=True))

    return gradcheck.describe(shapes=["n,c"])(Softmax)


BugSoftmaxBackwardDim = _softmax(dim=0)
FixSoftmaxBackwardDim = _softmax(dim=-1)


# 4. Linear upsampling by 2 along the last axis (align_corners=False: source position
#    (j + 0.5) / 2 - 0.5, clamped to [0, n - 1]) whose backward scatters the right
#    neighbour's weight into a buffer one longer than x and drops its last slot, where
#    the forward clamped that neighbour onto x[n - 1]: the edge element loses a share.
def _upsample(clamps_in_backward: bool):
    def plan(n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        pos = ((torch.arange(2 * n, dtype=torch.float64) + 0.5) / 2 - 0.5).clamp(min=0)
        i0 = pos.floor().long().clamp(max=n - 1)
        return i0, i0 + 1, pos - i0

    class Upsample2x(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            n = x.shape[-1]
            i0, i1, w = plan(n)
            ctx.n = n
            w = w.to(x.dtype)
            return (1 - w) * x[..., i0] + w * x[..., i1.clamp(max=n - 1)]

        @staticmethod
        def backward(ctx, grad):
            n = ctx.n
            i0, i1, w = plan(n)
            w = w.to(grad.dtype)
            out = torch.zeros(*grad.shape[:-1], n + 1, dtype=grad.dtype)
            out = out.index_add(-1, i0, (1 - w) * grad)
            right = i1.clamp(max=n - 1) if clamps_in_backward else i1
            out = out.index_add(-1, right, w * grad)
            return out[..., :n]

    return gradcheck.describe(min_dims=1)(Upsample2x)


BugUpsampleEdgeWeight = _upsample(clamps_in_backward=False)
FixUpsampleEdgeWeight = _upsample(clamps_in_backward=True)


# 5. Weight normalisation w = g * v / ||v|| with one norm per output row (dim 1): the
#    backward takes the norms over dim 0 (the layout of another framework's weights).
def _weight_norm(dim: int):
    class WeightNorm(torch.autograd.Function):
        @staticmethod
        def forward(ctx, v, g):
            norm = v.norm(dim=1, keepdim=True)
            ctx.save_for_backward(v, g)
            return g[:, None] * v / norm

        @staticmethod
        def backward(ctx, grad):
            v, g = ctx.saved_tensors
            norm = v.norm(dim=dim, keepdim=True)
            u = v / norm
            d_g = (grad * u).sum(1)
            d_v = g[:, None] / norm * (grad - u * (grad * u).sum(1, keepdim=True))
            return d_v, d_g

    return gradcheck.describe(shapes=["m,k", "m"])(WeightNorm)


BugWeightNormAxis = _weight_norm(dim=0)
FixWeightNormAxis = _weight_norm(dim=1)


# 6. A masked mean (padding excluded) whose backward divides by the full count.
def _masked_mean(kept_count: bool):
    class MaskedMean(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, mask):
            count = mask.sum().clamp(min=1)
            ctx.save_for_backward(mask)
            ctx.count = count
            return (x * mask).sum() / count

        @staticmethod
        def backward(ctx, grad):
            (mask,) = ctx.saved_tensors
            count = ctx.count if kept_count else mask.numel()
            return grad * mask / count, None

    return gradcheck.describe(shapes=["n,k", "n,k"], booleans=[1])(MaskedMean)


BugMaskedMeanCount = _masked_mean(kept_count=False)
FixMaskedMeanCount = _masked_mean(kept_count=True)


# 7. The complex phase z / |z| (not holomorphic): the backward must be
#    conj(df/dz) * g + df/dz* * conj(g), with df/dz = 1 / (2|z|) and
#    df/dz* = -z^2 / (2|z|^3); the bug conjugates z in the second term.
def _phase(conj_ok: bool):
    class Phase(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z / z.abs()

        @staticmethod
        def backward(ctx, grad):
            (z,) = ctx.saved_tensors
            r = z.abs()
            zz = z * z if conj_ok else (z * z).conj()
            return grad / (2 * r) - grad.conj() * zz / (2 * r**3)

    return gradcheck.describe(dtype="complex128")(Phase)


BugPhaseWirtinger = _phase(conj_ok=False)
FixPhaseWirtinger = _phase(conj_ok=True)
