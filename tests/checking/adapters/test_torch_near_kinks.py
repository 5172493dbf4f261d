"""grid_sampler_3d with sample locations within a step of its cells' edges (issue 34's
regression: torch's op_db sample 4 of grid_sampler_3d was a false alarm)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradcheck  # noqa: E402


def _sample(seed: int = 0, n: int = 6, off: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    # Every sample location within `off` of an edge of the trilinear cells (align_corners
    # False, 4 voxels a side: the edges lie at (2 i + 1) / 4 - 1 in grid units).
    rng = np.random.default_rng(seed)
    volume = rng.standard_normal((1, 2, 4, 4, 4))
    voxel = rng.integers(1, 3, (1, n, n, n, 3)) + rng.uniform(-off, off, (1, n, n, n, 3))
    return volume, (2 * voxel + 1) / 4 - 1


def _sampler(volume, grid):
    return torch.grid_sampler_3d(volume, grid, 0, 0, False)


class _ScaledBackward(torch.autograd.Function):
    """The identity whose backward is off by 1e-3."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * 1.001


def _wrong_sampler(volume, grid):
    return torch.grid_sampler_3d(_ScaledBackward.apply(volume), grid, 0, 0, False)


def test_a_kink_between_the_smaller_steps_and_the_larger_is_no_mismatch() -> None:
    # Directions whose smallest steps agree (J ~ 0) and whose larger ones straddle an
    # edge 1e-6 away: the larger steps' quotients are no derivative at x. On main after
    # 7177903 they gave the estimate (their Richardson values agreed best): 'failed /
    # mismatch' on a correct backward.
    volume, grid = _sample()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = gradcheck.check(_sampler, volume, grid, seed=0, mode="fast")
    assert result.verdict in ("passed", "not differentiable"), result.failure


def test_a_wrong_backward_near_the_edges_still_fails() -> None:
    volume, grid = _sample()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = gradcheck.check(_wrong_sampler, volume, grid, seed=0, mode="fast")
    assert result.verdict == "failed" and result.failure.kind == "mismatch"
