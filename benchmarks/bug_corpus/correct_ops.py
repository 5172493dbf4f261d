"""Hard correct ops (``Ok<Name>``/``ok_<name>``): singular matrices, saturation,
cancellation, several outputs, complex numbers. Each must pass on every seed."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import torch
from mygrad.operation_base import Operation

import gradcheck

jax.config.update("jax_enable_x64", True)


# 1. trace(inv(A)): torch raises LinAlgError at a singular matrix (a zero matrix is
#    where shrinking goes).
@gradcheck.describe(shapes=["n,n"])
class OkTraceInverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        inv = torch.linalg.inv(a)
        ctx.save_for_backward(inv)
        return torch.diagonal(inv, dim1=-2, dim2=-1).sum(-1)

    @staticmethod
    def backward(ctx, grad):
        (inv,) = ctx.saved_tensors
        return -grad[..., None, None] * (inv @ inv).mT


# 2. A linear solve through NumPy in a MyGrad op: numpy.linalg.LinAlgError when singular.
@gradcheck.describe(shapes=["n,n", "n"])
class OkSolve(Operation):
    def __call__(self, a, b):
        self.variables = (a, b)
        self.x = np.linalg.solve(a.data, b.data)
        return self.x

    def backward_var(self, grad, index, **kwargs):
        a, _ = self.variables
        gb = np.linalg.solve(a.data.T, grad)
        return gb if index == 1 else -np.outer(gb, self.x)


# 3. log|det A| by slogdet: large gradients near the singular set.
@gradcheck.describe(shapes=["n,n"])
def ok_log_abs_det(a):
    return torch.linalg.slogdet(a)[1]


# 4. tanh checked at order 2: saturates to +-1 at |x| of 10.
@gradcheck.describe(order=2)
class OkTanhOrder2(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * (1 - y * y)


# 5. Softmax cross-entropy at large logits (scaled by 8): the loss cancels, the
#    gradient is tiny where one logit dominates.
@gradcheck.describe(shapes=["n,4", "n"], integers={1: (0, 4)})
class OkCrossEntropyLargeLogits(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, labels):
        logp = torch.log_softmax(8 * logits, dim=-1)
        ctx.save_for_backward(logp, labels)
        return -logp.gather(-1, labels[:, None]).sum()

    @staticmethod
    def backward(ctx, grad):
        logp, labels = ctx.saved_tensors
        onehot = torch.zeros_like(logp).scatter_(-1, labels[:, None], 1.0)
        return 8 * grad * (logp.exp() - onehot), None


# 6. x * |x|: differentiable everywhere, its second derivative jumps at 0.
class OkXAbsX(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x.abs()

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * grad * x.abs()


# 7. Sort: two outputs, the values and integer indices.
class OkSortValues(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = torch.sort(x, dim=-1)
        ctx.save_for_backward(idx)
        ctx.mark_non_differentiable(idx)
        return values, idx

    @staticmethod
    def backward(ctx, grad, _):
        (idx,) = ctx.saved_tensors
        return torch.zeros_like(grad).scatter_(-1, idx, grad)


# 8. |z|^2 of a complex input: a real output (torch's convention: the gradient is 2 z g).
@gradcheck.describe(dtype="complex128")
class OkComplexAbsSquared(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return (z * z.conj()).real

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        return 2 * grad * z


# 9. exp of a complex input: holomorphic, the gradient is g * conj(exp(z)).
@gradcheck.describe(dtype="complex128")
class OkComplexExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        y = torch.exp(z)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y.conj()


# 10. log(cosh x), stably: |x| + log1p(exp(-2|x|)) - log 2; the gradient tanh x.
@jax.custom_jvp
def ok_log_cosh(x):
    a = jnp.abs(x)
    return a + jnp.log1p(jnp.exp(-2 * a)) - jnp.log(2.0)


@ok_log_cosh.defjvp
def _log_cosh_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return ok_log_cosh(x), jnp.tanh(x) * t


# 11. Eigenvalues of a symmetric matrix (torch): not differentiable where two coincide.
@gradcheck.describe(shapes=["n,n"])
def ok_symmetric_eigenvalues(a):
    return torch.linalg.eigvalsh(a + a.mT)


# 12. A float32 softmax.
@gradcheck.describe(dtype="float32")
class OkSoftmaxFloat32(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.softmax(x, dim=-1)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return y * (grad - (grad * y).sum(-1, keepdim=True))


# 13. A float16 sigmoid.
@gradcheck.describe(dtype="float16")
class OkSigmoidFloat16(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y * (1 - y)


# 14. log1p(x) - x, which cancels near 0: the gradient -x / (1 + x) is tiny there.
@gradcheck.describe(domain=(-0.9, 10.0))
class OkLog1pMinusX(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.log1p(x) - x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return -grad * x / (1 + x)


# 15. The trace of a JAX matrix inverse: not finite at a singular matrix.
@gradcheck.describe(shapes=["n,n"])
@jax.custom_vjp
def ok_jax_trace_inverse(a):
    return jnp.trace(jnp.linalg.inv(a), axis1=-2, axis2=-1)


def _ti_fwd(a):
    inv = jnp.linalg.inv(a)
    return jnp.trace(inv, axis1=-2, axis2=-1), inv


def _ti_bwd(inv, g):
    return (-g * (inv @ inv).T,)


ok_jax_trace_inverse.defvjp(_ti_fwd, _ti_bwd)
