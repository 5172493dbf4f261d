"""Trigonometric functions: sin, cos, tan, their inverses, arctan2, sinc, and the
reciprocal functions csc, sec, cot with their inverses (as in MyGrad).

The functions; their rules are in :mod:`gradcheck.ops._rules.trigonometric`, re-exported here.
"""

from __future__ import annotations

from typing import Any

from gradcheck.engine._utils.overrides import register_family
from gradcheck.engine.operation import BroadcastableOp  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.ops._rules.trigonometric import (  # noqa: F401 (re-exported)
    Arccos,
    Arccot,
    Arccsc,
    Arcsec,
    Arcsin,
    Arctan,
    Arctan2,
    Cos,
    Cot,
    Csc,
    Sec,
    Sin,
    Sinc,
    Tan,
    _arccot,
    _arccsc,
    _arcsec,
    _cot,
    _csc,
    _sec,
    _sinc,
)
from gradcheck.engine.ops._rules.unary import UnaryOp  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.tensor_base import Tensor, execute_op
from gradcheck.engine.ufuncs import ufunc_creator

__all__ = [
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "arctan2",
    "sinc",
    "csc",
    "sec",
    "cot",
    "arccsc",
    "arcsec",
    "arccot",
]


@ufunc_creator(Sin)
def sin(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The sine of ``x`` (radians), elementwise.

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
    >>> mg.sin(mg.Tensor([0.0]))
    Tensor([0.])
    """


@ufunc_creator(Cos)
def cos(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The cosine of ``x`` (radians), elementwise.

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
    >>> mg.cos(mg.Tensor([0.0]))
    Tensor([1.])
    """


@ufunc_creator(Tan)
def tan(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The tangent of ``x`` (radians), elementwise.

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
    >>> x = mg.Tensor([0.0])
    >>> mg.tan(x).backward()
    >>> x.grad
    array([1.])
    """


@ufunc_creator(Arcsin)
def arcsin(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The inverse sine, elementwise (differentiable for ``-1 < x < 1``).

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
    >>> mg.arcsin(mg.Tensor([0.0]))
    Tensor([0.])
    """


@ufunc_creator(Arccos)
def arccos(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The inverse cosine, elementwise (differentiable for ``-1 < x < 1``).

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
    >>> mg.arccos(mg.Tensor([1.0]))
    Tensor([0.])
    """


@ufunc_creator(Arctan)
def arctan(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The inverse tangent, elementwise.

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
    >>> mg.arctan(mg.Tensor([0.0]))
    Tensor([0.])
    """


@ufunc_creator(Arctan2)
def arctan2(
    x1: Any,
    x2: Any,
    out: Any = None,
    *,
    where: Any = True,
    dtype: Any = None,
    constant: bool | None = None,
) -> Tensor:
    """The angle of the point ``(x2, x1)``: ``arctan(x1 / x2)`` in the right quadrant;
    broadcasts. Differentiable except at the origin.

    Parameters
    ----------
    x1 : array_like
        The y-coordinates.
    x2 : array_like
        The x-coordinates.
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> y, x = mg.Tensor(1.0), mg.Tensor(1.0)
    >>> mg.arctan2(y, x).backward()
    >>> y.grad, x.grad
    (array(0.5), array(-0.5))
    """


def sinc(x: Any, *, constant: bool | None = None) -> Tensor:
    """The normalized sinc function ``sin(pi x) / (pi x)`` (1 at 0), elementwise.

    Parameters
    ----------
    x : array_like
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Notes
    -----
    At ``x == 0`` the derivative formula is 0/0; the gradient there is its limit, 0.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([0.0, 0.5])
    >>> mg.sinc(x)
    Tensor([1.        , 0.63661977])
    """
    return execute_op(Sinc, x, constant=constant)


def csc(x: Any, *, constant: bool | None = None) -> Tensor:
    """The cosecant ``1 / sin(x)``, elementwise.

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
    >>> import numpy as np
    >>> import gradcheck as mg
    >>> mg.csc(mg.Tensor([np.pi / 2]))
    Tensor([1.])
    """
    return execute_op(Csc, x, constant=constant)


def sec(x: Any, *, constant: bool | None = None) -> Tensor:
    """The secant ``1 / cos(x)``, elementwise.

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
    >>> mg.sec(mg.Tensor([0.0]))
    Tensor([1.])
    """
    return execute_op(Sec, x, constant=constant)


def cot(x: Any, *, constant: bool | None = None) -> Tensor:
    """The cotangent ``1 / tan(x)``, elementwise.

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
    >>> import numpy as np
    >>> import gradcheck as mg
    >>> mg.cot(mg.Tensor([np.pi / 4]))
    Tensor([1.])
    """
    return execute_op(Cot, x, constant=constant)


def arccsc(x: Any, *, constant: bool | None = None) -> Tensor:
    """The inverse cosecant ``arcsin(1 / x)``, elementwise (differentiable for
    ``|x| > 1``).

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
    >>> mg.arccsc(mg.Tensor([2.0]))
    Tensor([0.52359878])
    """
    return execute_op(Arccsc, x, constant=constant)


def arcsec(x: Any, *, constant: bool | None = None) -> Tensor:
    """The inverse secant ``arccos(1 / x)``, elementwise (differentiable for
    ``|x| > 1``).

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
    >>> mg.arcsec(mg.Tensor([2.0]))
    Tensor([1.04719755])
    """
    return execute_op(Arcsec, x, constant=constant)


def arccot(x: Any, *, constant: bool | None = None) -> Tensor:
    """The inverse cotangent ``arctan(1 / x)``, elementwise (as MyGrad: values in
    ``(-pi/2, pi/2]``, so it jumps at ``x = 0``).

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
    >>> mg.arccot(mg.Tensor([1.0]))
    Tensor([0.78539816])
    """
    return execute_op(Arccot, x, constant=constant)


# NumPy's functions of these names run these on tensors (see gradcheck.interop).
register_family(globals())
