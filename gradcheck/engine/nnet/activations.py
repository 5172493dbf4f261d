"""Activation functions: elu, glu, hard_tanh, leaky_relu, logsoftmax, relu, selu,
sigmoid, soft_sign, softmax, tanh.

Policy at kinks (where the one-sided derivatives differ), stated in each docstring:
relu and leaky_relu take the left derivative at 0 (0 and ``slope``), elu and selu the
right one (1 and ``scale``), hard_tanh gives 0 at its bounds.
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np

from gradcheck.engine.operation import Operation
from gradcheck.engine.ops.hyperbolic import tanh
from gradcheck.engine.ops.indexing import get_item
from gradcheck.engine.tensor_base import Tensor, execute_op

__all__ = [
    "elu",
    "glu",
    "hard_tanh",
    "leaky_relu",
    "logsoftmax",
    "relu",
    "selu",
    "sigmoid",
    "soft_sign",
    "softmax",
    "tanh",
]


def _real_parameter(name: str, value: Any) -> float:
    """A scalar parameter (``alpha``, ``slope``, a bound) as a Python number: a
    one-element array or tensor gives its item; anything but a real number raises
    TypeError (as in MyGrad). The parameter is not differentiated."""
    if isinstance(value, (np.ndarray, Tensor)):
        value = value.item()
    if not isinstance(value, Real):
        raise TypeError(f"`{name}` must be a real-valued scalar, got {value!r} ({type(value)})")
    return value  # type: ignore[return-value]


class ReLU(Operation):
    def __call__(self, x: Tensor) -> np.ndarray:
        self.variables = (x,)
        return np.maximum(x._data, 0)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        # NOTE: `> 0`, not `>= 0`: the documented derivative at 0 is 0.
        return grad * (self.variables[0]._data > 0)


def relu(x: Any, *, constant: bool | None = None) -> Tensor:
    """``max(x, 0)``, elementwise. Kink policy: the derivative at 0 is 0.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.activations import relu
    >>> relu(mg.Tensor([-1.0, 0.0, 2.0]))
    Tensor([0., 0., 2.])
    """
    return execute_op(ReLU, x, constant=constant)


class LeakyReLU(Operation):
    def __call__(self, x: Tensor, *, slope: float) -> np.ndarray:
        self.variables = (x,)
        self.slope = slope
        return np.where(x._data > 0, x._data, slope * x._data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return np.where(self.variables[0]._data > 0, grad, self.slope * grad)


def leaky_relu(x: Any, slope: float, *, constant: bool | None = None) -> Tensor:
    """``x`` where ``x > 0``, else ``slope * x``. Kink policy: the derivative at 0 is
    ``slope`` (the left derivative, as for :func:`relu`). ``slope`` is a real scalar
    (a one-element array or tensor gives its item; it is not differentiated); anything
    else raises TypeError.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.activations import leaky_relu
    >>> leaky_relu(mg.Tensor([-2.0, 3.0]), 0.1)
    Tensor([-0.2,  3. ])
    """
    slope = _real_parameter("slope", slope)
    return execute_op(LeakyReLU, x, op_kwargs={"slope": slope}, constant=constant)


class ELU(Operation):
    def __call__(self, x: Tensor, *, alpha: float) -> np.ndarray:
        self.variables = (x,)
        self.alpha = alpha
        # expm1 of the negative part only: exp of a large positive x would overflow.
        self.neg = alpha * np.expm1(np.minimum(x._data, 0))
        return np.where(x._data >= 0, x._data, self.neg)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad * np.where(self.variables[0]._data >= 0, 1.0, self.neg + self.alpha)


def elu(x: Any, alpha: float, *, constant: bool | None = None) -> Tensor:
    """Exponential linear unit: ``x`` for ``x >= 0``, ``alpha * (exp(x) - 1)`` below.
    Kink policy (for ``alpha != 1``): the derivative at 0 is 1. ``alpha`` is a real
    scalar (a one-element array or tensor gives its item; it is not differentiated);
    anything else raises TypeError.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.activations import elu
    >>> elu(mg.Tensor([0.0, 2.0]), alpha=0.5)
    Tensor([0., 2.])
    """
    alpha = _real_parameter("alpha", alpha)
    return execute_op(ELU, x, op_kwargs={"alpha": alpha}, constant=constant)


# (MyGrad's names, in gradcheck.nnet.activations.selu there)
_ALPHA = 1.6732632423543772848170429916717
_SCALE = 1.0507009873554804934193349852946


def selu(x: Any, *, constant: bool | None = None) -> Tensor:
    """Scaled exponential linear unit, ``scale * elu(x, alpha)`` with the constants
    of Klambauer et al. (2017). Kink policy: the derivative at 0 is ``scale``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.activations import selu
    >>> selu(mg.Tensor([1.0]))
    Tensor([1.05070099])
    """
    return execute_op(ELU, x, op_kwargs={"alpha": _ALPHA}, constant=constant) * _SCALE


class Sigmoid(Operation):
    def __call__(self, x: Tensor) -> np.ndarray:
        self.variables = (x,)
        # 1 / (1 + exp(-x)) overflows (harmlessly, but noisily) for very negative x;
        # the tanh form is exact and bounded everywhere.
        self.out = 0.5 * (1 + np.tanh(0.5 * x._data))
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad * self.out * (1 - self.out)


def sigmoid(x: Any, *, constant: bool | None = None) -> Tensor:
    """The logistic function ``1 / (1 + exp(-x))``, elementwise.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.activations import sigmoid
    >>> sigmoid(mg.Tensor([0.0]))
    Tensor([0.5])
    """
    return execute_op(Sigmoid, x, constant=constant)


class SoftSign(Operation):
    def __call__(self, x: Tensor) -> np.ndarray:
        self.variables = (x,)
        return x._data / (1 + np.abs(x._data))

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad / (1 + np.abs(self.variables[0]._data)) ** 2


def soft_sign(x: Any, *, constant: bool | None = None) -> Tensor:
    """``x / (1 + |x|)``, elementwise (differentiable everywhere, derivative 1 at 0).

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.activations import soft_sign
    >>> soft_sign(mg.Tensor([1.0, -3.0]))
    Tensor([ 0.5 , -0.75])
    """
    return execute_op(SoftSign, x, constant=constant)


class HardTanh(Operation):
    def __call__(self, x: Tensor, *, lower_bound: float, upper_bound: float) -> np.ndarray:
        self.variables = (x,)
        self.bounds = (lower_bound, upper_bound)
        # min, then max (as MyGrad): for lower_bound > upper_bound, lower_bound
        # everywhere (np.clip would give upper_bound)
        return np.maximum(np.minimum(x._data, upper_bound), lower_bound)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0]._data
        lower, upper = self.bounds
        return grad * ((x > lower) & (x < upper))


def hard_tanh(
    x: Any, *, lower_bound: float = -1, upper_bound: float = 1, constant: bool | None = None
) -> Tensor:
    """``x`` clipped to ``[lower_bound, upper_bound]``, that is
    ``maximum(minimum(x, upper_bound), lower_bound)``. Kink policy: the derivative is
    0 at the bounds (1 strictly inside). The bounds are real scalars (a one-element
    array or tensor gives its item); anything else raises TypeError.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.activations import hard_tanh
    >>> hard_tanh(mg.Tensor([-3.0, 0.5, 3.0]))
    Tensor([-1. ,  0.5,  1. ])
    """
    lower_bound = _real_parameter("lower_bound", lower_bound)
    upper_bound = _real_parameter("upper_bound", upper_bound)
    return execute_op(
        HardTanh,
        x,
        op_kwargs={"lower_bound": lower_bound, "upper_bound": upper_bound},
        constant=constant,
    )


def _shifted(x: np.ndarray, axis: Any) -> np.ndarray:
    """``x`` (integers and bools as float64, as in MyGrad) minus its maximum over
    ``axis``: exp of it cannot overflow, and softmax and logsoftmax are unchanged by
    the shift. An empty ``x`` gives an empty array of its dtype (no maximum to take)."""
    if x.dtype.kind in "biu":
        x = x.astype(np.float64)
    if x.size == 0:
        return np.ones_like(x)  # (softmax of nothing: in x's own dtype, byte order too)
    return x - np.max(x, axis=axis, keepdims=True)


class Softmax(Operation):
    def __call__(self, x: Tensor, axis: Any = -1) -> np.ndarray:
        self.variables = (x,)
        self.axis = axis
        z = _shifted(x._data, axis)
        if z.size == 0:
            self.out = z
        else:
            e = np.exp(z)
            self.out = e / np.sum(e, axis=axis, keepdims=True)
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        s = self.out
        return s * (grad - np.sum(grad * s, axis=self.axis, keepdims=True))


def softmax(x: Any, axis: Any = -1, *, constant: bool | None = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` over ``axis`` (an int, a tuple, or None for all),
    computed after shifting ``x`` by its maximum so that it cannot overflow.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.activations import softmax
    >>> softmax(mg.Tensor([1000.0, 1000.0]))
    Tensor([0.5, 0.5])
    """
    return execute_op(Softmax, x, op_kwargs={"axis": axis}, constant=constant)


class LogSoftmax(Operation):
    def __call__(self, x: Tensor, axis: Any = -1) -> np.ndarray:
        self.variables = (x,)
        self.axis = axis
        z = _shifted(x._data, axis)
        self.out = z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True)) if z.size else z
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad - np.exp(self.out) * np.sum(grad, axis=self.axis, keepdims=True)


def logsoftmax(x: Any, axis: Any = -1, *, constant: bool | None = None) -> Tensor:
    """``log(softmax(x))`` over ``axis``, computed as ``z - log(sum(exp(z)))`` with
    ``z = x - max(x)``: no overflow, and no log of an underflowed 0.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.activations import logsoftmax
    >>> logsoftmax(mg.Tensor([0.0, 0.0]))
    Tensor([-0.69314718, -0.69314718])
    """
    return execute_op(LogSoftmax, x, op_kwargs={"axis": axis}, constant=constant)


def glu(x: Any, axis: int = -1, *, constant: bool | None = None) -> Tensor:
    """Gated linear unit: ``x`` split in two halves ``a, b`` along ``axis`` (of even
    length), giving ``a * sigmoid(b)`` (Dauphin et al., 2017).

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.activations import glu
    >>> glu(mg.Tensor([2.0, 0.0]))
    Tensor([1.])
    """

    if isinstance(axis, (np.ndarray, Tensor)):
        axis = axis.item()
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"`axis` must be an integer-valued scalar, got {axis!r} ({type(axis)})")
    shape = np.shape(x._data if isinstance(x, Tensor) else x)
    axis = int(axis) % len(shape)
    half = shape[axis] // 2
    if shape[axis] % 2:
        raise ValueError(f"glu: axis {axis} has odd length {shape[axis]}; it must split in two")
    first = get_item(x, (slice(None),) * axis + (slice(None, half),))
    second = get_item(x, (slice(None),) * axis + (slice(half, None),))
    out = first * sigmoid(second)
    if constant is not None and out.constant is not constant:
        # (a composition: its last op's output takes the requested constant-ness; a
        # non-constant output of constant inputs is a leaf, it has no graph to feed)
        return Tensor(out, constant=constant)
    return out
