"""Tiling, rearranging and padding: tile, repeat, flip, roll, pad.

Each of these outputs copies of input elements, so one op serves them all: the forward
applies the NumPy function to the data, and applies it again to an array of element
numbers (``0 .. size-1`` in the input's shape), which says, for every output element,
which input element it copies. The backward sums the upstream gradient into the
elements by that map (``numpy.bincount``), so copies used many times accumulate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradcheck.operation import Operation
from gradcheck.tensor_base import Tensor, execute_op

__all__ = ["flip", "pad", "repeat", "roll", "tile"]


class CopyElements(Operation):
    """``func(a)`` for a ``func`` that only copies elements of ``a`` (or writes fill
    values, marked -1 by ``index_func``)."""

    def __call__(
        self,
        a: Tensor,
        *,
        func: Callable[[np.ndarray], np.ndarray],
        index_func: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> np.ndarray:
        self.variables = (a,)
        numbers = np.arange(a.size).reshape(a.shape)
        self.source = np.asarray((index_func or func)(numbers))
        return np.asarray(func(a.data))

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a = self.variables[0]
        keep = self.source >= 0
        summed = np.bincount(self.source[keep], weights=grad[keep], minlength=a.size)
        return summed.astype(np.result_type(a.dtype, grad.dtype), copy=False).reshape(a.shape)


def _copy(a: Any, func: Callable, index_func: Callable | None, constant: bool | None) -> Tensor:
    return execute_op(
        CopyElements, a, op_kwargs={"func": func, "index_func": index_func}, constant=constant
    )


def tile(a: Any, reps: Any, *, constant: bool | None = None) -> Tensor:
    """``a`` repeated ``reps`` times along each axis, like ``numpy.tile``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.tile(mg.Tensor([1.0, 2.0]), 2)
    Tensor([1., 2., 1., 2.])
    """
    return _copy(a, lambda x: np.tile(x, reps), None, constant)


def repeat(
    a: Any, repeats: Any, axis: int | None = None, *, constant: bool | None = None
) -> Tensor:
    """Each element of ``a`` repeated ``repeats`` times along ``axis`` (of the
    flattened ``a`` when ``axis`` is None), like ``numpy.repeat``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.repeat(mg.Tensor([1.0, 2.0]), 2)
    Tensor([1., 1., 2., 2.])
    """
    return _copy(a, lambda x: np.repeat(x, repeats, axis=axis), None, constant)


def flip(a: Any, axis: Any = None, *, constant: bool | None = None) -> Tensor:
    """``a`` with the order of elements reversed along ``axis`` (all axes by default).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.flip(mg.Tensor([1.0, 2.0, 3.0]))
    Tensor([3., 2., 1.])
    """
    return _copy(a, lambda x: np.flip(x, axis=axis), None, constant)


def roll(a: Any, shift: Any, axis: Any = None, *, constant: bool | None = None) -> Tensor:
    """``a`` with its elements shifted by ``shift`` along ``axis`` (of the flattened
    array when ``axis`` is None), wrapping around, like ``numpy.roll``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.roll(mg.Tensor([1.0, 2.0, 3.0]), 1)
    Tensor([3., 1., 2.])
    """
    return _copy(a, lambda x: np.roll(x, shift, axis=axis), None, constant)


_COPYING_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def pad(
    array: Any,
    pad_width: Any,
    mode: str = "constant",
    *,
    constant: bool | None = None,
    **kwargs: Any,
) -> Tensor:
    """``array`` padded like ``numpy.pad``, in the modes that copy elements:
    ``"constant"`` (``constant_values=``; the padding gets no gradient), ``"edge"``,
    ``"reflect"``, ``"symmetric"`` (``reflect_type="even"``) and ``"wrap"``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([1.0, 2.0])
    >>> y = mg.pad(x, 1, mode="edge")
    >>> y.backward()
    >>> y, x.grad
    (Tensor([1., 1., 2., 2.]), array([2., 2.]))
    """
    if mode not in _COPYING_MODES or kwargs.get("reflect_type", "even") != "even":
        raise ValueError(
            f"pad: mode {mode!r} is not supported; use one of {_COPYING_MODES} "
            f"(with reflect_type='even')"
        )
    if mode == "constant":
        values = kwargs.get("constant_values", 0)
        return _copy(
            array,
            lambda x: np.pad(x, pad_width, mode="constant", constant_values=values),
            lambda n: np.pad(n, pad_width, mode="constant", constant_values=-1),
            constant,
        )
    return _copy(array, lambda x: np.pad(x, pad_width, mode=mode, **kwargs), None, constant)
