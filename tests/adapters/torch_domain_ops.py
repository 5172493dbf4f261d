"""torch ops for tests/adapters/test_torch_domain.py (issue 34 items 8 and 11)."""

from __future__ import annotations

import torch


def inverse(x):
    """torch raises torch.linalg.LinAlgError at a singular matrix."""
    return torch.linalg.inv(x)


def sine_of_arrays(x):
    """Runs at arrays only: raises at a 0-d input, whatever the values."""
    if x.ndim == 0:
        raise ValueError("needs an array")
    return torch.sin(x) * 2


def scaled_pair(x, y):
    """Output k depends on input k only."""
    return (torch.mul(x, 2), y * 3)


def broadcast_pair(x, y):
    return torch.broadcast_tensors(x, y)


def meshgrid_pair(x, y):
    return torch.meshgrid(x, y, indexing="ij")


def sign(x):
    """Its gradient for real inputs is torch's ZeroTensor."""
    return torch.sgn(x)
