"""Arithmetic: add, subtract, multiply, divide, power, negative, positive, reciprocal,
square, and the n-ary add_sequence and multiply_sequence, with broadcasting.

The functions; their rules are in :mod:`gradcheck.ops._rules.arithmetic`, re-exported
here.
"""

from __future__ import annotations

from typing import Any

from gradcheck.engine._utils.overrides import register_family
from gradcheck.engine.operation import BroadcastableOp, Operation  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.ops._rules.arithmetic import (  # noqa: F401 (re-exported)
    _MAX_MULTIPLIED_EXPONENT,
    Add,
    AddSequence,
    Divide,
    Multiply,
    MultiplySequence,
    Negative,
    Positive,
    Power,
    Reciprocal,
    Square,
    Subtract,
    _power_minus_one,
    exclusive_products,
)
from gradcheck.engine.ops._rules.unary import UnaryOp  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.tensor_base import Tensor, execute_op
from gradcheck.engine.ufuncs import ufunc_creator

__all__ = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "true_divide",
    "power",
    "negative",
    "positive",
    "reciprocal",
    "square",
    "add_sequence",
    "multiply_sequence",
]


@ufunc_creator(Add)
def add(
    x1: Any,
    x2: Any,
    out: Any = None,
    *,
    where: Any = True,
    dtype: Any = None,
    constant: bool | None = None,
) -> Tensor:
    """Add ``x1`` and ``x2`` elementwise, with broadcasting.

    Parameters
    ----------
    x1, x2 : array_like
        The addends; they broadcast against each other.
    constant : bool, optional
        Make the result a constant (see :class:`gradcheck.Tensor`).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.add(mg.Tensor([1.0, 2.0]), 3.0)
    Tensor([4., 5.])
    """


@ufunc_creator(Subtract)
def subtract(
    x1: Any,
    x2: Any,
    out: Any = None,
    *,
    where: Any = True,
    dtype: Any = None,
    constant: bool | None = None,
) -> Tensor:
    """Subtract ``x2`` from ``x1`` elementwise, with broadcasting.

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
    >>> mg.subtract(mg.Tensor([1.0, 2.0]), 3.0)
    Tensor([-2., -1.])
    """


@ufunc_creator(Multiply)
def multiply(
    x1: Any,
    x2: Any,
    out: Any = None,
    *,
    where: Any = True,
    dtype: Any = None,
    constant: bool | None = None,
) -> Tensor:
    """Multiply ``x1`` and ``x2`` elementwise, with broadcasting.

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
    >>> mg.multiply(mg.Tensor([1.0, 2.0]), 3.0)
    Tensor([3., 6.])
    """


@ufunc_creator(Divide)
def true_divide(
    x1: Any,
    x2: Any,
    out: Any = None,
    *,
    where: Any = True,
    dtype: Any = None,
    constant: bool | None = None,
) -> Tensor:
    """Divide ``x1`` by ``x2`` elementwise (true division), with broadcasting.

    Parameters
    ----------
    x1, x2 : array_like
        Dividend and divisor; differentiable where ``x2 != 0``.
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.divide(mg.Tensor([1.0, 2.0]), 4.0)
    Tensor([0.25, 0.5 ])
    """


#: ``divide`` is ``true_divide`` (NumPy's ``divide`` is its ``true_divide`` too)
divide = true_divide


@ufunc_creator(Power)
def power(
    x1: Any,
    x2: Any,
    out: Any = None,
    *,
    where: Any = True,
    dtype: Any = None,
    constant: bool | None = None,
) -> Tensor:
    """Raise ``x1`` to the power ``x2`` elementwise, with broadcasting.

    Parameters
    ----------
    x1, x2 : array_like
        Bases and exponents.
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Notes
    -----
    The derivative with respect to ``x2`` is ``x1**x2 * log(x1)``, taken as 0 where
    ``x1**x2`` is 0 (its limit); it is not real for negative ``x1``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([1.0, 2.0])
    >>> y = mg.power(x, 3)
    >>> y.backward()
    >>> x.grad
    array([ 3., 12.])
    """


@ufunc_creator(Negative)
def negative(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """Negate ``x`` elementwise.

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
    >>> mg.negative(mg.Tensor([1.0, -2.0]))
    Tensor([-1.,  2.])
    """


@ufunc_creator(Positive)
def positive(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """``+x`` elementwise: a copy of ``x`` in a new node of the graph.

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
    >>> mg.positive(mg.Tensor([1.0, -2.0]))
    Tensor([ 1., -2.])
    """


@ufunc_creator(Reciprocal)
def reciprocal(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """``1 / x`` elementwise (differentiable where ``x != 0``).

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
    >>> mg.reciprocal(mg.Tensor([2.0, -4.0]))
    Tensor([ 0.5 , -0.25])
    """


@ufunc_creator(Square)
def square(
    x: Any, out: Any = None, *, where: Any = True, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """Square ``x`` elementwise.

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
    >>> mg.square(mg.Tensor([1.0, -2.0]))
    Tensor([1., 4.])
    """


def _at_least_two(name: str, variables: tuple[Any, ...]) -> None:
    if len(variables) < 2:
        raise ValueError(f"`{name}` requires at least two inputs, got {len(variables)}")


def add_sequence(*variables: Any, constant: bool | None = None) -> Tensor:
    """``x1 + x2 + ... + xn`` as one node of the graph (cheaper than a chain of adds).

    Parameters
    ----------
    *variables : array_like
        Two or more addends; they broadcast against each other.
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.add_sequence(mg.Tensor([1.0]), mg.Tensor([1.0, 2.0]), 3.0)
    Tensor([5., 6.])
    """
    _at_least_two("add_sequence", variables)
    return execute_op(AddSequence, *variables, constant=constant)


def multiply_sequence(*variables: Any, constant: bool | None = None) -> Tensor:
    """``x1 * x2 * ... * xn`` as one node of the graph.

    The gradient of each factor is the product of all the others, computed with
    prefix and suffix products, so it is exact when some factors are zero.

    Parameters
    ----------
    *variables : array_like
        Two or more factors; they broadcast against each other.
    constant : bool, optional
        Make the result a constant.

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> x, y, z = mg.Tensor(2.0), mg.Tensor(0.0), mg.Tensor(5.0)
    >>> mg.multiply_sequence(x, y, z).backward()
    >>> x.grad, y.grad, z.grad
    (array(0.), array(10.), array(0.))
    """
    _at_least_two("multiply_sequence", variables)
    return execute_op(MultiplySequence, *variables, constant=constant)


# NumPy's functions of these names run these on tensors (see gradcheck.interop).
register_family(globals())
