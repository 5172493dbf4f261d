"""`Tensor`, the array that remembers how it was computed, and `execute_op`.

Below the documented functions of :mod:`gradcheck.ops` (they import this module) and
above the op rules of :mod:`gradcheck.ops._rules`, which the operators and methods
apply: no import cycle (tests/test_architecture.py).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from gradcheck.engine import graph as _graph
from gradcheck.engine._utils import lock_management as _lm
from gradcheck.engine._utils import overrides as _overrides
from gradcheck.engine._utils import views as _views
from gradcheck.engine.operation import Operation, is_invalid_gradient

# The rules the operators and methods apply (below this module: they import nothing
# of it); the documented functions of gradcheck.ops, which call execute_op, sit above.
from gradcheck.engine.ops._rules import arithmetic as _arithmetic
from gradcheck.engine.ops._rules import indexing as _indexing
from gradcheck.engine.ops._rules import linalg as _linalg
from gradcheck.engine.ops._rules import misc as _misc
from gradcheck.engine.ops._rules import reductions as _reductions
from gradcheck.engine.ops._rules import shape as _shape
from gradcheck.engine.ops._rules.reductions import _reduction_kwargs
from gradcheck.errors import DisconnectedView, InvalidBackprop, InvalidBackwardGradient

__all__ = ["Tensor", "tensor", "asarray", "astensor", "execute_op"]

_no_autodiff_depth = _graph.no_autodiff_depth

#: The dtypes whose tensors are always constant (no gradient): integers and bools.
CONSTANT_ONLY_DTYPES = (np.integer, np.bool_)
_SEQUENCE = _graph.SEQUENCE
_UFUNCS = _overrides.UFUNCS


class Tensor(_graph.Node):
    """An array that records the operations applied to it, for reverse-mode autodiff.

    Parameters
    ----------
    x : array_like
        The data. A ``Tensor`` contributes its data.
    dtype : data-type, optional
        Cast the data to this type.
    constant : bool, optional
        A constant never receives a gradient. Defaults to False for floating-point
        data and True for everything else; integer and boolean tensors are always
        constant (``constant=False`` for them raises ``ValueError``). The default
        depends on the dtype alone, also when ``x`` is a ``Tensor`` (as in MyGrad;
        :func:`astensor` keeps a tensor's own ``constant``).
    copy : bool, default True
        Copy the data. With ``copy=False`` the tensor may share memory with ``x``.
    ndmin : int, default 0
        The least number of dimensions of the data (leading 1s are added), as in
        :func:`numpy.array`.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([1.0, 2.0])
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    array([2., 4.])
    """

    # The graph state (gradcheck._utils.views.STATE, what an in-place write's
    # placeholder copies) and the view relations.
    __slots__ = ("__weakref__", *_views.STATE, "_views")
    # `ndarray <op> Tensor` now dispatches through `__array_ufunc__`; the priority is
    # kept for array-likes that still consult it.
    __array_priority__ = 15.0

    def __init__(
        self,
        x: Any,
        *,
        dtype: Any = None,
        constant: bool | None = None,
        copy: bool = True,
        ndmin: int = 0,
        _creator: Operation | None = None,
    ) -> None:
        if constant is not None and type(constant) is not bool:
            raise TypeError(f"`constant` must be a bool or None, got {constant!r}")
        if isinstance(x, Tensor):
            x = x.data if not copy else x._data  # (shared: handed out)
        data = np.array(x, dtype=dtype, copy=True if copy else None, ndmin=ndmin)
        kind = data.dtype.kind
        if kind not in "biuf" and (kind != "c" or not _no_autodiff_depth()):
            # (complex data only under no_autodiff, where no graph is built: as MyGrad)
            raise TypeError(
                f"Tensor data must be real numeric; got an array of dtype {data.dtype} "
                f"from {type(x).__name__}"
            )
        if kind != "f":
            if constant is False:
                raise ValueError(
                    f"a tensor of dtype {data.dtype} must be constant: only "
                    f"floating-point tensors can have gradients (pass float data or "
                    f"dtype=float)"
                )
            constant = True
        self._data: np.ndarray = data
        # the caller holds the array (see gradcheck._utils.lock_management)
        self._exposed: bool = not copy and isinstance(x, np.ndarray)
        self._locks: _lm._Locks | None = None
        self._grad: np.ndarray | None = None
        self._shared: bool = False  # see `grad`
        # (MyGrad's internal parameter: the op that produced the data)
        self._creator: Operation | None = _creator
        self._constant: bool = bool(constant)
        self._ops: int = 0
        self._scalar_only: bool = False
        self._seq: int = 0  # creation order of op outputs; 0 for leaves
        # a view's base, its views, its writes (see gradcheck._utils.views); None for
        # a tensor in no view relation
        self._views: _views.ViewState | None = None

    # -- attributes ---------------------------------------------------------------
    @property
    def data(self) -> np.ndarray:
        """The tensor's array (NumPy's ``ndarray``).

        While memory guarding is on (the default) and a graph needs this array, it
        is read-only: writing it would corrupt that graph's gradients. It becomes
        writeable again once the graph is cleared (``backward``, ``clear_graph``) or
        garbage-collected; see :func:`gradcheck.turn_memory_guarding_off`.
        """
        if not self._exposed:
            self._exposed = True
            # (an op output made while guarding was off counts as exposed already:
            # whether it is guarded was decided when it was made; a leaf is
            # guarded when guarding is on now)
            if self._creator is not None or (self._ops and _lm.MEM_GUARD):
                _lock_in_graph(self)
        return self._data

    @data.setter
    def data(self, value: np.ndarray) -> None:
        self._data = value
        self._exposed = True

    @property
    def constant(self) -> bool:
        """A constant receives no gradient; backprop does not pass through it."""
        return self._constant

    @property
    def base(self) -> Tensor | None:
        """The tensor whose memory this tensor's data is a view of (as NumPy's
        ``ndarray.base``: ``x[...].base is x``, ``x[...][...].base is x``), or None.

        A view made from a Python number or list has no base (no tensor the user
        holds owns its memory). A view stays one after its graph is cleared, until it
        enters a new op.

        Examples
        --------
        >>> import gradcheck as mg
        >>> x = mg.arange(4.0)
        >>> x[1:].base is x, x[1:][::2].base is x, (x + 1).base
        (True, True, None)
        """
        vs = self._views
        return None if vs is None else vs.base

    @property
    def _view_children(self) -> list[Tensor]:
        """The tensors made from this one by a view op, while their graph lasts."""
        return _views.children(self)

    def _replay_op(self, *input_vars: Any) -> Tensor:
        """The view op that made this tensor, applied again to ``input_vars`` (with
        the same arguments); :class:`~gradcheck.errors.DisconnectedView` when this
        tensor has no such op (any more)."""
        return _replay_op(self, input_vars)

    @property
    def creator(self) -> Operation | None:
        """The op that produced this tensor, or None for a leaf (or after the graph
        was cleared)."""
        return self._creator

    @property
    def shape(self) -> tuple[int, ...]:
        """The tensor's shape. Setting it reshapes the tensor in place (a graph op, as
        MyGrad does): views made from it before stay views of it."""
        return self._data.shape

    @shape.setter
    def shape(self, newshape: Any) -> None:
        _reshape_in_place(self, newshape)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def T(self) -> Tensor:
        """The transposed tensor (a graph op)."""
        return _execute(_shape.Transpose, (self,), (), {"axes": None}, None)

    def copy(self, *, constant: bool | None = None) -> Tensor:
        """A new tensor with a copy of this one's data and gradient, in no graph;
        ``constant`` defaults to this tensor's."""
        out = Tensor(self._data, constant=self._constant if constant is None else constant)
        grad = self._grad
        if grad is not None and not out._constant:
            out._grad = np.array(grad)
        return out

    def astype(
        self,
        dtype: Any,
        casting: str = "unsafe",
        copy: bool = True,
        *,
        constant: bool | None = None,
    ) -> Tensor:
        """This tensor's data cast to ``dtype``, as a new tensor in no graph and with
        no gradient (``casting`` as in :meth:`numpy.ndarray.astype`). With
        ``copy=False``, the tensor itself when nothing would change."""
        data = self._data.astype(dtype, casting=casting, copy=copy)  # type: ignore[call-overload]  # (casting: a str)
        if data is self._data and not copy and (constant is None or constant is self._constant):
            return self
        if constant is None and data.dtype.kind == "f":
            constant = self._constant
        return Tensor(data, constant=constant, copy=data is self._data)

    def argmax(self, axis: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """The indices of the maximum values (an array: not differentiable)."""
        return np.argmax(self._data, axis=axis, out=out)  # type: ignore[return-value]

    def argmin(self, axis: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """The indices of the minimum values (an array: not differentiable)."""
        return np.argmin(self._data, axis=axis, out=out)  # type: ignore[return-value]

    def any(
        self, axis: Any = None, out: np.ndarray | None = None, keepdims: bool = False
    ) -> np.ndarray:
        """Whether any element is true (an array: not differentiable)."""
        return np.any(self._data, axis=axis, out=out, keepdims=keepdims)

    @classmethod
    def _op(
        cls,
        Op: type[Operation],
        *input_vars: Any,
        op_args: Sequence[Any] | None = None,
        op_kwargs: dict[str, Any] | None = None,
        constant: bool | None = None,
        out: Any = None,
    ) -> Tensor:
        """MyGrad's name for :func:`execute_op` (``Tensor._op(Op, *inputs, ...)``).
        With ``out=`` a tensor, the result is written into it in place (as
        ``out[...] = result``), and ``out`` is returned."""
        if isinstance(out, tuple) and len(out) == 1:
            (out,) = out
        if out is not None and not isinstance(out, Tensor):
            raise TypeError(f"`out` must be a tensor, got {type(out).__name__}")
        result = execute_op(
            Op, *input_vars, op_args=op_args or (), op_kwargs=op_kwargs, constant=constant
        )
        if out is None:
            return result
        assign_in_place(out, Ellipsis, result)
        return out

    def item(self) -> Any:
        """The single element of a size-1 tensor, as a Python scalar."""
        return self._data.item()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy:
            return np.array(self.data, dtype=dtype, copy=True)
        return np.asarray(self.data, dtype=dtype)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, item: Any) -> bool:
        """``item in tensor``, as for the tensor's array."""
        return self._data.__contains__(_data(item))

    def __iter__(self) -> Iterator[Tensor]:
        return (self[i] for i in range(len(self)))

    def __float__(self) -> float:
        if self._data.size > 1:
            raise TypeError("only a tensor of size 1 converts to a Python scalar")
        return float(self._data.item())

    def __int__(self) -> int:
        if self._data.size > 1:
            raise TypeError("only a tensor of size 1 converts to a Python scalar")
        return int(self._data.item())

    def __index__(self) -> int:
        """The tensor as an index (``[1, 2][mg.tensor(0)]``), as its array allows:
        an integer tensor of one element."""
        return self._data.__index__()

    def __bool__(self) -> bool:
        return bool(self._data)

    def __repr__(self) -> str:
        # np's repr indents continuation lines for "array("; re-indent for "Tensor(".
        return repr(self._data).replace("array(", "Tensor(", 1).replace("\n", "\n ")

    # -- gradients ----------------------------------------------------------------
    @property
    def grad(self) -> np.ndarray | None:
        """The gradient from the last backprop through this tensor, or None.

        An array of its own: it shares memory with no other tensor's gradient.
        (Inside the engine, a gradient that a built-in op hands on unchanged, as
        ``add`` and ``sum`` do, is not copied but shared and marked; the copy is made
        here, on first read, so that a gradient nobody reads costs nothing.)
        """
        grad = self._grad
        if self._views is not None:  # a view's gradient is a view of its base's
            return _grad_of_view(self, self._views)
        if self._shared:
            self._shared = False
            if grad is not None:
                grad = self._grad = np.array(grad)  # writeable and contiguous
        return grad

    @grad.setter
    def grad(self, value: np.ndarray | None) -> None:
        self._grad = value
        self._shared = False

    def null_grad(self) -> Tensor:
        """Set ``.grad`` to None; returns the tensor."""
        _views.null_grad(self)
        return self

    def null_gradients(self, clear_graph: bool = True) -> None:
        """Deprecated (as in MyGrad, with a ``FutureWarning``): set ``.grad`` to None
        for this tensor and every tensor upstream of it, and with ``clear_graph``
        clear the graph too. Backprop clears the graph, and using a tensor in a new op
        nulls its gradient; :meth:`null_grad` nulls one tensor's."""
        import warnings

        warnings.warn(
            "`tensor.null_gradients()` is deprecated: a tensor's gradient is nulled when "
            "it is used in a new graph; `tensor.null_grad()` nulls one tensor's.",
            FutureWarning,
            stacklevel=2,
        )
        stack, seen = [self], set()
        while stack:
            tensor = stack.pop()
            if id(tensor) in seen:
                continue
            seen.add(id(tensor))
            tensor.grad = None
            if tensor._creator is not None:
                stack.extend(tensor._creator.variables)
        if clear_graph:
            _graph.clear_graph(self, _left_graph)

    def clear_graph(self) -> None:
        """Remove this tensor, and every tensor upstream of it, from the graph.

        The creators are dropped, and backprop through an op that was built on any
        of these tensors raises :class:`InvalidBackprop` from then on.
        """
        _graph.clear_graph(self, _left_graph)

    def backward(self, grad: Any = None) -> None:
        """Compute the gradient of this tensor with respect to every tensor it was
        computed from, and store it in their ``.grad``.

        Parameters
        ----------
        grad : array_like, optional
            The gradient of some final quantity with respect to this tensor. By
            default, ones of this tensor's shape (1.0 for a scalar), which makes each
            ``x.grad`` the derivative of ``self.sum()`` with respect to ``x``. A
            ``grad`` that broadcasts to this tensor's shape is broadcast, and cast
            to this tensor's dtype.

        Every gradient stored has its tensor's dtype (as in MyGrad and torch): a
        float32 tensor that met float64 arrays gets a float32 ``.grad``.

        Afterwards the graph is cleared (see :meth:`clear_graph`); the gradients stay.
        A constant tensor computes no gradient (as in MyGrad): its graph is cleared.
        Under :data:`~gradcheck.no_autodiff` backward does nothing (as in MyGrad).

        Raises
        ------
        InvalidBackwardGradient
            ``grad`` is not a real number or an array-like of them, or does not
            broadcast to this tensor's shape (an :class:`InvalidGradient`, and a
            ``TypeError`` and ``ValueError`` as in MyGrad).
        InvalidBackprop
            No ``grad`` was given, this tensor is not a scalar, and an op in its graph
            only supports backprop from a scalar; or the graph was already cleared.

        Examples
        --------
        >>> import gradcheck as mg
        >>> x = mg.Tensor(2.0)
        >>> y = mg.Tensor(3.0)
        >>> w = x * y
        >>> f = 2 * w
        >>> f.backward()
        >>> f.grad, w.grad, y.grad, x.grad
        (array(1.), array(2.), array(4.), array(6.))
        """
        if _no_autodiff_depth():
            return  # (no graph is tracked: nothing to do, as in MyGrad)
        if self._constant:
            _graph.clear_graph(self, _left_graph)
            return
        if grad is not None:
            grad = grad._data if isinstance(grad, Tensor) else grad
            if not isinstance(grad, np.ndarray) and isinstance(grad, (list, tuple)):
                grad = _array_like_gradient(grad)  # (an array-like: as in MyGrad)
            if is_invalid_gradient(grad):
                raise InvalidBackwardGradient(
                    "An invalid gradient-value was passed to "
                    f"\n\t`{type(self).__name__}.backward(<gradient>)`"
                    "\nGradients are expected to be real-valued scalars or "
                    f"numpy arrays, got a gradient of type: {type(grad)}"
                )
            # A copy: the caller's array must not become (and later be changed as)
            # this tensor's gradient; in this tensor's dtype, as every gradient is.
            grad = np.array(grad, dtype=self._data.dtype)
            if grad.shape != self._data.shape:
                try:
                    grad = np.broadcast_to(grad, self._data.shape).copy()
                except ValueError:
                    raise InvalidBackwardGradient(
                        f"`Tensor.backward(grad)` got a gradient of shape {grad.shape} "
                        f"for a tensor of shape {self._data.shape}; pass a gradient that "
                        f"broadcasts to the tensor's shape"
                    ) from None
            self.grad = grad
        else:
            if self._data.ndim > 0 and self._scalar_only:
                raise InvalidBackprop(
                    "Backpropagation must be invoked from a "
                    "scalar-tensor (a 0D tensor) for this computational "
                    "graph."
                )
            dtype = float if np.issubdtype(self._data.dtype, np.signedinteger) else self._data.dtype
            self.grad = np.ones(self._data.shape, dtype=dtype)
        if self._creator is not None:
            _graph.backpropagate(self, _left_graph)
        elif self._views is not None:
            _left_graph([(self, None)])
        self._ops = 0
        self._locks = None

    # -- operators ----------------------------------------------------------------
    # The operators and the methods apply the op rules (gradcheck.ops._rules) with
    # execute_op, as the documented functions of gradcheck.ops do: those sit above
    # this module, which they import.
    def __add__(self, other: Any) -> Tensor:
        return _execute(_arithmetic.Add, (self, other), (), None, None)

    def __radd__(self, other: Any) -> Tensor:
        return _execute(_arithmetic.Add, (other, self), (), None, None)

    def __sub__(self, other: Any) -> Tensor:
        return _execute(_arithmetic.Subtract, (self, other), (), None, None)

    def __rsub__(self, other: Any) -> Tensor:
        return _execute(_arithmetic.Subtract, (other, self), (), None, None)

    def __mul__(self, other: Any) -> Tensor:
        return _execute(_arithmetic.Multiply, (self, other), (), None, None)

    def __rmul__(self, other: Any) -> Tensor:
        return _execute(_arithmetic.Multiply, (other, self), (), None, None)

    def __truediv__(self, other: Any) -> Tensor:
        return _execute(_arithmetic.Divide, (self, other), (), None, None)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _execute(_arithmetic.Divide, (other, self), (), None, None)

    def __pow__(self, other: Any) -> Tensor:
        # x ** 1 and x ** 2 (a scalar exponent) are Positive and Square, as in MyGrad:
        # the same values and derivatives as Power's, without a power.
        kind = type(other)
        if kind is int or kind is float or (kind is np.ndarray and other.ndim == 0):
            if other == 1 or other == 2:
                return _special_power(self, other)
        return _execute(_arithmetic.Power, (self, other), (), None, None)

    def __rpow__(self, other: Any) -> Tensor:
        return _execute(_arithmetic.Power, (other, self), (), None, None)

    # In-place arithmetic, as NumPy's on arrays: `x += y` writes x (and every view of
    # its memory) and keeps the name bound to the same tensor; the graph keeps x's
    # previous value for the ops that read it (see gradcheck._utils.views).
    def __iadd__(self, other: Any) -> Tensor:
        _augment(self, _arithmetic.Add, other, "add")
        return self

    def __isub__(self, other: Any) -> Tensor:
        _augment(self, _arithmetic.Subtract, other, "subtract")
        return self

    def __imul__(self, other: Any) -> Tensor:
        _augment(self, _arithmetic.Multiply, other, "multiply")
        return self

    def __itruediv__(self, other: Any) -> Tensor:
        _augment(self, _arithmetic.Divide, other, "divide")
        return self

    def __ipow__(self, other: Any) -> Tensor:
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
        return _execute(_arithmetic.Negative, (self,), (), None, None)

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
    return x._data if isinstance(x, Tensor) else x


def _special_power(x: Tensor, p: Any) -> Tensor:
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


def _array_like_gradient(grad: list | tuple) -> Any:
    """A list or tuple given to ``backward`` as an array, or itself when it is not
    one NumPy can make (ragged; then it is reported as the invalid gradient it is)."""
    try:
        return np.asarray(grad)
    except (TypeError, ValueError):
        return grad


def _floor_divide(a: Any, b: Any) -> np.ndarray:
    """``a // b``: an array, as in MyGrad (floor division has no gradient), and only
    for constants: a tensor that takes a gradient raises ValueError."""
    if any(isinstance(t, Tensor) and not t._constant for t in (a, b)):
        raise ValueError(
            "`//` (floor division) has no derivative; it applies to constant tensors "
            "only (use tensor.data // ..., or a constant tensor)"
        )
    return np.floor_divide(_data(a), _data(b))


def _lock_in_graph(tensor: Tensor) -> None:
    """Lock the array of ``tensor``, which is in a graph, as it is first handed out
    (memory guarding): the tensor holds the lock until its part of the graph is
    cleared, or it is garbage-collected."""
    locks = tensor._locks
    if locks is None:
        tensor._locks = _lm._Locks([tensor._data])
    else:
        locks.add(tensor._data)


def tensor(
    x: Any,
    dtype: Any = None,
    *,
    constant: bool | None = None,
    copy: bool = True,
    ndmin: int = 0,
) -> Tensor:
    """Create a tensor from ``x`` (a copy by default); see :class:`Tensor`.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.tensor([1, 2, 3]).constant
    True

    With ``copy=False``, a tensor that already has the dtype and ``constant`` asked
    for is returned itself (as MyGrad does; with leading axes added, as a view of it,
    for a larger ``ndmin``).
    """
    if (
        not copy
        and isinstance(x, Tensor)
        and (constant is None or x._constant is constant)
        and (dtype is None or x._data.dtype == np.dtype(dtype))
    ):
        if ndmin > x.ndim:
            return x[(None,) * (ndmin - x.ndim)]
        return x
    return Tensor(x, dtype=dtype, constant=constant, copy=copy, ndmin=ndmin)


def asarray(a: Any, dtype: Any = None, order: Any = None) -> np.ndarray:
    """``a`` as a NumPy array: a tensor's own array (no copy, when ``dtype`` and
    ``order`` allow), anything else as :func:`numpy.asarray` makes it.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([1.0, 2.0])
    >>> mg.asarray(x) is x.data
    True
    """
    if isinstance(a, Tensor):
        a = a.data  # (handed out: memory guarding locks it while a graph needs it)
    return np.asarray(a, dtype=dtype, order=order)


def astensor(x: Any, dtype: Any = None, *, constant: bool | None = None) -> Tensor:
    """Return ``x`` itself when it is already a tensor of that dtype and constant-ness,
    otherwise a tensor that shares memory with ``x`` where it can. By default a
    constant tensor gives a constant.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([1.0])
    >>> mg.astensor(x) is x
    True
    """
    if (
        isinstance(x, Tensor)
        and (dtype is None or np.dtype(dtype) == x._data.dtype)
        and (constant is None or constant == x._constant)
    ):
        return x
    if constant is None and isinstance(x, Tensor) and x._constant:
        constant = True  # (a constant stays one; a non-constant cast to ints cannot)
    return Tensor(x, dtype=dtype, constant=constant, copy=False)


def _constant(data: np.ndarray, exposed: bool = False) -> Tensor:
    """A constant leaf tensor around ``data`` (no copy, no checks); ``exposed``: the
    caller's code holds ``data`` (memory guarding locks it in a graph)."""
    t = Tensor.__new__(Tensor)
    t._data = data
    t._exposed = exposed
    t._locks = None
    t._grad = None
    t._shared = False
    t._creator = None
    t._constant = True
    t._ops = 0
    t._scalar_only = False
    t._seq = 0
    t._views = None
    return t


def _as_input(x: Any) -> Tensor:
    """An op input that is not a tensor, as a constant tensor."""
    if isinstance(x, Tensor):  # a subclass
        return x
    data = np.asarray(x)
    if data.dtype.kind not in "biufc":
        raise TypeError(
            f"cannot use {type(x).__name__} of dtype {data.dtype} as an op input; "
            f"pass numbers, arrays or tensors"
        )
    return _constant(data, exposed=isinstance(x, np.ndarray))


# Constant leaf tensors around read-only 0-d arrays, for the Python numbers ops meet
# again and again (the 2 in `x * 2`), keyed by (type, value, dtype). Sharing one
# tensor between ops is safe: a constant leaf is never written by the engine (no
# gradient, no creator; clear_graph only zeroes its `_ops`, which stays 0), and its
# data cannot be written. Bounded: cleared when full. Safe under threads: each dict
# read or write is atomic under the GIL, and a tensor found in either dict, or made
# again after another thread cleared them, is an equal read-only constant.
_SCALAR_CACHE: dict[tuple[type, Any, np.dtype], Tensor] = {}
_SCALAR_CACHE_SIZE = 4096
# The float64 part of the cache keyed by the number alone, for the common case of a
# number meeting one float64 tensor (an int and a float that compare equal make the
# same float64 value): filled and cleared with _SCALAR_CACHE.
_FLOAT64_SCALARS: dict[int | float, Tensor] = {}


def _scalar_inputs(input_vars: Sequence[Any], tensors: list[Any]) -> None:
    """Replace the Python ``int``/``float`` inputs (``None`` in ``tensors``) by
    constant tensors of the dtype NumPy would give them (NEP 50: a Python number does
    not promote an array), so that ``float32_tensor * 2.0`` stays float32."""
    common = None
    arrays = [t._data for t in tensors if t is not None]
    if len(arrays) == 1 and arrays[0].dtype.kind == "f":
        common = arrays[0].dtype
    for i, x in enumerate(input_vars):
        if tensors[i] is not None:
            continue
        dtype = common if common is not None else np.result_type(*arrays, x)
        key = (type(x), x, dtype)
        cached = _SCALAR_CACHE.get(key)
        if cached is None:
            data = np.asarray(x, dtype=dtype)
            data.flags.writeable = False
            cached = _constant(data)
            if x != 0:  # 0.0 and -0.0 are equal keys but different values
                if len(_SCALAR_CACHE) >= _SCALAR_CACHE_SIZE:
                    _SCALAR_CACHE.clear()
                    _FLOAT64_SCALARS.clear()
                _SCALAR_CACHE[key] = cached
                if dtype is _FLOAT64:
                    _FLOAT64_SCALARS[x] = cached
        tensors[i] = cached


def _op_inputs(input_vars: Sequence[Any]) -> list[Tensor]:
    """``input_vars`` as tensors: Python numbers become cached constant tensors of
    the dtype NumPy would give them (see :func:`_scalar_inputs`), other non-tensors
    constant tensors around their array."""
    if len(input_vars) == 2:
        # `x * 2.0`, `1 - x`: a float tensor and a Python number, the common case
        a, b = input_vars
        tensor, number = (a, b) if type(a) is Tensor else (b, a)
        if type(tensor) is Tensor and (type(number) is float or type(number) is int):
            # (float64 was looked up already, in execute_op; here it would only miss)
            dtype = tensor._data.dtype
            if dtype is not _FLOAT64 and dtype.kind == "f":
                cached = _SCALAR_CACHE.get((type(number), number, dtype))
                if cached is not None:
                    return [a, cached] if tensor is a else [cached, b]
    tensors: list[Any] = []
    numbers = False
    for x in input_vars:
        if type(x) is Tensor:
            tensors.append(x)
        elif type(x) is float or type(x) is int:
            tensors.append(None)
            numbers = True
        else:
            tensors.append(_as_input(x))
    if numbers:
        _scalar_inputs(input_vars, tensors)
    return tensors


_new_tensor = object.__new__
_FLOAT64 = np.dtype(np.float64)
_ndarray = np.ndarray  # (a global: see gradcheck.operation._ndarray)


def execute_op(
    Op: type[Operation],
    *input_vars: Any,
    op_args: Sequence[Any] = (),
    op_kwargs: dict[str, Any] | None = None,
    constant: bool | None = None,
) -> Tensor:
    """Apply the operation ``Op`` to ``input_vars`` and return its output tensor.

    Inputs that are not tensors become constant tensors. The output is constant when
    ``constant=True``, when every input is constant (unless ``constant=False``), and
    always when its dtype is not floating-point. Outside :data:`no_autodiff`, the
    output records the op as its ``creator``, and using a tensor in a new op resets
    its ``.grad`` to None (gradients belong to one graph, as in MyGrad).

    Parameters
    ----------
    Op : type[Operation]
        The op's class; a fresh instance is made for this call.
    *input_vars : array_like
        The tensors (or arrays, numbers) the op's ``__call__`` takes.
    op_args, op_kwargs
        Further positional and keyword arguments for ``__call__``.
    constant : bool, optional
        Force the output to be (or not be) constant.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.ops.arithmetic import Multiply
    >>> z = mg.execute_op(Multiply, mg.Tensor(2.0), 3.0)
    >>> z, z.constant
    (Tensor(6.), False)
    """
    return _execute(Op, input_vars, op_args, op_kwargs, constant)


def _execute(
    Op: type[Operation],
    input_vars: tuple[Any, ...],
    op_args: Sequence[Any],
    op_kwargs: dict[str, Any] | None,
    constant: bool | None,
) -> Tensor:
    """:func:`execute_op` with the inputs as a tuple and every parameter positional:
    what the operators, the methods and the ufuncs call. (A function with ``*args``
    or keyword-only parameters is never a specialized call in CPython, and fills its
    keyword defaults from a dict: measured with callgrind, ``execute_op``'s signature
    costs ~700 instructions per call more than this one's.)"""
    # This function is the engine's per-op forward path: keep it lean. It is one of the
    # two functions over 60 code lines (issue 24): each helper it called would cost a
    # Python call per op on the path the engine benchmarks measure (chain <= 3x NumPy).
    # The common case, every input already a Tensor, uses `input_vars` as it is.
    tensors: Sequence[Any] = input_vars
    for x in input_vars:
        if type(x) is not Tensor:
            # `x * 2.0` and `1 - x` on a float64 tensor, the commonest case of all,
            # without a call (measured: ~1,300 instructions less per such op)
            if (
                (type(x) is float or type(x) is int)
                and len(input_vars) == 2
                and (cached := _FLOAT64_SCALARS.get(x)) is not None
            ):
                a, b = input_vars
                if x is b:
                    if type(a) is Tensor and a._data.dtype is _FLOAT64:
                        tensors = (a, cached)
                        break
                elif type(b) is Tensor and b._data.dtype is _FLOAT64:
                    tensors = (cached, b)
                    break
            tensors = _op_inputs(input_vars)
            break
    op = Op()
    if op_kwargs:
        out = op(*tensors, *op_args, **op_kwargs)
    elif op_args:
        out = op(*tensors, *op_args)
    else:
        out = op(*tensors)
    if type(out) is not _ndarray:
        out = np.asarray(out)

    result = _new_tensor(Tensor)
    result._data = out
    result._grad = None
    result._shared = False
    result._ops = 0
    result._views = None
    all_constant = True
    if not _no_autodiff_depth():
        result._creator = op
        result._seq = next(_SEQUENCE)
        scalar_only = Op.scalar_only
        exposed = False
        # a view op, and inputs in a view relation: bookkeeping off the common path
        viewed = Op.can_return_view and out.base is not None
        if viewed:
            _views.keep_grads(tensors)
        for t in tensors:
            if t._exposed:
                exposed = True
            if t._views is not None:
                viewed = True
            if not t._constant:
                all_constant = False
                t._ops += 1
                t._grad = None
                if t._scalar_only:
                    scalar_only = True
            elif t._grad is not None:  # (a constant given a .grad by hand: MyGrad nulls it)
                t._grad = None
        result._scalar_only = scalar_only
        if viewed:
            _views.after_op(op, result, tensors, input_vars, op_args, op_kwargs, constant)
        # Memory guarding: lock the inputs' arrays that are out of the engine's hands
        # (see gradcheck._utils.lock_management); an output made while guarding is
        # off counts as handed out, so that it is never locked later on being read.
        if _lm.MEM_GUARD:
            result._exposed = False
            if exposed:
                result._locks = _lm._Locks([t._data for t in tensors if t._exposed])
                if Op.can_return_view and out.base is not None:
                    _lm.note_view(out)  # (read-only as a view of a locked array)
            else:
                result._locks = None
        else:
            result._exposed = True
            result._locks = None
    else:
        result._creator = None
        result._scalar_only = False
        result._seq = 0
        result._exposed = False
        result._locks = None
        for t in tensors:
            if not t._constant:
                all_constant = False
                break
    if constant is None:
        constant = all_constant
    dtype = out.dtype
    # (float64 by identity first: a dtype's `kind` is a new lookup and string)
    result._constant = constant if dtype is _FLOAT64 or dtype.kind == "f" else True
    return result


def __getattr__(name: str) -> Any:
    # MyGrad keeps its NumPy dispatch tables here; ours are gradcheck._utils.overrides'
    # (every op family registered when they are read).
    if name == "implements_numpy_override":
        return _overrides.implements_numpy_override
    if name.startswith("_REGISTERED_"):
        tables = _overrides.registries()
        if name in tables:
            return tables[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- views and in-place writes -----------------------------------------------------------
# What of MyGrad's view semantics builds tensors (see gradcheck._utils.views, which
# keeps the books and builds none): a view op applied again, the placeholders of the
# values before a write, the writes themselves.
def _replay(op: Operation, *inputs: Any) -> Tensor:
    """The view op ``op`` applied again, with its arguments, to ``inputs``."""
    _, args, kwargs, constant = op._replay  # type: ignore[attr-defined]
    return execute_op(type(op), *inputs, op_args=args, op_kwargs=kwargs, constant=constant)


def _replay_on_array(op: Operation, array: np.ndarray) -> np.ndarray:
    """The view op ``op`` applied to a plain array (the parent's input replaced by
    it), outside any graph: the same view of ``array``."""
    index = op._replay[0]  # type: ignore[attr-defined]
    inputs: list[Any] = list(op.variables)
    inputs[index] = _constant(array)
    with _graph.no_autodiff:
        return _replay(op, *inputs)._data


def _replay_op(tensor: Tensor, inputs: Any) -> Tensor:
    """``Tensor._replay_op``: the op that made the view ``tensor``, applied to ``inputs``."""
    op = tensor._creator
    if op is None or not hasattr(op, "_replay"):
        raise DisconnectedView(
            "`Tensor._replay_op(...)` was called on a tensor without a creator (or one "
            "that is not a view)"
        )
    return _replay(op, *inputs)


def _grad_of_view(tensor: Tensor, vs: _views.ViewState) -> np.ndarray | None:
    """``tensor.grad`` for a tensor in a view relation: a view's gradient is the view
    of its base's gradient (``view.grad.base is view.base.grad``)."""
    base = vs.base
    if base is None:
        return _views.own_grad(tensor)
    base_grad = _views.base_grad(base)
    cached = vs.grad
    if cached is not None and base_grad is not None and cached.base is base_grad:
        return cached
    op = tensor._creator
    if base_grad is None or op is None:
        # (the graph that joined this view to its base was cleared)
        return None
    return _view_grad(vs, op)


def _view_grad(vs: _views.ViewState, op: Operation) -> np.ndarray | None:
    parent = op.variables[op._replay[0]]  # type: ignore[attr-defined]
    parent_grad = parent.grad
    vs.grad = None if parent_grad is None else _replay_on_array(op, parent_grad)
    return vs.grad


def _left_graph(left: list[tuple[Tensor, Operation | None]]) -> None:
    """After backprop (or ``clear_graph``): the tensors in a view relation that left
    the graph, each with the op that had made it, oldest first. A view keeps the view
    of its base's final gradient (computed now, while the op is known), and each one
    forgets the views made from it: they are disconnected from it."""
    for tensor, op in left:
        vs = tensor._views
        if vs is None:
            continue
        vs.children = []
        if vs.base is not None and op is not None and hasattr(op, "_replay"):
            if _views.base_grad(vs.base) is not None:
                _view_grad(vs, op)


def _placeholder(tensor: Tensor) -> Tensor:
    """An internal tensor with the state of ``tensor`` (the same array): it stands for
    ``tensor``'s value before a write, in the ops that read that value."""
    p = Tensor.__new__(Tensor)
    for name in _views.STATE:
        setattr(p, name, getattr(tensor, name))
    p._views = None
    p._grad = None
    p._shared = False
    return p


def _unread(p: Tensor) -> bool:
    """True for a placeholder whose values no op will read again: it takes a gradient
    and has no consumers (none made it, or their graph was cleared), so an op that
    still names it raises InvalidBackprop. Its memory is then released."""
    data = p._data
    released = data.ndim > 0 and not any(data.strides)
    return not p._constant and p._ops == 0 and not released


def _dead(p: Tensor) -> Tensor:
    """``p`` without its memory: only its shape and dtype (zeros that take no memory)."""
    dead = _placeholder(p)
    dead._data = np.broadcast_to(np.zeros((), p._data.dtype), p._data.shape)
    dead._creator = None
    dead._locks = None
    return dead


def _record(tensor: Tensor, seq: int, placeholder: Tensor) -> None:
    vs = _views.state_of(tensor)
    if vs.mutations is None:
        vs.mutations = []
    records = vs.mutations
    for i, (m, p) in enumerate(records):
        if _unread(p):
            records[i] = (m, _dead(p))
    records.append((seq, _dead(placeholder) if _unread(placeholder) else placeholder))


def _assign(target: Tensor, index: Any, value: Any) -> None:
    """``target[index] = value`` with MyGrad's semantics (see :mod:`gradcheck._utils.views`)."""
    if _graph.no_autodiff_depth():  # no graph: write the array itself
        target._data[index] = value._data if isinstance(value, Tensor) else value
        return
    _views.disconnect_if_stale(target)
    _views.null_grad(target)
    vs = target._views
    base = vs.base if vs is not None and vs.base is not None else target
    nodes = _views.tree(base)
    if all(t is not target for t, _ in nodes):  # no longer joined to its base
        vs.base = None  # type: ignore[union-attr]
        base, nodes = target, _views.tree(target)
    parents = {id(t): p for t, p in nodes}
    _views.writeable_or_raise(base._data)
    # The path of view ops from the base to the target, and the target's part of a
    # copy of the base's array (the new array of the base and all its views).
    path: list[Operation] = []
    node = target
    while node is not base:
        path.append(node._creator)  # type: ignore[arg-type]
        node = parents[id(node)]  # type: ignore[assignment]
    path.reverse()
    previous = _placeholder(target)
    ops = target._ops
    written = execute_op(
        _indexing.SetItem, previous, value, op_kwargs={"index": index}, constant=target._constant
    )
    # (the placeholders count the consumers of their tensors, this op's included:
    # it reads `value`, which may be in the view tree, as it was before the write)
    previous._ops += target._ops - ops
    placeholders = {id(t): previous if t is target else _placeholder(t) for t, _ in nodes}
    if path:
        new_base = np.array(base._data, copy=True)
        part = new_base
        for op in path:
            part = _replay_on_array(op, part)
        part[...] = written._data
        written._data = part
    seq = next(_graph.SEQUENCE)  # ops made before now read the placeholders
    for t, _ in nodes:
        _record(t, seq, placeholders[id(t)])
    if path:
        functions: list[Callable[[np.ndarray], np.ndarray]] = [
            functools.partial(_replay_on_array, op) for op in path
        ]
        new_state = execute_op(
            _indexing.UnView,
            placeholders[id(base)],
            written,
            op_kwargs={"data": new_base, "path": functions},
            constant=base._constant,
        )
    else:
        new_state = written
    _views.take_state(base, new_state, None)
    for t, parent in nodes[1:]:
        _views.take_state(t, _replay(t._creator, parent), base)  # type: ignore[arg-type]


def _augment(target: Tensor, Op: type[Operation], other: Any, name: str) -> None:
    """``target <op>= other``: ``target[...] = target <op> other``, with NumPy's rule
    for the dtype (the result must cast to ``target``'s dtype, same kind)."""
    value = execute_op(Op, target, other)
    if value._data.dtype != target._data.dtype and not np.can_cast(
        value._data.dtype, target._data.dtype, "same_kind"
    ):
        raise TypeError(
            f"Cannot cast ufunc '{name}' output from {value._data.dtype!r} to "
            f"{target._data.dtype!r} with casting rule 'same_kind'"
        )
    if value._data.shape != target._data.shape:
        raise ValueError(
            f"non-broadcastable output operand with shape {target._data.shape} doesn't "
            f"match the broadcast shape {value._data.shape}"
        )
    _assign(target, Ellipsis, value)


def _reshape_in_place(target: Tensor, newshape: Any) -> None:
    """``target.shape = newshape`` (MyGrad semantics): ``target`` becomes a reshape of
    its previous value, and the views made from it before stay views of it, through a
    reshape back to the old shape."""
    probe = target._data.view()
    probe.shape = newshape  # raises as NumPy does (size, or a copy would be needed)
    if _graph.no_autodiff_depth():
        target._data.shape = probe.shape
        return
    if probe.shape == target._data.shape:
        return
    _views.disconnect_if_stale(target)
    old_shape = target._data.shape
    vs = target._views
    old_base = None if vs is None else vs.base
    nodes = _views.tree(target)
    placeholders = {id(t): _placeholder(t) for t, _ in nodes}
    seq = next(_graph.SEQUENCE)  # ops made before now read the placeholders
    for t, _ in nodes:
        _record(t, seq, placeholders[id(t)])
    previous = placeholders[id(target)]
    previous._views = _views.ViewState(old_base)
    if old_base is not None:
        # the parent's view is now the placeholder, of which the target is a view
        parent = target._creator.variables[target._creator._replay[0]]  # type: ignore[union-attr]
        siblings = _views.state_of(parent)
        siblings.children = [
            ref if ref() is not target else weakref.ref(previous) for ref in siblings.children
        ]
    reshaped = execute_op(_shape.Reshape, previous, op_kwargs={"newshape": probe.shape})
    _views.take_state(target, reshaped, old_base)
    previous._views.children = [weakref.ref(target)]
    _views.state_of(target).children = []
    if len(nodes) == 1:
        return
    base = old_base if old_base is not None else target
    unshaped = execute_op(_shape.Reshape, target, op_kwargs={"newshape": old_shape})
    for t, parent in nodes[1:]:
        if parent is target:
            parent = unshaped
            _views.state_of(unshaped).children.append(weakref.ref(t))
        _views.take_state(t, _replay(t._creator, parent), base)  # type: ignore[arg-type]


def assign_in_place(target: Tensor, index: Any, value: Any) -> None:
    """``target[index] = value`` for ``Tensor.__setitem__`` (MyGrad semantics): the
    write reaches ``target``'s base and every view of it, and the ops that read
    ``target`` (or those views) before still read their previous values; see
    :mod:`gradcheck._utils.views`."""
    _assign(target, _plain_index(index), value)


def _plain_index(index: Any) -> Any:
    """An index with the tensors in it replaced by their data (indices are not
    differentiated)."""
    if isinstance(index, Tensor):
        return index._data
    if isinstance(index, tuple):
        return tuple(p._data if isinstance(p, Tensor) else p for p in index)
    return index
