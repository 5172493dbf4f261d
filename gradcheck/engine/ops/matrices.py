"""``numpy.linalg``'s norms and other numbers (norm, det, slogdet) and its solving and
inverting (solve, inv), as graph ops. They are public as ``gradcheck.linalg.*``.

The functions; their rules are in :mod:`gradcheck.ops._rules.matrices`, re-exported
here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.engine.operation import Operation, reduce_broadcast  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.ops._rules.matrices import (  # noqa: F401 (re-exported)
    _LAPACK_FLOATS,
    Det,
    Inv,
    LogAbsDet,
    Norm,
    Solve,
    _lapack_inputs,
    _matrix_norm_grad,
    _mT,
    _share_ties,
    _vector_norm_grad,
)
from gradcheck.engine.tensor_base import Tensor, execute_op

__all__ = ["det", "inv", "norm", "slogdet", "solve"]


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
    data = a._data if isinstance(a, Tensor) else np.asarray(a)
    _lapack_inputs("slogdet", data)
    sign = Tensor(np.linalg.slogdet(data)[0], constant=True)
    return sign, execute_op(LogAbsDet, a, constant=constant)


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
