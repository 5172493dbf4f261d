"""Miscellaneous elementwise functions: absolute, sqrt, cbrt, maximum, minimum, clip,
where.

Policy at non-differentiable points, the same in every op here and in the max/min
reductions: where two candidates tie, the whole gradient goes to the *first* of them
(the first argument of ``maximum``/``minimum``, the clipped array ``a`` of ``clip``
at a bound). That is a one-sided derivative, hence a valid subgradient, and it keeps
``maximum(t, t)`` and ``clip(t, t, t)`` with gradient 1 with respect to ``t``.
``absolute`` at 0 takes the subgradient 0.

The functions; their rules are in :mod:`gradcheck.ops._rules.misc`, re-exported here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.engine._utils.overrides import register_family
from gradcheck.engine.operation import BroadcastableOp  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.ops._rules.misc import (
    Absolute,
    Cbrt,
    Clip,
    Maximum,
    Minimum,
    Sqrt,
    Where,
    _bounds,
)
from gradcheck.engine.ops._rules.unary import UnaryOp  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.tensor_base import Tensor, execute_op
from gradcheck.engine.ufuncs import ufunc_creator

__all__ = ["sqrt", "cbrt", "absolute", "abs", "maximum", "minimum", "clip", "where"]


@ufunc_creator(Sqrt)
def sqrt(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The non-negative square root, elementwise (differentiable for ``x > 0``).

    Parameters
    ----------
    x : array_like
    constant : bool, optional
        Make the result a constant (see :class:`gradcheck.Tensor`).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.sqrt(mg.Tensor([4.0]))
    Tensor([2.])
    """


@ufunc_creator(Cbrt)
def cbrt(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The real cube root, elementwise (differentiable for ``x != 0``).

    Parameters
    ----------
    x : array_like
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.cbrt(mg.Tensor([-8.0, 27.0]))
    Tensor([-2.,  3.])
    """


@ufunc_creator(Absolute)
def absolute(
    x: Any,
    out: Any = None,
    *,
    where: Any = True,
    dtype: Any = None,
    nan_to_num: bool = True,
    constant: bool | None = None,
) -> Tensor:
    """The absolute value, elementwise.

    Parameters
    ----------
    x : array_like
    nan_to_num : bool, default True
        The gradient at ``x == 0``, where ``|x|`` is not differentiable: 0 (a
        subgradient, as MyGrad) when True, nan when False.
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([-2.0, 0.0, 3.0])
    >>> mg.absolute(x).backward()
    >>> x.grad
    array([-1.,  0.,  1.])
    """


abs = absolute


@ufunc_creator(Maximum)
def maximum(
    x1: Any,
    x2: Any,
    out: Any = None,
    *,
    where: Any = True,
    dtype: Any = None,
    constant: bool | None = None,
) -> Tensor:
    """The elementwise maximum of ``x1`` and ``x2``, with broadcasting.

    Parameters
    ----------
    x1, x2 : array_like
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Notes
    -----
    Ties (``x1 == x2``) are not differentiable; there the whole gradient goes to
    ``x1``, the first argument (a one-sided derivative). MyGrad 2.5 gives 0 to both,
    which is no subgradient: it makes ``maximum(t, t)`` have gradient 0.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x, y = mg.Tensor([1.0, 2.0, 3.0]), mg.Tensor([2.0, 2.0, 2.0])
    >>> mg.maximum(x, y).backward()
    >>> x.grad, y.grad
    (array([0., 1., 1.]), array([1., 0., 0.]))
    """


@ufunc_creator(Minimum)
def minimum(
    x1: Any,
    x2: Any,
    out: Any = None,
    *,
    where: Any = True,
    dtype: Any = None,
    constant: bool | None = None,
) -> Tensor:
    """The elementwise minimum of ``x1`` and ``x2``, with broadcasting.

    Parameters
    ----------
    x1, x2 : array_like
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Notes
    -----
    Ties (``x1 == x2``) are not differentiable; there the whole gradient goes to
    ``x1``, the first argument (MyGrad 2.5 gives 0 to both).

    Examples
    --------
    >>> import gradcheck as mg
    >>> x, y = mg.Tensor([1.0, 2.0, 3.0]), mg.Tensor([2.0, 2.0, 2.0])
    >>> mg.minimum(x, y).backward()
    >>> x.grad, y.grad
    (array([1., 1., 0.]), array([0., 0., 1.]))
    """


def clip(a: Any, a_min: Any, a_max: Any, *, constant: bool | None = None) -> Tensor:
    """Limit the values of ``a`` to ``[a_min, a_max]``, with broadcasting.

    Parameters
    ----------
    a : array_like
    a_min, a_max : array_like or None
        The bounds (None: no bound on that side; both None: nothing is cut, as in
        NumPy 2). Where
        ``a_min > a_max`` the result is ``a_max``, as in NumPy.
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Notes
    -----
    Each element's gradient goes to the input it came from. At a bound
    (``a == a_min`` or ``a == a_max``, not differentiable) it goes to ``a``: the
    gradient of ``a`` is 1 on the closed interval. MyGrad 2.5 gives 0 to all three
    there.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([0.0, 1.0, 1.5, 2.0, 3.0])
    >>> y = mg.clip(x, 1.0, 2.0)
    >>> y.backward()
    >>> y, x.grad
    (Tensor([1. , 1. , 1.5, 2. , 2. ]), array([0., 1., 1., 1., 0.]))
    """
    dtype = a.dtype if isinstance(a, Tensor) else np.asarray(a).dtype
    a_min, a_max = _bounds(dtype, a_min, a_max)
    return execute_op(Clip, a, a_min, a_max, constant=constant)


_NO_VALUE: Any = object()


def where(
    condition: Any, x: Any = _NO_VALUE, y: Any = _NO_VALUE, *, constant: bool | None = None
) -> Any:
    """Elements of ``x`` where ``condition`` is True, of ``y`` elsewhere; broadcasts.

    Parameters
    ----------
    condition : array_like of bool
        Not differentiated (a tensor counts by its data).
    x, y : array_like
        The values to choose from. With neither given, ``where(condition)`` is
        ``numpy.nonzero(condition)`` (a tuple of index arrays, not a tensor).
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> x, y = mg.Tensor([1.0, 2.0]), mg.Tensor([10.0, 20.0])
    >>> z = mg.where([True, False], x, y)
    >>> z.backward()
    >>> z, x.grad, y.grad
    (Tensor([ 1., 20.]), array([1., 0.]), array([0., 1.]))
    """
    cond = np.asarray(condition._data if isinstance(condition, Tensor) else condition, dtype=bool)
    if x is _NO_VALUE and y is _NO_VALUE:
        return np.nonzero(cond)
    if x is _NO_VALUE or y is _NO_VALUE:
        raise ValueError("where: either both or neither of x and y must be given")
    return execute_op(Where, x, y, op_kwargs={"condition": cond}, constant=constant)


# NumPy's functions of these names run these on tensors (see gradcheck.interop).
register_family(globals())
