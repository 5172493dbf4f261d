"""Views and in-place operations, with MyGrad's semantics: the bookkeeping.

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

This module keeps the books: the view relations, the gradients that need no new
tensor, the walk of a base's views. It builds no tensor, so it sits below
:mod:`gradcheck.tensor_base`; what builds tensors (the writes themselves, the
placeholders, a view op applied again to make a view's gradient) is there, in the
section "views and in-place writes".
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine._utils import lock_management as _lm
from gradcheck.engine.graph import Node

if TYPE_CHECKING:
    from gradcheck.engine.operation import Operation
    from gradcheck.engine.tensor_base import Tensor

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
    array_base = out.base
    for index, (x, t) in enumerate(zip(input_vars, tensors)):
        if not isinstance(x, (np.ndarray, Node)):
            continue
        data = t._data
        if array_base is data or array_base is data.base or out is data:
            return index
    return -1


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


def base_grad(base: Tensor) -> np.ndarray | None:
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


# -- in-place writes (tensor_base makes the new values) ---------------------------------
def tree(base: Tensor) -> list[tuple[Tensor, Tensor | None]]:
    """``base`` and every view made from it, still connected (each after its parent):
    ``(tensor, parent)`` pairs."""
    nodes: list[tuple[Tensor, Tensor | None]] = [(base, None)]
    for tensor, _ in nodes:  # grows while it is walked
        for child in children(tensor):
            if child._creator is not None and hasattr(child._creator, "_replay"):
                nodes.append((child, tensor))
    return nodes


def take_state(target: Tensor, source: Tensor, base: Tensor | None) -> None:
    for name in STATE:
        setattr(target, name, getattr(source, name))
    vs = state_of(target)
    vs.base = base
    vs.grad = None
    vs.kept = None


def disconnect_if_stale(tensor: Tensor) -> None:
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


def writeable_or_raise(array: np.ndarray) -> None:
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
