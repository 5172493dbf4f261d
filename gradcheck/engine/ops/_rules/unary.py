"""`UnaryOp`: the shape shared by the elementwise functions of one input.

An elementwise op of one tensor is a NumPy function ``func`` and its derivative
``derivative(x, out)``, which reads like a line of a table of derivatives::

    class Sin(UnaryOp):
        func = staticmethod(np.sin)

        def derivative(self, x, out):
            return np.cos(x)

The backward is ``grad * derivative`` for every such op, so it is written once here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from gradcheck.engine.operation import IN_PLACE_MIN_SIZE, Operation, _own_copy, owned, spent

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor

__all__ = ["UnaryOp"]

_ndarray = np.ndarray  # (a global: see gradcheck.operation._ndarray)


class UnaryOp(Operation):
    """An elementwise op of one tensor: ``out = func(x)``, ``dout/dx = derivative``."""

    func: ClassVar[Callable[..., np.ndarray]]
    #: The NumPy ufunc this op differentiates, when ``func`` is one (``Sin``'s is
    #: ``np.sin``): set per class from ``func``; :class:`gradcheck.ufunc_creator`
    #: makes a ufunc of such an op.
    numpy_ufunc: ClassVar[np.ufunc | None] = None
    # grad * derivative is a new array, or the spent grad written in place
    returns_new_arrays = True

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
            if cls.__call__ is UnaryOp.__call__:
                cls.__call__ = _own_copy(UnaryOp.__call__)  # type: ignore[method-assign]
            if cls.backward_var is UnaryOp.backward_var:
                cls.backward_var = _own_copy(UnaryOp.backward_var)  # type: ignore[method-assign]

    def __call__(self, x: Tensor) -> np.ndarray:
        self.variables = (x,)
        out = self.out = self.func(x._data)
        return out  # (a local: reading self.out back is a lookup on every op)

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
        derivative = self.derivative(self.variables[0]._data, self.out)
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
