"""The rules of shape manipulation: Reshape (reshape, ravel, flatten, squeeze,
expand_dims, atleast_*d), BroadcastTo, Transpose (transpose, moveaxis, swapaxes).

Every op here only moves elements around, so each backward is the inverse movement of
the upstream gradient (a reshape back, the inverse permutation, a sum over broadcast
axes).

The documented functions that apply them are in :mod:`gradcheck.ops.shape`, which
re-exports every name defined here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine.operation import Operation, reduce_broadcast

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor


class Reshape(Operation):
    """Any op whose output is its input with another shape (reshape, ravel, squeeze,
    expand_dims, atleast_*d): the gradient is reshaped back."""

    can_return_view = True

    def __call__(self, a: Tensor, *, newshape: Any) -> np.ndarray:
        self.variables = (a,)
        return np.reshape(a._data, newshape)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return np.reshape(grad, self.variables[0].shape)


class BroadcastTo(Operation):
    can_return_view = True

    def __call__(self, a: Tensor, *, shape: Any) -> np.ndarray:
        self.variables = (a,)
        return np.broadcast_to(a._data, shape)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return reduce_broadcast(grad, self.variables[0].shape)


class Transpose(Operation):
    """Any permutation of axes (transpose, moveaxis, swapaxes)."""

    can_return_view = True

    def __call__(self, a: Tensor, axes: Any = None) -> np.ndarray:
        self.variables = (a,)
        if axes is None:
            axes = tuple(range(a.ndim))[::-1]
        self.axes = tuple(ax % a.ndim for ax in axes) if a.ndim else ()
        return np.transpose(a._data, self.axes)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return np.transpose(grad, np.argsort(self.axes))


# The arguments of the ops from those of the functions (and Tensor's methods)
def _squeezed(shape: tuple[int, ...], axis: Any) -> tuple[int, ...]:
    """The shape ``numpy.squeeze(axis=axis)`` gives an array of ``shape``."""
    return np.squeeze(np.empty(shape, dtype=np.bool_), axis=axis).shape


def _moved(ndim: int, source: Any, destination: Any) -> tuple[int, ...]:
    """The permutation of ``ndim`` axes that ``numpy.moveaxis`` makes."""
    src = [s % ndim for s in np.atleast_1d(source)]
    dst = [d % ndim for d in np.atleast_1d(destination)]
    if len(src) != len(dst):
        raise ValueError("moveaxis: `source` and `destination` must have the same length")
    order = [n for n in range(ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return tuple(order)


def _swapped(ndim: int, axis1: int, axis2: int) -> tuple[int, ...]:
    """The permutation of ``ndim`` axes that ``numpy.swapaxes`` makes."""
    perm = list(range(ndim))
    i, j = axis1 % ndim, axis2 % ndim
    perm[i], perm[j] = perm[j], perm[i]
    return tuple(perm)
