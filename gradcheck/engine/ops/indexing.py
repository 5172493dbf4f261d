"""Indexing: ``x[index]``, ``x[index] = y``, take and diagonal, as graph ops.

The functions; their rules are in :mod:`gradcheck.ops._rules.indexing`, re-exported here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.engine._utils.overrides import register_family
from gradcheck.engine.operation import Operation, reduce_broadcast  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.ops._rules.indexing import (  # noqa: F401 (re-exported)
    Diagonal,
    GetItem,
    SetItem,
    _is_basic,
    _scatter_add,
)

# (assign_in_place, Tensor.__setitem__'s, lives beside Tensor; its old path stays)
from gradcheck.engine.ops.shape import ravel
from gradcheck.engine.tensor_base import (  # noqa: F401
    Tensor,
    _plain_index,
    assign_in_place,
    execute_op,
)

__all__ = ["diagonal", "get_item", "set_item", "take"]


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
        return get_item(ravel(a), indices, constant=constant)
    ndim = np.ndim(a._data if isinstance(a, Tensor) else a)
    index = (slice(None),) * (axis % ndim) + (indices,)
    return get_item(a, index, constant=constant)


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


def _arr(*shape: int) -> np.ndarray:
    """``numpy.arange(prod(shape)).reshape(shape)``: an index-revealing array (each
    element is its flat position), for reading what an index selects (MyGrad's
    helper of the same name)."""
    return np.arange(int(np.prod(shape))).reshape(shape)


def _is_int_array_index(index: tuple[Any, ...]) -> bool:
    """True when ``index`` (a tuple) holds an integer array or a sequence (NumPy's
    integer-array indexing: the result is a copy)."""
    return any(
        isinstance(i, (list, np.ndarray)) and np.asarray(i).dtype.kind in "iu" for i in index
    )


def _is_bool_array_index(index: tuple[Any, ...]) -> bool:
    """True when ``index`` is a tuple of a single boolean array (a mask)."""
    return (
        len(index) == 1
        and isinstance(index[0], (list, np.ndarray))
        and np.asarray(index[0]).dtype == np.bool_
    )


# NumPy's functions of these names run these on tensors (see gradcheck.interop).
register_family(globals())
