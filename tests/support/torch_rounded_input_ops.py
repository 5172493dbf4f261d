"""torch Functions whose forwards round their inputs to float16 (complex32 for
complex inputs) inside, with correct and wrong backwards: the cases of issue 34
items 9 and 11 in tests/checking/test_rounded_input_verdicts.py. Each backward takes
its gradient at the unrounded input, as a user writes it."""

from __future__ import annotations

from typing import Any

import torch


def chalf_square(factor: float = 1.0, conj_bug: bool = False, one_minus: bool = False) -> Any:
    """``z·z`` computed in complex32 (``1 - z·z`` with ``one_minus``: the subtraction
    in complex64, so that the outputs are no float16 numbers); its backward
    ``±2·conj(z)·g`` at z, times ``factor``; ``conj_bug``: without the conjugate."""
    sign = -1.0 if one_minus else 1.0

    class ChalfSquare(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, z: torch.Tensor) -> torch.Tensor:
            h = z.to(torch.chalf)
            ctx.save_for_backward(z)
            square = (h * h).to(z.dtype)
            return 1 - square if one_minus else square

        @staticmethod
        def backward(ctx: Any, g: torch.Tensor) -> torch.Tensor:
            (z,) = ctx.saved_tensors
            d = 2 * z if conj_bug else 2 * z.conj()
            return g * d * (sign * factor)

    return ChalfSquare


def half_square_parts(factor: float = 1.0) -> Any:
    """The real form of :func:`chalf_square`: (x² - y², 2xy) of x and y rounded to
    float16, two float outputs; its backward at the unrounded x, y (x's off by
    ``factor``)."""

    class HalfSquareParts(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: torch.Tensor, y: torch.Tensor) -> Any:
            ctx.save_for_backward(x, y)
            a, b = x.half(), y.half()
            return (a * a - b * b).to(x.dtype), (2 * a * b).to(x.dtype)

        @staticmethod
        def backward(ctx: Any, gu: torch.Tensor, gv: torch.Tensor) -> Any:
            x, y = ctx.saved_tensors
            return (2 * x * gu + 2 * y * gv) * factor, -2 * y * gu + 2 * x * gv

    return HalfSquareParts


def one_minus_cos16(factor: float = 1.0, flip: bool = False) -> Any:
    """``1 - cos(x.half())`` in x's dtype (its outputs float32 numbers, its inputs
    rounded to float16); its backward ``sin(x.half())·g`` times ``factor``; ``flip``:
    the sign wrong for x < 0."""

    class OneMinusCos16(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
            h = x.half()
            ctx.save_for_backward(h, x)
            return 1 - torch.cos(h).to(x.dtype)

        @staticmethod
        def backward(ctx: Any, g: torch.Tensor) -> torch.Tensor:
            h, x = ctx.saved_tensors
            d = torch.sin(h).to(x.dtype) * factor
            if flip:
                d = torch.where(x < 0, -d, d)
            return g * d

    return OneMinusCos16
