"""PyTorch ops for the adapter tests (imported only where torch is installed)."""

from __future__ import annotations

import torch

import gradcheck


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad


class WrongCube(torch.autograd.Function):
    """d/dx x³ written as 3x: wrong everywhere but at 0 and 1."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x * grad


class Scale(torch.autograd.Function):
    """New-style Function (forward without ctx, setup_context) with a parameter."""

    @staticmethod
    def forward(x, alpha=2.0):
        return x * alpha

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.alpha = inputs[1]

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.alpha, None


class Identity(torch.autograd.Function):
    """Returns its upstream gradient itself: fine in torch, not an aliasing bug."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad


class Flaky(torch.autograd.Function):
    """A backward that reads a global counter: not deterministic."""

    calls = 0

    @staticmethod
    def forward(ctx, x):
        return 2 * x

    @staticmethod
    def backward(ctx, grad):
        Flaky.calls += 1
        return grad * (2.0 + Flaky.calls)


@gradcheck.describe(domain=(-2, 2))
def sin_times(x, y):
    return torch.sin(x) * y


@gradcheck.describe
def wrong_softplus(x):
    """softplus through a custom Function whose backward forgets the sigmoid."""
    return _BadSoftplus.apply(x)


class _BadSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.nn.functional.softplus(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


class ScaleBy(torch.autograd.Function):
    """Old style with a positional parameter that has no default (`alpha`)."""

    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x * alpha

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.alpha, None


class PowerOf(torch.autograd.Function):
    """The parameter comes first (`v`, a number), the tensor second."""

    @staticmethod
    def forward(ctx, v, z):
        ctx.v = v
        ctx.save_for_backward(z)
        return z**v

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        return None, ctx.v * z ** (ctx.v - 1) * grad


class TakeRow(torch.autograd.Function):
    """New style (setup_context) with a positional parameter `row` and a defaulted
    one `scale`."""

    @staticmethod
    def forward(x, row, scale=1.0):
        return x[row] * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, row, scale = inputs
        ctx.shape, ctx.row, ctx.scale = x.shape, row, scale

    @staticmethod
    def backward(ctx, grad):
        out = grad.new_zeros(ctx.shape)
        out[ctx.row] = grad * ctx.scale
        return out, None, None


class PickLogit(torch.autograd.Function):
    """logits[i, labels[i]] summed: labels an int64 tensor of class indices."""

    @staticmethod
    def forward(ctx, logits, labels):
        ctx.save_for_backward(labels)
        ctx.shape = logits.shape
        return logits.gather(1, labels[:, None]).sum()

    @staticmethod
    def backward(ctx, grad):
        (labels,) = ctx.saved_tensors
        out = grad.new_zeros(ctx.shape)
        out.scatter_add_(1, labels[:, None], grad.expand(len(labels), 1).contiguous())
        return out, None


class BCEWithLabel(torch.autograd.Function):
    """Binary cross entropy on logits; the label (floats) gets no gradient (None)."""

    @staticmethod
    def forward(ctx, logits, label):
        ctx.save_for_backward(logits, label)
        return torch.nn.functional.binary_cross_entropy_with_logits(logits, label, reduction="sum")

    @staticmethod
    def backward(ctx, grad):
        logits, label = ctx.saved_tensors
        return grad * (torch.sigmoid(logits) - label), None


class AffineFunction(torch.autograd.Function):
    """x @ w.T + b, as the docs' LinearFunction; `wrong` scales w's gradient."""

    wrong = 1.0

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return x @ w.T + b

    @classmethod
    def backward(cls, ctx, grad):
        x, w = ctx.saved_tensors
        return grad @ w, cls.wrong * grad.T @ x, grad.sum(0)


class WrongAffineFunction(AffineFunction):
    wrong = 1.01


affine = AffineFunction.apply  # an alias of apply, as users write them


class Affine(torch.nn.Module):
    """An nn.Module whose parameters (weight, bias) go through a custom Function."""

    function = AffineFunction

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(n_out, n_in, dtype=torch.float64))
        self.bias = torch.nn.Parameter(torch.randn(n_out, dtype=torch.float64))

    def forward(self, x):
        return self.function.apply(x, self.weight, self.bias)


class WrongAffine(Affine):
    function = WrongAffineFunction


class CubeModule(torch.nn.Module):
    """An nn.Module class whose constructor takes no argument."""

    def forward(self, x):
        return Cube.apply(x)


class SortValues(torch.autograd.Function):
    """(sorted values, indices): the indices are an integer output, not differentiable."""

    scale = 1.0

    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x)
        ctx.save_for_backward(indices)
        ctx.mark_non_differentiable(indices)
        return values, indices

    @classmethod
    def backward(cls, ctx, grad_values, grad_indices):
        (indices,) = ctx.saved_tensors
        out = torch.zeros_like(grad_values)
        out[indices] = grad_values * cls.scale
        return out


class WrongSortValues(SortValues):
    scale = 1.01


class WithNone(torch.autograd.Function):
    """Returns (y, None), as entmax's Entmax15Function does."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin(), None

    @staticmethod
    def backward(ctx, grad, _):
        (x,) = ctx.saved_tensors
        return grad * x.cos()


class ScalesSaved(torch.autograd.Function):
    """Swish, its derivative kept on ctx by the forward."""

    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.d = s * (1 + x * (1 - s))
        return x * s

    @staticmethod
    def backward(ctx, grad):
        return ctx.d * grad


class MutatesSaved(ScalesSaved):
    """pytorch-loss's SwishV2: the backward scales what the forward kept, in place
    (`grad *= grad_output`): right once, wrong on a second backward of the graph."""

    @staticmethod
    def backward(ctx, grad):
        ctx.d *= grad
        return ctx.d


class Float32Output(torch.autograd.Function):
    """Right formula, float32 output for float64 input (torch.Tensor(...) does that)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.Tensor(x.sin().tolist())

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos()


class MulIgnoringNeeds(torch.autograd.Function):
    """a * b whose gradient for a is wrong when b needs none."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = grad * b * (1.0 if ctx.needs_input_grad[1] else 3.0)
        gb = grad * a if ctx.needs_input_grad[1] else None
        return ga, gb


class MutatesSavedTensor(torch.autograd.Function):
    """Changes a tensor saved with save_for_backward in place: torch's own check makes
    the second backward on the graph raise."""

    @staticmethod
    def forward(ctx, x):
        s = torch.sigmoid(x)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad):
        (s,) = ctx.saved_tensors
        return s.mul_(1 - s) * grad


class DoubleInPlace(torch.autograd.Function):
    """Doubles its input in place and marks it dirty (old-style forward)."""

    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class WrongDoubleInPlace(DoubleInPlace):
    """The same, with the gradient of 3x."""

    @staticmethod
    def backward(ctx, grad):
        return grad * 3


class AddSquareInPlace(torch.autograd.Function):
    """a += b * b in place, marked dirty in a new-style setup_context."""

    @staticmethod
    def forward(a, b):
        return a.add_(b * b)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.mark_dirty(inputs[0])
        ctx.save_for_backward(inputs[1])

    @staticmethod
    def backward(ctx, grad):
        (b,) = ctx.saved_tensors
        return grad, 2 * grad * b


class WrongAddSquareInPlace(AddSquareInPlace):
    """The same, with b's gradient missing its factor 2."""

    @staticmethod
    def backward(ctx, grad):
        (b,) = ctx.saved_tensors
        return grad, grad * b
