"""Hypothesis strategies for testing differentiable code.

Tensors, valid and invalid gradients, shapes with named dimensions, reduction axes,
indices, the input tuples of an op, and random computational graphs. The argument
names and validation follow :mod:`hypothesis.extra.numpy`, whose strategies these
build on; a guide is in ``docs/strategies.md``.
"""

from __future__ import annotations

from gradcheck.strategies.gradients import everything_except, gradients, invalid_gradients
from gradcheck.strategies.graphs import ComputationalGraph, computational_graphs
from gradcheck.strategies.indices import advanced_indices, basic_indices
from gradcheck.strategies.inputs import op_inputs
from gradcheck.strategies.shapes import ShapeSpec, named_shapes, parse_shape_spec, valid_axes
from gradcheck.strategies.tensors import tensors

__all__ = [
    "ComputationalGraph",
    "ShapeSpec",
    "advanced_indices",
    "basic_indices",
    "computational_graphs",
    "everything_except",
    "gradients",
    "invalid_gradients",
    "named_shapes",
    "op_inputs",
    "parse_shape_spec",
    "tensors",
    "valid_axes",
]
