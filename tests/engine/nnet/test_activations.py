"""nnet activations: forward against independent NumPy formulas (and MyGrad when
installed), backward against finite differences away from kinks, kink policies
checked exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg
from gradcheck.nnet import activations as A
from tests.support.gradients import check_gradients
from tests.support.op_inputs import generic_array, small_shapes

SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def _softmax_ref(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# name -> (gradcheck call, NumPy reference, MyGrad call name and extra arguments)
ELEMENTWISE = {
    "relu": (A.relu, lambda x: np.maximum(x, 0), ()),
    "leaky_relu": (lambda x: A.leaky_relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x), (0.1,)),
    "elu": (lambda x: A.elu(x, 0.5), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1)), (0.5,)),
    "selu": (A.selu, lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * (np.exp(x) - 1)), ()),
    "sigmoid": (A.sigmoid, lambda x: 1 / (1 + np.exp(-x)), ()),
    "soft_sign": (A.soft_sign, lambda x: x / (1 + np.abs(x)), ()),
    "hard_tanh": (A.hard_tanh, lambda x: np.clip(x, -1, 1), ()),
    "tanh": (A.tanh, np.tanh, ()),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
@given(data=st.data(), shape=small_shapes(0, 3))
def test_elementwise_activations(name, data, shape):
    op, reference, _ = ELEMENTWISE[name]
    x = data.draw(generic_array(shape, scale=2.0))
    np.testing.assert_allclose(op(x).data, reference(x), rtol=1e-12, atol=1e-15)
    check_gradients(op, x)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_activations_agree_with_mygrad(name):
    mygrad = pytest.importorskip("mygrad")
    op, _, extra = ELEMENTWISE[name]
    x = np.random.default_rng(0).standard_normal((3, 4)) * 2
    expected_fn = getattr(mygrad.nnet.activations, name)
    np.testing.assert_allclose(op(x).data, expected_fn(x, *extra).data, rtol=1e-12)


@pytest.mark.parametrize("axis", [-1, 0, (0, 1), None])
@given(data=st.data())
def test_softmax_and_logsoftmax(axis, data):
    x = data.draw(generic_array((2, 3), scale=3.0))
    expected = _softmax_ref(x, axis)
    np.testing.assert_allclose(A.softmax(x, axis).data, expected, rtol=1e-12)
    # log-softmax against its own stable formula: np.log(softmax) loses the relative
    # precision of values near 0 (log of 1 - 6e-9 is off by ~1e-8 relative)
    z = x - x.max(axis=axis, keepdims=True)
    log_expected = z - np.log(np.exp(z).sum(axis=axis, keepdims=True))
    np.testing.assert_allclose(A.logsoftmax(x, axis).data, log_expected, rtol=1e-12, atol=1e-15)
    check_gradients(lambda t: A.softmax(t, axis), x)
    check_gradients(lambda t: A.logsoftmax(t, axis), x)


def test_softmax_and_logsoftmax_are_stable():
    x = np.array([[1000.0, 0.0, -1000.0]])
    np.testing.assert_allclose(A.softmax(x).data, [[1.0, 0.0, 0.0]])
    out = A.logsoftmax(x).data
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, [[0.0, -1000.0, -2000.0]])
    t = mg.Tensor(x)
    A.logsoftmax(t).sum().backward()
    assert np.all(np.isfinite(t.grad))


def test_softmax_agrees_with_mygrad():
    mygrad = pytest.importorskip("mygrad")
    x = np.random.default_rng(1).standard_normal((3, 4))
    for axis in (-1, 0, None):
        np.testing.assert_allclose(
            A.softmax(x, axis).data, mygrad.nnet.activations.softmax(x, axis).data
        )
        np.testing.assert_allclose(
            A.logsoftmax(x, axis).data, mygrad.nnet.activations.logsoftmax(x, axis).data
        )


@given(data=st.data(), shape=small_shapes(1, 3), half=st.integers(1, 2))
def test_glu(data, shape, half):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    shape = list(shape)
    shape[axis] = 2 * half
    x = data.draw(generic_array(tuple(shape)))
    a, b = np.split(x, 2, axis=axis)
    np.testing.assert_allclose(A.glu(x, axis).data, a / (1 + np.exp(-b)), rtol=1e-12)
    check_gradients(lambda t: A.glu(t, axis), x)


def test_glu_agrees_with_mygrad():
    mygrad = pytest.importorskip("mygrad")
    x = np.random.default_rng(2).standard_normal((3, 4))
    np.testing.assert_allclose(A.glu(x, 1).data, mygrad.nnet.activations.glu(x, 1).data)


def _grad(op, x):
    t = mg.Tensor(np.asarray(x, dtype=float))
    op(t).backward()
    return t.grad


def test_kink_policies():
    np.testing.assert_array_equal(_grad(A.relu, [0.0]), [0.0])
    np.testing.assert_array_equal(_grad(lambda t: A.leaky_relu(t, 0.1), [0.0]), [0.1])
    np.testing.assert_array_equal(_grad(lambda t: A.elu(t, 0.5), [0.0]), [1.0])
    np.testing.assert_allclose(_grad(A.selu, [0.0]), [SELU_SCALE])
    np.testing.assert_array_equal(_grad(A.hard_tanh, [-1.0, 1.0, 0.5]), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(_grad(A.soft_sign, [0.0]), [1.0])


def test_sigmoid_saturates_without_overflow():
    with np.errstate(all="raise"):
        out = A.sigmoid(np.array([-1000.0, 1000.0])).data
    np.testing.assert_array_equal(out, [0.0, 1.0])


@pytest.mark.parametrize(
    "call",
    [
        lambda v: A.elu(2.0, alpha=v),
        lambda v: A.leaky_relu(2.0, slope=v),
        lambda v: A.hard_tanh(2.0, lower_bound=v),
        lambda v: A.hard_tanh(2.0, upper_bound=v),
    ],
)
@pytest.mark.parametrize("bad", [None, 1j, "1", [1.0, 2.0]])
def test_scalar_parameters_must_be_real_numbers(call, bad):
    with pytest.raises(TypeError):
        call(bad)


@pytest.mark.parametrize("wrap", [float, np.array, mg.Tensor])
def test_scalar_parameters_may_be_arrays_or_tensors_and_get_no_gradient(wrap):
    x = mg.Tensor([-1.0, 2.0])
    alpha = wrap(0.5)
    y = A.elu(x, alpha) + A.leaky_relu(x, wrap(0.1))
    assert type(y.creator.variables[0].creator.alpha) is float
    y.backward()
    np.testing.assert_allclose(x.grad, [0.5 * np.exp(-1.0) + 0.1, 2.0])
    if isinstance(alpha, mg.Tensor):
        assert alpha.grad is None


def test_hard_tanh_with_crossed_bounds_is_the_lower_bound():
    # max(min(x, upper), lower), as MyGrad: lower > upper gives lower everywhere
    x = mg.Tensor([-5.0, 0.0, 5.0])
    y = A.hard_tanh(x, lower_bound=2.0, upper_bound=-1.0)
    np.testing.assert_array_equal(y.data, [2.0, 2.0, 2.0])
    y.backward()
    np.testing.assert_array_equal(x.grad, [0.0, 0.0, 0.0])


def test_glu_axis_must_be_an_integer():
    for bad in (None, 1j, 1.0):
        with pytest.raises(TypeError):
            A.glu(np.ones((2, 2)), axis=bad)
    x = np.array([[1.0, 2.0], [0.0, 0.0]])
    for axis in (np.array(0), mg.Tensor(0), np.int64(0)):
        np.testing.assert_allclose(A.glu(x, axis=axis).data, [[0.5, 1.0]])


@pytest.mark.parametrize("f", [A.softmax, A.logsoftmax])
def test_softmax_of_integers_is_float64_and_of_nothing_is_empty(f):
    ints = np.array([[1, 3], [2, 2]], dtype=np.int8)
    out = f(ints)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.data, f(ints.astype(np.float64)).data)
    for dtype in (np.float16, np.dtype(">f4"), np.int16):
        empty = np.zeros((0, 3), dtype=dtype)
        out = f(empty, axis=0)
        assert out.shape == (0, 3)
        assert out.dtype == (empty.dtype if empty.dtype.kind == "f" else np.float64)


def test_compositions_take_the_requested_constant():
    from gradcheck.nnet.layers import batchnorm

    x = np.array([[1.0, 2.0], [3.0, 5.0]])
    assert A.glu(x, constant=False).constant is False
    assert A.glu(mg.Tensor(x), constant=True).constant is True
    assert batchnorm(x, eps=1e-5, constant=False).constant is False
    assert batchnorm(mg.Tensor(x), eps=1e-5, constant=True).constant is True
    assert batchnorm(mg.Tensor(x), eps=1e-5).constant is False
