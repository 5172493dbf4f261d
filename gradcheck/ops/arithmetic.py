"""Arithmetic: add, subtract, multiply, divide, power, negative, positive, reciprocal,
square, and the n-ary add_sequence and multiply_sequence.

Every op of several inputs here broadcasts like NumPy; :class:`BroadcastableOp` sums
each gradient back down to its input's shape, so no rule below repeats that.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.errors import SkipGradient
from gradcheck.operation import BroadcastableOp, spent
from gradcheck.ops._unary import UnaryOp
from gradcheck.tensor_base import Tensor, execute_op

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


class Add(BroadcastableOp):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        return a.data + b.data

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad


class Subtract(BroadcastableOp):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        return a.data - b.data

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad if index == 0 else -grad


class Multiply(BroadcastableOp):
    # grad * data is a new array (or, for x * x, the spent grad written in place)
    returns_new_arrays = True

    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        return a.data * b.data

    def backward_var(
        self, grad: np.ndarray, index: int, graph: Any = None, **kwargs: Any
    ) -> np.ndarray:
        a, b = self.variables
        if a is b:
            # x * x: d/dx = 2x, in one product sent whole through the first input (two
            # products and their sum would cost two new arrays and three passes); into
            # grad itself when it is spent
            if index:
                raise SkipGradient
            product = np.multiply(grad, a.data, out=grad) if spent(grad, graph) else grad * a.data
            product *= 2
            return product
        return grad * (b.data if index == 0 else a.data)


class Divide(BroadcastableOp):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        return a.data / b.data

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a, b = self.variables
        if index == 0:
            return grad / b.data
        return -grad * a.data / b.data**2


class Power(BroadcastableOp):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        self.out = a.data**b.data
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a, b = self.variables
        if index == 0:
            return grad * b.data * _power_minus_one(a.data, b.data)
        # d(a**b)/db = a**b * log(a); where a**b == 0 (a == 0, b > 0) the limit is 0,
        # not 0 * log(0) = nan.
        with np.errstate(divide="ignore", invalid="ignore"):
            dout_db = self.out * np.log(a.data)
        return grad * np.where(self.out == 0, 0.0, dout_db)


# Integer exponents up to this one get the derivative's a**(b-1) from multiplications.
_MAX_MULTIPLIED_EXPONENT = 8


def _power_minus_one(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a ** (b - 1)``, for the derivative of ``a ** b`` with respect to ``a``.

    A constant integer exponent (``x ** 3``, the common case) is done with
    multiplications: NumPy's ``power`` has fast paths only for the exponents 0, ±1,
    2 and 0.5, and calls the C ``pow`` per element otherwise (measured 30x slower
    than a multiply on 1e6 elements). The products differ from ``pow`` by a few ulps,
    far below any gradient tolerance; the dtype is the one ``power`` gives.
    """
    if b.size == 1 and b.dtype.kind in "iuf":
        k = b.item() - 1
        if k == int(k) and 3 <= k <= _MAX_MULTIPLIED_EXPONENT:
            k = int(k)
            result = a * a
            for _ in range(k - 2):
                result *= a
            return result.astype(np.result_type(a, b), copy=False)
    return a ** (b - 1)


class Negative(UnaryOp):
    func = staticmethod(np.negative)
    returns_new_arrays = True

    def backward_var(
        self, grad: np.ndarray, index: int, graph: Any = None, **kwargs: Any
    ) -> np.ndarray:
        return np.negative(grad, out=grad) if spent(grad, graph) else -grad


class Positive(UnaryOp):
    func = staticmethod(np.positive)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad


class Reciprocal(UnaryOp):
    func = staticmethod(np.reciprocal)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return -(out**2)


class Square(UnaryOp):
    func = staticmethod(np.square)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 2 * x


class AddSequence(BroadcastableOp):
    def __call__(self, *tensors: Tensor) -> np.ndarray:
        self.variables = tensors
        out = tensors[0].data + tensors[1].data
        for t in tensors[2:]:
            out = out + t.data
        return out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad


def exclusive_products(factors: list[np.ndarray]) -> list[np.ndarray]:
    """For each ``i``, the product of every factor but the ``i``-th.

    Prefix and suffix products instead of ``total / factors[i]``: exact when factors
    are zero (one zero or several), and no division by zero.
    """
    n = len(factors)
    before: list[Any] = [1.0] * n
    after: list[Any] = [1.0] * n
    for i in range(1, n):
        before[i] = before[i - 1] * factors[i - 1]
        after[n - 1 - i] = after[n - i] * factors[n - i]
    return [b * a for b, a in zip(before, after)]


class MultiplySequence(BroadcastableOp):
    def __call__(self, *tensors: Tensor) -> np.ndarray:
        self.variables = tensors
        out = tensors[0].data * tensors[1].data
        for t in tensors[2:]:
            out = out * t.data
        return out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        if not hasattr(self, "_others"):  # computed once, used for every input
            self._others = exclusive_products([t.data for t in self.variables])
        return grad * self._others[index]


def add(x1: Any, x2: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Add, x1, x2, constant=constant)


def subtract(x1: Any, x2: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Subtract, x1, x2, constant=constant)


def multiply(x1: Any, x2: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Multiply, x1, x2, constant=constant)


def divide(x1: Any, x2: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Divide, x1, x2, constant=constant)


true_divide = divide


def power(x1: Any, x2: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Power, x1, x2, constant=constant)


def negative(x: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Negative, x, constant=constant)


def positive(x: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Positive, x, constant=constant)


def reciprocal(x: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Reciprocal, x, constant=constant)


def square(x: Any, *, constant: bool | None = None) -> Tensor:
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
    return execute_op(Square, x, constant=constant)


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
