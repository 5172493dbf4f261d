"""The rules of indexing: GetItem (``x[index]``), SetItem (``x[index] = y`` as a new
tensor), Diagonal.

The documented functions that apply them are in :mod:`gradcheck.ops.indexing`, which
re-exports every name defined here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine.operation import Operation, reduce_broadcast

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor


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
    can_return_view = True  # (basic indexing)

    def __call__(self, a: Tensor, *, index: Any) -> np.ndarray:
        self.variables = (a,)
        self.index = index
        return np.asarray(a._data[index])

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a = self.variables[0]._data
        return _scatter_add(a.shape, self.index, grad, a.dtype)


class SetItem(Operation):
    """``out = a.copy(); out[index] = b``: the gradient reaches ``a`` everywhere it
    was not overwritten, and ``b`` wherever one of its (broadcast) values survived."""

    def __call__(self, a: Tensor, b: Tensor, *, index: Any) -> np.ndarray:
        self.variables = (a, b)
        self.index = index
        out = np.array(a._data, copy=True)
        out[index] = b._data
        return out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a, b = (v._data for v in self.variables)
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
            extra = b.ndim - db.ndim
            return reduce_broadcast(db, b.shape[extra:]).reshape(b.shape)
        return reduce_broadcast(db, b.shape)


class UnView(Operation):
    """The base of a view after an in-place op wrote the view: its previous value
    everywhere outside the view, the view's new value inside.

    ``out = data`` (the new base array, computed by the caller); the gradient reaches
    the previous base outside the view (zero inside it) and the written view inside
    it. ``path`` is the sequence of view ops from the base to the view: each is
    replayed on the gradient (as a view of it) to find the view's part.
    """

    def __call__(self, previous: Tensor, written: Tensor, *, data: Any, path: Any) -> np.ndarray:
        self.variables = (previous, written)
        self.path = path
        return data

    def _view_of(self, grad: np.ndarray) -> np.ndarray:
        for replay in self.path:
            grad = replay(grad)
        return grad

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        if index == 1:
            return np.array(self._view_of(grad), copy=True)
        outside = np.array(grad, copy=True)
        view = self._view_of(outside)
        view.flags.writeable = True
        view[...] = 0
        return outside


class Diagonal(Operation):
    def __call__(self, a: Tensor, offset: int = 0, axis1: int = 0, axis2: int = 1) -> np.ndarray:
        self.variables = (a,)
        self.args = (offset, axis1, axis2)
        return np.diagonal(a._data, offset, axis1, axis2).copy()

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a = self.variables[0]._data
        out = np.zeros(a.shape, dtype=np.result_type(a.dtype, grad.dtype))
        # np.diagonal's result is a view of `out`; made writeable, it is the place.
        view = np.diagonal(out, *self.args)
        view.flags.writeable = True
        view[...] = grad
        return out
