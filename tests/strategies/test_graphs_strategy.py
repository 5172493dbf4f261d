"""`computational_graphs()`, and the engine's backprop on them against finite
differences: the strongest test the engine gets."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import Phase, find, given, settings
from hypothesis.errors import InvalidArgument

import gradcheck as mg
from gradcheck.ops.trigonometric import Sin
from gradcheck.strategies import ComputationalGraph, computational_graphs
from gradcheck.strategies.graphs import OPS, Constant
from tests.support.helpers import assert_grads_match

# Three times the profile's examples: 300 on a developer's machine, 90 in CI (about a
# second there); the slow test below runs bigger graphs.
EXAMPLES = 3 * settings.default.max_examples


def first(strategy, condition):
    """The first example that satisfies ``condition``, not shrunk (shrinking a graph
    is the slow part of ``find``)."""
    return find(strategy, condition, settings=settings(phases=[Phase.generate], database=None))


def _check_backprop(graph: ComputationalGraph) -> None:
    tensors = assert_grads_match(graph, *graph.leaves, rtol=1e-5, atol=1e-5)
    assert all(t.grad is not None for t in tensors)


@settings(max_examples=EXAMPLES)
@given(computational_graphs())
def test_backprop_matches_finite_differences(graph):
    out = graph(*graph.leaves)
    np.testing.assert_allclose(out.data, graph.numpy(), rtol=1e-12, atol=1e-12)
    with mg.no_autodiff:
        assert graph(*graph.leaves).creator is None
    _check_backprop(graph)


@pytest.mark.slow
@settings(max_examples=2000)
@given(computational_graphs(max_leaves=6, max_nodes=25, max_dims=4))
def test_backprop_matches_finite_differences_on_big_graphs(graph):
    _check_backprop(graph)


@given(computational_graphs(max_leaves=2, max_nodes=3, max_dims=2, max_side=2))
def test_graphs_obey_their_bounds(graph):
    assert 1 <= len(graph.leaves) <= 2
    assert graph.nodes[-1].op != "leaf"
    for leaf in graph.leaves:
        assert leaf.dtype == np.float64 and (np.abs(leaf) <= 2).all()
    for node in graph.nodes:
        assert node.op == "leaf" or node.op in OPS


@given(computational_graphs(ops=["sin", "exp"]))
def test_ops_restricts_the_steps(graph):
    # add combines the loose ends; multiply by 1.0 only when the output is a leaf.
    assert {node.op for node in graph.nodes} <= {"leaf", "sin", "exp", "add", "multiply"}


def _uses(graph: ComputationalGraph) -> list[int]:
    counts = [0] * len(graph.nodes)
    for node in graph.nodes:
        if node.op != "leaf":
            for a in node.args:
                if isinstance(a, int):
                    counts[a] += 1
    return counts


def test_graphs_have_fan_out_constants_and_broadcasting():
    fan_out = first(computational_graphs(), lambda g: max(_uses(g)) >= 3)
    assert max(_uses(fan_out)) >= 3
    assert first(
        computational_graphs(),
        lambda g: any(isinstance(a, Constant) and a.as_tensor for n in g.nodes for a in n.args),
    )
    broadcast = first(computational_graphs(), lambda g: len({x.shape for x in g.leaves}) >= 2)
    assert len({x.shape for x in broadcast.leaves}) >= 2


@pytest.mark.parametrize("op", sorted(set(OPS) - {"add"}))
def test_every_op_is_reachable(op):
    graph = first(
        computational_graphs(ops=[op], max_nodes=3), lambda g: any(n.op == op for n in g.nodes)
    )
    _check_backprop(graph)


def test_shrinks_to_a_small_graph_on_a_scalar_leaf():
    graph = find(
        computational_graphs(ops=["exp", "sin", "multiply"]),
        lambda g: any(n.op == "exp" for n in g.nodes),
    )
    assert len(graph) <= 2 and len(graph.leaves) == 1 and graph.leaves[0].shape == ()


def test_repr_shows_the_program():
    # The program's form, not one exact graph: what find() shrinks to can differ with
    # what ran earlier in the process.
    reproducible = settings(database=None, derandomize=True)
    graph = find(computational_graphs(ops=["tanh"]), lambda g: len(g) >= 2, settings=reproducible)
    lines = repr(graph).splitlines()
    assert lines[0] == "ComputationalGraph(" and lines[-1] == ")"
    assert lines[1] == "    x0 = leaf()"
    assert any(re.fullmatch(r"    t\d+ = tanh\([xt]\d+\)", line) for line in lines)
    assert re.fullmatch(r"    out = t\d+", lines[-2])


def test_a_wrong_backward_is_found_and_shrunk(monkeypatch):
    # The property test can fail: make sin's derivative slightly wrong and look for a
    # graph where backprop disagrees with finite differences.
    monkeypatch.setattr(
        Sin,
        "backward_var",
        lambda self, grad, index, **kw: grad * 1.01 * np.cos(self.variables[0].data),
    )

    def disagrees(graph: ComputationalGraph) -> bool:
        try:
            _check_backprop(graph)
        except AssertionError:
            return True
        return False

    graph = first(computational_graphs(), disagrees)
    assert any(node.op == "sin" for node in graph.nodes)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"ops": ["sin", "relu"]}, "relu"),
        ({"ops": []}, "nothing"),
        ({"max_leaves": 0}, "max_leaves"),
        ({"max_nodes": 0}, "max_nodes"),
        ({"min_side": 0}, "min_side"),
        ({"min_dims": 2, "max_dims": 1}, "max_dims"),
        ({"max_magnitude": -1.0}, "max_magnitude"),
        ({"elements": [1.0]}, "elements"),
    ],
)
def test_invalid_arguments_are_refused(kwargs, message):
    with pytest.raises(InvalidArgument, match=message):
        computational_graphs(**kwargs)


def test_a_graph_refuses_the_wrong_number_of_leaves():
    graph = first(computational_graphs(), lambda g: len(g.leaves) == 1)
    with pytest.raises(TypeError, match="takes 1 leaves"):
        graph()
