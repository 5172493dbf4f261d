"""NumPy functions and ufuncs called on tensors build graph ops."""

import numpy as np
import pytest

import gradcheck as mg
from tests.support.elementwise_support import check_gradients

UFUNCS_1 = ["sin", "cos", "tan", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p"]
UFUNCS_1 += ["sinh", "cosh", "tanh", "arcsinh", "arctan", "sqrt", "cbrt", "square"]
UFUNCS_1 += ["negative", "positive", "reciprocal", "absolute", "abs"]
UFUNCS_2 = ["add", "subtract", "multiply", "divide", "true_divide", "power", "arctan2"]
UFUNCS_2 += ["logaddexp", "logaddexp2", "maximum", "minimum"]


@pytest.mark.parametrize("name", UFUNCS_1)
def test_unary_ufuncs_dispatch_to_the_graph_op(name):
    data = np.array([0.5, 1.5, 2.5])
    x = mg.Tensor(data)
    out = getattr(np, name)(x)
    assert isinstance(out, mg.Tensor) and out.creator is not None
    np.testing.assert_allclose(out.data, getattr(np, name)(data))
    check_gradients(lambda t: getattr(np, name)(t), data)


@pytest.mark.parametrize("name", UFUNCS_2)
def test_binary_ufuncs_with_tensors_and_arrays_on_either_side(name):
    a, b = np.array([0.5, 1.5, 2.5]), np.array([[1.25], [2.0]])
    ufunc = getattr(np, name)
    for left, right in [(mg.Tensor(a), b), (a, mg.Tensor(b)), (mg.Tensor(a), mg.Tensor(b))]:
        out = ufunc(left, right)
        assert isinstance(out, mg.Tensor) and out.creator is not None
        np.testing.assert_allclose(out.data, ufunc(a, b))
    check_gradients(lambda s, t: ufunc(s, t), a, b)


@pytest.mark.parametrize(
    "func, kwargs",
    [
        (np.sum, {"axis": 0}),
        (np.sum, {"axis": (0, 1), "keepdims": True}),
        (np.mean, {}),
        (np.mean, {"axis": -1}),
        (np.var, {"ddof": 1}),
        (np.std, {"axis": 0}),
        (np.max, {"axis": 1}),
        (np.amax, {}),
        (np.min, {"axis": 0}),
        (np.amin, {}),
        (np.prod, {"axis": 1}),
        (np.cumsum, {"axis": 1}),
        (np.cumprod, {}),
        (np.clip, {"a_min": -0.5, "a_max": 0.75}),
    ],
)
def test_numpy_functions_dispatch_to_the_graph_op(func, kwargs):
    data = np.array([[0.3, -1.2, 2.0], [1.1, 0.7, -0.4]])
    out = func(mg.Tensor(data), **kwargs)
    assert isinstance(out, mg.Tensor) and out.creator is not None
    np.testing.assert_allclose(out.data, func(data, **kwargs))
    check_gradients(lambda t: func(t, **kwargs), data)


def test_where_and_like_functions():
    x, y = mg.Tensor([1.0, 2.0]), mg.Tensor([3.0, 4.0])
    out = np.where([True, False], x, y)
    assert isinstance(out, mg.Tensor)
    out.backward()
    np.testing.assert_array_equal(x.grad, [1.0, 0.0])
    like = np.zeros_like(x)
    assert isinstance(like, mg.Tensor) and like.shape == (2,)


def test_ndarray_operators_with_a_tensor_on_the_right_build_ops():
    a = np.array([1.0, 2.0])
    x = mg.Tensor([3.0, 5.0])
    for out, expected in [(a + x, a + x.data), (a * x, a * x.data), (a / x, a / x.data)]:
        assert isinstance(out, mg.Tensor)
        np.testing.assert_allclose(out.data, expected)
    (a - x).sum().backward()
    np.testing.assert_array_equal(x.grad, [-1.0, -1.0])


def test_comparisons_and_boolean_ufuncs_return_arrays():
    a, x = np.array([1.0, 4.0]), mg.Tensor([3.0, 2.0])
    for result in (a < x, np.greater(x, a), np.isfinite(x), np.logical_and(x > 0, a > 2)):
        assert type(result) is np.ndarray and result.dtype == bool
    np.testing.assert_array_equal(a < x, [True, False])


def test_non_differentiable_ufuncs_run_on_constants_and_refuse_gradients():
    np.testing.assert_array_equal(np.floor(mg.Tensor([1.5], constant=True)), [1.0])
    with pytest.raises(TypeError, match="not differentiable"):
        np.floor(mg.Tensor([1.5]))


def test_unsupported_ufunc_arguments_raise_a_clear_type_error():
    x = mg.Tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="does not support casting"):
        np.sin(x, casting="unsafe")
    with pytest.raises(TypeError, match="method 'reduce'"):
        np.add.reduce(x)
    with pytest.raises(TypeError, match="in place"):  # floor: not a gradcheck ufunc
        np.floor(np.ones(2), out=(x,))


def test_writing_into_a_plain_array_keeps_working():
    a = np.ones(2)
    a += mg.Tensor([1.0, 2.0])
    np.testing.assert_array_equal(a, [2.0, 3.0])


def test_inspecting_functions_run_on_the_data():
    x = mg.Tensor([[1.0, 3.0, 2.0]])
    assert np.shape(x) == (1, 3)
    assert np.argmax(x) == 1
    assert np.allclose(x, [[1.0, 3.0, 2.0]])


def test_unsupported_numpy_functions_raise_type_error():
    with pytest.raises(TypeError, match="histogram"):
        np.histogram(mg.Tensor([1.0, 2.0]))
