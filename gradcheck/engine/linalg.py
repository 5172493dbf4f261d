"""``gradcheck.linalg``: the differentiable counterpart of ``numpy.linalg`` (MyGrad
has ``mygrad.linalg.norm``; inv, det, slogdet and solve go beyond it). The ops live in
:mod:`gradcheck.ops.matrices`."""

from __future__ import annotations

from gradcheck.engine.ops.matrices import det, inv, norm, slogdet, solve

__all__ = ["det", "inv", "norm", "slogdet", "solve"]
