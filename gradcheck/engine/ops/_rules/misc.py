"""The rules of the miscellaneous elementwise functions: Sqrt, Cbrt, Absolute, Maximum,
Minimum, Clip, Where. Their policy at ties is said in :mod:`gradcheck.ops.misc`.

The documented functions that apply them are in :mod:`gradcheck.ops.misc`, which
re-exports every name defined here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine.operation import BroadcastableOp
from gradcheck.engine.ops._rules.unary import UnaryOp

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor


class Sqrt(UnaryOp):
    func = staticmethod(np.sqrt)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / (2 * out)


class Cbrt(UnaryOp):
    func = staticmethod(np.cbrt)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / (3 * out**2)


class Absolute(UnaryOp):
    func = staticmethod(np.absolute)

    def __call__(self, x: Tensor, nan_to_num: bool = True) -> np.ndarray:
        self.nan_to_num = nan_to_num
        return super().__call__(x)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        # NOTE: |x| has no derivative at 0. np.sign(0) == 0 picks the subgradient 0;
        # with nan_to_num=False the gradient there is nan instead.
        slope = np.sign(x)
        if not self.nan_to_num:
            slope = np.where(x == 0, np.nan, slope)
        return slope


class Maximum(BroadcastableOp):
    numpy_ufunc = np.maximum

    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        # Ties go to the first argument (see the module docstring).
        self.first = a._data >= b._data
        return np.maximum(a._data, b._data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad * (self.first if index == 0 else ~self.first)


class Minimum(BroadcastableOp):
    numpy_ufunc = np.minimum

    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        self.first = a._data <= b._data
        return np.minimum(a._data, b._data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad * (self.first if index == 0 else ~self.first)


class Clip(BroadcastableOp):
    def __call__(self, a: Tensor, a_min: Tensor, a_max: Tensor) -> np.ndarray:
        self.variables = (a, a_min, a_max)
        x, lo, hi = a._data, a_min._data, a_max._data
        # NumPy's clip is minimum(maximum(a, a_min), a_max). Exactly one input owns
        # each output element: a_max where it cut (also where a_min > a_max), else
        # a_min where a < a_min, else a -- a itself at a bound (the tie policy).
        to_max = np.maximum(x, lo) > hi
        to_min = ~to_max & (x < lo)
        self.owners = (~(to_max | to_min), to_min, to_max)
        return np.clip(x, lo, hi)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad * self.owners[index]


class Where(BroadcastableOp):
    def __call__(self, x: Tensor, y: Tensor, condition: np.ndarray) -> np.ndarray:
        self.variables = (x, y)
        self.condition = condition
        return np.where(condition, x._data, y._data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        mask = self.condition if index == 0 else ~self.condition
        return np.where(mask, grad, 0).astype(grad.dtype, copy=False)


def _bounds(dtype: np.dtype, a_min: Any, a_max: Any) -> tuple[Any, Any]:
    """``clip``'s bounds for an array of ``dtype``: a missing one (None) is a constant
    one that never cuts: infinite (a Python float, which keeps the float dtype of the
    array), or the dtype's extreme for integers. With both None nothing is cut, as
    in NumPy 2."""
    lowest, highest = (-np.inf, np.inf)
    if dtype.kind in "iu":
        lowest, highest = (np.iinfo(dtype).min, np.iinfo(dtype).max)
    return (lowest if a_min is None else a_min, highest if a_max is None else a_max)
