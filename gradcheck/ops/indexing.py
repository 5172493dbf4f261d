"""Indexing: ``x[index]`` as a graph op."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.operation import Operation
from gradcheck.tensor import Tensor, execute_op

__all__ = ["get_item"]


def _is_basic(index: Any) -> bool:
    """True for NumPy basic indexing (ints, slices, None, Ellipsis): it selects every
    element at most once."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(
        p is None
        or p is Ellipsis
        or (isinstance(p, (slice, int, np.integer)) and not isinstance(p, bool))
        for p in parts
    )


def _plain_index(index: Any) -> Any:
    if isinstance(index, Tensor):
        return index.data
    if isinstance(index, tuple):
        return tuple(p.data if isinstance(p, Tensor) else p for p in index)
    return index


class GetItem(Operation):
    def __call__(self, a: Tensor, index: Any) -> np.ndarray:
        self.variables = (a,)
        self.index = index
        return np.asarray(a.data[index])

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a = self.variables[0].data
        out = np.zeros(a.shape, dtype=np.result_type(a.dtype, grad.dtype))
        if _is_basic(self.index):
            out[self.index] = grad
        else:
            # Advanced indices may select an element twice; each selection adds.
            np.add.at(out, self.index, grad)
        return out


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
    return execute_op(GetItem, a, op_args=(_plain_index(index),), constant=constant)
