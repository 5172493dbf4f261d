"""x·tanh(x) as an ``Operation``, and a twin whose gradient is wrong by a relative 1e-6
at one element: what ``benchmarks/torch_side_by_side.py`` times against
``torch.autograd.gradcheck`` and the cost tests check verify's sensitivity with.

    gradcheck verify examples/xtanh.py:XTanh --shape 40,50
    gradcheck verify examples/xtanh.py:XTanhOneOff --shape 40,50   # fails: element (30, 0)
"""

import numpy as np

from gradcheck import Operation


class XTanh(Operation):
    """x * tanh(x), elementwise."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data * np.tanh(x.data)

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        t = np.tanh(x)
        return grad * (t + x * (1 - t * t))


class XTanhOneOff(XTanh):
    """Wrong by a factor (1 + 1e-6) at flat element 1500 (of 2000 at 40x50)."""

    def backward_var(self, grad, index, **kwargs):
        g = np.array(super().backward_var(grad, index), dtype=np.float64)
        if g.size > 1500:
            g.reshape(-1)[1500] *= 1 + 1e-6
        return g
