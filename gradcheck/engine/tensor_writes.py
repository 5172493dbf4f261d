"""What of MyGrad's view semantics builds tensors: a view op applied again, a view's
gradient (the view of its base's gradient), the placeholders of the values before a
write, and the writes themselves (``x[i] = v``, ``x += y``, ``x.shape = s``).

The books these keep are :mod:`gradcheck.engine._utils.views`' (the view relations,
building no tensor), below; the ops are applied with
:mod:`gradcheck.engine.execution`'s ``execute_op``. ``Tensor``'s methods in
:mod:`gradcheck.engine.tensor_base` call these functions.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from gradcheck.engine import graph as _graph
from gradcheck.engine._utils import views as _views
from gradcheck.engine.execution import _constant, blank, execute_op
from gradcheck.engine.graph import Node
from gradcheck.engine.operation import Operation, shapes_rewritten
from gradcheck.engine.ops._rules import indexing as _indexing
from gradcheck.engine.ops._rules import shape as _shape
from gradcheck.errors import DisconnectedView

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor
    from gradcheck.engine.tensor_methods import TensorMethods

    _TENSOR = Tensor
else:
    _TENSOR = Node  # a tensor, below the module that defines the class (see graph.Node)

__all__ = ["assign_in_place"]


# values before a write, the writes themselves.
def _replay(op: Operation, *inputs: Any) -> Tensor:
    """The view op ``op`` applied again, with its arguments, to ``inputs``."""
    _, args, kwargs, constant = op._replay  # type: ignore[attr-defined]
    return execute_op(type(op), *inputs, op_args=args, op_kwargs=kwargs, constant=constant)


def _replay_on_array(op: Operation, array: np.ndarray) -> np.ndarray:
    """The view op ``op`` applied to a plain array (the parent's input replaced by
    it), outside any graph: the same view of ``array``."""
    index = op._replay[0]  # type: ignore[attr-defined]
    inputs: list[Any] = list(op.variables)
    inputs[index] = _constant(array)
    with _graph.no_autodiff:
        return _replay(op, *inputs)._data


def _replay_op(tensor: Tensor, inputs: Any) -> Tensor:
    """``Tensor._replay_op``: the op that made the view ``tensor``, applied to ``inputs``."""
    op = tensor._creator
    if op is None or not hasattr(op, "_replay"):
        raise DisconnectedView(
            "`Tensor._replay_op(...)` was called on a tensor without a creator (or one "
            "that is not a view)"
        )
    return _replay(op, *inputs)


def _grad_of_view(tensor: Tensor, vs: _views.ViewState) -> np.ndarray | None:
    """``tensor.grad`` for a tensor in a view relation: a view's gradient is the view
    of its base's gradient (``view.grad.base is view.base.grad``)."""
    base = vs.base
    if base is None:
        return _views.own_grad(tensor)
    base_grad = _views.base_grad(base)
    cached = vs.grad
    if cached is not None and base_grad is not None and cached.base is base_grad:
        return cached
    op = tensor._creator
    if base_grad is None or op is None:
        # (the graph that joined this view to its base was cleared)
        return None
    return _view_grad(vs, op)


def _view_grad(vs: _views.ViewState, op: Operation) -> np.ndarray | None:
    parent = op.variables[op._replay[0]]  # type: ignore[attr-defined]
    parent_grad = parent.grad
    vs.grad = None if parent_grad is None else _replay_on_array(op, parent_grad)
    return vs.grad


def _left_graph(left: list[tuple[Tensor, Operation | None]]) -> None:
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
            if _views.base_grad(vs.base) is not None:
                _view_grad(vs, op)


def _placeholder(tensor: Tensor) -> Tensor:
    """An internal tensor with the state of ``tensor`` (the same array): it stands for
    ``tensor``'s value before a write, in the ops that read that value."""
    p = blank()
    for name in _views.STATE:
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
    vs = _views.state_of(tensor)
    if vs.mutations is None:
        vs.mutations = []
    records = vs.mutations
    for i, (m, p) in enumerate(records):
        if _unread(p):
            records[i] = (m, _dead(p))
    records.append((seq, _dead(placeholder) if _unread(placeholder) else placeholder))


def _assign(target: Tensor, index: Any, value: Any) -> None:
    """``target[index] = value`` with MyGrad's semantics (see :mod:`gradcheck._utils.views`)."""
    if _graph.no_autodiff_depth():  # no graph: write the array itself
        target._data[index] = value._data if isinstance(value, _TENSOR) else value
        return
    _views.disconnect_if_stale(target)
    _views.null_grad(target)
    vs = target._views
    base = vs.base if vs is not None and vs.base is not None else target
    nodes = _views.tree(base)
    if all(t is not target for t, _ in nodes):  # no longer joined to its base
        vs.base = None  # type: ignore[union-attr]
        base, nodes = target, _views.tree(target)
    parents = {id(t): p for t, p in nodes}
    _views.writeable_or_raise(base._data)
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
        _indexing.SetItem, previous, value, op_kwargs={"index": index}, constant=target._constant
    )
    # (the placeholders count the consumers of their tensors, this op's included:
    # it reads `value`, which may be in the view tree, as it was before the write)
    previous._ops += target._ops - ops
    placeholders = {id(t): previous if t is target else _placeholder(t) for t, _ in nodes}
    if path:
        new_base = np.array(base._data, copy=True)
        part = new_base
        for op in path:
            part = _replay_on_array(op, part)
        part[...] = written._data
        written._data = part
    seq = next(_graph.SEQUENCE)  # ops made before now read the placeholders
    for t, _ in nodes:
        _record(t, seq, placeholders[id(t)])
    if path:
        functions: list[Callable[[np.ndarray], np.ndarray]] = [
            functools.partial(_replay_on_array, op) for op in path
        ]
        new_state = execute_op(
            _indexing.UnView,
            placeholders[id(base)],
            written,
            op_kwargs={"data": new_base, "path": functions},
            constant=base._constant,
        )
    else:
        new_state = written
    _views.take_state(base, new_state, None)
    for t, parent in nodes[1:]:
        _views.take_state(t, _replay(t._creator, parent), base)  # type: ignore[arg-type]


def _augment(target: TensorMethods, Op: type[Operation], other: Any, name: str) -> None:
    """``target <op>= other``: ``target[...] = target <op> other``, with NumPy's rule
    for the dtype (the result must cast to ``target``'s dtype, same kind)."""
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
    _assign(cast("Tensor", target), Ellipsis, value)


def _reshape_in_place(target: Tensor, newshape: Any) -> None:
    """``target.shape = newshape`` (MyGrad semantics): ``target`` becomes a reshape of
    its previous value, and the views made from it before stay views of it, through a
    reshape back to the old shape."""
    probe = target._data.view()
    probe.shape = newshape  # raises as NumPy does (size, or a copy would be needed)
    if _graph.no_autodiff_depth():
        if probe.shape != target._data.shape:
            shapes_rewritten()  # (the graph's ops saw the old shape)
        target._data.shape = probe.shape
        return
    if probe.shape == target._data.shape:
        return
    _views.disconnect_if_stale(target)
    old_shape = target._data.shape
    vs = target._views
    old_base = None if vs is None else vs.base
    nodes = _views.tree(target)
    placeholders = {id(t): _placeholder(t) for t, _ in nodes}
    seq = next(_graph.SEQUENCE)  # ops made before now read the placeholders
    for t, _ in nodes:
        _record(t, seq, placeholders[id(t)])
    previous = placeholders[id(target)]
    previous._views = _views.ViewState(old_base)
    if old_base is not None:
        # the parent's view is now the placeholder, of which the target is a view
        parent = target._creator.variables[target._creator._replay[0]]  # type: ignore[union-attr]
        siblings = _views.state_of(parent)
        siblings.children = [
            ref if ref() is not target else weakref.ref(previous) for ref in siblings.children
        ]
    reshaped = execute_op(_shape.Reshape, previous, op_kwargs={"newshape": probe.shape})
    _views.take_state(target, reshaped, old_base)
    previous._views.children = [weakref.ref(target)]
    _views.state_of(target).children = []
    if len(nodes) == 1:
        return
    base = old_base if old_base is not None else target
    unshaped = execute_op(_shape.Reshape, target, op_kwargs={"newshape": old_shape})
    for t, parent in nodes[1:]:
        if parent is target:
            parent = unshaped
            _views.state_of(unshaped).children.append(weakref.ref(t))
        _views.take_state(t, _replay(t._creator, parent), base)  # type: ignore[arg-type]


def assign_in_place(target: TensorMethods, index: Any, value: Any) -> None:
    """``target[index] = value`` for ``Tensor.__setitem__`` (MyGrad semantics): the
    write reaches ``target``'s base and every view of it, and the ops that read
    ``target`` (or those views) before still read their previous values; see
    :mod:`gradcheck._utils.views`."""
    _assign(cast("Tensor", target), _plain_index(index), value)


def _plain_index(index: Any) -> Any:
    """An index with the tensors in it replaced by their data (indices are not
    differentiated)."""
    if isinstance(index, _TENSOR):
        return index._data
    if isinstance(index, tuple):
        return tuple(p._data if isinstance(p, _TENSOR) else p for p in index)
    return index
