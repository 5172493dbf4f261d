"""Reductions: sum, mean, var, std, max/amax, min/amin, prod, and the cumulative
cumsum and cumprod.

``axis`` is None (every axis), an int or a tuple of ints, as in NumPy. Policy at ties
of max/min (not differentiable there): the whole gradient goes to the *first* tied
element in C order over the reduced axes (the element ``argmax`` would pick), the same
rule as :func:`gradcheck.maximum`; a one-sided derivative, hence a valid subgradient.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from gradcheck.operation import Operation
from gradcheck.tensor_base import Tensor, execute_op

__all__ = [
    "sum",
    "mean",
    "var",
    "std",
    "max",
    "amax",
    "min",
    "amin",
    "prod",
    "cumsum",
    "cumprod",
]


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
        return np.asarray(np.sum(a.data, axis=axis, keepdims=keepdims))

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return _expand_reduced(grad, self.variables[0].shape, self.axis, self.keepdims)


class Mean(Operation):
    def __call__(self, a: Tensor, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        self.variables = (a,)
        self.axis, self.keepdims = axis, keepdims
        out = np.asarray(np.mean(a.data, axis=axis, keepdims=keepdims))
        self.count = a.data.size // builtins.max(out.size, 1) if a.data.size else 1
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
        return np.asarray(np.var(a.data, axis=axis, ddof=ddof, keepdims=keepdims))

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0].data
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

    reduce = staticmethod(np.max)

    def __call__(self, a: Tensor, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        self.variables = (a,)
        self.axis, self.keepdims = axis, keepdims
        return np.asarray(self.reduce(a.data, axis=axis, keepdims=keepdims))

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0].data
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
        return np.asarray(np.prod(a.data, axis=axis, keepdims=keepdims))

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0].data
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
        return np.cumsum(a.data, axis=axis)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        shape = self.variables[0].shape
        if self.axis is None:  # cumsum of the flattened input
            return _reverse_cumsum(grad, 0).reshape(shape)
        return _reverse_cumsum(grad, self.axis)


class CumProd(Operation):
    def __call__(self, a: Tensor, axis: int | None = None) -> np.ndarray:
        self.variables = (a,)
        self.axis = axis
        self.out = np.cumprod(a.data, axis=axis)
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x0 = self.variables[0].data
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


def sum(
    x: Any, axis: Any = None, keepdims: bool = False, *, constant: bool | None = None
) -> Tensor:
    """Sum of the elements over ``axis`` (None: all; an int or a tuple of ints).

    Parameters
    ----------
    x : array_like
    axis : None, int or tuple of ints, optional
    keepdims : bool, default False
        Keep the reduced axes, with size 1.
    constant : bool, optional
        Make the result a constant (see :class:`gradcheck.Tensor`).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> mg.sum(x, axis=0)
    Tensor([4., 6.])
    """
    return execute_op(Sum, x, op_kwargs=_reduction_kwargs(axis, keepdims), constant=constant)


def mean(
    x: Any, axis: Any = None, keepdims: bool = False, *, constant: bool | None = None
) -> Tensor:
    """Arithmetic mean of the elements over ``axis`` (None: all; an int or a tuple).

    Parameters
    ----------
    x : array_like
    axis : None, int or tuple of ints, optional
    keepdims : bool, default False
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.mean(mg.Tensor([1.0, 2.0, 6.0]))
    Tensor(3.)
    """
    return execute_op(Mean, x, op_kwargs=_reduction_kwargs(axis, keepdims), constant=constant)


def var(
    x: Any,
    axis: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    constant: bool | None = None,
) -> Tensor:
    """Variance of the elements over ``axis``: ``sum((x - mean)**2) / (N - ddof)``.

    Parameters
    ----------
    x : array_like
    axis : None, int or tuple of ints, optional
    ddof : int, default 0
        "Delta degrees of freedom" (1 for the unbiased sample variance).
    keepdims : bool, default False
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([1.0, 2.0, 3.0])
    >>> mg.var(x, ddof=1)
    Tensor(1.)
    >>> mg.var(x).backward()
    >>> x.grad
    array([-0.66666667,  0.        ,  0.66666667])
    """
    kwargs = {"axis": axis, "ddof": ddof, "keepdims": keepdims}
    return execute_op(Var, x, op_kwargs=kwargs, constant=constant)


def std(
    x: Any,
    axis: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    constant: bool | None = None,
) -> Tensor:
    """Standard deviation of the elements over ``axis``: ``sqrt(var(x, axis, ddof))``.

    Parameters
    ----------
    x : array_like
    axis : None, int or tuple of ints, optional
    ddof : int, default 0
    keepdims : bool, default False
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Notes
    -----
    Where the standard deviation is 0 (all reduced elements equal) it is not
    differentiable; the gradient there is 0 (a subgradient, like ``abs`` at 0).

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([1.0, 3.0])
    >>> mg.std(x).backward()
    >>> x.grad
    array([-0.5,  0.5])
    """
    kwargs = {"axis": axis, "ddof": ddof, "keepdims": keepdims}
    return execute_op(Std, x, op_kwargs=kwargs, constant=constant)


def max(
    x: Any, axis: Any = None, keepdims: bool = False, *, constant: bool | None = None
) -> Tensor:
    """The largest element over ``axis`` (None: all; an int or a tuple of ints).

    Parameters
    ----------
    x : array_like
    axis : None, int or tuple of ints, optional
    keepdims : bool, default False
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Notes
    -----
    Where several elements tie for the maximum (not differentiable), the whole
    gradient goes to the first of them in C order, as MyGrad does.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([1.0, 3.0, 3.0])
    >>> mg.max(x).backward()
    >>> x.grad
    array([0., 1., 0.])
    """
    return execute_op(Max, x, op_kwargs=_reduction_kwargs(axis, keepdims), constant=constant)


amax = max


def min(
    x: Any, axis: Any = None, keepdims: bool = False, *, constant: bool | None = None
) -> Tensor:
    """The smallest element over ``axis`` (None: all; an int or a tuple of ints).

    Parameters
    ----------
    x : array_like
    axis : None, int or tuple of ints, optional
    keepdims : bool, default False
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Notes
    -----
    Where several elements tie for the minimum, the whole gradient goes to the first
    of them in C order, as MyGrad does.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([[2.0, 1.0], [1.0, 5.0]])
    >>> mg.min(x).backward()
    >>> x.grad
    array([[0., 1.],
           [0., 0.]])
    """
    return execute_op(Min, x, op_kwargs=_reduction_kwargs(axis, keepdims), constant=constant)


amin = min


def prod(
    a: Any, axis: Any = None, keepdims: bool = False, *, constant: bool | None = None
) -> Tensor:
    """Product of the elements over ``axis`` (None: all; an int or a tuple of ints).

    Parameters
    ----------
    a : array_like
    axis : None, int or tuple of ints, optional
    keepdims : bool, default False
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Notes
    -----
    The gradient of each element is the product of the others, computed without
    division: exact with one zero (only the zero gets a non-zero gradient) and with
    several (all gradients 0).

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([2.0, 0.0, 5.0])
    >>> mg.prod(x).backward()
    >>> x.grad
    array([ 0., 10.,  0.])
    """
    return execute_op(Prod, a, op_kwargs=_reduction_kwargs(axis, keepdims), constant=constant)


def cumsum(a: Any, axis: int | None = None, *, constant: bool | None = None) -> Tensor:
    """Cumulative sum along ``axis`` (None: over the flattened array).

    Parameters
    ----------
    a : array_like
    axis : int, optional
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([1.0, 2.0, 3.0])
    >>> mg.cumsum(x).backward()
    >>> x.grad
    array([3., 2., 1.])
    """
    return execute_op(CumSum, a, op_kwargs={"axis": axis}, constant=constant)


def cumprod(a: Any, axis: int | None = None, *, constant: bool | None = None) -> Tensor:
    """Cumulative product along ``axis`` (None: over the flattened array).

    Parameters
    ----------
    a : array_like
    axis : int, optional
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Notes
    -----
    The gradient never divides by an element, so it is exact when elements are zero.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([2.0, 0.0, 5.0])
    >>> mg.cumprod(x).backward()
    >>> x.grad
    array([ 1., 12.,  0.])
    """
    return execute_op(CumProd, a, op_kwargs={"axis": axis}, constant=constant)
