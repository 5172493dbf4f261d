"""Views and in-place operations, with MyGrad's semantics.

A tensor made by a view op (basic indexing, ``reshape``, ``transpose``, ``einsum``'s
diagonals...) whose array is a view of its input's array is a *view* of that input:
``view.base`` is the tensor that owns the memory (the input's own base, if the input is
a view itself), and the view's gradient is the matching view of its base's gradient.
Writing a tensor in place (``x[...] = y``, ``x += y``, ``out=``) writes its base and
every view of that base, as writing a NumPy array does, while the graph keeps the
values that earlier ops read: backprop through them still sees the old values.

How (none of it on the engine's per-op path, which only tests one slot per input):

* A tensor that takes part in a view relation holds a :class:`ViewState` in its
  ``_views`` slot (None for every other tensor): its base, weak references to the
  views made from it, a cache of its view-gradient, and the record of its mutations.
* An in-place op copies the state of the base and of each of its views into a
  *placeholder*, an internal tensor that stands for the value before the write, and
  records ``(sequence number, placeholder)`` on the tensor. The ops made before the
  write still name the tensor itself; backprop (and ``clear_graph``) resolve those
  names when they meet them (:func:`gradcheck.graph.resolved`): an op created before a
  write of one of its inputs reads that input's placeholder. Nothing is searched at the
  time of the write, and nothing is paid per op.
* The tensor the user holds then takes the state of the new value: the base becomes
  the output of ``SetItem`` (or of ``UnView`` when a view was written), and each view
  is made again, by its view op, from its new parent.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck import graph as _graph
from gradcheck._utils import lock_management as _lm
from gradcheck.errors import DisconnectedView

if TYPE_CHECKING:
    from gradcheck.operation import Operation
    from gradcheck.tensor_base import Tensor

__all__ = ["ViewState"]

#: The slots of a tensor that make up its state in a graph: what a placeholder copies
#: and what the tensor takes from its new value (its ``_views`` stays its own).
STATE = (
    "_constant",
    "_creator",
    "_data",
    "_exposed",
    "_grad",
    "_locks",
    "_ops",
    "_scalar_only",
    "_seq",
    "_shared",
)


class ViewState:
    """What a tensor in a view relation knows of it (the ``_views`` slot)."""

    __slots__ = ("base", "children", "grad", "kept", "mutations")

    def __init__(self, base: Tensor | None = None) -> None:
        #: The tensor whose memory this tensor's data is a view of, or None.
        self.base = base
        #: Weak references to the tensors made from this one by a view op.
        self.children: list[weakref.ref[Tensor]] = []
        #: The view of the base's gradient last computed for this view.
        self.grad: np.ndarray | None = None
        #: The gradient a view op did not reset (see :func:`keep_grads`).
        self.kept: np.ndarray | None = None
        #: ``[(sequence number of a write, placeholder of the value before it)]``,
        #: oldest first, or None: read by :func:`gradcheck.graph.resolved`.
        self.mutations: list[tuple[int, Tensor]] | None = None


def state_of(tensor: Tensor) -> ViewState:
    vs = tensor._views
    if vs is None:
        vs = tensor._views = ViewState()
    return vs


def children(tensor: Tensor) -> list[Tensor]:
    """The live tensors made from ``tensor`` by a view op (while their graph lasts)."""
    vs = tensor._views
    if vs is None:
        return []
    live = [c for c in (ref() for ref in vs.children) if c is not None]
    if len(live) != len(vs.children):
        vs.children = [weakref.ref(c) for c in live]
    return live


# -- the op path (execute_op calls these only for view ops and for tensors in a view
# relation) ---------------------------------------------------------------------------
def keep_grads(tensors: Any) -> None:
    """A view op does not reset its inputs' gradients (as MyGrad's): keep each one
    aside (``execute_op`` then resets ``_grad``, so that a later backprop starts from
    zero) and go on showing it through ``.grad`` until the tensor enters another op."""
    for t in tensors:
        if not t._constant and t._grad is not None:
            grad = t.grad  # (materialized: a gradient shared inside the engine is copied)
            state_of(t).kept = grad


def after_op(
    op: Operation,
    result: Tensor,
    tensors: Any,
    input_vars: Any,
    op_args: Any,
    op_kwargs: Any,
    constant: bool | None,
) -> None:
    """The view bookkeeping of one recorded op whose output is a view of an array, or
    one of whose inputs is in a view relation."""

    out = result._data
    array_base = out.base
    view_op = type(op).can_return_view and array_base is not None
    for t in tensors:
        vs = t._views
        if vs is None:
            continue
        if vs.base is not None and t._creator is None:
            # a view whose graph was cleared is no longer a view once it enters a new op
            vs.base = None
            vs.grad = None
        if not view_op:  # an op that is not a view resets its inputs' gradients
            vs.kept = None
            vs.grad = None
    if not view_op:
        return
    index = _parent_index(out, input_vars, tensors)
    if index < 0:  # a view of no input: its inputs' gradients are reset after all
        for t in tensors:
            if t._views is not None:
                t._views.kept = None
        return
    t = tensors[index]
    parent = state_of(t)
    result._views = ViewState(parent.base if parent.base is not None else t)
    parent.children.append(weakref.ref(result))
    op._replay = (index, tuple(op_args), op_kwargs, constant)  # type: ignore[attr-defined]


def _parent_index(out: np.ndarray, input_vars: Any, tensors: Any) -> int:
    """The input whose array ``out`` is a view of (-1 for none). A view of a Python
    number or list is a view of nothing the user holds: it has no parent."""
    from gradcheck.tensor_base import Tensor

    array_base = out.base
    for index, (x, t) in enumerate(zip(input_vars, tensors)):
        if not isinstance(x, (np.ndarray, Tensor)):
            continue
        data = t._data
        if array_base is data or array_base is data.base or out is data:
            return index
    return -1


def replay(op: Operation, *inputs: Any) -> Tensor:
    """The view op ``op`` applied again, with its arguments, to ``inputs``."""
    from gradcheck.tensor_base import execute_op

    _, args, kwargs, constant = op._replay  # type: ignore[attr-defined]
    return execute_op(type(op), *inputs, op_args=args, op_kwargs=kwargs, constant=constant)


def replay_on_array(op: Operation, array: np.ndarray) -> np.ndarray:
    """The view op ``op`` applied to a plain array (the parent's input replaced by
    it), outside any graph: the same view of ``array``."""
    from gradcheck.tensor_base import _constant

    index = op._replay[0]  # type: ignore[attr-defined]
    inputs: list[Any] = list(op.variables)
    inputs[index] = _constant(array)
    with _graph.no_autodiff:
        return replay(op, *inputs)._data


def replay_op(tensor: Tensor, inputs: Any) -> Tensor:
    """``Tensor._replay_op``: the op that made the view ``tensor``, applied to ``inputs``."""
    op = tensor._creator
    if op is None or not hasattr(op, "_replay"):
        raise DisconnectedView(
            "`Tensor._replay_op(...)` was called on a tensor without a creator (or one "
            "that is not a view)"
        )
    return replay(op, *inputs)


# -- gradients -------------------------------------------------------------------------
def own_grad(tensor: Tensor) -> np.ndarray | None:
    """The gradient of a tensor that is not a view (or no longer one)."""
    grad = tensor._grad
    if grad is None:
        vs = tensor._views
        return None if vs is None else vs.kept
    if tensor._shared:
        tensor._shared = False
        grad = tensor._grad = np.array(grad)
    return grad


def _base_grad(base: Tensor) -> np.ndarray | None:
    """The gradient of the base ``base``, owning its memory, so that its views'
    gradients name it as their ``.base`` (NumPy names the array that owns the memory)."""
    grad = own_grad(base)
    if grad is not None and grad.base is not None:
        grad = np.array(grad)
        if base._grad is not None:
            base._grad = grad
        else:
            state_of(base).kept = grad
    return grad


def grad_of(tensor: Tensor, vs: ViewState) -> np.ndarray | None:
    """``tensor.grad`` for a tensor in a view relation: a view's gradient is the view
    of its base's gradient (``view.grad.base is view.base.grad``)."""
    base = vs.base
    if base is None:
        return own_grad(tensor)
    base_grad = _base_grad(base)
    cached = vs.grad
    if cached is not None and base_grad is not None and cached.base is base_grad:
        return cached
    op = tensor._creator
    if base_grad is None or op is None:
        # (the graph that joined this view to its base was cleared)
        return None
    return _view_grad(vs, op)


def _view_grad(vs: ViewState, op: Operation) -> np.ndarray | None:
    parent = op.variables[op._replay[0]]  # type: ignore[attr-defined]
    parent_grad = parent.grad
    vs.grad = None if parent_grad is None else replay_on_array(op, parent_grad)
    return vs.grad


def leaving_graph(left: list[tuple[Tensor, Operation | None]]) -> None:
    """After backprop (or ``clear_graph``): the tensors in a view relation that left
    the graph, each with the op that had made it, oldest first. A view keeps the view
    of its base's final gradient (computed now, while the op is known), and each one
    forgets the views made from it: they are disconnected from it."""
    for tensor, op in left:
        vs = tensor._views
        if vs is None:
            continue
        vs.children = []
        if vs.base is not None and op is not None and hasattr(op, "_replay"):
            if _base_grad(vs.base) is not None:
                _view_grad(vs, op)


# -- in-place operations -----------------------------------------------------------------
def _tree(base: Tensor) -> list[tuple[Tensor, Tensor | None]]:
    """``base`` and every view made from it, still connected (each after its parent):
    ``(tensor, parent)`` pairs."""
    nodes: list[tuple[Tensor, Tensor | None]] = [(base, None)]
    for tensor, _ in nodes:  # grows while it is walked
        for child in children(tensor):
            if child._creator is not None and hasattr(child._creator, "_replay"):
                nodes.append((child, tensor))
    return nodes


def _placeholder(tensor: Tensor) -> Tensor:
    """An internal tensor with the state of ``tensor`` (the same array): it stands for
    ``tensor``'s value before a write, in the ops that read that value."""
    from gradcheck.tensor_base import Tensor

    p = Tensor.__new__(Tensor)
    for name in STATE:
        setattr(p, name, getattr(tensor, name))
    p._views = None
    p._grad = None
    p._shared = False
    return p


def _unread(p: Tensor) -> bool:
    """True for a placeholder whose values no op will read again: it takes a gradient
    and has no consumers (none made it, or their graph was cleared), so an op that
    still names it raises InvalidBackprop. Its memory is then released."""
    data = p._data
    released = data.ndim > 0 and not any(data.strides)
    return not p._constant and p._ops == 0 and not released


def _dead(p: Tensor) -> Tensor:
    """``p`` without its memory: only its shape and dtype (zeros that take no memory)."""
    dead = _placeholder(p)
    dead._data = np.broadcast_to(np.zeros((), p._data.dtype), p._data.shape)
    dead._creator = None
    dead._locks = None
    return dead


def _record(tensor: Tensor, seq: int, placeholder: Tensor) -> None:
    vs = state_of(tensor)
    if vs.mutations is None:
        vs.mutations = []
    records = vs.mutations
    for i, (m, p) in enumerate(records):
        if _unread(p):
            records[i] = (m, _dead(p))
    records.append((seq, _dead(placeholder) if _unread(placeholder) else placeholder))


def _take_state(target: Tensor, source: Tensor, base: Tensor | None) -> None:
    for name in STATE:
        setattr(target, name, getattr(source, name))
    vs = state_of(target)
    vs.base = base
    vs.grad = None
    vs.kept = None


def _disconnect_if_stale(tensor: Tensor) -> None:
    vs = tensor._views
    if vs is None or vs.base is None:
        return
    if tensor._creator is None or not children(vs.base):
        vs.base = None
        vs.grad = None


def null_grad(tensor: Tensor) -> None:
    tensor._grad = None
    tensor._shared = False
    vs = tensor._views
    if vs is not None:
        vs.grad = None
        vs.kept = None


def _writeable_or_raise(array: np.ndarray) -> None:
    """Raise as NumPy does when ``array`` is read-only for the user's reasons (not a
    lock of memory guarding)."""
    if array.flags.writeable:
        return
    entry = _lm._array_tracker.get(id(array))
    if entry is None:
        locked = _lm._tracked_base(array)
        entry = None if locked is None else _lm._array_tracker[id(locked)]
    if entry is None or not entry[1]:  # (entry[1]: writeable before the first lock)
        raise ValueError("assignment destination is read-only")


def assign(target: Tensor, index: Any, value: Any) -> None:
    """``target[index] = value`` with MyGrad's semantics (see the module docstring)."""
    from gradcheck.ops._rules.indexing import SetItem, UnView
    from gradcheck.tensor_base import Tensor, execute_op

    if _graph.no_autodiff_depth():  # no graph: write the array itself
        target._data[index] = value._data if isinstance(value, Tensor) else value
        return
    _disconnect_if_stale(target)
    null_grad(target)
    vs = target._views
    base = vs.base if vs is not None and vs.base is not None else target
    nodes = _tree(base)
    if all(t is not target for t, _ in nodes):  # no longer joined to its base
        vs.base = None  # type: ignore[union-attr]
        base, nodes = target, _tree(target)
    parents = {id(t): p for t, p in nodes}
    _writeable_or_raise(base._data)
    # The path of view ops from the base to the target, and the target's part of a
    # copy of the base's array (the new array of the base and all its views).
    path: list[Operation] = []
    node = target
    while node is not base:
        path.append(node._creator)  # type: ignore[arg-type]
        node = parents[id(node)]  # type: ignore[assignment]
    path.reverse()
    previous = _placeholder(target)
    ops = target._ops
    written = execute_op(
        SetItem, previous, value, op_kwargs={"index": index}, constant=target._constant
    )
    # (the placeholders count the consumers of their tensors, this op's included:
    # it reads `value`, which may be in the view tree, as it was before the write)
    previous._ops += target._ops - ops
    placeholders = {id(t): previous if t is target else _placeholder(t) for t, _ in nodes}
    if path:
        new_base = np.array(base._data, copy=True)
        part = new_base
        for op in path:
            part = replay_on_array(op, part)
        part[...] = written._data
        written._data = part
    seq = next(_graph.SEQUENCE)  # ops made before now read the placeholders
    for t, _ in nodes:
        _record(t, seq, placeholders[id(t)])
    if path:
        functions: list[Callable[[np.ndarray], np.ndarray]] = [
            functools.partial(replay_on_array, op) for op in path
        ]
        new_state = execute_op(
            UnView,
            placeholders[id(base)],
            written,
            op_kwargs={"data": new_base, "path": functions},
            constant=base._constant,
        )
    else:
        new_state = written
    _take_state(base, new_state, None)
    for t, parent in nodes[1:]:
        _take_state(t, replay(t._creator, parent), base)  # type: ignore[arg-type]


def augment(target: Tensor, Op: type[Operation], other: Any, name: str) -> None:
    """``target <op>= other``: ``target[...] = target <op> other``, with NumPy's rule
    for the dtype (the result must cast to ``target``'s dtype, same kind)."""
    from gradcheck.tensor_base import execute_op

    value = execute_op(Op, target, other)
    if value._data.dtype != target._data.dtype and not np.can_cast(
        value._data.dtype, target._data.dtype, "same_kind"
    ):
        raise TypeError(
            f"Cannot cast ufunc '{name}' output from {value._data.dtype!r} to "
            f"{target._data.dtype!r} with casting rule 'same_kind'"
        )
    if value._data.shape != target._data.shape:
        raise ValueError(
            f"non-broadcastable output operand with shape {target._data.shape} doesn't "
            f"match the broadcast shape {value._data.shape}"
        )
    assign(target, Ellipsis, value)


def reshape_in_place(target: Tensor, newshape: Any) -> None:
    """``target.shape = newshape`` (MyGrad semantics): ``target`` becomes a reshape of
    its previous value, and the views made from it before stay views of it, through a
    reshape back to the old shape."""
    from gradcheck.ops._rules.shape import Reshape
    from gradcheck.tensor_base import execute_op

    probe = target._data.view()
    probe.shape = newshape  # raises as NumPy does (size, or a copy would be needed)
    if _graph.no_autodiff_depth():
        target._data.shape = probe.shape
        return
    if probe.shape == target._data.shape:
        return
    _disconnect_if_stale(target)
    old_shape = target._data.shape
    vs = target._views
    old_base = None if vs is None else vs.base
    nodes = _tree(target)
    placeholders = {id(t): _placeholder(t) for t, _ in nodes}
    seq = next(_graph.SEQUENCE)  # ops made before now read the placeholders
    for t, _ in nodes:
        _record(t, seq, placeholders[id(t)])
    previous = placeholders[id(target)]
    previous._views = ViewState(old_base)
    if old_base is not None:
        # the parent's view is now the placeholder, of which the target is a view
        parent = target._creator.variables[target._creator._replay[0]]  # type: ignore[union-attr]
        siblings = state_of(parent)
        siblings.children = [
            ref if ref() is not target else weakref.ref(previous) for ref in siblings.children
        ]
    reshaped = execute_op(Reshape, previous, op_kwargs={"newshape": probe.shape})
    _take_state(target, reshaped, old_base)
    previous._views.children = [weakref.ref(target)]
    state_of(target).children = []
    if len(nodes) == 1:
        return
    base = old_base if old_base is not None else target
    unshaped = execute_op(Reshape, target, op_kwargs={"newshape": old_shape})
    for t, parent in nodes[1:]:
        if parent is target:
            parent = unshaped
            state_of(unshaped).children.append(weakref.ref(t))
        _take_state(t, replay(t._creator, parent), base)  # type: ignore[arg-type]
