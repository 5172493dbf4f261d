"""Hypothesis strategies for testing differentiable code.

Tensors, valid and invalid gradients, shapes with named dimensions, reduction axes,
indices, the input tuples of an op, and random computational graphs. The argument
names and validation follow :mod:`hypothesis.extra.numpy`, whose strategies these
build on; a guide is in ``docs/strategies.md``.

The graphs' and indices' names are imported from their modules when first asked for
(``from gradcheck.strategies import computational_graphs``): a search needs neither,
and the zygote that a torch target's worker forks from imports this package on the
run's critical path (``benchmarks/torch_target_time.py``), where they cost 10-20 ms of
CPU for nothing. (``gradients`` and ``tensors`` are imported here as before: each is
also the name of its module, which an import of the module would bind here instead.)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from gradcheck.strategies.gradients import everything_except, gradients, invalid_gradients
from gradcheck.strategies.inputs import op_inputs
from gradcheck.strategies.shapes import ShapeSpec, named_shapes, parse_shape_spec, valid_axes
from gradcheck.strategies.tensors import tensors

if TYPE_CHECKING:
    from gradcheck.strategies.graphs import ComputationalGraph, computational_graphs
    from gradcheck.strategies.indices import advanced_indices, basic_indices

#: The names imported when first asked for, and their modules.
_MODULES = {
    "ComputationalGraph": "graphs",
    "advanced_indices": "indices",
    "basic_indices": "indices",
    "computational_graphs": "graphs",
}

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


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'gradcheck.strategies' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"gradcheck.strategies.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULES})
