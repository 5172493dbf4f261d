"""Tiling, rearranging and padding: tile, repeat, flip, roll, pad.

The functions; their one rule (CopyElements: each output element is a copy of an
input element) is in :mod:`gradcheck.ops._rules.tiling`, re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradcheck.engine._utils.overrides import register_family
from gradcheck.engine.operation import Operation  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.ops._rules.tiling import (
    CopyElements,
)
from gradcheck.engine.tensor_base import Tensor, execute_op

__all__ = ["flip", "pad", "repeat", "roll", "tile"]


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
    # (mode is one of _COPYING_MODES, checked above; np.pad's overloads take literals)
    return _copy(
        array,
        lambda x: np.pad(x, pad_width, mode=mode, **kwargs),  # type: ignore[call-overload]
        None,
        constant,
    )


# NumPy's functions of these names run these on tensors (see gradcheck.interop).
register_family(globals())
