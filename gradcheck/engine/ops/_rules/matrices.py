"""The rules of ``numpy.linalg``'s numbers and solvers: Inv, Det, LogAbsDet, Solve,
Norm.

They are the standard matrix-calculus ones (for square ``A`` with inverse ``A⁻¹``):
``d det(A) = det(A) A⁻ᵀ``, ``d log|det A| = A⁻ᵀ``, ``d A⁻¹ = -A⁻ᵀ G A⁻ᵀ``, and for
``X = A⁻¹ B``: ``dB = A⁻ᵀ G`` and ``dA = -dB Xᵀ``. All of them work on stacks of
matrices (the last two axes), broadcasting like NumPy.

The documented functions that apply them are in :mod:`gradcheck.ops.matrices`, which
re-exports every name defined here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine.operation import Operation, reduce_broadcast
from gradcheck.errors import UnsupportedDtype

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor


def _mT(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


#: The floating dtypes NumPy's LAPACK-based routines compute in.
_LAPACK_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _lapack_inputs(name: str, *arrays: np.ndarray) -> None:
    """Raise :class:`UnsupportedDtype` naming ``gradcheck.linalg.<name>`` when an input
    is a float NumPy's linalg cannot compute in (float16, long double): these ops are
    float32/float64 only, as NumPy's are (an integer input is computed in float64)."""
    for a in arrays:
        if a.dtype.kind == "f" and a.dtype not in _LAPACK_FLOATS:
            raise UnsupportedDtype(
                f"gradcheck.linalg.{name} does not support {a.dtype}: NumPy's linalg has "
                f"no {a.dtype} routines; use float32 or float64 (e.g. x.astype(np.float32))"
            )


class Inv(Operation):
    def __call__(self, a: Tensor) -> np.ndarray:
        self.variables = (a,)
        _lapack_inputs("inv", a._data)
        self.out = np.linalg.inv(a._data)
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        inv_t = _mT(self.out)
        return -(inv_t @ grad @ inv_t)


class Det(Operation):
    def __call__(self, a: Tensor) -> np.ndarray:
        self.variables = (a,)
        _lapack_inputs("det", a._data)
        self.out = np.asarray(np.linalg.det(a._data))
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        scale = (grad * self.out)[..., None, None]
        return scale * _mT(np.linalg.inv(self.variables[0]._data))


class LogAbsDet(Operation):
    def __call__(self, a: Tensor) -> np.ndarray:
        self.variables = (a,)
        return np.asarray(np.linalg.slogdet(a._data)[1])

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad[..., None, None] * _mT(np.linalg.inv(self.variables[0]._data))


class Solve(Operation):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        _lapack_inputs("solve", a._data, b._data)
        self.out = np.linalg.solve(a._data, b._data)
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a, b = (v._data for v in self.variables)
        vector = b.ndim == 1  # NumPy 2: only a 1-D b is a vector
        g = grad[..., None] if vector else grad
        x = self.out[..., None] if vector else self.out
        db = np.linalg.solve(_mT(a), g)
        if index == 1:
            return reduce_broadcast(db[..., 0] if vector else db, b.shape)
        return reduce_broadcast(-(db @ _mT(x)), a.shape)


# -- norm -----------------------------------------------------------------------------


def _share_ties(mask: np.ndarray, axis: Any) -> np.ndarray:
    """Spread a unit gradient equally over the elements that attain an extremum."""
    return mask / np.sum(mask, axis=axis, keepdims=True)


def _vector_norm_grad(x: np.ndarray, n: np.ndarray, order: Any, axis: Any) -> np.ndarray:
    """d‖x‖/dx over ``axis``, with ``n`` the norm (keepdims). Zeros of ``x`` where the
    derivative is infinite or undefined are handled by the caller's nan_to_num."""
    if order is None or order == 2:
        return x / n
    if order == 0:
        return np.zeros_like(x)
    if order == 1:
        return np.sign(x)
    if np.isinf(order):
        return np.sign(x) * _share_ties(np.abs(x) == n, axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sign(x) * (np.abs(x) / n) ** (order - 1)


def _matrix_norm_grad(x: np.ndarray, order: Any) -> np.ndarray:
    """d‖x‖/dx for matrix norms over the last two axes (rows, columns)."""
    if order in (None, "fro"):
        return x / np.sqrt(np.sum(x * x, axis=(-2, -1), keepdims=True))
    if order in ("nuc", 2, -2):
        u, _, vt = np.linalg.svd(x, full_matrices=False)
        if order == "nuc":
            return u @ vt
        k = 0 if order == 2 else -1  # largest or smallest singular value
        return u[..., :, k, None] * vt[..., None, k, :]
    if order in (1, -1):  # max/min column sum of |x|
        sums = np.sum(np.abs(x), axis=-2, keepdims=True)
        best = np.max(sums, -1, keepdims=True) if order == 1 else np.min(sums, -1, keepdims=True)
        return np.sign(x) * _share_ties(sums == best, -1)
    if order in (np.inf, -np.inf):  # max/min row sum of |x|
        sums = np.sum(np.abs(x), axis=-1, keepdims=True)
        best = np.max(sums, -2, keepdims=True) if order > 0 else np.min(sums, -2, keepdims=True)
        return np.sign(x) * _share_ties(sums == best, -2)
    raise ValueError(f"norm: invalid norm order {order!r} for matrices")


class Norm(Operation):
    def __call__(
        self,
        x: Tensor,
        ord: Any = None,  # noqa: A002  (numpy.linalg.norm's name)
        axis: Any = None,
        keepdims: bool = False,
        nan_to_num: bool = True,
    ) -> np.ndarray:
        self.variables = (x,)
        self.ord, self.keepdims, self.nan_to_num = ord, keepdims, nan_to_num
        matrix = x.ndim == 2 if axis is None else np.ndim(axis) == 1 and len(axis) == 2
        if matrix and ord in ("nuc", 2, -2):
            _lapack_inputs(f"norm (ord={ord!r}, by the SVD)", x._data)
        out = np.linalg.norm(x._data, ord=ord, axis=axis, keepdims=keepdims)
        ndim = x.ndim
        if axis is None:
            axis = tuple(range(ndim)) if (ord is None or ndim <= 2) else None
        elif isinstance(axis, (int, np.integer)):
            axis = (axis,)
        self.axis = tuple(ax % ndim for ax in axis)
        return np.asarray(out)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0]._data
        if not self.keepdims:
            grad = np.expand_dims(grad, self.axis)
        with np.errstate(divide="ignore", invalid="ignore"):
            if len(self.axis) == 1:
                n = np.linalg.norm(x, ord=self.ord, axis=self.axis[0], keepdims=True)
                d = _vector_norm_grad(x, n, self.ord, self.axis[0])
            elif self.ord is None:  # the 2-norm of all the elements over the axes
                d = x / np.sqrt(np.sum(x * x, axis=self.axis, keepdims=True))
            else:
                moved = np.moveaxis(x, self.axis, (-2, -1))
                d = np.moveaxis(_matrix_norm_grad(moved, self.ord), (-2, -1), self.axis)
        if self.nan_to_num:
            d = np.nan_to_num(d, nan=0.0, posinf=0.0, neginf=0.0)
        return grad * d
