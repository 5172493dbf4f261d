"""A cosine similarity at inputs of mixed scale (bug_corpus2's fix_cosine_roles, JAX,
seed 1): y = [4.8e-179, 1.19e-7, 0, 0] beside x = [8.1e-16, 1, 0, 0]. Along y0 the
function varies on the scale of y1, where its output, near 1, rounds at 1.1e-16: a
step that resolves the derivative along y0 (6.8e-9·v) crosses that scale, and the
steps above it all move s by the same 1.02e-16 (the odd part saturated), quotients
that shrink like 1/h to 8.8e-13 at the largest step, which read as converged."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck

torch = pytest.importorskip("torch")


def _cosine(swapped: bool):
    class Cosine(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return (x * y).sum(-1) / (x.norm(dim=-1) * y.norm(dim=-1))

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            nx, ny = x.norm(dim=-1, keepdim=True), y.norm(dim=-1, keepdim=True)
            c = (x * y).sum(-1, keepdim=True) / (nx * ny)
            gx = g[..., None] * (y / (nx * ny) - c * x / nx**2)
            own = y / ny**2 if swapped else x / nx**2  # (the roles swapped: the fix)
            gy = g[..., None] * (x / (nx * ny) - c * own)
            return gx, gy

    return Cosine


X = np.array([[8.1e-16, 1.0, 0.0, 0.0]])
Y = np.array([[4.8e-179, 1.19e-7, 0.0, 0.0]])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_cosine_similarity_at_mixed_scales_passes(seed):
    result = gradcheck.check(_cosine(True), X, Y, seed=seed)
    assert result.verdict == "passed", result.failure


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_its_wrong_twin_still_fails_there(seed):
    result = gradcheck.check(_cosine(False), X, Y, seed=seed)
    assert result.verdict == "failed" and result.failure.kind == "mismatch", result
