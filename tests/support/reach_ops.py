"""Gradient bugs that live where a narrow search never goes, each with its correct
twin (issue 18's acceptance): past element 64 of the input, only for |x| > 20, NaN in
float32 past 88, NaN exactly at a closed bound 0, and a broadcast bug that needs a
size-1 axis. Every op is declared with the domain a user would give (where the op is
defined), not where its bug is."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck import Operation


class _Unary(Operation):
    def __call__(self, a: Any) -> np.ndarray:
        self.variables = (a,)
        return self.f(a.data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad * self.df(self.variables[0].data)


class SinPastElement64(_Unary):
    """sin, its gradient wrong (by 1%) from flat element 65 on: a chunked backward."""

    f = staticmethod(np.sin)

    @staticmethod
    def df(x: np.ndarray) -> np.ndarray:
        d = np.cos(x)
        flat = d.reshape(-1)
        flat[65:] *= 1.01
        return d


class Sin(_Unary):
    f = staticmethod(np.sin)
    df = staticmethod(np.cos)


def _softplus(x: np.ndarray) -> np.ndarray:
    # the usual approximation branch: log1p(e**x) is x to the last bit past 20
    return np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))


class SoftplusBranchBug(_Unary):
    """softplus whose approximation branch (x > 20) has the gradient of the other."""

    f = staticmethod(_softplus)

    @staticmethod
    def df(x: np.ndarray) -> np.ndarray:
        s = 1 / (1 + np.exp(-np.minimum(x, 20)))
        return np.where(x > 20, 1 - s, s)


class Softplus(_Unary):
    f = staticmethod(_softplus)

    @staticmethod
    def df(x: np.ndarray) -> np.ndarray:
        return np.where(x > 20, 1.0, 1 / (1 + np.exp(-np.minimum(x, 20)))).astype(x.dtype)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (1 / (1 + np.exp(-x))).astype(x.dtype)


class SigmoidF32Overflow(_Unary):
    """sigmoid with the backward e**x / (1 + e**x)**2: inf / inf = NaN past 88.7 in
    float32 (the forward is fine there)."""

    f = staticmethod(_sigmoid)

    @staticmethod
    def df(x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            e = np.exp(x)
            return e / (1 + e) ** 2


class Sigmoid(_Unary):
    f = staticmethod(_sigmoid)

    @staticmethod
    def df(x: np.ndarray) -> np.ndarray:
        s = _sigmoid(x)
        return s * (1 - s)


class Pow15AtZero(_Unary):
    """x**1.5 on x >= 0, with the gradient written 1.5 * x / sqrt(x): NaN at 0."""

    f = staticmethod(lambda x: x**1.5)

    @staticmethod
    def df(x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return 1.5 * x / np.sqrt(x)


class Pow15(_Unary):
    f = staticmethod(lambda x: x**1.5)
    df = staticmethod(lambda x: 1.5 * np.sqrt(x))


class WeightedSquareAtZero(Operation):
    """w * x**2 for a weight w >= 0, the weight's gradient written grad * out / w: NaN
    at a weight of exactly 0."""

    def __call__(self, x: Any, w: Any) -> np.ndarray:
        self.variables = (x, w)
        self.out = w.data * x.data**2
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x, w = (t.data for t in self.variables)
        shape = self.variables[index].shape  # (inputs drawn with broadcasting)
        if index == 0:
            return _unbroadcast(grad * 2 * w * x, shape, True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return _unbroadcast(grad * self.out / w, shape, True)


class WeightedSquare(WeightedSquareAtZero):
    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x, w = (t.data for t in self.variables)
        g = grad * 2 * w * x if index == 0 else grad * x**2
        return _unbroadcast(g, self.variables[index].shape, True)


def _unbroadcast(grad: np.ndarray, shape: tuple[int, ...], size_one_axes: bool) -> np.ndarray:
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    if size_one_axes:
        for axis, side in enumerate(shape):
            if side == 1 and grad.shape[axis] != 1:
                grad = grad.sum(axis=axis, keepdims=True)
    return grad


class MulBroadcastBug(Operation):
    """x * y, broadcasting, whose backward sums the leading axes a broadcast added but
    not the size-1 axes it stretched."""

    size_one_axes = False

    def __call__(self, x: Any, y: Any) -> np.ndarray:
        self.variables = (x, y)
        return x.data * y.data

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x, y = (t.data for t in self.variables)
        other = y if index == 0 else x
        shape = (x if index == 0 else y).shape
        return _unbroadcast(grad * other, shape, self.size_one_axes)


class MulBroadcast(MulBroadcastBug):
    size_one_axes = True
