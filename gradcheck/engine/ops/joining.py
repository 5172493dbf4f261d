"""Joining arrays: concatenate, stack.

The functions; their rules are in :mod:`gradcheck.ops._rules.joining`, re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gradcheck.engine._utils.overrides import register_family
from gradcheck.engine.operation import Operation  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.ops._rules.joining import (
    Concatenate,
    Stack,
)
from gradcheck.engine.tensor_base import Tensor, execute_op

__all__ = ["concatenate", "stack"]


def concatenate(
    tensors: Sequence[Any],
    axis: int | None = 0,
    *,
    dtype: Any = None,
    constant: bool | None = None,
) -> Tensor:
    """Join a sequence of tensors along an existing axis (of the flattened inputs when
    ``axis`` is None); ``dtype``: the result's, as in :func:`numpy.concatenate` (each
    input's gradient has that input's dtype).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.concatenate([mg.Tensor([1.0]), mg.Tensor([2.0, 3.0])])
    Tensor([1., 2., 3.])
    """
    kwargs = {"axis": axis} if dtype is None else {"axis": axis, "dtype": dtype}
    return execute_op(Concatenate, *tensors, op_kwargs=kwargs, constant=constant)


def stack(
    tensors: Sequence[Any], axis: int = 0, *, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """Join a sequence of tensors of one shape along a new axis; ``dtype``: the
    result's, as in :func:`numpy.stack`.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.stack([mg.Tensor([1.0, 2.0]), mg.Tensor([3.0, 4.0])], axis=1)
    Tensor([[1., 3.],
            [2., 4.]])
    """
    kwargs = {"axis": axis} if dtype is None else {"axis": axis, "dtype": dtype}
    return execute_op(Stack, *tensors, op_kwargs=kwargs, constant=constant)


# NumPy's functions of these names run these on tensors (see gradcheck.interop).
register_family(globals())
