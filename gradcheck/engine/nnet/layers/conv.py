"""N-dimensional convolution (cross-correlation, as in deep-learning libraries)."""

from __future__ import annotations

import itertools
import string
from typing import Any

import numpy as np

from gradcheck.engine.nnet.layers.windows import as_tuple, windows
from gradcheck.engine.operation import Operation
from gradcheck.engine.tensor_base import Tensor, execute_op

__all__ = ["conv_nd"]


class ConvND(Operation):
    def __call__(
        self,
        x: Tensor,
        w: Tensor,
        *,
        stride: Any,
        padding: Any = 0,
        dilation: Any = 1,
    ) -> np.ndarray:
        self.variables = (x, w)
        n = w.ndim - 2
        if x.ndim != w.ndim or x.shape[1] != w.shape[1]:
            raise ValueError(
                f"conv_nd: x of shape {x.shape} (N, C, *spatial) does not match a filter "
                f"bank of shape {w.shape} (F, C, *kernel)"
            )
        self.stride = as_tuple(stride, n, "stride")
        self.padding = as_tuple(padding, n, "padding")
        self.dilation = as_tuple(dilation, n, "dilation")
        xp = np.pad(x._data, [(0, 0), (0, 0)] + [(p, p) for p in self.padding])
        self.padded_shape = xp.shape
        self.win = windows(xp, w.shape[2:], self.stride, self.dilation)  # N C *out *K
        sp = string.ascii_letters[: 2 * n]
        o, k = sp[:n], sp[n:]
        # out[n, f, o] = sum over c and k of win[n, c, o, k] * w[f, c, k]
        self.spec = (f"NC{o}{k}", f"FC{k}", f"NF{o}")
        return np.einsum(f"{self.spec[0]},{self.spec[1]}->{self.spec[2]}", self.win, w._data)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        win_spec, w_spec, out_spec = self.spec
        w = self.variables[1]._data
        if index == 1:
            return np.einsum(f"{out_spec},{win_spec}->{w_spec}", grad, self.win)
        # Each kernel offset k read a strided slice of the padded input; send back to
        # that slice the part of the gradient that went through w[:, :, k].
        dxp = np.zeros(self.padded_shape, dtype=np.result_type(grad, w))
        kernel = w.shape[2:]
        n = len(kernel)
        o = out_spec[2:]
        for k in itertools.product(*(range(s) for s in kernel)):
            where = tuple(
                slice(ki * d, ki * d + st * (g - 1) + 1, st)
                for ki, d, st, g in zip(k, self.dilation, self.stride, grad.shape[2:])
            )
            kernel_at: tuple[Any, ...] = (slice(None), slice(None), *k)
            contribution = np.einsum(f"NF{o},FC->NC{o}", grad, w[kernel_at])
            dxp[(slice(None), slice(None), *where)] += contribution
        inner = tuple(slice(p, s - p) for p, s in zip(self.padding, self.padded_shape[-n:]))
        return dxp[(slice(None), slice(None), *inner)]


def conv_nd(
    x: Any,
    filter_bank: Any,
    *,
    stride: int | tuple[int, ...],
    padding: int | tuple[int, ...] = 0,
    dilation: int | tuple[int, ...] = 1,
    constant: bool | None = None,
) -> Tensor:
    """Convolve a batch of N-dimensional inputs with a bank of filters.

    Parameters
    ----------
    x : array_like, shape (N, C, X0, ..., Xd)
        N inputs with C channels and ``d + 1`` spatial axes.
    filter_bank : array_like, shape (F, C, K0, ..., Kd)
        F filters.
    stride, padding, dilation : int or tuple of ints
        Per spatial axis (an int applies to all): the step between windows, the zeros
        added on both sides of each spatial axis, and the spacing of kernel elements.

    Returns
    -------
    Tensor, shape (N, F, Y0, ..., Yd)
        ``out[n, f, o] = sum_{c, k} x_padded[n, c, o * stride + k * dilation] *
        filter_bank[f, c, k]`` (cross-correlation, as in MyGrad and deep-learning
        libraries), with ``Yi = (Xi + 2 padding - dilation (Ki - 1) - 1) // stride + 1``.
        Unlike MyGrad, which requires the windows to tile the padded input exactly,
        trailing elements that no window reaches are allowed (and get zero gradient).

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.nnet.layers import conv_nd
    >>> x = mg.Tensor([[[1.0, 2.0, 3.0, 4.0]]])  # N=1, C=1, X=4
    >>> w = mg.Tensor([[[1.0, -1.0]]])  # F=1, C=1, K=2
    >>> out = conv_nd(x, w, stride=1)
    >>> out.sum().backward()
    >>> out, w.grad
    (Tensor([[[-1., -1., -1.]]]), array([[[6., 9.]]]))
    """
    return execute_op(
        ConvND,
        x,
        filter_bank,
        op_kwargs={"stride": stride, "padding": padding, "dilation": dilation},
        constant=constant,
    )
