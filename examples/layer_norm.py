"""A fused layer normalization: normalize each row, then scale and shift.

``y = gamma * (x - mean) / sqrt(var + eps) + beta`` over the last axis, with the
backward written by hand in one pass (the point of fusing it) rather than composed
from the engine's mean, var and sqrt.

Check it::

    gradcheck verify examples/layer_norm.py:LayerNorm
"""

from __future__ import annotations

import numpy as np

import gradcheck
from gradcheck import Operation


@gradcheck.describe(shapes=["n,d", "d", "d"], domain=(-3.0, 3.0))
class LayerNorm(Operation):
    def __call__(self, x, gamma, beta, eps=1e-5):
        self.variables = (x, gamma, beta)
        mean = x.data.mean(axis=-1, keepdims=True)
        self.inv_std = 1 / np.sqrt(x.data.var(axis=-1, keepdims=True) + eps)
        self.x_hat = (x.data - mean) * self.inv_std
        return gamma.data * self.x_hat + beta.data

    def backward_var(self, grad, index, **kwargs):
        if index == 2:  # beta: summed over the rows it was broadcast to
            return grad.reshape(-1, grad.shape[-1]).sum(axis=0)
        if index == 1:  # gamma
            return (grad * self.x_hat).reshape(-1, grad.shape[-1]).sum(axis=0)
        # x: the normalization couples the elements of a row; with g = grad * gamma,
        # dx = inv_std * (g - mean(g) - x_hat * mean(g * x_hat)).
        g = grad * self.variables[1].data
        return self.inv_std * (
            g
            - g.mean(axis=-1, keepdims=True)
            - self.x_hat * (g * self.x_hat).mean(axis=-1, keepdims=True)
        )
