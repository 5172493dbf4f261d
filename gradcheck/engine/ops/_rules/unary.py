"""`UnaryOp`: the shape shared by the elementwise functions of one input.

An elementwise op of one tensor is a NumPy function ``func`` and its derivative
``derivative(x, out)``, which reads like a line of a table of derivatives::

    class Sin(UnaryOp):
        func = staticmethod(np.sin)

        def derivative(self, x, out):
            return np.cos(x)

The backward is ``grad * derivative`` for every such op, so it is written once here.
A built-in rule's backprop runs it written out with its storage step
(:meth:`UnaryOp._elementwise_backprop`): the engine's per-op floor on a chain of small
elementwise ops (issue 40 item 5).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from gradcheck.engine import operation as _operation
from gradcheck.engine.operation import (
    _CLEARED_MESSAGE,
    _FLOAT64,
    IN_PLACE_MIN_SIZE,
    Operation,
    _as_gradient,
    _own_copy,
    accumulate,
    in_dtype_of,
    kept_inputs,
    owned,
    spent,
)
from gradcheck.errors import InvalidBackprop, SkipGradient

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor

__all__ = ["UnaryOp"]

_ndarray = np.ndarray  # (a global: see gradcheck.operation._ndarray)


def _product_in_place(grad: np.ndarray, derivative: np.ndarray, graph: Any) -> np.ndarray:
    """``grad * derivative`` of large arrays for :meth:`UnaryOp._elementwise_backprop`,
    into one of them that nothing else needs, as :meth:`UnaryOp.backward_var` does (the
    reference counts are those of that path: this function's ``grad`` stands for
    ``backward_var``'s, and the caller holds ``derivative`` in one local)."""
    if derivative.dtype == grad.dtype and derivative.shape == grad.shape:
        if owned(derivative, refs=1):
            return np.multiply(grad, derivative, out=derivative)
        if spent(grad, graph):
            return np.multiply(grad, derivative, out=grad)
    return grad * derivative


class UnaryOp(Operation):
    """An elementwise op of one tensor: ``out = func(x)``, ``dout/dx = derivative``."""

    func: ClassVar[Callable[..., np.ndarray]]
    #: The NumPy ufunc this op differentiates, when ``func`` is one (``Sin``'s is
    #: ``np.sin``): set per class from ``func``; :class:`gradcheck.ufunc_creator`
    #: makes a ufunc of such an op.
    numpy_ufunc: ClassVar[np.ufunc | None] = None
    # grad * derivative is a new array, or the spent grad written in place
    returns_new_arrays = True
    variables = kept_inputs  # (its input kept in _in_a)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        func = cls.__dict__.get("func")
        if isinstance(func, staticmethod) and isinstance(func.__func__, np.ufunc):
            cls.numpy_ufunc = func.__func__
        # A built-in rule runs copies of its own of UnaryOp's forward and backward:
        # the same code, with inline caches that see one class (``self.variables``,
        # ``self.out``, ``self.derivative``; see operation._own_copy). Shared, they
        # met Sin, then Tanh... on a chain of small ops and ran the generic lookup:
        # ~750 instructions per op (callgrind, the chain of engine_overhead.py). A
        # user's subclass keeps UnaryOp's own methods (or its built-in parent's).
        if cls._pure_grad:
            one_input = cls.__call__ is UnaryOp.__call__  # (variables: (x,))
            if one_input:
                cls.__call__ = _own_copy(UnaryOp.__call__)  # type: ignore[method-assign]
            if cls.backward_var is UnaryOp.backward_var:
                cls.backward_var = _own_copy(UnaryOp.backward_var)  # type: ignore[method-assign]
                if one_input:
                    # backprop runs its backward_var written out (while it is its own)
                    run = _own_copy(UnaryOp._elementwise_backprop)
                    run.__defaults__ = (None, None, cls.backward_var)
                    cls._engine_backprop = run  # type: ignore[method-assign]

    def __call__(self, x: Tensor) -> np.ndarray:
        self._in_a = x
        out = self.out = self.func(x._data)
        return out  # (a local: reading self.out back is a lookup on every op)

    def _elementwise_backprop(
        self,
        grad: np.ndarray,
        graph: Any,
        _reduction: Any = None,
        kwargs: Any = None,
        _rule: Any = None,
    ) -> bool:
        """What backprop runs for a built-in rule (its ``_engine_backprop``, with its own
        ``backward_var`` as ``_rule``): :meth:`backward_var` and the storage step of
        :meth:`Operation.backward` written out for one input, with one test less. The
        gradient ``grad * derivative`` has the input's shape by construction (the
        gradient reaching an op has its output's shape, an elementwise output the input's),
        so the shape test is skipped while no array may have changed shape behind the graph
        (``operation.SHAPES_KEPT``); the rest is the storage step's: a real array, in
        the input's dtype, stored or added. Measured on the chain of engine_overhead.py
        (callgrind): ~2,600 instructions less per elementwise op than the call of
        ``backward_var`` (a keyword and a ``**kwargs`` dict) and the loop of the storage
        step. Where the class's ``backward_var`` is not its own any more (a mutant of
        gradcheck.testing, a patch), or keywords come, the storage step runs as for any op.
        """
        if kwargs or _reduction is not None or type(self).backward_var is not _rule:
            return Operation._engine_backprop(self, grad, graph, _reduction, kwargs)
        var = self._in_a
        if var._constant:
            return False
        if not var._ops:
            raise InvalidBackprop(_CLEARED_MESSAGE)
        data = var._data
        try:
            derivative = self.derivative(data, self.out)
        except SkipGradient:
            return False
        if type(derivative) is _ndarray and derivative.size >= IN_PLACE_MIN_SIZE:
            backed = _product_in_place(grad, derivative, graph)
        else:
            backed = grad * derivative
        # the storage step (see Operation._engine_backprop), one input
        if type(backed) is not _ndarray or (
            (dtype := backed.dtype) is not _FLOAT64 and dtype.kind not in "iuf"
        ):
            backed = _as_gradient(self, 0, backed)
            dtype = backed.dtype
        if not _operation.SHAPES_KEPT and backed.shape != data.shape:
            return Operation._engine_backprop(self, grad, graph)  # (reports the mismatch)
        if dtype is not data.dtype:
            backed = in_dtype_of(var, backed)
        total = var._grad
        if total is None:
            var._grad = backed  # (a new array: never shared with grad)
        elif var._shared or total.size < IN_PLACE_MIN_SIZE:
            total = total + backed
            var._grad = total if type(total) is _ndarray else np.asarray(total)
        else:
            accumulate(var, backed)
            return False
        var._shared = False
        return False

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """d(out)/dx elementwise, given the input ``x`` and the output ``out``."""
        raise NotImplementedError(f"{type(self).__name__} must implement derivative")

    def backward_var(
        self, grad: np.ndarray, index: int, graph: Any = None, **kwargs: Any
    ) -> np.ndarray:
        """``grad * derivative``. A large product goes into an array that nothing else
        needs when there is one, as NumPy does with its temporaries: the derivative
        itself when it is a new array of its own (``cos(x)``), else ``grad`` when it is
        spent (exp's derivative is its output, which the tensor holds)."""
        derivative = self.derivative(self._in_a._data, self.out)
        if (
            type(derivative) is _ndarray
            and derivative.size >= IN_PLACE_MIN_SIZE  # (small: not worth the checks)
            and derivative.dtype == grad.dtype
            and derivative.shape == grad.shape
        ):
            if owned(derivative):
                return np.multiply(grad, derivative, out=derivative)
            if spent(grad, graph):
                return np.multiply(grad, derivative, out=grad)
        return grad * derivative
