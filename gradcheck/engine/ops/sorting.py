"""Sorting: sort.

The functions; their rules are in :mod:`gradcheck.ops._rules.sorting`, re-exported here.
"""

from __future__ import annotations

from typing import Any

from gradcheck.engine._utils.overrides import register_family
from gradcheck.engine.operation import Operation  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.ops._rules.sorting import (
    Sort,
)
from gradcheck.engine.tensor_base import Tensor, execute_op

__all__ = ["sort"]


def sort(a: Any, axis: int | None = -1, *, constant: bool | None = None) -> Tensor:
    """``a`` sorted along ``axis`` (the flattened array when ``axis`` is None).

    Each output element's gradient returns to the input element it came from. Equal
    elements are a tie (sort is not differentiable there); the policy is that of a
    stable sort: the gradient follows the order the equal elements had in the input.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([3.0, 1.0, 2.0])
    >>> y = mg.sort(x)
    >>> (y * mg.Tensor([1.0, 2.0, 3.0])).sum().backward()
    >>> y, x.grad
    (Tensor([1., 2., 3.]), array([3., 1., 2.]))
    """
    return execute_op(Sort, a, op_kwargs={"axis": axis}, constant=constant)


# NumPy's functions of these names run these on tensors (see gradcheck.interop).
register_family(globals())
