"""Hyperbolic functions: sinh, cosh, tanh, their inverses, and the reciprocal
functions csch, sech, coth with arccsch and arccoth (as in MyGrad).

The functions; their rules are in :mod:`gradcheck.ops._rules.hyperbolic`, re-exported here.
"""

from __future__ import annotations

from typing import Any

from gradcheck.engine._utils.overrides import register_family
from gradcheck.engine.ops._rules.hyperbolic import (  # noqa: F401 (re-exported)
    Arccosh,
    Arccoth,
    Arccsch,
    Arcsinh,
    Arctanh,
    Cosh,
    Coth,
    Csch,
    Sech,
    Sinh,
    Tanh,
    _arccoth,
    _arccsch,
    _coth,
    _csch,
    _sech,
)
from gradcheck.engine.ops._rules.unary import UnaryOp  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.tensor_base import Tensor, execute_op
from gradcheck.engine.ufuncs import ufunc_creator

__all__ = [
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "csch",
    "sech",
    "coth",
    "arccsch",
    "arccoth",
]


@ufunc_creator(Sinh)
def sinh(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The hyperbolic sine, elementwise.

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
    >>> mg.sinh(mg.Tensor([0.0]))
    Tensor([0.])
    """


@ufunc_creator(Cosh)
def cosh(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The hyperbolic cosine, elementwise.

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
    >>> mg.cosh(mg.Tensor([0.0]))
    Tensor([1.])
    """


@ufunc_creator(Tanh)
def tanh(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The hyperbolic tangent, elementwise.

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
    >>> mg.tanh(mg.Tensor([0.0]))
    Tensor([0.])
    """


@ufunc_creator(Arcsinh)
def arcsinh(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The inverse hyperbolic sine, elementwise.

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
    >>> mg.arcsinh(mg.Tensor([0.0]))
    Tensor([0.])
    """


@ufunc_creator(Arccosh)
def arccosh(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The inverse hyperbolic cosine, elementwise (differentiable for ``x > 1``).

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
    >>> mg.arccosh(mg.Tensor([1.0]))
    Tensor([0.])
    """


@ufunc_creator(Arctanh)
def arctanh(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """The inverse hyperbolic tangent, elementwise (defined for ``-1 < x < 1``).

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
    >>> mg.arctanh(mg.Tensor([0.0]))
    Tensor([0.])
    """


def csch(x: Any, *, constant: bool | None = None) -> Tensor:
    """The hyperbolic cosecant ``1 / sinh(x)``, elementwise (``x != 0``).

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
    >>> mg.csch(mg.Tensor([1.0]))
    Tensor([0.85091813])
    """
    return execute_op(Csch, x, constant=constant)


def sech(x: Any, *, constant: bool | None = None) -> Tensor:
    """The hyperbolic secant ``1 / cosh(x)``, elementwise.

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
    >>> mg.sech(mg.Tensor([0.0]))
    Tensor([1.])
    """
    return execute_op(Sech, x, constant=constant)


def coth(x: Any, *, constant: bool | None = None) -> Tensor:
    """The hyperbolic cotangent ``1 / tanh(x)``, elementwise (``x != 0``).

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
    >>> mg.coth(mg.Tensor([1.0]))
    Tensor([1.31303529])
    """
    return execute_op(Coth, x, constant=constant)


def arccsch(x: Any, *, constant: bool | None = None) -> Tensor:
    """The inverse hyperbolic cosecant ``arcsinh(1 / x)``, elementwise (``x != 0``).

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
    >>> mg.arccsch(mg.Tensor([1.0]))
    Tensor([0.88137359])
    """
    return execute_op(Arccsch, x, constant=constant)


def arccoth(x: Any, *, constant: bool | None = None) -> Tensor:
    """The inverse hyperbolic cotangent ``arctanh(1 / x)``, elementwise (defined for
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
    >>> mg.arccoth(mg.Tensor([2.0]))
    Tensor([0.54930614])
    """
    return execute_op(Arccoth, x, constant=constant)


# NumPy's functions of these names run these on tensors (see gradcheck.interop).
register_family(globals())
