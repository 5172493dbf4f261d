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

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from gradcheck.operation import (
    IN_PLACE_MIN_SIZE,
    Operation,
    accumulate,
    in_dtype_of,
    owned,
    spent,
)

if TYPE_CHECKING:
    from gradcheck.tensor_base import Tensor

__all__ = ["UnaryOp"]


class UnaryOp(Operation):
    """An elementwise op of one tensor: ``out = func(x)``, ``dout/dx = derivative``."""

    func: ClassVar[Callable[[np.ndarray], np.ndarray]]

    def __call__(self, x: Tensor) -> np.ndarray:
        self.variables = (x,)
        self.out = self.func(x.data)
        return self.out

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """d(out)/dx elementwise, given the input ``x`` and the output ``out``."""
        raise NotImplementedError(f"{type(self).__name__} must implement derivative")

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad * self.derivative(self.variables[0].data, self.out)

    def backward(
        self,
        grad: np.ndarray,
        *,
        graph: Collection[Operation] | None = None,
        _reduction: Callable[[np.ndarray, tuple[int, ...]], np.ndarray] | None = None,
        **kwargs: Any,
    ) -> bool:
        """:meth:`Operation.backward`, with a short path for the engine's hot case.

        ``grad * derivative`` is a new array, so it can be stored without the checks
        for shared memory, and one input needs no loop. Anything unusual (a subclass
        with its own ``backward_var``, a reduction, keyword arguments, a constant or
        cleared input, a result that is not a float array of the input's shape) takes
        the general path, which validates and reports.
        """
        var = self.variables[0]
        if (
            _reduction is None
            and not kwargs
            and not var._constant
            and var._ops
            and type(self).backward_var is _BACKWARD_VAR  # (not replaced, e.g. by a mutant)
        ):
            data = var.data
            backed = self.derivative(data, self.out)
            shape = data.shape
            if (
                type(backed) is np.ndarray
                and backed.size >= IN_PLACE_MIN_SIZE  # (small: not worth the checks)
                and backed.dtype == grad.dtype
                and backed.shape == grad.shape == shape
            ):
                if owned(backed):
                    np.multiply(grad, backed, out=backed)  # a new array of its own: reused
                elif spent(grad, graph):
                    backed = np.multiply(grad, backed, out=grad)  # (e.g. exp's `out`)
                else:
                    backed = grad * backed
            else:
                backed = grad * backed
            if (
                type(backed) is np.ndarray
                and ((dtype := backed.dtype) is (own := data.dtype) or dtype.kind == "f")
                and backed.shape == shape
            ):
                if dtype is not own:
                    backed = in_dtype_of(var, backed)  # (e.g. a float64 derivative)
                if var._grad is None:
                    var._grad = backed
                    var._shared = False
                else:
                    accumulate(var, backed)
                return False
        return Operation.backward(self, grad, graph=graph, _reduction=_reduction, **kwargs)


# the formula that the short path of UnaryOp.backward computes inline
_BACKWARD_VAR = UnaryOp.backward_var
