"""Sorting: sort."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.operation import Operation
from gradcheck.tensor_base import Tensor, execute_op

__all__ = ["sort"]


class Sort(Operation):
    def __call__(self, a: Tensor, axis: int | None = -1) -> np.ndarray:
        self.variables = (a,)
        data = a.data.reshape(-1) if axis is None else a.data
        self.axis = -1 if axis is None else axis
        # A stable sort fixes which of several equal elements goes where, and so
        # which one each output position's gradient returns to.
        self.order = np.argsort(data, axis=self.axis, kind="stable")
        return np.take_along_axis(data, self.order, axis=self.axis)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a = self.variables[0]
        out = np.zeros(self.order.shape, dtype=np.result_type(a.dtype, grad.dtype))
        np.put_along_axis(out, self.order, grad, axis=self.axis)
        return out.reshape(a.shape)


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
