"""Reductions: sum, mean, var, std, max/amax, min/amin, prod, and the cumulative
cumsum and cumprod.

``axis`` is None (every axis), an int or a tuple of ints, as in NumPy. Policy at ties
of max/min (not differentiable there): the whole gradient goes to the *first* tied
element in C order over the reduced axes (the element ``argmax`` would pick), the same
rule as :func:`gradcheck.maximum`; a one-sided derivative, hence a valid subgradient.

The functions; their rules are in :mod:`gradcheck.ops._rules.reductions`, re-exported here.
"""

from __future__ import annotations

from typing import Any

from gradcheck.engine._utils.overrides import register_family
from gradcheck.engine.operation import Operation  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.ops._rules.reductions import (  # noqa: F401 (re-exported)
    CumProd,
    CumSum,
    Max,
    Mean,
    Min,
    Prod,
    Std,
    Sum,
    Var,
    _cumprod_gradient_by_recurrence,
    _expand_reduced,
    _Extremum,
    _from_reduced_last,
    _normalize_axis,
    _reduced_last,
    _reduction_kwargs,
    _reverse_cumsum,
)
from gradcheck.engine.tensor_base import Tensor, execute_op

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


# NumPy's functions of these names run these on tensors (see gradcheck.interop).
register_family(globals())
