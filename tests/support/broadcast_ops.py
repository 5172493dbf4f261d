"""Ops for issue 34's broadcasting and shape items: ``x * s + b`` with its bias or
scale gradient not reduced to the input's shape (and its correct twin), an op that
takes equal shapes only, and a reduction whose bug needs a 3-d input with a size-1
middle axis. The torch versions live in :mod:`tests.support.torch_broadcast_ops`."""

from __future__ import annotations

from typing import Any

import numpy as np

import gradcheck as gc
from gradcheck import Operation


def sum_to(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``grad`` summed over the axes an input of ``shape`` was broadcast along."""
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, side in enumerate(shape):
        if side == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


class Affine(Operation):
    """x * s + b, broadcasting; every gradient summed back to its input's shape."""

    def __call__(self, x: Any, s: Any, b: Any) -> np.ndarray:
        self.variables = (x, s, b)
        return x.data * s.data + b.data

    def full(self, grad: np.ndarray, index: int) -> np.ndarray:
        x, s, _ = (t.data for t in self.variables)
        out = np.broadcast_shapes(*(t.shape for t in self.variables))
        return np.broadcast_to((grad * s, grad * x, grad)[index], out)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return sum_to(self.full(grad, index), self.variables[index].shape)


class AffineBiasUnsummed(Affine):
    """The bias gradient returned as the upstream gradient: not summed at all."""

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad if index == 2 else super().backward_var(grad, index)


class AffineScaleLeadingOnly(Affine):
    """The scale gradient summed over the leading axes only, not over its size-1
    axes."""

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        if index != 1:
            return super().backward_var(grad, index)
        g = self.full(grad, 1)
        while g.ndim > self.variables[1].ndim:
            g = g.sum(axis=0)
        return g


class AffineBiasAveraged(Affine):
    """The bias gradient averaged over the broadcast axes instead of summed."""

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        g = super().backward_var(grad, index)
        if index == 2:
            g = g * (self.variables[2].size / np.size(grad))
        return g


class EqualShapesOnly(Operation):
    """a * b for inputs of one shape; other shapes are refused."""

    def __call__(self, a: Any, b: Any) -> np.ndarray:
        if a.shape != b.shape:
            raise ValueError(f"a and b must have one shape, got {a.shape} and {b.shape}")
        self.variables = (a, b)
        return a.data * b.data

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a, b = (t.data for t in self.variables)
        return grad * (b if index == 0 else a)


class SumLast(Operation):
    """Sum over ``axis``, its backward's path for a size-1 middle axis of a 3-d input
    (and other sides above 1) wrong by half."""

    def __call__(self, x: Any, axis: int = -1) -> np.ndarray:
        self.variables = (x,)
        self.axis = axis
        return np.sum(x.data, axis=axis)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        (x,) = self.variables
        if x.ndim == 0:
            return np.array(grad, copy=True)
        g = np.broadcast_to(np.expand_dims(grad, self.axis), x.shape)
        if x.ndim == 3 and x.shape[1] == 1 and x.shape[0] > 1 and x.shape[2] > 1:
            g = g * 1.5
        return g


class SumLastRight(SumLast):
    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        (x,) = self.variables
        if x.ndim == 0:
            return np.array(grad, copy=True)
        return np.broadcast_to(np.expand_dims(grad, self.axis), x.shape)


def sum_last(x: Any) -> Any:
    """SumLast's bug in a function with no axis parameter."""
    return gc.execute_op(SumLast, x)


def sum_last_right(x: Any) -> Any:
    return gc.execute_op(SumLastRight, x)
