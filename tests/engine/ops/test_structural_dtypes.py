"""float32 stays float32: the output and every gradient of each structural op keep
the input's precision (the checker compares float32 ops against float64 references
with float32 tolerances, which a silent upcast would hide)."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as mg
from gradcheck import linalg
from gradcheck.nnet import activations as A
from gradcheck.nnet import layers, losses

RNG = np.random.default_rng(0)
M = (RNG.standard_normal((3, 3)) + 4 * np.eye(3)).astype(np.float32)
V = RNG.standard_normal((2, 3)).astype(np.float32)
IMG = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
W = RNG.standard_normal((2, 2, 2, 2)).astype(np.float32)

CASES = {
    "matmul": (lambda a: a @ a, M),
    "einsum": (lambda a: mg.einsum("ii,ij->j", a, a), M),
    "dot": (lambda a: mg.dot(a, a), M),
    "tensordot": (lambda a: mg.tensordot(a, a, 1), M),
    "multi_matmul": (lambda a: mg.multi_matmul([a, a, a]), M),
    "trace": (mg.trace, M),
    "diagonal": (mg.diagonal, M),
    "norm": (lambda a: linalg.norm(a, axis=1), V),
    "norm_nuc": (lambda a: linalg.norm(a, "nuc"), M),
    "inv": (linalg.inv, M),
    "det": (linalg.det, M),
    "slogdet": (lambda a: linalg.slogdet(a)[1], M),
    "solve": (lambda a: linalg.solve(a, a), M),
    "reshape": (lambda a: mg.reshape(a, (3, 2)), V),
    "squeeze": (lambda a: mg.squeeze(a[None]), V),
    "broadcast_to": (lambda a: mg.broadcast_to(a, (2, 2, 3)), V),
    "moveaxis": (lambda a: mg.moveaxis(a, 0, 1), V),
    "roll": (lambda a: mg.roll(a, 1), V),
    "tile": (lambda a: mg.tile(a, 2), V),
    "repeat": (lambda a: mg.repeat(a, 2, axis=0), V),
    "pad": (lambda a: mg.pad(a, 1, mode="reflect"), V),
    "flip": (mg.flip, V),
    "concatenate": (lambda a: mg.concatenate([a, a]), V),
    "stack": (lambda a: mg.stack([a, a]), V),
    "take": (lambda a: mg.take(a, [0, 0, 2], axis=1), V),
    "get_item": (lambda a: a[[0, 0], 1:], V),
    "set_item": (lambda a: mg.set_item(a, (0, [1, 1]), a[1, :2]), V),
    "sort": (mg.sort, V),
    "logsumexp": (lambda a: mg.logsumexp(a, axis=1), V),
    "softmax": (A.softmax, V),
    "logsoftmax": (A.logsoftmax, V),
    "sigmoid": (A.sigmoid, V),
    "relu": (A.relu, V),
    "leaky_relu": (lambda a: A.leaky_relu(a, 0.1), V),
    "elu": (lambda a: A.elu(a, 0.5), V),
    "selu": (A.selu, V),
    "soft_sign": (A.soft_sign, V),
    "hard_tanh": (A.hard_tanh, V),
    "glu": (lambda a: A.glu(a, 0), V),
    "softmax_crossentropy": (lambda a: losses.softmax_crossentropy(a, [0, 2]), V),
    "multiclass_hinge": (lambda a: losses.multiclass_hinge(a, [0, 2]), V),
    "conv_nd": (lambda a: layers.conv_nd(a, W, stride=1, padding=1), IMG),
    "max_pool": (lambda a: layers.max_pool(a, (2, 2), 1), IMG),
    "batchnorm": (lambda a: layers.batchnorm(a, eps=1e-5), IMG),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float32_output_and_gradient(name):
    op, data = CASES[name]
    x = mg.Tensor(data)
    out = op(x)
    assert out.dtype == np.float32, out.dtype
    out.backward(np.ones(out.shape, dtype=np.float32))
    assert x.grad is not None and x.grad.dtype == np.float32, x.grad.dtype
