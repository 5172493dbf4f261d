"""Third corpus: gradient bugs reported in small NumPy autodiff engines and teaching
code, written as MyGrad ``Operation``s, each beside its fix (``Bug<Name>`` and
``Fix<Name>``). Each comment names the report it follows."""

from __future__ import annotations

import numpy as np
from mygrad.operation_base import Operation

import gradcheck


# 1. Subtraction whose second operand gets +grad instead of -grad
#    (https://github.com/KhawajaAbaid/micrograd_c/issues/1).
def _subtract(negates: bool):
    class Subtract(Operation):
        def __call__(self, a, b):
            self.variables = (a, b)
            return a.data - b.data

        def backward_var(self, grad, index, **kwargs):
            if index == 0:
                return grad
            return -grad if negates else grad

    return gradcheck.describe(broadcast=False)(Subtract)


BugSubtractSecond = _subtract(negates=False)
FixSubtractSecond = _subtract(negates=True)


# 2. A sigmoid whose derivative is written s - (1 - s) instead of s (1 - s)
#    (https://github.com/sausheong/gonn/issues/8).
def _sigmoid(product: bool):
    class Sigmoid(Operation):
        def __call__(self, x):
            self.variables = (x,)
            self.s = 1 / (1 + np.exp(-x.data))
            return self.s

        def backward_var(self, grad, index, **kwargs):
            s = self.s
            return grad * (s * (1 - s) if product else s - (1 - s))

    return Sigmoid


BugSigmoidDerivative = _sigmoid(product=False)
FixSigmoidDerivative = _sigmoid(product=True)


# 3. The mean squared error whose derivative drops the factor 2
#    (https://github.com/ADGEfficiency/teaching-monolith/issues/1).
def _mse(two: bool):
    class MeanSquaredError(Operation):
        def __call__(self, pred, target):
            self.variables = (pred, target)
            return np.mean((pred.data - target.data) ** 2)

        def backward_var(self, grad, index, **kwargs):
            pred, target = self.variables
            d = (2.0 if two else 1.0) * (pred.data - target.data) / pred.data.size
            return grad * (d if index == 0 else -d)

    return gradcheck.describe(broadcast=False)(MeanSquaredError)


BugMseFactorTwo = _mse(two=False)
FixMseFactorTwo = _mse(two=True)


# 4. A linear layer's weight gradient written with the output gradient where the input
#    belongs, a bug of the kind fixed in https://github.com/Atcold/SP19-DL-collaborative-notes/pull/6
#    ("the backprop for linear module w.r.t W is not correct"): x^T g vs g^T x.
def _linear(transposed_ok: bool):
    class Linear(Operation):
        def __call__(self, x, w):
            self.variables = (x, w)
            return x.data @ w.data

        def backward_var(self, grad, index, **kwargs):
            x, w = self.variables
            if index == 0:
                return grad @ w.data.T
            if transposed_ok:
                return x.data.T @ grad
            return (grad.T @ x.data).reshape(w.data.shape)

    return gradcheck.describe(shapes=["n,k", "k,k"])(Linear)


BugLinearWeightOrder = _linear(transposed_ok=False)
FixLinearWeightOrder = _linear(transposed_ok=True)
