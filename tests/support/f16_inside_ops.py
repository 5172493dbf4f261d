"""Ops that compute in float16 whatever dtype they are given (the forward casts its
input to float16, computes, casts back), with correct and wrong backwards: the
cases of issue 34 item 9 (tests/checking/test_computes_in_float16.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck import Operation


def _half(a: Any) -> np.ndarray:
    return np.asarray(a.data).astype(np.float16)


def unary(name: str, f: Any, df: Any, bug: float = 0.0) -> type[Operation]:
    """``f(x.half())`` cast back, its backward ``grad · df(x.half()) · (1 + bug)``."""

    def __call__(self: Any, x: Any) -> np.ndarray:
        self.variables = (x,)
        return f(_half(x)).astype(x.data.dtype)

    def backward_var(self: Any, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0]
        return grad * df(_half(x)).astype(x.data.dtype) * (1 + bug)

    return type(name, (Operation,), {"__call__": __call__, "backward_var": backward_var})


def _unbroadcast(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, side in enumerate(shape):
        if side == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


def product(name: str, bug: float = 0.0) -> type[Operation]:
    """``x.half() * y.half()`` cast back; the gradient of x off by ``bug`` relative."""

    def __call__(self: Any, x: Any, y: Any) -> np.ndarray:
        self.variables = (x, y)
        return (_half(x) * _half(y)).astype(x.data.dtype)

    def backward_var(self: Any, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x, y = self.variables
        other = _half(y if index == 0 else x).astype(x.data.dtype)
        g = grad * other * (1 + (bug if index == 0 else 0.0))
        return _unbroadcast(g, self.variables[index].shape)

    return type(name, (Operation,), {"__call__": __call__, "backward_var": backward_var})


def _dtanh(h: np.ndarray) -> np.ndarray:
    return 1 - np.tanh(h) ** 2


def _square(h: np.ndarray) -> np.ndarray:
    return h * h


def _double(h: np.ndarray) -> np.ndarray:
    return h + h


EXP = unary("exp16", np.exp, np.exp)
EXP_5 = unary("exp16_off_5pc", np.exp, np.exp, bug=0.05)
EXP_10 = unary("exp16_off_10pc", np.exp, np.exp, bug=0.1)
TANH = unary("tanh16", np.tanh, _dtanh)
SQUARE = unary("square16", _square, _double)
SQUARE_5 = unary("square16_off_5pc", _square, _double, bug=0.05)
MUL = product("mul16")
MUL_5 = product("mul16_off_5pc", bug=0.05)
