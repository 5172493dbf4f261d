"""torch ops that assume their inputs are contiguous (issue 38 item 3), each with its
correct twin: right on the contiguous inputs a check draws, wrong or raising on a
transposed or strided view of the same values, which autograd hands an op after a
transpose or a slice."""

from __future__ import annotations

import numpy as np
import torch


def _cube(flat: str) -> type:
    class Cube(torch.autograd.Function):
        """x**3, whose backward flattens the saved input with ``flat`` (``view``
        raises on a non-contiguous tensor; ``reshape`` copies where it must)."""

        @staticmethod
        def forward(x):
            return x * x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            x_flat = getattr(x, flat)(-1)
            return (3 * x_flat * x_flat).reshape(x.shape) * g

    return Cube


CubeViewInBackward = _cube("view")
CubeViewInBackward.__name__ = CubeViewInBackward.__qualname__ = "CubeViewInBackward"
CubeReshapeInBackward = _cube("reshape")
CubeReshapeInBackward.__name__ = CubeReshapeInBackward.__qualname__ = "CubeReshapeInBackward"


def softplus_of_flat_view(x):
    """softplus of x, flattened with .view in the forward (raises on a
    non-contiguous x)."""
    return torch.nn.functional.softplus(x.view(-1)).reshape(x.shape)


def softplus_of_flat_reshape(x):
    return torch.nn.functional.softplus(x.reshape(-1)).reshape(x.shape)


def _running_sum(contiguous: bool) -> type:
    class RunningSum(torch.autograd.Function):
        """The running sum of x's elements in C order, reshaped to x's shape; the
        wrong one reads them with ``as_strided`` as if x were contiguous."""

        @staticmethod
        def forward(x):
            if contiguous:
                flat = x.contiguous().reshape(-1)
            else:
                flat = torch.as_strided(x, (x.numel(),), (1,))
            return torch.cumsum(flat, 0).reshape(x.shape)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.shape = inputs[0].shape

        @staticmethod
        def backward(ctx, g):
            flat = g.reshape(-1)
            return torch.flip(torch.cumsum(torch.flip(flat, (0,)), 0), (0,)).reshape(ctx.shape)

    return RunningSum


RunningSumAsStrided = _running_sum(contiguous=False)
RunningSumAsStrided.__name__ = RunningSumAsStrided.__qualname__ = "RunningSumAsStrided"
RunningSumContiguous = _running_sum(contiguous=True)
RunningSumContiguous.__name__ = RunningSumContiguous.__qualname__ = "RunningSumContiguous"


def _position_weighted(order: str) -> type:
    class PositionWeighted(torch.autograd.Function):
        """x times its element's position in C order (0, 1, 2...), computed in NumPy:
        the wrong one ravels x's array in its memory order (``order="K"``)."""

        @staticmethod
        def forward(x):
            values = x.detach().numpy().ravel(order=order)
            weighted = values * np.arange(values.size, dtype=values.dtype)
            return torch.from_numpy(weighted).reshape(x.shape)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.shape = inputs[0].shape

        @staticmethod
        def backward(ctx, g):
            n = g.numel()
            return g * torch.arange(n, dtype=g.dtype).reshape(ctx.shape)

    return PositionWeighted


PositionWeightedRavelK = _position_weighted("K")
PositionWeightedRavelK.__name__ = PositionWeightedRavelK.__qualname__ = "PositionWeightedRavelK"
PositionWeightedRavelC = _position_weighted("C")
PositionWeightedRavelC.__name__ = PositionWeightedRavelC.__qualname__ = "PositionWeightedRavelC"


def scaled_rows_view(x, w):
    """x (n, 4) with each row scaled elementwise by w (2, 2) flattened: with .view, which
    raises when w is non-contiguous (x's layout does not matter)."""
    return torch.mul(x, w.view(-1)[None, :])


def scaled_rows_reshape(x, w):
    return torch.mul(x, w.reshape(-1)[None, :])


def _product(contiguous: bool) -> type:
    class Product(torch.autograd.Function):
        """The product of a vector's elements, its gradient y / x (no zeros drawn
        here); the wrong one reads them with ``as_strided`` as if x were contiguous."""

        @staticmethod
        def forward(x):
            flat = x if contiguous else torch.as_strided(x, (x.numel(),), (1,))
            return flat.prod(0)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output)

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y / x

    return Product


ProductAsStrided = _product(contiguous=False)
ProductAsStrided.__name__ = ProductAsStrided.__qualname__ = "ProductAsStrided"
Product = _product(contiguous=True)
Product.__name__ = Product.__qualname__ = "Product"
