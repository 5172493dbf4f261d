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

from gradcheck.operation import Operation

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
