"""JAX functions of parameter trees (issue 38 item 5), each wrong one with its right
twin: a dense layer whose custom_vjp halves the bias's gradient (the bias is a leaf
of ``params['dense']``), in a dict, a list and a dataclass."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp


def _affine(bias_scale: float):
    @jax.custom_vjp
    def affine(w, b, x):
        return x @ w + b

    def fwd(w, b, x):
        return x @ w + b, (w, x)

    def bwd(residuals, g):
        w, x = residuals
        return x.T @ g, bias_scale * g.sum(0), g @ w.T

    affine.defvjp(fwd, bwd)
    return affine


affine_right, affine_half_bias = _affine(1.0), _affine(0.5)


def _mlp(affine):
    def mlp(params, x):
        hidden = jnp.tanh(affine(params["dense"]["w"], params["dense"]["b"], x))
        return hidden @ params["out"][0]

    return mlp


mlp_wrong_bias = _mlp(affine_half_bias)
mlp = _mlp(affine_right)


@dataclasses.dataclass
class Dense:
    w: object
    b: object


def dense_wrong_bias(layer, x):
    return jnp.sin(affine_half_bias(layer.w, layer.b, x))


def dense(layer, x):
    return jnp.sin(affine_right(layer.w, layer.b, x))
