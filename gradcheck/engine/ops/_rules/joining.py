"""The rules of joining arrays: Concatenate, Stack.

The documented functions that apply them are in :mod:`gradcheck.ops.joining`, which
re-exports every name defined here.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine.operation import Operation

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor


class Concatenate(Operation):
    def __call__(self, *tensors: Tensor, axis: int | None = 0, dtype: Any = None) -> np.ndarray:
        self.variables = tensors
        self.axis = axis
        arrays = [t._data for t in tensors]
        out = np.concatenate(arrays, axis=axis, dtype=dtype)
        # Where each input's part of the output starts (along the axis, or in the
        # flattened output): found once here, so that the backward of n inputs takes
        # time linear in n (summing the lengths before each input, per input, took
        # O(n^2): 20,000 inputs 158 s).
        if axis is None:
            lengths = [a.size for a in arrays]
        else:
            self._axis = axis % out.ndim
            lengths = [a.shape[self._axis] for a in arrays]
        self._starts = list(itertools.accumulate(lengths, initial=0))
        return out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        """The input's part of ``grad``: a view (basic slicing), not a copy."""
        start, stop = self._starts[index], self._starts[index + 1]
        if self.axis is None:  # the inputs were flattened first
            return grad[start:stop].reshape(self.variables[index].shape)
        return grad[(slice(None),) * self._axis + (slice(start, stop),)]


class Stack(Operation):
    def __call__(self, *tensors: Tensor, axis: int = 0, dtype: Any = None) -> np.ndarray:
        self.variables = tensors
        self.axis = axis
        return np.stack([t._data for t in tensors], axis=axis, dtype=dtype)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        """The input's slice of ``grad``, a view: ``np.take`` copied, and first made
        the whole ``grad`` contiguous when it was not (a broadcast from ``sum``), so
        the backward of n stacked inputs was O(n^2) (80,000 inputs: 13 s)."""
        axis = self.axis % grad.ndim
        # (the Ellipsis keeps a 0-d result an array, a view, not a NumPy scalar)
        return grad[(slice(None),) * axis + (index, Ellipsis)]
