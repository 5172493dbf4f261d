"""Held-out hard correct ops (``Ok<Name>``/``ok_<name>``): near-singular inputs,
saturation, ties, integer outputs, float32/float16, order 2. Each must pass on every
seed."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import torch
from mygrad.operation_base import Operation

import gradcheck

jax.config.update("jax_enable_x64", True)


# 1. Cholesky log-determinant of A A^T + 1e-3 I: nearly singular when A is small.
@gradcheck.describe(shapes=["n,n"])
def ok_logdet_cholesky(a):
    s = a @ a.mT + 1e-3 * torch.eye(a.shape[-1], dtype=a.dtype)
    return 2 * torch.log(torch.diagonal(torch.linalg.cholesky(s), dim1=-2, dim2=-1)).sum(-1)


# 2. |diag(R)| of a QR factorisation: not differentiable where A is rank deficient.
@gradcheck.describe(shapes=["n,n"])
def ok_qr_diag_abs(a):
    return torch.diagonal(torch.linalg.qr(a).R, dim1=-2, dim2=-1).abs()


# 3. The squares of the eigenvectors of a symmetric matrix (sign-free): huge gradients
#    near a repeated eigenvalue.
@gradcheck.describe(shapes=["3,3"])
def ok_eigh_vector_squares(a):
    return torch.linalg.eigh(a + a.mT)[1] ** 2


# 4. torch's max over the last axis: ties are drawn often. (torch.max: written x.max
#     alone, gradcheck ran it as its own op and checked its own max.)
@gradcheck.describe
def ok_max_ties(x):
    return torch.max(x, -1).values if x.ndim else x


# 5. A max pool over overlapping windows (torch's).
@gradcheck.describe(shapes=["n,1,8"])
def ok_max_pool_overlap(x):
    return torch.nn.functional.max_pool1d(x, 3, stride=1)


# 6. Two outputs, one of them an integer floor.
class OkSquareAndFloor(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        fl = torch.floor(x).to(torch.int64)
        ctx.mark_non_differentiable(fl)
        return x * x, fl

    @staticmethod
    def backward(ctx, grad, _):
        (x,) = ctx.saved_tensors
        return 2 * grad * x


# 7. A float16 layer norm.
@gradcheck.describe(dtype="float16", min_dims=1)
def ok_layer_norm_float16(x):
    return torch.nn.functional.layer_norm(x, x.shape[-1:])


# 8. A float32 logsumexp.
@gradcheck.describe(dtype="float32", min_dims=1)
def ok_logsumexp_float32(x):
    return torch.logsumexp(x, dim=-1)


# 9. Binary cross-entropy with logits at large logits (x 20): the loss cancels.
@gradcheck.describe(domain=[None, (0.0, 1.0)], broadcast=False)
def ok_bce_logits_large(x, t):
    return torch.nn.functional.binary_cross_entropy_with_logits(20 * x, t, reduction="sum")


# 10. atan2 near the origin.
@gradcheck.describe(broadcast=False)
def ok_atan2(y, x):
    return torch.atan2(y, x)


# 11. polar(r, theta): real inputs, a complex output.
@gradcheck.describe(domain=[(0.0, 3.0), None], broadcast=False)
def ok_polar(r, theta):
    return torch.polar(r, theta)


# 12. |z| of a complex input: not differentiable at 0. (torch.abs, not z.abs(): a
#     function is torch's where its code names torch; z.abs() alone made it gradcheck's
#     own op, which refuses complex inputs.)
@gradcheck.describe(dtype="complex128")
def ok_complex_abs(z):
    return torch.abs(z)


# 13. The Euclidean norm over the last axis: not differentiable at a zero vector.
@gradcheck.describe(min_dims=1)
def ok_vector_norm(x):
    return torch.linalg.vector_norm(x, dim=-1)


# 14. The sample variance (ddof=1): not finite for a single element.
@gradcheck.describe(min_dims=1)
def ok_var_ddof1(x):
    return torch.var(x, dim=-1, correction=1)


# 15. index_put with accumulate and repeated indices. (torch.index_put: written as the
#     method x.index_put alone, nothing in its code names torch, and gradcheck ran it
#     as its own op, whose Tensor has no index_put.)
@gradcheck.describe(shapes=["5", "n", "n"], integers={1: (0, 5)})
def ok_index_put_accumulate(x, idx, v):
    return torch.index_put(x, (idx,), v, accumulate=True)


# 16. lerp with three broadcast inputs.
@gradcheck.describe
def ok_lerp(a, b, w):
    return torch.lerp(a, b, w)


# 17. A softplus Function with a differentiable backward, checked at order 2, at
#     logits scaled by 30 (saturated on both sides).
@gradcheck.describe(order=2)
class OkSoftplusOrder2(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.nn.functional.softplus(30 * x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 30 * grad * torch.sigmoid(30 * x)


# 18. JAX cumprod (zeros drawn often).
@gradcheck.describe(min_dims=1)
def ok_jax_cumprod(x):
    return jnp.cumprod(x, axis=-1)


# 19. JAX GELU (exact, by erf) at order 2.
@gradcheck.describe(order=2)
def ok_jax_gelu_order2(x):
    return jax.nn.gelu(x, approximate=False)


# 20. A MyGrad product over the last axis without division (zeros and ties drawn).
@gradcheck.describe(min_dims=1)
class OkProdNoDivision(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return np.prod(x.data, axis=-1)

    def backward_var(self, grad, index, **kwargs):
        (x,) = self.variables
        a = x.data
        out = np.empty_like(a)
        for i in range(a.shape[-1]):
            out[..., i] = np.prod(np.delete(a, i, axis=-1), axis=-1)
        return np.expand_dims(grad, -1) * out


# 21. pow with a negative base and an integer exponent (x ** 3 through torch.pow).
@gradcheck.describe
def ok_pow_negative_base(x):
    return torch.pow(x, 3.0)


# 22. A float32 triangular solve through a well-conditioned lower factor.
@gradcheck.describe(shapes=["n,n", "n,2"], dtype="float32", domain=(-1.0, 1.0))
def ok_triangular_solve_float32(a, b):
    low = torch.tril(a) + 3 * torch.eye(a.shape[-1], dtype=a.dtype)
    return torch.linalg.solve_triangular(low, b, upper=False)
