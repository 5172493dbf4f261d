"""Shape manipulation: reshape, ravel, flatten, squeeze, expand_dims, broadcast_to,
atleast_1d/2d/3d, transpose, moveaxis, swapaxes.

The functions; their rules (Reshape, BroadcastTo, Transpose) are in
:mod:`gradcheck.ops._rules.shape`, re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.engine._utils.overrides import register_family
from gradcheck.engine.operation import Operation, reduce_broadcast  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.ops._rules.shape import (
    BroadcastTo,
    Reshape,
    Transpose,
    _moved,
    _squeezed,
    _swapped,
)
from gradcheck.engine.tensor_base import Tensor, execute_op

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_to",
    "expand_dims",
    "flatten",
    "moveaxis",
    "ravel",
    "reshape",
    "squeeze",
    "swapaxes",
    "transpose",
]


def _shape_of(a: Any) -> tuple[int, ...]:
    return np.shape(a._data if isinstance(a, Tensor) else a)


def reshape(a: Any, newshape: Any, *, constant: bool | None = None) -> Tensor:
    """Give ``a`` a new shape with the same number of elements.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.reshape(mg.Tensor([1.0, 2.0, 3.0, 4.0]), (2, 2))
    Tensor([[1., 2.],
            [3., 4.]])
    """
    return execute_op(Reshape, a, op_kwargs={"newshape": newshape}, constant=constant)


def ravel(a: Any, *, constant: bool | None = None) -> Tensor:
    """``a`` flattened to 1-D in C order.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.ravel(mg.Tensor([[1.0, 2.0], [3.0, 4.0]]))
    Tensor([1., 2., 3., 4.])
    """
    return execute_op(Reshape, a, op_kwargs={"newshape": -1}, constant=constant)


def flatten(a: Any, *, constant: bool | None = None) -> Tensor:
    """A 1-D copy of ``a`` in C order (MyGrad has it as ``Tensor.flatten``).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.flatten(mg.Tensor([[1.0], [2.0]]))
    Tensor([1., 2.])
    """
    return execute_op(Reshape, a, op_kwargs={"newshape": -1}, constant=constant)


def squeeze(
    a: Any, axis: int | tuple[int, ...] | None = None, *, constant: bool | None = None
) -> Tensor:
    """Remove axes of length one (all of them, or those in ``axis``).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.squeeze(mg.Tensor([[1.0, 2.0]])).shape
    (2,)
    """
    newshape = _squeezed(_shape_of(a), axis)
    return execute_op(Reshape, a, op_kwargs={"newshape": newshape}, constant=constant)


def expand_dims(a: Any, axis: int | tuple[int, ...], *, constant: bool | None = None) -> Tensor:
    """Insert axes of length one at ``axis``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.expand_dims(mg.Tensor([1.0, 2.0]), 0).shape
    (1, 2)
    """
    newshape = np.expand_dims(np.empty(_shape_of(a), dtype=np.bool_), axis).shape
    return execute_op(Reshape, a, op_kwargs={"newshape": newshape}, constant=constant)


def _atleast(n: int, tensors: tuple[Any, ...], constant: bool | None) -> Tensor | list[Tensor]:
    func = {1: np.atleast_1d, 2: np.atleast_2d, 3: np.atleast_3d}[n]
    out = []
    for a in tensors:
        newshape = func(np.empty(_shape_of(a), dtype=np.bool_)).shape
        if (
            isinstance(a, Tensor)
            and newshape == a.shape
            # (a non-float tensor is constant whatever is asked)
            and (constant is None or a.constant is constant or a.dtype.kind != "f")
        ):
            # already has enough dimensions, and the constant asked for: returned as
            # is, as NumPy and MyGrad do
            out.append(a)
        else:
            out.append(execute_op(Reshape, a, op_kwargs={"newshape": newshape}, constant=constant))
    return out[0] if len(out) == 1 else out


def atleast_1d(*tensors: Any, constant: bool | None = None) -> Tensor | list[Tensor]:
    """Each input viewed with at least one dimension (a list for several inputs).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.atleast_1d(mg.Tensor(3.0))
    Tensor([3.])
    """
    return _atleast(1, tensors, constant)


def atleast_2d(*tensors: Any, constant: bool | None = None) -> Tensor | list[Tensor]:
    """Each input viewed with at least two dimensions (a list for several inputs).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.atleast_2d(mg.Tensor([1.0, 2.0])).shape
    (1, 2)
    """
    return _atleast(2, tensors, constant)


def atleast_3d(*tensors: Any, constant: bool | None = None) -> Tensor | list[Tensor]:
    """Each input viewed with at least three dimensions (a list for several inputs);
    a 1-D ``(N,)`` becomes ``(1, N, 1)`` and a 2-D ``(M, N)`` becomes ``(M, N, 1)``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.atleast_3d(mg.Tensor([1.0, 2.0])).shape
    (1, 2, 1)
    """
    return _atleast(3, tensors, constant)


def broadcast_to(a: Any, shape: Any, *, constant: bool | None = None) -> Tensor:
    """``a`` broadcast to ``shape`` (a read-only view, as in NumPy); the gradient sums
    over the broadcast axes.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.broadcast_to(mg.Tensor([1.0, 2.0]), (2, 2))
    Tensor([[1., 2.],
            [1., 2.]])
    """
    return execute_op(BroadcastTo, a, op_kwargs={"shape": shape}, constant=constant)


def transpose(a: Any, *axes: Any, constant: bool | None = None) -> Tensor:
    """Permute the axes of ``a`` (reverse them by default). The axes may be given as
    separate arguments or as one tuple.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.transpose(mg.Tensor([[1.0, 2.0]]))
    Tensor([[1.],
            [2.]])
    >>> mg.transpose(mg.Tensor([[[1.0, 2.0]]]), 1, 2, 0).shape
    (1, 2, 1)
    """
    order: Sequence[Any] | None = axes
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        order = axes[0]
    return execute_op(
        Transpose, a, op_kwargs={"axes": tuple(order) if order else None}, constant=constant
    )


def moveaxis(a: Any, source: Any, destination: Any, *, constant: bool | None = None) -> Tensor:
    """Move axes of ``a`` from ``source`` to ``destination``; the others keep their
    order.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.moveaxis(mg.Tensor([[[1.0, 2.0]]]), 0, -1).shape
    (1, 2, 1)
    """
    perm = _moved(len(_shape_of(a)), source, destination)
    return execute_op(Transpose, a, op_kwargs={"axes": perm}, constant=constant)


def swapaxes(a: Any, axis1: int, axis2: int, *, constant: bool | None = None) -> Tensor:
    """Interchange two axes of ``a``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.swapaxes(mg.Tensor([[1.0, 2.0]]), 0, 1).shape
    (2, 1)
    """
    perm = _swapped(len(_shape_of(a)), axis1, axis2)
    return execute_op(Transpose, a, op_kwargs={"axes": perm}, constant=constant)


# NumPy's functions of these names run these on tensors (see gradcheck.interop).
register_family(globals())
