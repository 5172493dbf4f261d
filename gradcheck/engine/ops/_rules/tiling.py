"""The rule of tiling, rearranging and padding: CopyElements (tile, repeat, flip,
roll, pad).

Each of these outputs copies of input elements, so one op serves them all: the forward
applies the NumPy function to the data, and applies it again to an array of element
numbers (``0 .. size-1`` in the input's shape), which says, for every output element,
which input element it copies. The backward sums the upstream gradient into the
elements by that map (``numpy.bincount``), so copies used many times accumulate.

The documented functions that apply them are in :mod:`gradcheck.ops.tiling`, which
re-exports every name defined here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine.operation import Operation

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor


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
        return np.asarray(func(a._data))

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a = self.variables[0]
        keep = self.source >= 0
        summed = np.bincount(self.source[keep], weights=grad[keep], minlength=a.size)
        return summed.astype(np.result_type(a.dtype, grad.dtype), copy=False).reshape(a.shape)
