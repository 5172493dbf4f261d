"""Indexing: ``x[index]``, ``x[index] = y``, take and diagonal, as graph ops."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.operation import Operation, reduce_broadcast
from gradcheck.tensor_base import Tensor, execute_op

__all__ = ["diagonal", "get_item", "set_item", "take"]


def _is_basic(index: Any) -> bool:
    """True for NumPy basic indexing (ints, slices, None, Ellipsis): it selects every
    element at most once."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(
        p is None
        or p is Ellipsis
        or (isinstance(p, (slice, int, np.integer)) and not isinstance(p, bool))
        for p in parts
    )


def _plain_index(index: Any) -> Any:
    if isinstance(index, Tensor):
        return index.data
    if isinstance(index, tuple):
        return tuple(p.data if isinstance(p, Tensor) else p for p in index)
    return index


def _scatter_add(shape: tuple[int, ...], index: Any, grad: np.ndarray, dtype: Any) -> np.ndarray:
    """The gradient of ``x[index]`` for an ``x`` of ``shape``: ``grad`` added into
    zeros at the selected positions, each selection adding (repeats accumulate)."""
    out = np.zeros(shape, dtype=np.result_type(dtype, grad.dtype))
    if _is_basic(index):
        out[index] = grad
    else:
        np.add.at(out, index, grad)
    return out


class GetItem(Operation):
    def __call__(self, a: Tensor, *, index: Any) -> np.ndarray:
        self.variables = (a,)
        self.index = index
        return np.asarray(a.data[index])

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a = self.variables[0].data
        return _scatter_add(a.shape, self.index, grad, a.dtype)


def get_item(a: Any, index: Any, *, constant: bool | None = None) -> Tensor:
    """``a[index]`` for any NumPy index; repeated elements accumulate gradient.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([1.0, 2.0, 3.0])
    >>> x[1:, None]
    Tensor([[2.],
            [3.]])
    """
    return execute_op(GetItem, a, op_kwargs={"index": _plain_index(index)}, constant=constant)


class SetItem(Operation):
    """``out = a.copy(); out[index] = b``: the gradient reaches ``a`` everywhere it
    was not overwritten, and ``b`` wherever one of its (broadcast) values survived."""

    def __call__(self, a: Tensor, b: Tensor, *, index: Any) -> np.ndarray:
        self.variables = (a, b)
        self.index = index
        out = np.array(a.data, copy=True)
        out[index] = b.data
        return out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a, b = (v.data for v in self.variables)
        if index == 0:
            da = np.array(grad, copy=True)
            da[self.index] = 0
            return da
        # With repeated advanced indices NumPy keeps the last write. Which write won
        # is found by writing each selected slot's serial number and reading it back.
        selected_shape = np.shape(a[self.index])
        serial = np.arange(int(np.prod(selected_shape))).reshape(selected_shape)
        ids = np.full(a.shape, -1)
        ids[self.index] = serial
        won = ids[self.index] == serial
        db = np.where(won, grad[self.index], 0)
        if b.ndim > db.ndim:  # b had extra leading 1s, which assignment drops
            return db.reshape(b.shape)
        return reduce_broadcast(db, b.shape)


def set_item(a: Any, index: Any, b: Any, *, constant: bool | None = None) -> Tensor:
    """A new tensor equal to ``a`` with ``a[index] = b`` applied (``a`` unchanged).

    ``Tensor.__setitem__`` uses this op in place. Gradients reach ``a`` (zero where it
    was overwritten) and ``b`` (summed where ``b`` was broadcast; where an advanced
    index repeats a position, only the last write counts, as in NumPy).

    Examples
    --------
    >>> import gradcheck as mg
    >>> x, y = mg.Tensor([1.0, 2.0, 3.0]), mg.Tensor(5.0)
    >>> z = mg.set_item(x, [0, 0, 2], y)
    >>> z.backward()
    >>> z, x.grad, y.grad
    (Tensor([5., 2., 5.]), array([0., 1., 0.]), array(2.))
    """
    return execute_op(SetItem, a, b, op_kwargs={"index": _plain_index(index)}, constant=constant)


def assign_in_place(target: Tensor, index: Any, value: Any) -> None:
    """``target[index] = value`` for ``Tensor.__setitem__`` (MyGrad semantics).

    ``target``'s state (data, creator, gradient bookkeeping) moves to a new tensor
    that stands for its previous value, and ``target`` takes the state of
    ``set_item(previous, index, value)``, so that the user's reference is the output
    of the new op. Ops in ``value``'s own graph that read ``target`` are pointed at
    the previous value (``x[0] = x[1]`` reads the old ``x``); any other op built on
    ``target`` before now sees a tensor with no consumers recorded, and backprop
    through it raises InvalidBackprop instead of silently using the new values.
    """
    previous = Tensor.__new__(Tensor)
    for name in Tensor.__slots__:
        setattr(previous, name, getattr(target, name))
    if isinstance(value, Tensor):
        _redirect(value, target, previous)
    out = set_item(previous, index, value)
    for name in Tensor.__slots__:
        setattr(target, name, getattr(out, name))


def _redirect(root: Tensor, old: Tensor, new: Tensor) -> None:
    """Replace ``old`` by ``new`` among the inputs of every op upstream of ``root``
    (``root`` included) — iteratively, the graph may be deep."""
    stack, seen = [root], set()
    while stack:
        tensor = stack.pop()
        op = tensor._creator
        if op is None or id(op) in seen:
            continue
        seen.add(id(op))
        if any(v is old for v in op.variables):
            op.variables = tuple(new if v is old else v for v in op.variables)
        stack.extend(v for v in op.variables if v is not new)


def take(a: Any, indices: Any, axis: int | None = None, *, constant: bool | None = None) -> Tensor:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when
    ``axis`` is None), like ``numpy.take``; repeated indices accumulate gradient.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.take(mg.Tensor([[1.0, 2.0], [3.0, 4.0]]), [1, 1], axis=1)
    Tensor([[2., 2.],
            [4., 4.]])
    """
    indices = np.asarray(_plain_index(indices))
    if axis is None:
        from gradcheck.ops.shape import ravel

        return get_item(ravel(a), indices, constant=constant)
    ndim = np.ndim(a.data if isinstance(a, Tensor) else a)
    index = (slice(None),) * (axis % ndim) + (indices,)
    return get_item(a, index, constant=constant)


class Diagonal(Operation):
    def __call__(self, a: Tensor, offset: int = 0, axis1: int = 0, axis2: int = 1) -> np.ndarray:
        self.variables = (a,)
        self.args = (offset, axis1, axis2)
        return np.diagonal(a.data, offset, axis1, axis2).copy()

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a = self.variables[0].data
        out = np.zeros(a.shape, dtype=np.result_type(a.dtype, grad.dtype))
        # np.diagonal's result is a view of `out`; made writeable, it is the place.
        view = np.diagonal(out, *self.args)
        view.flags.writeable = True
        view[...] = grad
        return out


def diagonal(
    a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, *, constant: bool | None = None
) -> Tensor:
    """The diagonal of ``a`` over ``axis1`` and ``axis2`` (shifted by ``offset``), as
    the last axis of the result, like ``numpy.diagonal``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.diagonal(mg.Tensor([[1.0, 2.0], [3.0, 4.0]]))
    Tensor([1., 4.])
    """
    return execute_op(
        Diagonal, a, op_kwargs={"offset": offset, "axis1": axis1, "axis2": axis2}, constant=constant
    )
