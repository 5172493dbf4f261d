"""Train a small MLP classifier with gradcheck's engine.

Three Gaussian blobs in 2-D (seeded), a 2-16-3 network with ReLU, softmax
cross-entropy, plain gradient descent. The loss printed every few steps falls.

Run it from the repository root: ``PYTHONPATH=. python examples/mlp_classifier.py``.
"""

from __future__ import annotations

import numpy as np

import gradcheck as mg
from gradcheck.nnet.activations import relu
from gradcheck.nnet.initializers import he_normal
from gradcheck.nnet.losses import softmax_crossentropy


def make_data(rng: np.random.Generator, per_class: int = 50) -> tuple[np.ndarray, np.ndarray]:
    centres = np.array([[0.0, 2.0], [2.0, -1.0], [-2.0, -1.0]])
    x = np.concatenate([c + 0.7 * rng.standard_normal((per_class, 2)) for c in centres])
    y = np.repeat(np.arange(len(centres)), per_class)
    return x, y


def train(*, steps: int = 200, lr: float = 0.5, seed: int = 0, verbose: bool = True) -> list[float]:
    """Train the MLP; return the loss at every step."""
    rng = np.random.default_rng(seed)
    x, y = make_data(rng)
    w1 = he_normal(2, 16, gain=np.sqrt(2), dtype=float, rng=rng)
    b1 = mg.Tensor(np.zeros(16))
    w2 = he_normal(16, 3, dtype=float, rng=rng)
    b2 = mg.Tensor(np.zeros(3))
    params = [w1, b1, w2, b2]
    losses = []
    for step in range(steps):
        scores = relu(x @ w1 + b1) @ w2 + b2
        loss = softmax_crossentropy(scores, y)
        loss.backward()
        for p in params:
            p.data -= lr * p.grad
        losses.append(loss.item())
        if verbose and step % 20 == 0:
            accuracy = np.mean(np.argmax(scores.data, axis=1) == y)
            print(f"step {step:3d}  loss {loss.item():.4f}  accuracy {accuracy:.2f}")
    if verbose:
        print(f"final loss {losses[-1]:.4f} (from {losses[0]:.4f})")
    return losses


if __name__ == "__main__":
    train()
