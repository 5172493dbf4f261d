"""The rules of arithmetic: Add, Subtract, Multiply, Divide, Power, Negative,
Positive, Reciprocal, Square, AddSequence, MultiplySequence.

Every op of several inputs here broadcasts like NumPy; :class:`BroadcastableOp` sums
each gradient back down to its input's shape, so no rule below repeats that.

The documented functions that apply them are in :mod:`gradcheck.ops.arithmetic`, which
re-exports every name defined here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine.operation import (
    _CLEARED_MESSAGE,
    BroadcastableOp,
    Operation,
    _own_copy,
    kept_inputs,
    spent,
    store_given,
    store_new,
)
from gradcheck.engine.ops._rules.unary import UnaryOp
from gradcheck.errors import InvalidBackprop, SkipGradient

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor


class Add(BroadcastableOp):
    numpy_ufunc = np.add
    variables = kept_inputs  # (its inputs kept in _in_a, _in_b)

    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self._in_a = a
        self._in_b = b
        return a._data + b._data

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad


class Subtract(BroadcastableOp):
    numpy_ufunc = np.subtract
    variables = kept_inputs  # (its inputs kept in _in_a, _in_b)

    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self._in_a = a
        self._in_b = b
        return a._data - b._data

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad if index == 0 else -grad


class Multiply(BroadcastableOp):
    numpy_ufunc = np.multiply
    variables = kept_inputs  # (its inputs kept in _in_a, _in_b)
    # grad * data is a new array (or, for x * x, the spent grad written in place)
    returns_new_arrays = True

    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self._in_a = a
        self._in_b = b
        return a._data * b._data

    def backward_var(
        self, grad: np.ndarray, index: int, graph: Any = None, **kwargs: Any
    ) -> np.ndarray:
        a = self._in_a
        b = self._in_b
        if a is b:
            # x * x: d/dx = 2x, in one product sent whole through the first input (two
            # products and their sum would cost two new arrays and three passes); into
            # grad itself when it is spent
            if index:
                raise SkipGradient
            product = np.multiply(grad, a._data, out=grad) if spent(grad, graph) else grad * a._data
            product *= 2
            return product
        return grad * (b._data if index == 0 else a._data)


def _product_backprop(
    self: Multiply,
    grad: np.ndarray,
    graph: Any,
    _reduction: Any = None,
    kwargs: Any = None,
    _rule: Any = None,
) -> bool:
    """What backprop runs for :class:`Multiply` (its ``_engine_backprop``, with its
    ``backward_var`` as ``_rule``): the rule and the storage step of
    :meth:`Operation.backward` written out for two different inputs, with the same
    results (see ``UnaryOp._elementwise_backprop``): no tuple of inputs, no loop, no
    call of ``backward_var`` with a keyword and a ``**kwargs`` dict. A ``backward_var``
    that is not the class's own any more (a mutant of gradcheck.testing, a patch) and
    keywords run the storage step as for any op."""
    if kwargs or _reduction is not None or type(self).backward_var is not _rule:
        return Operation._engine_backprop(self, grad, graph, _reduction, kwargs)
    a = self._in_a
    b = self._in_b
    if a is b:  # x * x: the rule's one product (into grad when it is spent: the
        # references to grad are those of the loop's call, see operation.spent)
        if not a._constant:
            if not a._ops:
                raise InvalidBackprop(_CLEARED_MESSAGE)
            store_new(self, a, _rule(self, grad, 0, graph), 0)
        return False
    if not a._constant:
        if not a._ops:
            raise InvalidBackprop(_CLEARED_MESSAGE)
        store_new(self, a, grad * b._data, 0)
    if not b._constant:
        if not b._ops:
            raise InvalidBackprop(_CLEARED_MESSAGE)
        store_new(self, b, grad * a._data, 1)
    return False


def _sum_backprop(
    self: Add,
    grad: np.ndarray,
    graph: Any,
    _reduction: Any = None,
    kwargs: Any = None,
    _rule: Any = None,
) -> bool:
    """What backprop runs for :class:`Add`: :func:`_product_backprop`'s counterpart
    (the rule hands ``grad`` itself to both inputs, which may then share it)."""
    a = self._in_a
    b = self._in_b
    if kwargs or _reduction is not None or type(self).backward_var is not _rule:
        return Operation._engine_backprop(self, grad, graph, _reduction, kwargs)
    handed_on = False
    if not a._constant:
        if not a._ops:
            raise InvalidBackprop(_CLEARED_MESSAGE)
        handed_on = store_given(self, a, grad, grad, graph, 0)
    if not b._constant:
        if not b._ops:
            raise InvalidBackprop(_CLEARED_MESSAGE)
        if store_given(self, b, grad, grad, graph, 1):
            handed_on = True
    return handed_on


def _written_out(cls: type[Operation], backprop: Any) -> None:
    """Give the built-in ``cls`` a copy of its own of ``backprop`` (see
    ``operation._own_copy``), which checks that ``cls``'s ``backward_var`` is still the
    one it replaces."""
    run = _own_copy(backprop)
    run.__defaults__ = (None, None, cls.backward_var)
    cls._engine_backprop = run  # type: ignore[method-assign]


_written_out(Multiply, _product_backprop)
_written_out(Add, _sum_backprop)


class Divide(BroadcastableOp):
    numpy_ufunc = np.divide
    variables = kept_inputs  # (its inputs kept in _in_a, _in_b)

    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self._in_a = a
        self._in_b = b
        return a._data / b._data

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a = self._in_a
        b = self._in_b
        if index == 0:
            return grad / b._data
        return -grad * a._data / b._data**2


class Power(BroadcastableOp):
    numpy_ufunc = np.power

    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        self.out = a._data**b._data
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a, b = self.variables
        if index == 0:
            return grad * b._data * _power_minus_one(a._data, b._data)
        # d(a**b)/db = a**b * log(a); where a**b == 0 (a == 0, b > 0) the limit is 0,
        # not 0 * log(0) = nan.
        with np.errstate(divide="ignore", invalid="ignore"):
            dout_db = self.out * np.log(a._data)
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

    def backward_var(
        self, grad: np.ndarray, index: int, graph: Any = None, **kwargs: Any
    ) -> np.ndarray:
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
        out = tensors[0]._data + tensors[1]._data
        for t in tensors[2:]:
            out = out + t._data
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
        out = tensors[0]._data * tensors[1]._data
        for t in tensors[2:]:
            out = out * t._data
        return out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        if not hasattr(self, "_others"):  # computed once, used for every input
            self._others = exclusive_products([t._data for t in self.variables])
        return grad * self._others[index]
