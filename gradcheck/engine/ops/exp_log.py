"""Exponents and logarithms: exp, exp2, expm1, log, log2, log10, log1p, logaddexp,
logaddexp2.

The functions; their rules are in :mod:`gradcheck.ops._rules.exp_log`, re-exported here.
"""

from __future__ import annotations

from typing import Any

from gradcheck.engine._utils.overrides import register_family
from gradcheck.engine.operation import BroadcastableOp  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.ops._rules.exp_log import (  # noqa: F401 (re-exported)
    _LN2,
    _LN10,
    Exp,
    Exp2,
    Expm1,
    Log,
    Log1p,
    Log2,
    Log10,
    LogAddExp,
    LogAddExp2,
)
from gradcheck.engine.ops._rules.unary import UnaryOp  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.tensor_base import Tensor
from gradcheck.engine.ufuncs import ufunc_creator

__all__ = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2"]


@ufunc_creator(Exp)
def exp(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The exponential ``e**x``, elementwise.

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
    >>> mg.exp(mg.Tensor([0.0, 1.0]))
    Tensor([1.        , 2.71828183])
    """


@ufunc_creator(Exp2)
def exp2(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """``2**x``, elementwise.

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
    >>> mg.exp2(mg.Tensor([0.0, 3.0]))
    Tensor([1., 8.])
    """


@ufunc_creator(Expm1)
def expm1(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """``exp(x) - 1``, elementwise, accurate for small ``x``.

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
    >>> mg.expm1(mg.Tensor([0.0]))
    Tensor([0.])
    """


@ufunc_creator(Log)
def log(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The natural logarithm, elementwise (defined for ``x > 0``).

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
    >>> mg.log(mg.Tensor([1.0]))
    Tensor([0.])
    """


@ufunc_creator(Log2)
def log2(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The base-2 logarithm, elementwise (defined for ``x > 0``).

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
    >>> mg.log2(mg.Tensor([8.0]))
    Tensor([3.])
    """


@ufunc_creator(Log10)
def log10(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The base-10 logarithm, elementwise (defined for ``x > 0``).

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
    >>> mg.log10(mg.Tensor([100.0]))
    Tensor([2.])
    """


@ufunc_creator(Log1p)
def log1p(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """``log(1 + x)``, elementwise, accurate for small ``x`` (defined for ``x > -1``).

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
    >>> mg.log1p(mg.Tensor([0.0]))
    Tensor([0.])
    """


@ufunc_creator(LogAddExp)
def logaddexp(
    x1: Any,
    x2: Any,
    out: Any = None,
    *,
    where: Any = True,
    dtype: Any = None,
    constant: bool | None = None,
) -> Tensor:
    """``log(exp(x1) + exp(x2))``, elementwise, without overflow; broadcasts.

    Parameters
    ----------
    x1, x2 : array_like
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([0.0])
    >>> mg.logaddexp(x, 0.0).backward()
    >>> x.grad
    array([0.5])
    """


@ufunc_creator(LogAddExp2)
def logaddexp2(
    x1: Any,
    x2: Any,
    out: Any = None,
    *,
    where: Any = True,
    dtype: Any = None,
    constant: bool | None = None,
) -> Tensor:
    """``log2(2**x1 + 2**x2)``, elementwise, without overflow; broadcasts.

    Parameters
    ----------
    x1, x2 : array_like
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.logaddexp2(mg.Tensor([1.0]), 1.0)
    Tensor([2.])
    """


# NumPy's functions of these names run these on tensors (see gradcheck.interop).
register_family(globals())
