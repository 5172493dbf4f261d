"""The rules of the reductions: Sum, Mean, Var, Std, Max, Min, Prod, CumSum,
CumProd. Their policy at ties of max/min is said in :mod:`gradcheck.ops.reductions`.

The documented functions that apply them are in :mod:`gradcheck.ops.reductions`, which
re-exports every name defined here.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine.operation import Operation

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor


def _normalize_axis(axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple of ints) as a sorted tuple of non-negative
    axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    return tuple(sorted(ax % ndim if ndim else ax for ax in axis))


def _expand_reduced(
    grad: np.ndarray, shape: tuple[int, ...], axis: Any, keepdims: bool
) -> np.ndarray:
    """Broadcast the gradient of a reduction over ``axis`` back to the input's
    ``shape`` (a read-only view)."""
    if not keepdims:
        grad = np.expand_dims(grad, _normalize_axis(axis, len(shape)))
    return np.broadcast_to(grad, shape)


def _reduced_last(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``x`` with the ``axes`` moved to the end and merged into one: shape
    ``(*kept, K)``, so a rule along "the reduced elements" is a rule along axis -1."""
    kept = tuple(i for i in range(x.ndim) if i not in axes)
    moved = np.transpose(x, kept + axes)
    return moved.reshape((*moved.shape[: len(kept)], -1))


def _from_reduced_last(y: np.ndarray, shape: tuple[int, ...], axes: tuple[int, ...]) -> np.ndarray:
    """Undo :func:`_reduced_last` for an array of the same size as the input."""
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    order = kept + axes
    y = y.reshape(tuple(shape[i] for i in order))
    return np.transpose(y, np.argsort(order))


class Sum(Operation):
    def __call__(self, a: Tensor, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        self.variables = (a,)
        self.axis, self.keepdims = axis, keepdims
        return np.asarray(np.sum(a._data, axis=axis, keepdims=keepdims))

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return _expand_reduced(grad, self.variables[0].shape, self.axis, self.keepdims)


class Mean(Operation):
    def __call__(self, a: Tensor, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        self.variables = (a,)
        self.axis, self.keepdims = axis, keepdims
        out = np.asarray(np.mean(a._data, axis=axis, keepdims=keepdims))
        self.count = a._data.size // builtins.max(out.size, 1) if a._data.size else 1
        return out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        grad = _expand_reduced(grad, self.variables[0].shape, self.axis, self.keepdims)
        return grad / self.count


class Var(Operation):
    def __call__(
        self, a: Tensor, axis: Any = None, ddof: int = 0, keepdims: bool = False
    ) -> np.ndarray:
        self.variables = (a,)
        self.axis, self.ddof, self.keepdims = axis, ddof, keepdims
        return np.asarray(np.var(a._data, axis=axis, ddof=ddof, keepdims=keepdims))

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0]._data
        count = x.size // builtins.max(np.size(grad), 1) if x.size else 1
        centered = x - np.mean(x, axis=self.axis, keepdims=True)
        grad = _expand_reduced(grad, x.shape, self.axis, self.keepdims)
        return grad * centered * (2 / (count - self.ddof))


class Std(Var):
    def __call__(
        self, a: Tensor, axis: Any = None, ddof: int = 0, keepdims: bool = False
    ) -> np.ndarray:
        self.out = np.sqrt(super().__call__(a, axis=axis, ddof=ddof, keepdims=keepdims))
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        # d std = d var / (2 std). Where std == 0 (all elements equal: a kink, like
        # |x| at 0) every centered value is 0 as well; the gradient is 0 there.
        out = self.out
        with np.errstate(divide="ignore", invalid="ignore"):
            scaled = np.where(out == 0, 0.0, grad / (2 * np.where(out == 0, 1.0, out)))
        return super().backward_var(scaled.astype(grad.dtype, copy=False), index)


class _Extremum(Operation):
    """max or min over ``axis``; the gradient goes to the first extreme element."""

    reduce: Callable[..., Any] = staticmethod(np.max)

    def __call__(self, a: Tensor, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        self.variables = (a,)
        self.axis, self.keepdims = axis, keepdims
        return np.asarray(self.reduce(a._data, axis=axis, keepdims=keepdims))

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0]._data
        axes = _normalize_axis(self.axis, x.ndim)
        extreme = self.reduce(x, axis=axes, keepdims=True)
        hits = _reduced_last(x == extreme, axes)
        # NOTE: ties share one extreme value; keep only the first hit (C order),
        # the one argmax picks, so that the gradient is not multiplied by the
        # number of tied elements.
        first = hits & (np.cumsum(hits, axis=-1) == 1)
        mask = _from_reduced_last(first, x.shape, axes)
        return _expand_reduced(grad, x.shape, self.axis, self.keepdims) * mask


class Max(_Extremum):
    reduce = staticmethod(np.max)


class Min(_Extremum):
    reduce = staticmethod(np.min)


class Prod(Operation):
    def __call__(self, a: Tensor, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        self.variables = (a,)
        self.axis, self.keepdims = axis, keepdims
        return np.asarray(np.prod(a._data, axis=axis, keepdims=keepdims))

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0]._data
        axes = _normalize_axis(self.axis, x.ndim)
        flat = _reduced_last(x, axes)
        # d prod / d x_i = product of all the other elements: prefix products times
        # suffix products, not prod / x_i, so one zero or several are handled exactly.
        # before[i] = x[:i].prod(), after[i] = x[i+1:].prod() (empty products are 1).
        ones = np.ones((*flat.shape[:-1], 1), dtype=flat.dtype)
        before = np.cumprod(np.concatenate([ones, flat], axis=-1), axis=-1)[..., :-1]
        reverse = np.concatenate([ones, flat[..., ::-1]], axis=-1)
        after = np.cumprod(reverse, axis=-1)[..., :-1][..., ::-1]
        others = _from_reduced_last(before * after, x.shape, axes)
        return _expand_reduced(grad, x.shape, self.axis, self.keepdims) * others


def _reverse_cumsum(x: np.ndarray, axis: int) -> np.ndarray:
    """``out[i] = x[i:].sum()`` along ``axis``."""
    return np.flip(np.cumsum(np.flip(x, axis), axis=axis), axis)


class CumSum(Operation):
    def __call__(self, a: Tensor, axis: int | None = None) -> np.ndarray:
        self.variables = (a,)
        self.axis = axis
        return np.cumsum(a._data, axis=axis)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        shape = self.variables[0].shape
        if self.axis is None:  # cumsum of the flattened input
            return _reverse_cumsum(grad, 0).reshape(shape)
        return _reverse_cumsum(grad, self.axis)


class CumProd(Operation):
    def __call__(self, a: Tensor, axis: int | None = None) -> np.ndarray:
        self.variables = (a,)
        self.axis = axis
        self.out = np.cumprod(a._data, axis=axis)
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x0 = self.variables[0]._data
        axis = 0 if self.axis is None else self.axis
        x = x0.ravel() if self.axis is None else x0
        out = self.out
        # d out_j / d x_i = prod_{k <= j, k != i} x_k for j >= i. Without zeros:
        # dx_i = sum_{j >= i} g_j out_j / x_i. Zeros need care (NOTE: never divide by
        # them): before the first zero along the axis that formula holds; after it,
        # every product includes that zero, so the gradient is 0; at the first zero
        # itself, it is the same sum over the cumprod with that zero replaced by 1.
        is_zero = x == 0
        zeros_so_far = np.cumsum(is_zero, axis=axis)
        first_zero = is_zero & (zeros_so_far == 1)
        grad_out = grad * out
        # The division is exact to rounding only while the products it undoes are
        # normal numbers: a product that underflowed (or went subnormal, or overflowed)
        # before the first zero has lost what the division would restore (at x =
        # [2.2e-311] it gave grad * (1 + 2e-13); at [5e-324], 1 for any grad). There
        # the gradient comes from a recurrence with no division instead.
        tiny = np.finfo(grad_out.dtype).smallest_normal if grad_out.dtype.kind == "f" else 0
        with np.errstate(invalid="ignore"):
            lost = (zeros_so_far == 0) & (
                (np.abs(out) < tiny)
                | ~np.isfinite(out)
                | ~np.isfinite(grad_out)
                | ((grad != 0) & (np.abs(grad_out) < tiny))
            )
        if lost.any() and np.isfinite(x).all() and np.isfinite(grad).all():
            return _cumprod_gradient_by_recurrence(x, grad, out, axis).reshape(x0.shape)
        safe_x = np.where(is_zero, 1, x)
        dx = np.where(is_zero, 0, _reverse_cumsum(grad_out, axis) / safe_x)
        if first_zero.any():
            skipped = np.cumprod(np.where(first_zero, 1, x), axis=axis)
            dx = np.where(first_zero, _reverse_cumsum(grad * skipped, axis), dx)
        return dx.reshape(x0.shape)


def _cumprod_gradient_by_recurrence(
    x: np.ndarray, grad: np.ndarray, out: np.ndarray, axis: int
) -> np.ndarray:
    """The gradient of ``cumprod(x, axis)`` without dividing by anything.

    dx_i = out_{i-1} · t_i with t_i = sum_{j >= i} grad_j · x_{i+1} ··· x_j, which is
    t_i = grad_i + x_{i+1} · t_{i+1} from the end of the axis (Horner's scheme). Exact
    to rounding for zeros, underflow and overflow alike; one step per element of the
    axis, so it serves only where the division formula would not.
    """
    xs, gs, outs = (np.moveaxis(a, axis, 0) for a in (x, grad, out))
    t = np.empty(np.broadcast_shapes(xs.shape, gs.shape), dtype=np.result_type(xs, gs))
    t[-1] = gs[-1]
    for i in range(xs.shape[0] - 2, -1, -1):
        t[i] = gs[i] + xs[i + 1] * t[i + 1]
    t[1:] *= outs[:-1]
    return np.moveaxis(t, 0, axis)


def _reduction_kwargs(axis: Any, keepdims: bool) -> dict[str, Any]:
    return {"axis": axis, "keepdims": keepdims}
