"""A convolution and max-pooling layer, forward and backward, with gradcheck's engine.

A batch of 2-D images (seeded) goes through ``conv_nd`` (stride 1, padding 1), ReLU
and ``max_pool``; the sum of the output is backpropagated to the images and the
filters, and a directional finite difference confirms the filters' gradient.

Run it from the repository root: ``PYTHONPATH=. python examples/conv_pool.py``.
"""

from __future__ import annotations

import numpy as np

import gradcheck as mg
from gradcheck.nnet.activations import relu
from gradcheck.nnet.initializers import glorot_normal
from gradcheck.nnet.layers import conv_nd, max_pool


def forward(x: mg.Tensor, w: mg.Tensor) -> mg.Tensor:
    return max_pool(relu(conv_nd(x, w, stride=1, padding=1)), (2, 2), 2)


def run(*, seed: int = 0, verbose: bool = True) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    x = mg.Tensor(rng.standard_normal((4, 3, 8, 8)))  # N, C, H, W
    w = glorot_normal(5, 3, 3, 3, dtype=float, rng=rng)  # F, C, kH, kW
    out = forward(x, w)
    weights = rng.standard_normal(out.shape)
    (out * weights).sum().backward()
    # <grad, d> against (f(w + h d) - f(w - h d)) / 2h for a random direction d
    d = rng.standard_normal(w.shape)
    h = 1e-6
    with mg.no_autodiff:
        plus = np.sum(forward(x, mg.Tensor(w.data + h * d)).data * weights)
        minus = np.sum(forward(x, mg.Tensor(w.data - h * d)).data * weights)
    numeric = (plus - minus) / (2 * h)
    analytic = float(np.sum(w.grad * d))
    result = {"analytic": analytic, "numeric": numeric}
    if verbose:
        print(f"input {x.shape} -> conv {(4, 5, 8, 8)} -> pool {out.shape}")
        print(f"x.grad {x.grad.shape}, w.grad {w.grad.shape}")
        print(f"directional derivative: analytic {analytic:.8f}, numeric {numeric:.8f}")
    return result


if __name__ == "__main__":
    run()
