"""Layers: ``conv_nd``, ``max_pool``, ``batchnorm`` (``mygrad.nnet.layers``)."""

from __future__ import annotations

from gradcheck.engine.nnet.layers.batchnorm import batchnorm
from gradcheck.engine.nnet.layers.conv import conv_nd
from gradcheck.engine.nnet.layers.pooling import max_pool

__all__ = ["batchnorm", "conv_nd", "max_pool"]
