"""Max pooling over the trailing axes."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcheck.engine.nnet.layers.windows import as_tuple, windows
from gradcheck.engine.operation import Operation
from gradcheck.engine.tensor_base import Tensor, execute_op

__all__ = ["max_pool"]


class MaxPool(Operation):
    def __call__(self, x: Tensor, *, pool: Any, stride: Any) -> np.ndarray:
        self.variables = (x,)
        pool = tuple(int(p) for p in pool)
        n = len(pool)
        stride = as_tuple(stride, n, "stride")
        win = windows(x._data, pool, stride, (1,) * n)
        out_shape = win.shape[: win.ndim - n]
        flat = win.reshape((*out_shape, -1))
        # NOTE: with ties, argmax takes the first maximal element of each window (in
        # C order): the whole gradient of that window goes there (kink policy).
        best = np.unravel_index(np.argmax(flat, axis=-1), pool)
        grid: tuple[np.ndarray, ...] = np.indices(out_shape[-n:], sparse=True)
        lead: tuple[np.ndarray, ...] = np.indices(out_shape[:-n], sparse=True) if x.ndim > n else ()
        lead = tuple(g[(...,) + (None,) * n] for g in lead)
        # Input coordinates of each window's maximum, broadcast to out_shape.
        self.where = lead + tuple(o * s + b for o, s, b in zip(grid, stride, best))
        return x._data[self.where]

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0]
        out = np.zeros(x.shape, dtype=np.result_type(x.dtype, grad.dtype))
        np.add.at(out, self.where, grad)  # overlapping windows may share a maximum
        return out


def max_pool(
    x: Any, pool: tuple[int, ...], stride: int | tuple[int, ...], *, constant: bool | None = None
) -> Tensor:
    """The maximum over each window of shape ``pool`` on the trailing ``len(pool)``
    axes of ``x``, windows ``stride`` apart (no padding).

    Kink policy: where several elements of a window are equal maxima, the window's
    gradient goes to the first of them (C order).

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.layers import max_pool
    >>> x = mg.Tensor([[1.0, 3.0, 2.0, 0.0]])
    >>> y = max_pool(x, (2,), 2)
    >>> y.backward()
    >>> y, x.grad
    (Tensor([[3., 2.]]), array([[0., 1., 1., 0.]]))
    """
    return execute_op(MaxPool, x, op_kwargs={"pool": pool, "stride": stride}, constant=constant)
