"""Linear algebra products: matmul, multi_matmul, einsum, dot, tensordot, trace.

``dot`` and ``tensordot`` are written as einsums. The functions; their rules (MatMul,
EinSum) are in :mod:`gradcheck.ops._rules.linalg`, re-exported here.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.engine._utils.overrides import register_family
from gradcheck.engine.operation import Operation, reduce_broadcast  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.ops._rules.linalg import (
    EinSum,
    MatMul,
)
from gradcheck.engine.ops.indexing import diagonal
from gradcheck.engine.ops.reductions import sum as _sum
from gradcheck.engine.tensor_base import Tensor, execute_op
from gradcheck.engine.ufuncs import ufunc_creator

__all__ = ["dot", "einsum", "matmul", "multi_matmul", "tensordot", "trace"]


@ufunc_creator(MatMul)
def matmul(
    a: Any, b: Any, out: Any = None, *, dtype: Any = None, constant: bool | None = None
) -> Tensor:
    """Matrix product of ``a`` and ``b``, with NumPy's rules for 1-D operands and for
    broadcasting stacks of matrices.

    Parameters
    ----------
    a, b : array_like
        The operands; their last two axes are matrices (a 1-D operand is a vector),
        and the axes before them broadcast against each other.
    constant : bool, optional
        Make the result a constant (see :class:`gradcheck.Tensor`).

    Returns
    -------
    Tensor

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.matmul(mg.Tensor([[1.0, 2.0]]), mg.Tensor([[3.0], [4.0]]))
    Tensor([[11.]])
    """


def multi_matmul(tensors: Sequence[Any], *, constant: bool | None = None) -> Tensor:
    """The product of two or more matrices, like ``numpy.linalg.multi_dot``.

    The first operand may be 1-D (a row vector) and the last 1-D (a column vector);
    the others must be 2-D. The products are taken in the order that needs the fewest
    multiplications (the classic dynamic programme over the chain), as a graph of
    :func:`matmul` ops.

    Examples
    --------
    >>> import gradcheck as mg
    >>> a, b, c = mg.Tensor([[1.0, 2.0]]), mg.Tensor([[1.0], [1.0]]), mg.Tensor([[2.0]])
    >>> mg.multi_matmul([a, b, c])
    Tensor([[6.]])
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise ValueError("multi_matmul needs at least two tensors")
    shapes = [np.shape(t._data if isinstance(t, Tensor) else t) for t in tensors]
    if any(len(s) != 2 for s in shapes[1:-1]) or not (
        1 <= len(shapes[0]) <= 2 and 1 <= len(shapes[-1]) <= 2
    ):
        raise ValueError(
            "multi_matmul: the first and last operands must be 1-D or 2-D and the others 2-D"
        )
    dims = [shapes[0][0] if len(shapes[0]) == 2 else 1]
    dims += [s[-1] if len(s) == 2 else 1 for s in shapes[:-1]]
    dims.append(shapes[-1][-1] if len(shapes[-1]) == 2 else 1)
    order = _chain_order(dims)

    def product(i: int, j: int) -> Any:
        if i == j:
            return tensors[i]
        k = order[i][j]
        return matmul(product(i, k), product(k + 1, j), constant=constant)

    return product(0, len(tensors) - 1)


def _chain_order(dims: list[int]) -> list[list[int]]:
    """Split points of the cheapest parenthesisation of a chain of matrices with
    shapes ``(dims[i], dims[i+1])`` (textbook matrix-chain dynamic programme)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


# -- einsum ----------------------------------------------------------------------------


def _parse_einsum(
    operands: Sequence[Any],
) -> tuple[list[str], str, list[Any]]:
    """Normalise both einsum calling forms into (per-operand labels, output labels,
    arrays), with ``...`` expanded into letters and the output always explicit."""
    if isinstance(operands[0], str):
        subscripts, arrays = operands[0].replace(" ", ""), list(operands[1:])
        if "->" in subscripts:
            inputs, output = subscripts.split("->")
        else:
            inputs, output = subscripts, None
        specs = inputs.split(",")
    else:  # interleaved: op0, sublist0, op1, sublist1, ..., [output sublist]
        arrays = list(operands[0::2])
        sublists = list(operands[1::2])
        output = None
        if len(operands) % 2:
            output = _sublist_to_str(arrays.pop())
        specs = [_sublist_to_str(s) for s in sublists]
    if len(specs) != len(arrays):
        raise ValueError(f"einsum: {len(specs)} subscripts for {len(arrays)} operands")
    ndims = [np.ndim(a._data if isinstance(a, Tensor) else a) for a in arrays]
    used = set("".join(specs) + (output or ""))
    spare = [c for c in string.ascii_letters if c not in used]
    n_ell = 0
    for spec, nd in zip(specs, ndims):
        if "..." in spec:
            n_ell = max(n_ell, nd - (len(spec) - 3))
    ell = "".join(spare[:n_ell])
    labels = []
    for spec, nd in zip(specs, ndims):
        if "..." in spec:
            k = nd - (len(spec) - 3)
            spec = spec.replace("...", ell[n_ell - k :] if k else "")
        if len(spec) != nd:
            raise ValueError(
                f"einsum: operand of {nd} dimensions given subscripts {spec!r} ({len(spec)} labels)"
            )
        labels.append(spec)
    if output is None:
        counts = "".join(labels)
        output = ell + "".join(
            sorted(c for c in set(counts) if counts.count(c) == 1 and c not in ell)
        )
    elif "..." in output:
        output = output.replace("...", ell)
    elif ell:
        raise ValueError(
            "einsum: the operands have '...' dimensions but the output subscripts have no "
            "'...' to put them in"
        )
    return labels, output, arrays


def _sublist_to_str(sublist: Sequence[Any]) -> str:
    return "".join("..." if s is Ellipsis else string.ascii_letters[s] for s in sublist)


def einsum(*operands: Any, optimize: bool = False, constant: bool | None = None) -> Tensor:
    """Einstein summation over the operands, in every form ``numpy.einsum`` accepts.

    ``einsum("ij,jk->ik", a, b)``, implicit output (``"ij,jk"``), traces and
    diagonals (``"ii"``, ``"ii->i"``), ``...`` broadcasting, and the interleaved form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])``. The same tensor may appear as several
    operands; its gradient is the sum of their contributions. ``optimize`` is accepted
    for MyGrad compatibility and ignored.

    Examples
    --------
    >>> import gradcheck as mg
    >>> x = mg.Tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> t = mg.einsum("ii", x)
    >>> t.backward()
    >>> t, x.grad
    (Tensor(5.), array([[1., 0.],
           [0., 1.]]))
    """
    labels, output, arrays = _parse_einsum(operands)
    return execute_op(
        EinSum, *arrays, op_kwargs={"labels": labels, "output": output}, constant=constant
    )


def tensordot(a: Any, b: Any, axes: Any = 2, *, constant: bool | None = None) -> Tensor:
    """Sum products of ``a`` and ``b`` over the given axes, like ``numpy.tensordot``.

    ``axes`` is an int ``N`` (the last ``N`` axes of ``a`` with the first ``N`` of
    ``b``) or a pair of axis sequences.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.tensordot(mg.Tensor([[1.0, 2.0], [3.0, 4.0]]), mg.Tensor([[1.0, 1.0], [1.0, 1.0]]))
    Tensor(10.)
    """
    na, nb = np.ndim(_data(a)), np.ndim(_data(b))
    if isinstance(axes, (int, np.integer)):
        axes_a, axes_b = list(range(na - axes, na)), list(range(axes))
    else:
        axes_a, axes_b = axes
        if isinstance(axes_a, (int, np.integer)):
            axes_a, axes_b = [int(axes_a)], [int(axes_b)]
    axes_a = [ax % na for ax in axes_a]
    axes_b = [ax % nb for ax in axes_b]
    if len(axes_a) != len(axes_b):
        raise ValueError("tensordot: the two axis sequences must have the same length")
    letters = string.ascii_letters
    la = list(letters[:na])
    lb = list(letters[na : na + nb])
    for i, j in zip(axes_a, axes_b):
        lb[j] = la[i]
    out = [c for i, c in enumerate(la) if i not in axes_a]
    out += [c for j, c in enumerate(lb) if j not in axes_b]
    return einsum("".join(la) + "," + "".join(lb) + "->" + "".join(out), a, b, constant=constant)


def dot(a: Any, b: Any, *, constant: bool | None = None) -> Tensor:
    """The dot product with ``numpy.dot``'s rules: scalars multiply, 1-D by 1-D is the
    inner product, and otherwise the last axis of ``a`` meets the second-to-last axis
    of ``b`` (its only axis when ``b`` is 1-D).

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.dot(mg.Tensor([1.0, 2.0]), mg.Tensor([3.0, 4.0]))
    Tensor(11.)
    """
    na, nb = np.ndim(_data(a)), np.ndim(_data(b))
    if na == 0 or nb == 0:
        return tensordot(a, b, axes=0, constant=constant)
    return tensordot(a, b, axes=([na - 1], [max(nb - 2, 0)]), constant=constant)


def trace(
    a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, *, constant: bool | None = None
) -> Tensor:
    """Sum along a diagonal of ``a``, like ``numpy.trace``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.trace(mg.Tensor([[1.0, 2.0], [3.0, 4.0]]), offset=1)
    Tensor(2.)
    """

    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, constant=constant)


def _data(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


# NumPy's functions of these names run these on tensors (see gradcheck.interop).
register_family(globals())
