"""nnet layers: conv_nd, max_pool, batchnorm against naive NumPy loops (and MyGrad
when installed), gradients against finite differences."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg
from gradcheck.nnet.layers import batchnorm, conv_nd, max_pool
from tests.support.gradients import check_gradients
from tests.support.op_inputs import generic_array


def _conv_loops(x, w, stride, padding, dilation):
    """The definition, one output element at a time."""
    n = w.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    out_sp = [
        (xp.shape[2 + i] - dilation[i] * (w.shape[2 + i] - 1) - 1) // stride[i] + 1
        for i in range(n)
    ]
    out = np.zeros((x.shape[0], w.shape[0], *out_sp))
    for b, f, *o in itertools.product(range(x.shape[0]), range(w.shape[0]), *map(range, out_sp)):
        total = 0.0
        for c, *k in itertools.product(range(w.shape[1]), *map(range, w.shape[2:])):
            pos = tuple(o[i] * stride[i] + k[i] * dilation[i] for i in range(n))
            total += xp[(b, c, *pos)] * w[(f, c, *k)]
        out[(b, f, *o)] = total
    return out


@st.composite
def conv_inputs(draw):
    n = draw(st.integers(1, 3))
    kernel = tuple(draw(st.integers(1, 2)) for _ in range(n))
    stride = tuple(draw(st.integers(1, 2)) for _ in range(n))
    padding = tuple(draw(st.integers(0, 1)) for _ in range(n))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(n))
    spatial = tuple(
        draw(st.integers(max(1, d * (k - 1) + 1 - 2 * p), 4 if n < 3 else 3))
        for k, p, d in zip(kernel, padding, dilation)
    )
    batch, chans, filters = (
        draw(st.integers(1, 2)),
        draw(st.integers(1, 2)),
        draw(st.integers(1, 2)),
    )
    x = draw(generic_array((batch, chans, *spatial)))
    w = draw(generic_array((filters, chans, *kernel)))
    return x, w, stride, padding, dilation


@given(conv_inputs())
def test_conv_nd(inputs):
    x, w, stride, padding, dilation = inputs
    kwargs = {"stride": stride, "padding": padding, "dilation": dilation}
    out = conv_nd(x, w, **kwargs)
    np.testing.assert_allclose(out.data, _conv_loops(x, w, stride, padding, dilation), atol=1e-12)
    check_gradients(lambda a, b: conv_nd(a, b, **kwargs), x, w)


def test_conv_nd_int_arguments_and_mygrad():
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((4, 3, 3, 2))
    out = conv_nd(x, w, stride=2, padding=1, dilation=1)
    np.testing.assert_allclose(out.data, _conv_loops(x, w, (2, 2), (1, 1), (1, 1)), atol=1e-12)
    mygrad = pytest.importorskip("mygrad")
    theirs = mygrad.nnet.layers.conv_nd(x, w, stride=2, padding=1, dilation=1)
    np.testing.assert_allclose(out.data, theirs.data, atol=1e-12)


def test_conv_nd_rejects_mismatched_channels():
    with pytest.raises(ValueError, match="filter bank"):
        conv_nd(np.ones((1, 2, 4)), np.ones((1, 3, 2)), stride=1)


def _pool_loops(x, pool, stride):
    n = len(pool)
    out_sp = [(x.shape[x.ndim - n + i] - pool[i]) // stride[i] + 1 for i in range(n)]
    out = np.zeros(x.shape[: x.ndim - n] + tuple(out_sp))
    for lead in np.ndindex(x.shape[: x.ndim - n]):
        for o in itertools.product(*map(range, out_sp)):
            window = x[
                lead + tuple(slice(o[i] * stride[i], o[i] * stride[i] + pool[i]) for i in range(n))
            ]
            out[lead + tuple(o)] = window.max()
    return out


@given(st.data(), st.integers(1, 3), st.integers(0, 2))
def test_max_pool(data, n, lead):
    pool = tuple(data.draw(st.integers(1, 2)) for _ in range(n))
    stride = tuple(data.draw(st.integers(1, 2)) for _ in range(n))
    shape = tuple(data.draw(st.integers(1, 2)) for _ in range(lead))
    shape += tuple(data.draw(st.integers(p, 4)) for p in pool)
    x = data.draw(generic_array(shape))
    np.testing.assert_array_equal(max_pool(x, pool, stride).data, _pool_loops(x, pool, stride))
    check_gradients(lambda t: max_pool(t, pool, stride), x)


def test_max_pool_tie_policy_and_overlap():
    x = mg.Tensor([[1.0, 1.0, 0.0]])
    max_pool(x, (2,), 1).backward()  # windows [1, 1] and [1, 0]: the first maximum
    np.testing.assert_array_equal(x.grad, [[1.0, 1.0, 0.0]])
    x = mg.Tensor([[0.0, 5.0, 0.0]])
    max_pool(x, (2,), 1).backward()  # both windows pick the same element
    np.testing.assert_array_equal(x.grad, [[0.0, 2.0, 0.0]])


def test_max_pool_agrees_with_mygrad():
    mygrad = pytest.importorskip("mygrad")
    x = np.random.default_rng(5).standard_normal((2, 3, 5, 4))
    ours = max_pool(x, (2, 2), (1, 2)).data
    np.testing.assert_array_equal(ours, mygrad.nnet.layers.max_pool(x, (2, 2), (1, 2)).data)


@given(st.data(), st.integers(0, 2), st.booleans())
def test_batchnorm(data, extra, affine):
    shape = (data.draw(st.integers(2, 3)), data.draw(st.integers(1, 2)))
    shape += tuple(data.draw(st.integers(1, 2)) for _ in range(extra))
    x = data.draw(generic_array(shape))
    axes = (0, *range(2, len(shape)))
    per_channel = (-1,) + (1,) * (len(shape) - 2)
    expected = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + 1e-5)
    if affine:
        gamma = data.draw(generic_array((shape[1],)))
        beta = data.draw(generic_array((shape[1],)))
        expected = expected * gamma.reshape(per_channel) + beta.reshape(per_channel)
        out = batchnorm(x, gamma=gamma, beta=beta, eps=1e-5)
        np.testing.assert_allclose(out.data, expected, rtol=1e-10, atol=1e-12)
        check_gradients(lambda a, g, b: batchnorm(a, gamma=g, beta=b, eps=1e-5), x, gamma, beta)
    else:
        np.testing.assert_allclose(batchnorm(x, eps=1e-5).data, expected, rtol=1e-10, atol=1e-12)
        check_gradients(lambda a: batchnorm(a, eps=1e-5), x, rtol=1e-4)


def test_batchnorm_agrees_with_mygrad():
    mygrad = pytest.importorskip("mygrad")
    rng = np.random.default_rng(6)
    x, g, b = rng.standard_normal((4, 3, 2)), rng.standard_normal(3), rng.standard_normal(3)
    np.testing.assert_allclose(
        batchnorm(x, gamma=g, beta=b, eps=1e-3).data,
        mygrad.nnet.layers.batchnorm(x, gamma=g, beta=b, eps=1e-3).data,
        rtol=1e-10,
    )
