"""`computational_graphs()`: random expression DAGs over the engine's ops.

A drawn :class:`ComputationalGraph` is a straight-line program: leaves (the inputs a
gradient is taken with respect to), then ops whose operands are earlier nodes or
constants. Operands are picked from *all* earlier nodes, so one node often feeds
several ops (fan-out) and paths split and meet again (diamonds); every node that
nothing else consumes is added into the output, so every leaf and op matters.

How the graph stays differentiable and well-conditioned, so that finite differences
are a fair reference:

- every node's shape broadcasts to one base shape ``S``, so any two nodes can meet in
  a binary op; ops that change shape (reshape, transpose, indexing) are used in
  round trips or followed by a reduction, and matmul multiplies by a square matrix;
- ``log``, ``sqrt``, the denominator of ``divide`` and the base of ``power`` only see
  a positive node, ``exp(x)`` or ``x*x + c``, bounded away from 0; ``abs`` only sees
  a positive or a negative one, never its kink;
- a step whose values would leave ``[-max_magnitude, max_magnitude]`` (``exp`` of a
  large value, a huge power) is dropped, not rejected, so drawing never fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.extra import numpy as hnp

import gradcheck as mg
from gradcheck.engine.tensor_base import Tensor
from gradcheck.strategies._floats import interval_floats
from gradcheck.strategies._validation import check_int, check_real
from gradcheck.strategies.indices import advanced_indices, basic_indices
from gradcheck.strategies.shapes import valid_axes

__all__ = ["ComputationalGraph", "Constant", "Node", "OPS", "computational_graphs"]


@dataclass(frozen=True)
class Constant:
    """A constant operand: a Python float, or an array given to the engine as a plain
    array or (``as_tensor``) as a constant :class:`Tensor`."""

    value: float | np.ndarray
    as_tensor: bool = False

    def for_engine(self) -> Any:
        return Tensor(self.value, constant=True) if self.as_tensor else self.value

    def __repr__(self) -> str:
        if isinstance(self.value, float):
            return repr(self.value)
        text = np.array2string(self.value, precision=3, separator=", ")
        return f"const({text})" if self.as_tensor else f"array({text})"


@dataclass(frozen=True)
class Node:
    """One step: ``op`` applied to ``args`` (ints are earlier nodes; :class:`Constant`
    otherwise) with keyword ``params``. A leaf is ``Node("leaf", (leaf_index,))``."""

    op: str
    args: tuple[Any, ...]
    params: dict[str, Any] = field(default_factory=dict)


def _graph_ops() -> dict[str, tuple[Callable[..., Any], Callable[..., Any]]]:
    # A function, called once below: a type checker reads the engine's ufuncs (mg.add...)
    # only after the import cycle gradcheck -> verify -> strategies, which a function's
    # body waits for and a module-level expression does not.
    return {
        "add": (mg.add, np.add),
        "subtract": (mg.subtract, np.subtract),
        "multiply": (mg.multiply, np.multiply),
        "divide": (mg.divide, np.divide),
        "power": (mg.power, np.power),
        "negative": (mg.negative, np.negative),
        "square": (mg.square, np.square),
        "exp": (mg.exp, np.exp),
        "log": (mg.log, np.log),
        "sin": (mg.sin, np.sin),
        "cos": (mg.cos, np.cos),
        "tanh": (mg.tanh, np.tanh),
        "sqrt": (mg.sqrt, np.sqrt),
        "abs": (mg.abs, np.abs),
        "sum": (mg.sum, np.sum),
        "mean": (mg.mean, np.mean),
        "matmul": (mg.matmul, np.matmul),
        "reshape": (mg.reshape, lambda a, newshape: np.reshape(a, newshape)),
        # MyGrad's transpose takes the axes positionally (``transpose(a, *axes)``)
        "transpose": (lambda a, axes=None: mg.transpose(a, axes), np.transpose),
        "get_item": (mg.get_item, lambda a, index: a[index]),
    }


#: The ops a graph may use: name -> (engine function, NumPy function).
OPS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = _graph_ops()

_UNARY = ("negative", "square", "exp", "sin", "cos", "tanh")
_GUARDED = ("log", "sqrt", "abs")
_BINARY = ("add", "subtract", "multiply", "divide", "power")
_REDUCTIONS = ("sum", "mean")


class ComputationalGraph:
    """A random expression DAG drawn by :func:`computational_graphs`.

    Attributes
    ----------
    leaves : tuple of numpy.ndarray
        The input arrays the graph was drawn with (float64).
    nodes : tuple of Node
        The program, in evaluation order; the last node is the output.

    Call the graph on leaf tensors (``graph(*tensors)``) to build the output with the
    engine (recording the graph, unless under :data:`gradcheck.no_autodiff`), or use
    :meth:`numpy` for a plain NumPy evaluation that does not touch the engine.
    """

    def __init__(self, leaves: Sequence[np.ndarray], nodes: Sequence[Node]) -> None:
        self.leaves = tuple(leaves)
        self.nodes = tuple(nodes)

    def _run(self, inputs: Sequence[Any], engine: bool) -> Any:
        if len(inputs) != len(self.leaves):
            raise TypeError(f"this graph takes {len(self.leaves)} leaves, got {len(inputs)}")
        values: list[Any] = []
        for node in self.nodes:
            if node.op == "leaf":
                values.append(inputs[node.args[0]])
                continue
            args = [
                values[a]
                if isinstance(a, int)
                else (a.for_engine() if engine else np.asarray(a.value))
                for a in node.args
            ]
            func = OPS[node.op][0 if engine else 1]
            values.append(func(*args, **node.params))
        return values[-1]

    def __call__(self, *leaves: Any) -> Tensor:
        """The output, computed by the engine from ``leaves`` (tensors, or arrays that
        become non-constant tensors)."""
        tensors = [x if isinstance(x, Tensor) else Tensor(x) for x in leaves]
        out: Tensor = self._run(tensors, engine=True)
        return out

    def numpy(self, *leaves: Any) -> np.ndarray:
        """The output computed with NumPy alone (defaults: the drawn leaves)."""
        arrays = [np.asarray(x) for x in (leaves or self.leaves)]
        return np.asarray(self._run(arrays, engine=False))

    @property
    def output_shape(self) -> tuple[int, ...]:
        return self.numpy().shape

    def __len__(self) -> int:
        """The number of op nodes (leaves not counted)."""
        return sum(node.op != "leaf" for node in self.nodes)

    def __repr__(self) -> str:
        names: list[str] = []
        lines = []
        for i, node in enumerate(self.nodes):
            if node.op == "leaf":
                name = f"x{node.args[0]}"
                lines.append(f"{name} = leaf{self.leaves[node.args[0]].shape}")
            else:
                name = f"t{i}"
                args = [names[a] if isinstance(a, int) else repr(a) for a in node.args]
                args += [f"{k}={v!r}" for k, v in node.params.items()]
                lines.append(f"{name} = {node.op}({', '.join(args)})")
            names.append(name)
        body = "".join(f"\n    {line}" for line in lines)
        return f"ComputationalGraph({body}\n    out = {names[-1]}\n)"


class _Builder:
    """Draws one graph, node by node, keeping the NumPy value of every node."""

    def __init__(
        self,
        draw: st.DrawFn,
        base_shape: tuple[int, ...],
        elements: st.SearchStrategy[float],
        max_leaves: int,
        max_magnitude: float,
    ) -> None:
        self.draw = draw
        self.base_shape = base_shape
        self.elements = elements
        self.max_leaves = max_leaves
        self.max_magnitude = max_magnitude
        self.leaves: list[np.ndarray] = []
        self.nodes: list[Node] = []
        self.values: list[np.ndarray] = []
        # Nodes whose shape broadcasts to the base shape: the ones later steps may
        # use. The insides of round trips, indexing and matmul matrices are not.
        self.public: list[int] = []

    # -- building blocks ----------------------------------------------------------
    def add(self, op: str, *args: Any, public: bool = True, **params: Any) -> int:
        """Append a node, compute its value, and return its index."""
        node = Node(op, args, params)
        operands = [self.values[a] if isinstance(a, int) else np.asarray(a.value) for a in args]
        with np.errstate(all="ignore"):
            value = np.asarray(OPS[op][1](*operands, **params))
        return self._append(node, value, public)

    def _append(self, node: Node, value: np.ndarray, public: bool) -> int:
        self.nodes.append(node)
        self.values.append(value)
        if public:
            self.public.append(len(self.nodes) - 1)
        return len(self.nodes) - 1

    def leaf(self, shape: tuple[int, ...], *, public: bool = True) -> int:
        array = self.draw(hnp.arrays(np.float64, shape, elements=self.elements))
        self.leaves.append(array)
        return self._append(Node("leaf", (len(self.leaves) - 1,)), array, public)

    def broadcastable_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """A shape that broadcasts *to* ``shape`` (some trailing axes of it, each side
        kept or 1). ``broadcastable_shapes`` would also draw shapes that broadcast
        *with* it to a bigger one."""
        ndim = self.draw(st.integers(0, len(shape)))
        trailing = shape[len(shape) - ndim :]
        return tuple(n if self.draw(st.booleans()) else 1 for n in trailing)

    def weight(self, shape: tuple[int, ...]) -> Any:
        """A new leaf (while there is room for one) or a constant, broadcastable to
        ``shape``: the other operand of a step that needs one of a given shape."""
        if len(self.leaves) < self.max_leaves and self.draw(st.booleans()):
            return self.leaf(self.broadcastable_shape(shape), public=False)
        return self.constant(shape)

    def constant(self, shape: tuple[int, ...]) -> Constant:
        draw = self.draw
        if draw(st.booleans()):
            return Constant(draw(self.elements))
        array = draw(
            hnp.arrays(np.float64, self.broadcastable_shape(shape), elements=self.elements)
        )
        return Constant(array, as_tensor=draw(st.booleans()))

    def operand(self) -> int:
        return self.draw(st.sampled_from(self.public))

    def positive(self, k: int) -> int:
        """A node with values >= 0.05 computed from node ``k``: ``exp(k)`` when that is
        far enough from 0, otherwise ``k*k + c`` or ``square(k) + c`` with c >= 0.5."""
        if self.draw(st.booleans()) and np.all(np.exp(self.values[k]) >= 0.05):
            return self.add("exp", k)
        c = Constant(self.draw(st.sampled_from([1.0, 0.5, 2.0])))
        sq = self.add("multiply", k, k) if self.draw(st.booleans()) else self.add("square", k)
        return self.add("add", sq, c)

    # -- steps: each appends a few nodes --------------------------------------------
    def step(self, kind: str) -> None:
        k = self.operand()
        shape = self.values[k].shape
        if kind in _UNARY:
            self.add(kind, k)
        elif kind in _GUARDED:
            p = self.positive(k)
            if kind == "abs" and self.draw(st.booleans()):
                p = self.add("negative", p)
            self.add(kind, p)
        elif kind in ("add", "subtract", "multiply"):
            other = self.operand() if self.draw(st.booleans()) else self.constant(self.base_shape)
            self.add(kind, *((k, other) if self.draw(st.booleans()) else (other, k)))
        elif kind == "divide":
            self.add("divide", k, self.positive(self.operand()))
        elif kind == "power":
            exponent = (
                self.operand()
                if self.draw(st.booleans())
                else Constant(self.draw(st.sampled_from([2.0, 3.0, 0.5, -1.0, 1.5])))
            )
            self.add("power", self.positive(k), exponent)
        elif kind in _REDUCTIONS:
            self.reduction(kind, k, shape)
        elif kind == "matmul":
            self.matmul(k, shape)
        elif kind in ("reshape", "transpose"):
            self.round_trip(kind, k, shape)
        elif kind == "get_item":
            self.index(k, shape)

    def reduction(self, kind: str, k: int, shape: tuple[int, ...]) -> None:
        axis = self.draw(valid_axes(len(shape)))
        axes = range(len(shape)) if axis is None else np.atleast_1d(axis) % max(len(shape), 1)
        # Dropping leading axes keeps the result broadcastable to the base shape;
        # dropping others would not, so those keep their dims.
        leading = sorted(int(a) for a in axes) == list(range(len(axes)))
        keepdims = self.draw(st.booleans()) if leading else True
        self.add(kind, k, axis=axis, keepdims=keepdims)

    def matmul(self, k: int, shape: tuple[int, ...]) -> None:
        """``k @ M`` or ``M @ k`` with a square ``M``: the result has ``k``'s shape."""
        if not shape:
            return
        on_right = len(shape) == 1 or self.draw(st.booleans())
        n = shape[-1] if on_right else shape[-2]
        if len(self.leaves) < self.max_leaves and self.draw(st.booleans()):
            m: Any = self.leaf((n, n), public=False)
        else:
            m = Constant(self.draw(hnp.arrays(np.float64, (n, n), elements=self.elements)))
        self.add("matmul", *((k, m) if on_right else (m, k)))

    def round_trip(self, kind: str, k: int, shape: tuple[int, ...]) -> None:
        """Change the shape, multiply by a weight of the new shape, change it back: the
        weight makes a wrong backward of either shape op visible."""
        if kind == "reshape":
            new = self.draw(st.sampled_from([(-1,), shape[::-1]]))
            there = self.add("reshape", k, newshape=new, public=False)
            weighted = self.add(
                "multiply", there, self.weight(self.values[there].shape), public=False
            )
            self.add("reshape", weighted, newshape=shape)
            return
        axes = self.draw(st.none() | st.permutations(range(len(shape))).map(tuple))
        back = None if axes is None else tuple(int(i) for i in np.argsort(axes))
        there = self.add("transpose", k, axes=axes, public=False)
        weighted = self.add("multiply", there, self.weight(self.values[there].shape), public=False)
        self.add("transpose", weighted, axes=back)

    def index(self, k: int, shape: tuple[int, ...]) -> None:
        """``sum(k[index] * w)``: a scalar, so the shape invariant holds."""
        if not shape or min(shape) < 1:
            return
        index = self.draw(basic_indices(shape) | advanced_indices(shape, max_side=4))
        picked = self.add("get_item", k, index=index, public=False)
        weighted = self.add(
            "multiply", picked, self.weight(self.values[picked].shape), public=False
        )
        self.add("sum", weighted)

    def well_conditioned(self, start: int) -> bool:
        return all(
            np.all(np.isfinite(v)) and np.all(np.abs(v) <= self.max_magnitude)
            for v in self.values[start:]
        )

    def rollback(self, n_nodes: int, n_leaves: int) -> None:
        del self.nodes[n_nodes:], self.values[n_nodes:], self.leaves[n_leaves:]
        self.public = [i for i in self.public if i < n_nodes]

    def finish(self) -> ComputationalGraph:
        """Add every node nothing consumes into the output."""
        consumed = {
            a for node in self.nodes if node.op != "leaf" for a in node.args if isinstance(a, int)
        }
        loose = [i for i in range(len(self.nodes)) if i not in consumed]
        out = loose[0]
        for i in loose[1:]:
            out = self.add("add", out, i)
        if self.nodes[out].op == "leaf":
            self.add("multiply", out, Constant(1.0))
        return ComputationalGraph(self.leaves, self.nodes)


def computational_graphs(
    *,
    ops: Sequence[str] | None = None,
    max_leaves: int = 4,
    max_nodes: int = 8,
    min_dims: int = 0,
    max_dims: int = 3,
    min_side: int = 1,
    max_side: int = 3,
    elements: st.SearchStrategy[float] | None = None,
    max_magnitude: float = 100.0,
) -> st.SearchStrategy[ComputationalGraph]:
    """Strategy for random computational graphs over the engine's ops.

    Parameters
    ----------
    ops : sequence of str, optional
        The ops the graph's steps draw from (names of :data:`OPS`); all by default.
        Helpers add a few more (``exp``, ``square``, ``add``, ``multiply`` build the
        positive operands of ``log``/``sqrt``/``divide``/``power``; round trips through
        ``reshape``/``transpose`` and indexing add ``multiply`` and ``sum``).
    max_leaves : int, default 4
        The most leaves (inputs with a gradient), including the matrices of
        ``matmul`` and the weights of shape round trips.
    max_nodes : int, default 8
        The most steps; each adds one to a few nodes.
    min_dims, max_dims, min_side, max_side : int
        Bounds of the base shape every node broadcasts to (``min_side >= 1``).
    elements : strategy, optional
        Values of the leaves and constants; by default floats in ``[-2, 2]``.
    max_magnitude : float, default 100
        A step whose values exceed this (or are not finite) is left out.

    Examples
    --------
    >>> import numpy as np
    >>> import gradcheck as mg
    >>> from hypothesis import find, settings
    >>> reproducible = settings(database=None, derandomize=True)
    >>> two_steps = lambda g: len(g) >= 2
    >>> graph = find(computational_graphs(ops=["sin"]), two_steps, settings=reproducible)
    >>> print(graph)  # doctest: +ELLIPSIS
    ComputationalGraph(
        x0 = leaf()
        ...
        out = t...
    )
    >>> xs = [mg.Tensor(leaf) for leaf in graph.leaves]
    >>> out = graph(*xs)
    >>> bool(np.allclose(out.data, graph.numpy(*graph.leaves)))
    True
    >>> out.backward()
    """
    kinds = tuple(OPS) if ops is None else tuple(ops)
    for name in kinds:
        if name not in OPS:
            raise InvalidArgument(
                f"ops contains {name!r}, which is not one of the graph ops: {', '.join(OPS)}"
            )
    if not kinds:
        raise InvalidArgument("ops=[] leaves nothing to build a graph from; pass op names")
    max_leaves = check_int("max_leaves", max_leaves, min_value=1)
    max_nodes = check_int("max_nodes", max_nodes, min_value=1)
    min_dims = check_int("min_dims", min_dims, max_value=8)
    max_dims = check_int("max_dims", max_dims, min_value=min_dims, max_value=8)
    min_side = check_int("min_side", min_side, min_value=1)
    max_side = check_int("max_side", max_side, min_value=min_side)
    max_magnitude = check_real("max_magnitude", max_magnitude, positive=True)
    if elements is None:
        elements = interval_floats(np.dtype(np.float64), -2.0, 2.0)
    elif not isinstance(elements, st.SearchStrategy):
        raise InvalidArgument(f"elements={elements!r} must be a strategy or None")
    shapes = hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )

    @st.composite
    def graphs(draw: st.DrawFn) -> ComputationalGraph:
        base_shape = draw(shapes, label="base shape")
        builder = _Builder(draw, base_shape, elements, max_leaves, max_magnitude)
        for _ in range(draw(st.integers(1, max_leaves), label="first leaves")):
            builder.leaf(builder.broadcastable_shape(base_shape))
            if len(builder.leaves) >= max_leaves:
                break
        for _ in range(draw(st.integers(1, max_nodes), label="steps")):
            n_nodes, n_leaves = len(builder.nodes), len(builder.leaves)
            builder.step(draw(st.sampled_from(kinds)))
            if not builder.well_conditioned(n_nodes):
                builder.rollback(n_nodes, n_leaves)
        return builder.finish()

    return graphs()
