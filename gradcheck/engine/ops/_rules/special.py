"""The rule of the special functions: LogSumExp.

The documented functions that apply them are in :mod:`gradcheck.ops.special`, which
re-exports every name defined here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine.operation import Operation

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor


def _stable_logsumexp(x: np.ndarray, axis: Any, keepdims: bool) -> np.ndarray:
    """log(sum(exp(x))) over ``axis`` without overflow: shift by the maximum first
    (an infinite maximum is not shifted, so all -inf gives -inf, not nan)."""
    shift = np.max(x, axis=axis, keepdims=True)
    shift = np.where(np.isfinite(shift), shift, 0)
    out = np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True)) + shift
    return out if keepdims else np.squeeze(out, axis=axis)


class LogSumExp(Operation):
    def __call__(self, a: Tensor, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        self.variables = (a,)
        self.axis, self.keepdims = axis, keepdims
        self.kept = _stable_logsumexp(a._data, axis, True)
        return np.asarray(self.kept if keepdims else np.squeeze(self.kept, axis=axis))

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        if not self.keepdims:
            grad = np.expand_dims(
                grad, self.axis if self.axis is not None else tuple(range(self.kept.ndim))
            )
        # d/dx logsumexp(x) = softmax(x) = exp(x - logsumexp(x)), stable as written.
        return grad * np.exp(self.variables[0]._data - self.kept)
