"""A custom softplus with a sharpness parameter: ``log(1 + exp(beta x)) / beta``.

Check it::

    gradcheck verify examples/softplus.py:Softplus
    gradcheck plot examples/softplus.py:Softplus -o softplus.png
"""

from __future__ import annotations

import numpy as np

import gradcheck
from gradcheck import Operation


@gradcheck.describe(domain=(-30.0, 30.0), kwargs={"beta": 2.0})
class Softplus(Operation):
    """Smooth ReLU; larger ``beta`` is sharper. Computed without overflow:
    ``logaddexp(0, beta x)`` never forms ``exp`` of a large number."""

    def __call__(self, x, beta=1.0):
        self.variables = (x,)
        self.beta = beta
        return np.logaddexp(0.0, beta * x.data) / beta

    def backward_var(self, grad, index, **kwargs):
        # d/dx = sigmoid(beta x), written through exp(-|z|) so that it cannot overflow
        z = self.beta * self.variables[0].data
        e = np.exp(-np.abs(z))
        sigmoid = np.where(z >= 0, 1 / (1 + e), e / (1 + e))
        return grad * sigmoid
