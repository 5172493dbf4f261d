"""torch Functions whose vmap rules are wrong, each beside its correct twin (issue 38
item 1), written from the public reports pytorch/pytorch#49120, #51144 and #130768:
custom Functions right on one example and wrong under ``torch.func.vmap``.

- ``MulAssumesFirst``, ``MulAllBatched``: the rule ignores where ``in_dims`` puts the
  batch dimension, or that an input is not batched (twin: ``MulOutDimsFixed``).
- ``MulOutDims``: the rule moves the batch dimension last and says it is first
  (``out_dims=0``): the wrong out_dims (the forward under vmap is wrong).
- ``SumSquares``: the rule forgets the batch dimension and reduces over it too.
- ``AddBias``: ``generate_vmap_rule = True``; the backward's gradient of the broadcast
  bias is a helper Function whose rule sums the upstream gradient over every
  dimension, the batch's too (``grad.sum()``): right for one upstream gradient,
  wrong batched.
- ``CumsumAll``: a vmap staticmethod; its backward calls a helper whose rule runs
  ``.view(-1)`` as if there were no batch dimension.
- ``ScaleJvp``: forward mode; the jvp calls a helper whose rule ignores ``in_dims``.

The twins (``...Fixed``) are the same ops with the rule right. All use the
``setup_context`` style that vmap rules need.
"""

from __future__ import annotations

import torch

import gradcheck


def _last(x: torch.Tensor, bdim: int | None) -> torch.Tensor:
    """``x`` with its batch dimension last (a new one of size 1 when unbatched)."""
    return x.unsqueeze(-1) if bdim is None else x.movedim(bdim, -1)


class _Mul(torch.autograd.Function):
    @staticmethod
    def forward(x, y):
        return x * y

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return grad * y, grad * x


class MulOutDims(_Mul):
    """x * y; the vmap rule moves the batch last and claims it is at 0 (#90037's
    example with its ``movedim(-1, 0)`` forgotten)."""

    @staticmethod
    def vmap(info, in_dims, x, y):
        x, y = _last(x, in_dims[0]), _last(y, in_dims[1])
        return MulOutDims.apply(x, y), 0


class MulOutDimsFixed(_Mul):
    @staticmethod
    def vmap(info, in_dims, x, y):
        x, y = _last(x, in_dims[0]), _last(y, in_dims[1])
        return MulOutDimsFixed.apply(x, y), -1


class MulAssumesFirst(_Mul):
    """x * y; the rule takes a batched input's batch dimension to be its first,
    whatever ``in_dims`` says (caught with the batch dimension last)."""

    @staticmethod
    def vmap(info, in_dims, x, y):
        x = x.unsqueeze(-1) if in_dims[0] is None else x.movedim(0, -1)
        y = y.unsqueeze(-1) if in_dims[1] is None else y.movedim(0, -1)
        return MulAssumesFirst.apply(x, y).movedim(-1, 0), 0


class MulAllBatched(_Mul):
    """x * y; the rule takes every input to be batched (an unbatched one's in_dims
    is None: caught with one input batched alone)."""

    @staticmethod
    def vmap(info, in_dims, x, y):
        x, y = x.movedim(in_dims[0] or 0, -1), y.movedim(in_dims[1] or 0, -1)
        return MulAllBatched.apply(x, y).movedim(-1, 0), 0


class _SumSquares(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return (x * x).sum()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2.0 * grad * x


class SumSquares(_SumSquares):
    """sum(x**2); the rule reduces over the batch dimension as well."""

    @staticmethod
    def vmap(info, in_dims, x):
        x = x.movedim(in_dims[0], 0)
        total = SumSquares.apply(x)  # every element of every batch member
        return total.expand(info.batch_size), 0


class SumSquaresFixed(_SumSquares):
    @staticmethod
    def vmap(info, in_dims, x):
        x = x.movedim(in_dims[0], 0)
        return (x * x).reshape(info.batch_size, -1).sum(1), 0


def _sum_to(grad: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    return grad.reshape(-1).sum().reshape(shape) if len(shape) == 0 else grad


class _SumAll(torch.autograd.Function):
    """The sum of every element (what a broadcast scalar's gradient is)."""

    @staticmethod
    def forward(g):
        return g.sum()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.shape = inputs[0].shape

    @staticmethod
    def backward(ctx, grad):
        return grad.expand(ctx.shape)


class _SumAllWrong(_SumAll):
    @staticmethod
    def vmap(info, in_dims, g):
        # grad.sum() over every dimension, the batch's too
        return _SumAllWrong.apply(g).expand(info.batch_size), 0


class _SumAllRight(_SumAll):
    @staticmethod
    def vmap(info, in_dims, g):
        g = g.movedim(in_dims[0], 0)
        return g.reshape(info.batch_size, -1).sum(1), 0


def _add_bias(helper: type, name: str) -> type:
    @gradcheck.describe(shapes=("n,k", ""), broadcast=False)
    class AddBias(torch.autograd.Function):
        """x + b for a scalar b; generate_vmap_rule = True, the bias's gradient from
        a helper Function with a vmap rule of its own."""

        generate_vmap_rule = True

        @staticmethod
        def forward(x, b):
            return x + b

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, grad):
            return grad, helper.apply(grad)

    AddBias.__name__ = AddBias.__qualname__ = name
    return AddBias


#: The helper's rule sums over the batch too.
AddBias = _add_bias(_SumAllWrong, "AddBias")
AddBiasFixed = _add_bias(_SumAllRight, "AddBiasFixed")


class _RevCumsum(torch.autograd.Function):
    """The reversed cumulative sum of every element (the backward of CumsumAll)."""

    @staticmethod
    def forward(g):
        return g.reshape(-1).flip(0).cumsum(0).flip(0).reshape(g.shape)

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(-1).cumsum(0).reshape(grad.shape)


class _RevCumsumWrong(_RevCumsum):
    @staticmethod
    def vmap(info, in_dims, g):
        g = g.movedim(in_dims[0], 0)
        # .view(-1) as if there were no batch: the sums run across batch members
        return _RevCumsumWrong.apply(g.contiguous().view(-1)).view(g.shape), 0


class _RevCumsumRight(_RevCumsum):
    @staticmethod
    def vmap(info, in_dims, g):
        g = g.movedim(in_dims[0], 0)
        flat = g.reshape(info.batch_size, -1)
        return flat.flip(1).cumsum(1).flip(1).reshape(g.shape), 0


def _cumsum_all(helper: type, name: str) -> type:
    class CumsumAll(torch.autograd.Function):
        """The cumulative sum over every element in order; the forward's rule is
        right, the backward calls a helper Function with a rule of its own."""

        @staticmethod
        def forward(x):
            return x.reshape(-1).cumsum(0).reshape(x.shape)

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, grad):
            return helper.apply(grad)

        @staticmethod
        def vmap(info, in_dims, x):
            x = x.movedim(in_dims[0], 0)
            return x.reshape(info.batch_size, -1).cumsum(1).reshape(x.shape), 0

    CumsumAll.__name__ = CumsumAll.__qualname__ = name
    return CumsumAll


#: The backward's helper runs ``.view(-1)`` over the batch.
CumsumAll = _cumsum_all(_RevCumsumWrong, "CumsumAll")
CumsumAllFixed = _cumsum_all(_RevCumsumRight, "CumsumAllFixed")


def _centered(helper: type, name: str) -> type:
    @gradcheck.describe(modes="rev,fwd")
    class Centered(torch.autograd.Function):
        """x - sum(x) (every element less the total), with a forward mode; the jvp's
        total is a helper Function with a vmap rule of its own (the backward's is
        plain torch)."""

        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x - x.sum()

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, grad):
            return grad - grad.sum()

        @staticmethod
        def jvp(ctx, tangent):
            return tangent - helper.apply(tangent)

    Centered.__name__ = Centered.__qualname__ = name
    return Centered


#: The jvp's helper sums over the batch too (caught with forward mode, which the
#: class's describe asks for).
Centered = _centered(_SumAllWrong, "Centered")
CenteredFixed = _centered(_SumAllRight, "CenteredFixed")
