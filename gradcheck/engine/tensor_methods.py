"""``Tensor``'s operators and the methods that mirror the documented functions
(``x + y``, ``x[i]``, ``x.sum()``, ``x.reshape(...)``...): :class:`TensorMethods`, a
base of :class:`~gradcheck.engine.tensor_base.Tensor`.

They apply the op rules (:mod:`gradcheck.engine.ops._rules`) with
:mod:`gradcheck.engine.execution`'s ``_execute``, as the documented functions of
:mod:`gradcheck.engine.ops` do; the in-place operators write through
:mod:`gradcheck.engine.tensor_writes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

import numpy as np

from gradcheck.engine._utils import overrides as _overrides
from gradcheck.engine.execution import _execute, _pair, _single, execute_op
from gradcheck.engine.graph import Node
from gradcheck.engine.ops._rules import arithmetic as _arithmetic
from gradcheck.engine.ops._rules import indexing as _indexing
from gradcheck.engine.ops._rules import linalg as _linalg
from gradcheck.engine.ops._rules import misc as _misc
from gradcheck.engine.ops._rules import reductions as _reductions
from gradcheck.engine.ops._rules import shape as _shape
from gradcheck.engine.ops._rules.reductions import _reduction_kwargs
from gradcheck.engine.tensor_writes import _augment, _plain_index, assign_in_place

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor

    _TENSOR = Tensor
else:
    _TENSOR = Node  # a tensor, below the module that defines the class (see graph.Node)

__all__ = ["TensorMethods"]

_UFUNCS = _overrides.UFUNCS


class TensorMethods(Node):
    """The operators and the methods of :class:`~gradcheck.engine.tensor_base.Tensor`
    that apply op rules; ``Tensor`` holds the state they read."""

    __slots__ = ()
    _data: np.ndarray
    _constant: bool

    # -- operators ----------------------------------------------------------------
    # The operators and the methods apply the op rules (gradcheck.ops._rules) with
    # execute_op, as the documented functions of gradcheck.ops do: those sit above
    # this module, which they import.
    def __add__(self, other: Any) -> Tensor:
        return _pair(_arithmetic.Add, self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _pair(_arithmetic.Add, other, self)

    def __sub__(self, other: Any) -> Tensor:
        return _pair(_arithmetic.Subtract, self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _pair(_arithmetic.Subtract, other, self)

    def __mul__(self, other: Any) -> Tensor:
        return _pair(_arithmetic.Multiply, self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _pair(_arithmetic.Multiply, other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _pair(_arithmetic.Divide, self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _pair(_arithmetic.Divide, other, self)

    def __pow__(self, other: Any) -> Tensor:
        # x ** 1 and x ** 2 (a scalar exponent) are Positive and Square, as in MyGrad:
        # the same values and derivatives as Power's, without a power.
        kind = type(other)
        if kind is int or kind is float or (kind is np.ndarray and other.ndim == 0):
            if other == 1 or other == 2:
                return _special_power(self, other)
        return _pair(_arithmetic.Power, self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return _pair(_arithmetic.Power, other, self)

    # In-place arithmetic, as NumPy's on arrays: `x += y` writes x (and every view of
    # its memory) and keeps the name bound to the same tensor; the graph keeps x's
    # previous value for the ops that read it (see gradcheck._utils.views).
    def __iadd__(self, other: Any) -> Self:
        _augment(self, _arithmetic.Add, other, "add")
        return self

    def __isub__(self, other: Any) -> Self:
        _augment(self, _arithmetic.Subtract, other, "subtract")
        return self

    def __imul__(self, other: Any) -> Self:
        _augment(self, _arithmetic.Multiply, other, "multiply")
        return self

    def __itruediv__(self, other: Any) -> Self:
        _augment(self, _arithmetic.Divide, other, "divide")
        return self

    def __ipow__(self, other: Any) -> Self:
        _augment(self, _arithmetic.Power, other, "power")
        return self

    def __floordiv__(self, other: Any) -> np.ndarray:
        return _floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> np.ndarray:
        return _floor_divide(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return _execute(_linalg.MatMul, (self, other), (), None, None)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _execute(_linalg.MatMul, (other, self), (), None, None)

    def __neg__(self) -> Tensor:
        return _single(_arithmetic.Negative, self)

    def __pos__(self) -> Tensor:
        return _execute(_arithmetic.Positive, (self,), (), None, None)

    def __abs__(self) -> Tensor:
        return _execute(_misc.Absolute, (self,), (), {"nan_to_num": True}, None)

    def __getitem__(self, index: Any) -> Tensor:
        return _execute(_indexing.GetItem, (self,), (), {"index": _plain_index(index)}, None)

    def __setitem__(self, index: Any, value: Any) -> None:
        """``x[index] = value`` as a graph op (MyGrad semantics): ``x`` becomes the
        output of :func:`~gradcheck.ops.indexing.set_item` applied to its previous
        value and ``value``, so gradients reach both (``value`` may itself be computed
        from ``x``, as in ``x[0] = x[1]``). Other ops built on ``x`` before the
        assignment can no longer backpropagate to it (they raise InvalidBackprop
        rather than use the new values).

        Examples
        --------
        >>> import gradcheck as mg
        >>> w, y = mg.Tensor([1.0, 2.0, 3.0]), mg.Tensor(5.0)
        >>> x = w * 1
        >>> x[1:] = y
        >>> (x * x).sum().backward()
        >>> x, w.grad, y.grad
        (Tensor([1., 5., 5.]), array([2., 0., 0.]), array(20.))
        """
        assign_in_place(self, index, value)

    # Comparisons are not differentiable: they return plain arrays, as MyGrad's do.
    def __lt__(self, other: Any) -> np.ndarray:
        return self._data < _data(other)

    def __le__(self, other: Any) -> np.ndarray:
        return self._data <= _data(other)

    def __gt__(self, other: Any) -> np.ndarray:
        return self._data > _data(other)

    def __ge__(self, other: Any) -> np.ndarray:
        return self._data >= _data(other)

    def __eq__(self, other: Any) -> np.ndarray:  # type: ignore[override]
        return self._data == _data(other)

    def __ne__(self, other: Any) -> np.ndarray:  # type: ignore[override]
        return self._data != _data(other)

    __hash__ = object.__hash__

    # -- NumPy functions on tensors (see gradcheck.interop) -------------------------
    # (the dispatch tables are gradcheck._utils.overrides', below this module; the op
    # families, above it, fill them)
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method == "__call__" and not kwargs:  # the common case (`array + tensor`)
            function = _UFUNCS.get(ufunc)
            if function is not None:
                return function(*inputs)
        return _overrides.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return _overrides.array_function(func, types, args, kwargs)

    # -- methods mirroring the functions ------------------------------------------
    def sum(
        self, axis: Any = None, keepdims: bool = False, *, constant: bool | None = None
    ) -> Tensor:
        return _execute(_reductions.Sum, (self,), (), _reduction_kwargs(axis, keepdims), constant)

    def mean(
        self, axis: Any = None, keepdims: bool = False, *, constant: bool | None = None
    ) -> Tensor:
        return _execute(_reductions.Mean, (self,), (), _reduction_kwargs(axis, keepdims), constant)

    def var(
        self,
        axis: Any = None,
        ddof: int = 0,
        keepdims: bool = False,
        *,
        constant: bool | None = None,
    ) -> Tensor:
        kwargs = {"axis": axis, "ddof": ddof, "keepdims": keepdims}
        return _execute(_reductions.Var, (self,), (), kwargs, constant)

    def std(
        self,
        axis: Any = None,
        ddof: int = 0,
        keepdims: bool = False,
        *,
        constant: bool | None = None,
    ) -> Tensor:
        kwargs = {"axis": axis, "ddof": ddof, "keepdims": keepdims}
        return _execute(_reductions.Std, (self,), (), kwargs, constant)

    def max(
        self, axis: Any = None, keepdims: bool = False, *, constant: bool | None = None
    ) -> Tensor:
        return _execute(_reductions.Max, (self,), (), _reduction_kwargs(axis, keepdims), constant)

    def min(
        self, axis: Any = None, keepdims: bool = False, *, constant: bool | None = None
    ) -> Tensor:
        return _execute(_reductions.Min, (self,), (), _reduction_kwargs(axis, keepdims), constant)

    def prod(
        self, axis: Any = None, keepdims: bool = False, *, constant: bool | None = None
    ) -> Tensor:
        return _execute(_reductions.Prod, (self,), (), _reduction_kwargs(axis, keepdims), constant)

    def cumsum(self, axis: int | None = None, *, constant: bool | None = None) -> Tensor:
        return _execute(_reductions.CumSum, (self,), (), {"axis": axis}, constant)

    def cumprod(self, axis: int | None = None, *, constant: bool | None = None) -> Tensor:
        return _execute(_reductions.CumProd, (self,), (), {"axis": axis}, constant)

    def clip(self, a_min: Any, a_max: Any, *, constant: bool | None = None) -> Tensor:
        a_min, a_max = _misc._bounds(self._data.dtype, a_min, a_max)
        return execute_op(_misc.Clip, self, a_min, a_max, constant=constant)

    def reshape(self, *newshape: Any, constant: bool | None = None) -> Tensor:
        if not newshape:
            raise TypeError("reshape() takes exactly 1 argument (0 given)")
        if len(newshape) == 1:
            newshape = newshape[0]
        return _execute(_shape.Reshape, (self,), (), {"newshape": newshape}, constant)

    def transpose(self, *axes: Any, constant: bool | None = None) -> Tensor:
        order: Sequence[Any] | None = axes
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            order = axes[0]
        return execute_op(
            _shape.Transpose,
            self,
            op_kwargs={"axes": tuple(order) if order else None},
            constant=constant,
        )

    # -- shape methods (structural ops) ---------------------------------------------
    def flatten(self, *, constant: bool | None = None) -> Tensor:
        return _execute(_shape.Reshape, (self,), (), {"newshape": -1}, constant)

    def ravel(self, *, constant: bool | None = None) -> Tensor:
        return _execute(_shape.Reshape, (self,), (), {"newshape": -1}, constant)

    def squeeze(self, axis: Any = None, *, constant: bool | None = None) -> Tensor:
        newshape = _shape._squeezed(self._data.shape, axis)
        return _execute(_shape.Reshape, (self,), (), {"newshape": newshape}, constant)

    def swapaxes(self, axis1: int, axis2: int, *, constant: bool | None = None) -> Tensor:
        perm = _shape._swapped(self._data.ndim, axis1, axis2)
        return _execute(_shape.Transpose, (self,), (), {"axes": perm}, constant)

    def moveaxis(self, source: Any, destination: Any, *, constant: bool | None = None) -> Tensor:
        perm = _shape._moved(self._data.ndim, source, destination)
        return _execute(_shape.Transpose, (self,), (), {"axes": perm}, constant)


def _data(x: Any) -> Any:
    return x._data if isinstance(x, _TENSOR) else x


def _special_power(x: TensorMethods, p: Any) -> Tensor:
    """``x ** p`` for a scalar ``p`` equal to 1 or 2: Positive or Square, in NumPy's
    result dtype (``int_tensor ** 2.0`` is float64, as ``np.power`` makes it)."""
    Op = _arithmetic.Positive if p == 1 else _arithmetic.Square
    data = x._data
    dtype = np.result_type(data, p)
    if dtype == data.dtype:
        return execute_op(Op, x)
    if x._constant:  # (an integer tensor: the cast input needs no gradient)
        return execute_op(Op, data.astype(dtype))
    return execute_op(_arithmetic.Power, x, p)


def _floor_divide(a: Any, b: Any) -> np.ndarray:
    """``a // b``: an array, as in MyGrad (floor division has no gradient), and only
    for constants: a tensor that takes a gradient raises ValueError."""
    if any(isinstance(t, _TENSOR) and not t._constant for t in (a, b)):
        raise ValueError(
            "`//` (floor division) has no derivative; it applies to constant tensors "
            "only (use tensor.data // ..., or a constant tensor)"
        )
    return np.floor_divide(_data(a), _data(b))
