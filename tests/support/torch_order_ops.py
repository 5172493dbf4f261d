"""torch Functions right at low orders and wrong above (issue 38 item 4), each with
its correct twin: a backward that detaches a saved tensor gives the right gradient
but a wrong gradient of it (torch's ``gradgradcheck`` catches order 2 only)."""

from __future__ import annotations

import torch


class SquareDetached(torch.autograd.Function):
    """x**2 whose backward detaches x: order 1 right, order 2 zero."""

    @staticmethod
    def forward(x):
        return x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x.detach() * g


class Square(SquareDetached):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g


def _cube(square):
    class Cube(torch.autograd.Function):
        """x**3 whose backward is 3·square(x)·g: right at orders 1 and 2, and at
        order 3 exactly when square's backward is differentiable."""

        @staticmethod
        def forward(x):
            return x * x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * square.apply(x) * g

    return Cube


CubeThirdWrong = _cube(SquareDetached)
CubeThirdWrong.__name__ = CubeThirdWrong.__qualname__ = "CubeThirdWrong"
CubeRight = _cube(Square)
CubeRight.__name__ = CubeRight.__qualname__ = "CubeRight"


class ComplexSquareDetached(torch.autograd.Function):
    """z**2 on complex z with torch's gradient g·conj(2z), the saved z detached (order
    2 zero), and a right jvp."""

    @staticmethod
    def forward(z):
        return z * z

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * 2 * z.detach().conj()

    @staticmethod
    def jvp(ctx, t):
        (z,) = ctx.saved_tensors
        return 2 * z * t


class ComplexSquare(ComplexSquareDetached):
    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * 2 * z.conj()


class ComplexSquareConjugatedJvp(ComplexSquare):
    """The jvp with the backward's formula, conj(2z)·t: wrong (z**2 is holomorphic)."""

    @staticmethod
    def jvp(ctx, t):
        (z,) = ctx.saved_tensors
        return 2 * z.conj() * t
