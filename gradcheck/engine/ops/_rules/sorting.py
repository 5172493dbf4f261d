"""The rule of sorting: Sort.

The documented functions that apply them are in :mod:`gradcheck.ops.sorting`, which
re-exports every name defined here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine.operation import Operation

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor


class Sort(Operation):
    def __call__(self, a: Tensor, axis: int | None = -1) -> np.ndarray:
        self.variables = (a,)
        data = a._data.reshape(-1) if axis is None else a._data
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
