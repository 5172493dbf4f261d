"""Trigonometric functions: sin, cos, tan, their inverses, arctan2, sinc, and the
reciprocal functions csc, sec, cot with their inverses (as in MyGrad)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.operation import BroadcastableOp
from gradcheck.ops._unary import UnaryOp
from gradcheck.tensor_base import Tensor, execute_op

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


class Sin(UnaryOp):
    func = staticmethod(np.sin)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return np.cos(x)


class Cos(UnaryOp):
    func = staticmethod(np.cos)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -np.sin(x)


class Tan(UnaryOp):
    func = staticmethod(np.tan)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 + out**2


class Arcsin(UnaryOp):
    func = staticmethod(np.arcsin)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / np.sqrt(1 - x**2)


class Arccos(UnaryOp):
    func = staticmethod(np.arccos)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -1 / np.sqrt(1 - x**2)


class Arctan(UnaryOp):
    func = staticmethod(np.arctan)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / (1 + x**2)


def _sinc(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.sinc(x))


class Sinc(UnaryOp):
    func = staticmethod(_sinc)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        # d/dx sin(pi x)/(pi x) = (cos(pi x) - sinc(x)) / x. NOTE: near 0 the two terms
        # cancel catastrophically (at x = 1e-9 both round to 1.0 and the quotient is 0
        # instead of -pi^2 x / 3), so for |pi x| < 0.1 the Taylor series is used:
        # pi * (-y/3 + y^3/30 - y^5/840 + y^7/45360), y = pi x, accurate to ~1e-16 there.
        y = np.pi * x
        small = np.abs(y) < 0.1
        y2 = y * y
        series = np.pi * y * (-1 / 3 + y2 * (1 / 30 + y2 * (-1 / 840 + y2 / 45360)))
        safe = np.where(small, 1.0, x)
        return np.where(small, series, (np.cos(y) - out) / safe).astype(out.dtype, copy=False)


def _csc(x: np.ndarray) -> np.ndarray:
    return 1 / np.sin(x)


def _sec(x: np.ndarray) -> np.ndarray:
    return 1 / np.cos(x)


def _cot(x: np.ndarray) -> np.ndarray:
    return 1 / np.tan(x)


def _arccsc(x: np.ndarray) -> np.ndarray:
    return np.arcsin(1 / x)


def _arcsec(x: np.ndarray) -> np.ndarray:
    return np.arccos(1 / x)


def _arccot(x: np.ndarray) -> np.ndarray:
    return np.arctan(1 / x)


class Csc(UnaryOp):
    func = staticmethod(_csc)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -out / np.tan(x)  # -csc(x) cot(x)


class Sec(UnaryOp):
    func = staticmethod(_sec)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return out * np.tan(x)


class Cot(UnaryOp):
    func = staticmethod(_cot)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -(1 + out**2)  # -csc(x)**2


class Arccsc(UnaryOp):
    func = staticmethod(_arccsc)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -1 / (np.abs(x) * np.sqrt(x**2 - 1))


class Arcsec(UnaryOp):
    func = staticmethod(_arcsec)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 / (np.abs(x) * np.sqrt(x**2 - 1))


class Arccot(UnaryOp):
    func = staticmethod(_arccot)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -1 / (1 + x**2)


class Arctan2(BroadcastableOp):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        return np.arctan2(a.data, b.data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        y, x = (t.data for t in self.variables)
        return grad * (x if index == 0 else -y) / (x**2 + y**2)


def sin(x: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Sin, x, constant=constant)


def cos(x: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Cos, x, constant=constant)


def tan(x: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Tan, x, constant=constant)


def arcsin(x: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Arcsin, x, constant=constant)


def arccos(x: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Arccos, x, constant=constant)


def arctan(x: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Arctan, x, constant=constant)


def arctan2(x1: Any, x2: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Arctan2, x1, x2, constant=constant)


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
