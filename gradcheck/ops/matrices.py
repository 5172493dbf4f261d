"""``numpy.linalg``'s norms and other numbers (norm, det, slogdet) and its solving and
inverting (solve, inv), as graph ops. They are public as ``gradcheck.linalg.*``.

The rules are the standard matrix-calculus ones (for square ``A`` with inverse
``A⁻¹``): ``d det(A) = det(A) A⁻ᵀ``, ``d log|det A| = A⁻ᵀ``, ``d A⁻¹ = -A⁻ᵀ G A⁻ᵀ``,
and for ``X = A⁻¹ B``: ``dB = A⁻ᵀ G`` and ``dA = -dB Xᵀ``. All of them work on stacks
of matrices (the last two axes), broadcasting like NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.errors import UnsupportedDtype
from gradcheck.operation import Operation, reduce_broadcast
from gradcheck.tensor_base import Tensor, execute_op

__all__ = ["det", "inv", "norm", "slogdet", "solve"]


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
        _lapack_inputs("inv", a.data)
        self.out = np.linalg.inv(a.data)
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        inv_t = _mT(self.out)
        return -(inv_t @ grad @ inv_t)


def inv(a: Any, *, constant: bool | None = None) -> Tensor:
    """The inverse of the square matrix ``a`` (or of each matrix in a stack).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.linalg.inv(mg.Tensor([[2.0, 0.0], [0.0, 4.0]]))
    Tensor([[0.5 , 0.  ],
            [0.  , 0.25]])
    """
    return execute_op(Inv, a, constant=constant)


class Det(Operation):
    def __call__(self, a: Tensor) -> np.ndarray:
        self.variables = (a,)
        _lapack_inputs("det", a.data)
        self.out = np.asarray(np.linalg.det(a.data))
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        scale = (grad * self.out)[..., None, None]
        return scale * _mT(np.linalg.inv(self.variables[0].data))


def det(a: Any, *, constant: bool | None = None) -> Tensor:
    """The determinant of the square matrix ``a`` (or of each matrix in a stack).

    The gradient ``det(A) A⁻ᵀ`` needs ``A`` to be invertible; at a singular matrix
    ``numpy.linalg.LinAlgError`` is raised by the backward pass.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([[2.0, 1.0], [1.0, 3.0]])
    >>> d = mg.linalg.det(x)
    >>> d.backward()
    >>> d, x.grad
    (Tensor(5.), array([[ 3., -1.],
           [-1.,  2.]]))
    """
    return execute_op(Det, a, constant=constant)


class LogAbsDet(Operation):
    def __call__(self, a: Tensor) -> np.ndarray:
        self.variables = (a,)
        return np.asarray(np.linalg.slogdet(a.data)[1])

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        return grad[..., None, None] * _mT(np.linalg.inv(self.variables[0].data))


def slogdet(a: Any, *, constant: bool | None = None) -> tuple[Tensor, Tensor]:
    """The sign and the natural log of the absolute value of the determinant of ``a``,
    like ``numpy.linalg.slogdet``: ``(sign, logabsdet)``. The sign is a constant
    tensor (piecewise constant, its gradient is zero); ``logabsdet`` is differentiable.

    Examples
    --------
    >>> import gradcheck as mg
    >>> sign, logdet = mg.linalg.slogdet(mg.Tensor([[-2.0, 0.0], [0.0, 1.0]]))
    >>> sign, logdet
    (Tensor(-1.), Tensor(0.69314718))
    """
    data = a.data if isinstance(a, Tensor) else np.asarray(a)
    _lapack_inputs("slogdet", data)
    sign = Tensor(np.linalg.slogdet(data)[0], constant=True)
    return sign, execute_op(LogAbsDet, a, constant=constant)


class Solve(Operation):
    def __call__(self, a: Tensor, b: Tensor) -> np.ndarray:
        self.variables = (a, b)
        _lapack_inputs("solve", a.data, b.data)
        self.out = np.linalg.solve(a.data, b.data)
        return self.out

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        a, b = (v.data for v in self.variables)
        vector = b.ndim == 1  # NumPy 2: only a 1-D b is a vector
        g = grad[..., None] if vector else grad
        x = self.out[..., None] if vector else self.out
        db = np.linalg.solve(_mT(a), g)
        if index == 1:
            return reduce_broadcast(db[..., 0] if vector else db, b.shape)
        return reduce_broadcast(-(db @ _mT(x)), a.shape)


def solve(a: Any, b: Any, *, constant: bool | None = None) -> Tensor:
    """The solution ``x`` of ``a @ x = b`` for square ``a``, like
    ``numpy.linalg.solve`` (``b`` of shape ``(M,)`` or ``(..., M, K)``).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.linalg.solve(mg.Tensor([[2.0, 0.0], [0.0, 4.0]]), mg.Tensor([2.0, 2.0]))
    Tensor([1. , 0.5])
    """
    return execute_op(Solve, a, b, constant=constant)


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
            _lapack_inputs(f"norm (ord={ord!r}, by the SVD)", x.data)
        out = np.linalg.norm(x.data, ord=ord, axis=axis, keepdims=keepdims)
        ndim = x.ndim
        if axis is None:
            axis = tuple(range(ndim)) if (ord is None or ndim <= 2) else None
        elif isinstance(axis, (int, np.integer)):
            axis = (axis,)
        self.axis = tuple(ax % ndim for ax in axis)
        return np.asarray(out)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0].data
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


def norm(
    x: Any,
    ord: Any = None,  # noqa: A002  (numpy.linalg.norm's name)
    axis: Any = None,
    keepdims: bool = False,
    *,
    nan_to_num: bool = True,
    constant: bool | None = None,
) -> Tensor:
    """Vector or matrix norm, like ``numpy.linalg.norm`` (same ``ord``, ``axis``,
    ``keepdims``).

    ``axis`` an int (or ``x`` 1-D) gives vector norms: ``ord`` None/2, 1, ``inf``,
    ``-inf``, 0 (the count of non-zeros, gradient 0) or any other real ``p``. ``axis``
    a pair (or ``x`` 2-D) gives matrix norms: ``"fro"``, ``"nuc"``, 1, -1, 2, -2,
    ``inf``, ``-inf``. ``axis=None`` with ``ord=None`` is the 2-norm of all elements.

    Policy where the norm is not differentiable: at ``x = 0`` (and for ``p < 1`` at
    zero elements) the derivative is undefined or infinite; with ``nan_to_num=True``
    (the default, as in MyGrad) those entries of the gradient are 0 (the minimal-norm
    subgradient). ``ord=1`` uses ``sign(x)`` (0 at 0). Where several elements, rows
    or columns attain the max/min (``inf`` norms, matrix 1/inf norms), the gradient
    is shared equally among them. Matrix 2/-2 and ``"nuc"`` norms use the SVD and
    assume distinct singular values (and, for ``"nuc"``, full rank).

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([3.0, 4.0])
    >>> n = mg.linalg.norm(x)
    >>> n.backward()
    >>> n, x.grad
    (Tensor(5.), array([0.6, 0.8]))
    """
    return execute_op(
        Norm,
        x,
        op_kwargs={"ord": ord, "axis": axis, "keepdims": keepdims, "nan_to_num": nan_to_num},
        constant=constant,
    )
