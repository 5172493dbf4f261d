"""Linear algebra: matmul."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.operation import Operation, reduce_broadcast
from gradcheck.tensor import Tensor, execute_op

__all__ = ["matmul"]


class MatMul(Operation):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        return np.matmul(a.data, b.data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a, b = (v.data for v in self.variables)
        if a.ndim == 1 and b.ndim == 1:  # inner product: grad is a scalar
            return grad * (b if index == 0 else a)
        # Promote 1-D operands to matrices the way matmul does, so that one rule
        # covers every case: a (k,) acts as (1, k), b (k,) as (k, 1).
        a2 = a[np.newaxis, :] if a.ndim == 1 else a
        b2 = b[:, np.newaxis] if b.ndim == 1 else b
        if a.ndim == 1:
            grad = grad[..., np.newaxis, :]
        if b.ndim == 1:
            grad = grad[..., np.newaxis]
        if index == 0:
            da = np.matmul(grad, np.swapaxes(b2, -1, -2))
            return reduce_broadcast(da, a2.shape).reshape(a.shape)
        db = np.matmul(np.swapaxes(a2, -1, -2), grad)
        return reduce_broadcast(db, b2.shape).reshape(b.shape)


def matmul(a: Any, b: Any, *, constant: bool | None = None) -> Tensor:
    """Matrix product of ``a`` and ``b``, with NumPy's rules for 1-D operands and for
    broadcasting stacks of matrices.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.matmul(mg.Tensor([[1.0, 2.0]]), mg.Tensor([[3.0], [4.0]]))
    Tensor([[11.]])
    """
    return execute_op(MatMul, a, b, constant=constant)
