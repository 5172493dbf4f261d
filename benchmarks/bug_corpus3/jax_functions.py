"""Third corpus: gradient bugs reported against JAX (and autograd-style) derivative
rules, written as JAX ``custom_jvp``/``custom_vjp`` functions, each beside its fix
(``bug_<name>`` and ``fix_<name>``). Each comment names the report it follows."""

from __future__ import annotations

import jax
import jax.numpy as jnp

import gradcheck

jax.config.update("jax_enable_x64", True)


# 1. softplus whose rule, derived through max(x, 0) + log1p(exp(-|x|)), is 0 at x = 0
#    where the derivative is 1/2 (https://github.com/jax-ml/jax/issues/2107).
def _softplus(logistic: bool):
    @jax.custom_jvp
    def softplus(x):
        return jnp.maximum(x, 0) + jnp.log1p(jnp.exp(-jnp.abs(x)))

    @softplus.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        if logistic:
            d = jax.nn.sigmoid(x)
        else:
            e = jnp.exp(-jnp.abs(x))
            d = (x > 0) - jnp.sign(x) * e / (1 + e)
        return softplus(x), d * t

    return softplus


bug_softplus_at_zero = _softplus(logistic=False)
fix_softplus_at_zero = _softplus(logistic=True)


# 2. A weighted logsumexp log(sum(b * exp(a))) whose rule drops the tangent of the
#    weights where a weight is exactly 0 (https://github.com/jax-ml/jax/issues/22398).
#    A weight may be 0: its bound is closed (a plain tuple is an open interval).
def _weighted_lse(masks: bool):
    @jax.custom_jvp
    def wlse(a, b):
        m = jnp.max(a, -1, keepdims=True)
        return jnp.log(jnp.sum(b * jnp.exp(a - m), -1)) + m[..., 0]

    @wlse.defjvp
    def _jvp(primals, tangents):
        (a, b), (ta, tb) = primals, tangents
        out = wlse(a, b)
        e = jnp.exp(a - out[..., None])
        terms = b * e * ta + e * tb
        if masks:
            terms = jnp.where(b > 0, terms, 0.0)
        return out, jnp.sum(terms, -1)

    return gradcheck.describe(
        shapes=["n,k", "n,k"], domain=[(-2.0, 2.0), "[0:2]"], broadcast=False
    )(wlse)


bug_logsumexp_zero_weight = _weighted_lse(masks=True)
fix_logsumexp_zero_weight = _weighted_lse(masks=False)


# 3. A float32 tanh whose rule is 4 e^{2x} / (e^{2x} + 1)^2: inf / inf = nan once e^{2x}
#    overflows, x > 44 (https://github.com/jax-ml/jax/issues/764).
def _tanh(stable: bool):
    @jax.custom_jvp
    def tanh(x):
        return jnp.tanh(x)

    @tanh.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y = jnp.tanh(x)
        if stable:
            d = 1 - y * y
        else:
            e = jnp.exp(2 * x)
            d = 4 * e / ((e + 1) * (e + 1))
        return y, d * t

    return gradcheck.describe(dtype="float32")(tanh)


bug_tanh_overflow_nan = _tanh(stable=False)
fix_tanh_overflow_nan = _tanh(stable=True)


# 4. The log density of N(0, S) in x, S = A A^T + I, whose vjp for the covariance has
#    the wrong sign (https://github.com/HIPS/autograd/pull/412, issue #401 there).
def _mvn(sign: float):
    def _cov(a):
        return a @ a.T + jnp.eye(a.shape[0], dtype=a.dtype)

    @jax.custom_vjp
    def logpdf(x, a):
        s = _cov(a)
        _, logdet = jnp.linalg.slogdet(s)
        sol = jnp.linalg.solve(s, x)
        return -0.5 * (x @ sol + logdet + x.shape[0] * jnp.log(2 * jnp.pi))

    def fwd(x, a):
        return logpdf(x, a), (x, a)

    def bwd(res, g):
        x, a = res
        s = _cov(a)
        inv = jnp.linalg.inv(s)
        sol = inv @ x
        d_s = sign * 0.5 * (jnp.outer(sol, sol) - inv)
        return (-g * sol, g * (d_s + d_s.T) @ a)

    logpdf.defvjp(fwd, bwd)
    return gradcheck.describe(shapes=["n", "n,n"], broadcast=False)(logpdf)


bug_mvn_covariance_sign = _mvn(sign=-1.0)
fix_mvn_covariance_sign = _mvn(sign=1.0)


# 5. ldexp(x, 3) = 8 x whose implementation returns x itself where x == 0, so that the
#    derivative there is 1 instead of 8 (https://github.com/jax-ml/jax/pull/38001).
def _ldexp(scaled_everywhere: bool):
    @jax.custom_jvp
    def ldexp3(x):
        return x * 8.0

    @ldexp3.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        d = t * 8.0
        if not scaled_everywhere:
            d = jnp.where(x == 0, t, d)
        return ldexp3(x), d

    return ldexp3


bug_ldexp_at_zero = _ldexp(scaled_everywhere=False)
fix_ldexp_at_zero = _ldexp(scaled_everywhere=True)


# 6. e^{x/2} sin(x) written imag(exp((1/2 + i) x)) through a complex exp whose vjp
#    conjugates where JAX's convention does not (after
#    https://github.com/EnzymeAD/Enzyme-JAX/issues/2105, where imag(exp(i x)) had the
#    gradient -cos x; along i x alone JAX's real projection hides the conjugate).
def _imag_exp(conj: bool):
    @jax.custom_vjp
    def cexp(z):
        return jnp.exp(z)

    def fwd(z):
        y = jnp.exp(z)
        return y, y

    def bwd(y, g):
        return (g * (jnp.conj(y) if conj else y),)

    cexp.defvjp(fwd, bwd)

    def imag_exp(x):
        return jnp.imag(cexp((0.5 + 1j) * x))

    return gradcheck.describe(imag_exp)


bug_imag_exp_conj = _imag_exp(conj=True)
fix_imag_exp_conj = _imag_exp(conj=False)
