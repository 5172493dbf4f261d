"""A hold-out set of ops, written after the CLI was finished, the way a user writes
them: correct ops whose names start with ``Ok``/``ok_``, and ops with a deliberate bug
(``Bug``/``bug_``). ``gradcheck verify holdout_ops`` must pass every correct one and
catch every bug, whatever the seed (tests/cli/test_holdout.py).

No op here declares anything beyond what a user would naturally know about it (its
domain, its shapes, its dtype).
"""

from __future__ import annotations

import numpy as np

import gradcheck
from gradcheck import BroadcastableOp, Operation

# --- correct ops -------------------------------------------------------------------


class OkSigmoid(Operation):
    def __call__(self, x):
        self.variables = (x,)
        self.s = 1 / (1 + np.exp(-x.data))
        return self.s

    def backward_var(self, grad, index, **kwargs):
        return grad * self.s * (1 - self.s)


@gradcheck.describe(shapes=["n,k"])
class OkLogSumExp(Operation):
    """log(sum(exp(x), axis=-1)), computed stably."""

    def __call__(self, x):
        self.variables = (x,)
        m = x.data.max(axis=-1, keepdims=True)
        self.lse = m + np.log(np.exp(x.data - m).sum(axis=-1, keepdims=True))
        return self.lse[..., 0]

    def backward_var(self, grad, index, **kwargs):
        softmax = np.exp(self.variables[0].data - self.lse)
        return grad[..., None] * softmax


@gradcheck.describe(broadcast=True, avoid=[0.0])
class OkHypot(BroadcastableOp):
    def __call__(self, a, b):
        self.variables = (a, b)
        self.out = np.hypot(a.data, b.data)
        return self.out

    def backward_var(self, grad, index, **kwargs):
        return grad * self.variables[index].data / self.out


class OkRelu(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return np.maximum(x.data, 0)

    def backward_var(self, grad, index, **kwargs):
        return grad * (self.variables[0].data > 0)


@gradcheck.describe(dtype="float32")
class OkTanh32(Operation):
    def __call__(self, x):
        self.variables = (x,)
        self.t = np.tanh(x.data)
        return self.t

    def backward_var(self, grad, index, **kwargs):
        return (grad * (1 - self.t * self.t)).astype(np.float32)


@gradcheck.describe(domain=(0.5, 3.0))
class OkNormalize(Operation):
    """x / sum(x): every output depends on every input."""

    def __call__(self, x):
        self.variables = (x,)
        self.total = x.data.sum()
        return x.data / self.total

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        return grad / self.total - np.sum(grad * x) / self.total**2


@gradcheck.describe(shapes=["n,k"])
class OkCumsum(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return np.cumsum(x.data, axis=-1)

    def backward_var(self, grad, index, **kwargs):
        return np.flip(np.cumsum(np.flip(grad, -1), axis=-1), -1)


@gradcheck.describe(shapes=["n,k"])
class OkRowMean(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data.mean(axis=1)

    def backward_var(self, grad, index, **kwargs):
        n, k = self.variables[0].shape
        return np.broadcast_to(grad[:, None] / k, (n, k)).copy()


@gradcheck.describe(domain=(-3.0, 3.0))
def ok_mish(x):
    """x * tanh(softplus(x)), from gradcheck's own ops."""
    return x * gradcheck.tanh(gradcheck.log(1 + gradcheck.exp(x)))


# --- ops with a bug ----------------------------------------------------------------


class BugSigmoidSign(Operation):
    """The derivative's sign is flipped."""

    def __call__(self, x):
        self.variables = (x,)
        self.s = 1 / (1 + np.exp(-x.data))
        return self.s

    def backward_var(self, grad, index, **kwargs):
        return -grad * self.s * (1 - self.s)


@gradcheck.describe(shapes=["n,k", "k"])
class BugBiasBroadcast(Operation):
    """x + b with b broadcast over rows: the gradient of b averages over the rows
    instead of summing them (right only with one row)."""

    def __call__(self, x, b):
        self.variables = (x, b)
        return x.data + b.data

    def backward_var(self, grad, index, **kwargs):
        return grad if index == 0 else grad.mean(axis=0)


@gradcheck.describe(shapes=["n,k"])
class BugCumsumOffByOne(Operation):
    """The reversed cumulative sum in the backward excludes the element itself."""

    def __call__(self, x):
        self.variables = (x,)
        return np.cumsum(x.data, axis=-1)

    def backward_var(self, grad, index, **kwargs):
        inclusive = np.flip(np.cumsum(np.flip(grad, -1), axis=-1), -1)
        return inclusive - grad


@gradcheck.describe(shapes=["n,k"])
class BugRowMeanNonSquare(Operation):
    """Divides by the number of rows instead of columns: right on square inputs only."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data.mean(axis=1)

    def backward_var(self, grad, index, **kwargs):
        n, k = self.variables[0].shape
        return np.broadcast_to(grad[:, None] / n, (n, k)).copy()


class BugMutatesInput(Operation):
    """Computes tanh in place, overwriting its input."""

    def __call__(self, x):
        self.variables = (x,)
        np.tanh(x.data, out=x.data)
        self.t = x.data.copy()
        return self.t.copy()

    def backward_var(self, grad, index, **kwargs):
        return grad * (1 - self.t**2)


@gradcheck.describe(dtype="float32")
class BugSoftsign32(Operation):
    """softsign(x) = x / (1 + |x|) in float32; the derivative misses a square."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data / (1 + np.abs(x.data))

    def backward_var(self, grad, index, **kwargs):
        return (grad / (1 + np.abs(self.variables[0].data))).astype(np.float32)


class BugTinyScale(Operation):
    """exp(x) whose gradient is off by a relative 1e-5."""

    def __call__(self, x):
        self.variables = (x,)
        return np.exp(x.data)

    def backward_var(self, grad, index, **kwargs):
        return grad * np.exp(self.variables[0].data) * (1 + 1e-5)


class BugIgnoresUpstream(Operation):
    """Returns the local derivative without multiplying the upstream gradient in."""

    def __call__(self, x):
        self.variables = (x,)
        return np.sin(x.data)

    def backward_var(self, grad, index, **kwargs):
        return np.broadcast_to(np.cos(self.variables[0].data), grad.shape).copy()


class BugNondeterministic(Operation):
    """Adds a little noise to its gradient."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data**2

    def backward_var(self, grad, index, **kwargs):
        noise = np.random.default_rng().normal(scale=1e-9, size=grad.shape)
        return grad * (2 * self.variables[0].data + noise)


class BugClampedRegion(Operation):
    """x**3 / 3, but the gradient is clamped for |x| > 4 (a wrong 'safety' clamp)."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data**3 / 3

    def backward_var(self, grad, index, **kwargs):
        return grad * np.minimum(self.variables[0].data ** 2, 16.0)


@gradcheck.describe(domain=(-3.0, 3.0))
def bug_function_detached(x):
    """A function of tensors that breaks the graph: the gradient of the exp factor
    is lost (the data is taken out and wrapped again as a constant)."""
    return x * gradcheck.Tensor(np.exp(x.data), constant=True)
