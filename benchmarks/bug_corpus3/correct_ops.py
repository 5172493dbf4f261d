"""Third corpus's hard correct ops (``Ok<Name>``/``ok_<name>``): near-singular sets,
large dynamic range, saturation, ties, float32, complex, order 2. Each must pass on
every seed. Several are the fixed forms of ops in the reports the bugs follow."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import torch

import gradcheck

jax.config.update("jax_enable_x64", True)


# 1. expm1 whose rule is ans + 1: exact in an absolute sense, thousands of ulps off in
#    a relative one for x < -30 (https://github.com/jax-ml/jax/pull/17067).
@jax.custom_jvp
def ok_expm1_ans_plus_one(x):
    return jnp.expm1(x)


@ok_expm1_ans_plus_one.defjvp
def _expm1_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = jnp.expm1(x)
    return y, (y + 1) * t


# 2. logit in float32 on (0, 1): gradients 1 / (x (1 - x)) huge near both ends.
@gradcheck.describe(dtype="float32", domain=(0.0, 1.0))
def ok_logit_float32(x):
    return torch.logit(x)


# 3. jnp.logaddexp at ties (x == y), where its max/abs form once went wrong
#    (https://github.com/jax-ml/jax/issues/2107).
@gradcheck.describe
def ok_logaddexp_ties(x, y):
    return jnp.logaddexp(x, y)


# 4. torch.cdist: a kink wherever two rows coincide (all-zero rows are drawn often).
@gradcheck.describe(shapes=["n,3", "m,3"])
def ok_cdist(x, y):
    return torch.cdist(x, y)


# 5. xlogy with x at exactly 0 (https://github.com/pytorch/pytorch/pull/82713).
@gradcheck.describe(domain=[(0.0, 2.0), (0.01, 2.0)], broadcast=False)
def ok_xlogy(x, y):
    return torch.xlogy(x, y)


# 6. The N(0, A A^T + 1e-6 I) log density: nearly singular when A is small.
@gradcheck.describe(shapes=["n", "n,n"], broadcast=False)
def ok_mvn_near_singular(x, a):
    s = a @ a.T + 1e-6 * jnp.eye(a.shape[0], dtype=a.dtype)
    _, logdet = jnp.linalg.slogdet(s)
    return -0.5 * (x @ jnp.linalg.solve(s, x) + logdet)


# 7. erfc in float32: the output and its gradient span many decades, then underflow.
@gradcheck.describe(dtype="float32")
def ok_erfc_float32(x):
    return torch.special.erfc(x)


# 8. torch.minimum: ties split the gradient between both inputs.
@gradcheck.describe(broadcast=False)
def ok_minimum_ties(x, y):
    return torch.minimum(x, y)


# 9. torch's summed binary cross-entropy at order 2 (fixed in
#    https://github.com/pytorch/pytorch/issues/59477).
@gradcheck.describe(domain=(0.01, 0.99), broadcast=False, order=2)
def ok_bce_sum_order2(x, y):
    return torch.nn.functional.binary_cross_entropy(x, y, reduction="sum")


# 10. The angle of a complex number: gradients 1/|z| near 0.
@gradcheck.describe(dtype="complex128")
def ok_complex_angle(z):
    return torch.angle(z)


# 11. torch's own prod over the last axis at order 2 is wrong where an element is tiny:
#     its double backward differentiates result / x, which cancels to eps·x1/x0
#     (x = [9.06e-56, 3], u = [0.84, -0.52]: 5.44e+39 for -0.52, torch 2.13). Found by
#     this corpus (meant as a correct op, after
#     https://github.com/pytorch/pytorch/issues/106789); no public report found. Its fix
#     multiplies the elements out, which autodiff differentiates exactly.
@gradcheck.describe(min_dims=1, order=2)
def bug_torch_prod_order2_tiny(x):
    return torch.prod(x, -1)


@gradcheck.describe(min_dims=1, order=2)
def fix_torch_prod_order2_tiny(x):
    out = torch.ones_like(x[..., 0])
    for i in range(x.shape[-1]):
        out = out * x[..., i]
    return out


# 12. softplus in float32 at its threshold (torch switches to x above 20).
@gradcheck.describe(dtype="float32")
def ok_softplus_float32(x):
    return torch.nn.functional.softplus(x)
