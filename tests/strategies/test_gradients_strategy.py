"""`gradients()`, `invalid_gradients()`, `everything_except()`, against the engine's
`is_invalid_gradient`, `Tensor.backward` and `Operation.backward`."""

from __future__ import annotations

from numbers import Real

import numpy as np
import pytest
from hypothesis import find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.extra import numpy as hnp

import gradcheck as mg
from gradcheck.strategies import everything_except, gradients, invalid_gradients

small_shapes = hnp.array_shapes(min_dims=0, max_dims=3, max_side=3)
real_dtypes = st.sampled_from([np.float16, np.float32, np.float64, np.int32, np.uint8])


def _op_returning(value):
    """An op whose backward_var returns ``value`` whatever it is asked."""

    class Returns(mg.Operation):
        def __call__(self, a):
            self.variables = (a,)
            return a.data * 1.0

        def backward_var(self, grad, index, **kwargs):
            return value

    return Returns


@given(shape=small_shapes, dtype=real_dtypes, data=st.data())
def test_gradients_are_valid_and_have_the_shape(shape, dtype, data):
    grad = data.draw(gradients(shape, dtype=dtype))
    assert not mg.is_invalid_gradient(grad)
    assert np.shape(grad) == shape

    x = mg.Tensor(np.zeros(shape))
    x.backward(grad)
    np.testing.assert_array_equal(x.grad, grad)

    y = mg.Tensor(np.zeros(shape))
    mg.execute_op(_op_returning(grad), y).backward(np.ones(shape))
    np.testing.assert_array_equal(y.grad, grad)


def test_scalar_gradients_are_drawn_for_zero_dimensional_shapes():
    assert type(find(gradients(()), lambda g: type(g) is float)) is float
    assert type(find(gradients((), dtype=np.int64), lambda g: type(g) is int)) is int
    assert isinstance(find(gradients(()), lambda g: isinstance(g, np.float64)), np.float64)


@given(gradients((), allow_scalars=False))
def test_allow_scalars_false_draws_only_arrays(grad):
    assert isinstance(grad, np.ndarray) and grad.shape == ()


@given(invalid_gradients())
def test_every_invalid_gradient_is_rejected_everywhere(grad):
    assert mg.is_invalid_gradient(grad)
    # backward(None) means "the default gradient, ones"; backward takes a list or
    # tuple of numbers as the array it makes (MyGrad's array-like gradient)
    if grad is not None and not isinstance(grad, (list, tuple)):
        with pytest.raises(mg.InvalidGradient):
            mg.Tensor([1.0, 2.0]).backward(grad)
    with pytest.raises(mg.InvalidGradient):
        mg.execute_op(_op_returning(grad), mg.Tensor([1.0, 2.0])).backward()


@pytest.mark.parametrize(
    "kind",
    [
        lambda g: g is None,
        lambda g: isinstance(g, bool),
        lambda g: isinstance(g, complex),
        lambda g: isinstance(g, str),
        lambda g: isinstance(g, list),
        lambda g: isinstance(g, dict),
        lambda g: type(g) is object,
        lambda g: isinstance(g, np.ndarray) and g.dtype == object,
        lambda g: isinstance(g, np.ndarray) and g.dtype == bool,
        lambda g: isinstance(g, np.ndarray) and g.dtype.kind == "c",
        lambda g: isinstance(g, np.ndarray) and g.dtype.kind == "U",
    ],
)
def test_invalid_gradients_covers_each_kind(kind):
    assert kind(find(invalid_gradients(), kind))


@settings(max_examples=25)
@given(everything_except(np.ndarray, Real))
def test_everything_but_arrays_and_reals_is_an_invalid_gradient(value):
    assert not isinstance(value, (np.ndarray, Real))
    assert mg.is_invalid_gradient(value)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: gradients((2,), dtype=bool), "dtype"),
        (lambda: gradients((2,), dtype=np.complex128), "dtype"),
        (lambda: gradients((2,), dtype="nope"), "dtype"),
        (lambda: gradients(small_shapes), "shape"),
        (lambda: gradients((2, -1)), "shape"),
        (lambda: gradients((2,), elements=[1.0]), "elements"),
        (lambda: gradients((), allow_scalars=None), "allow_scalars"),
        (lambda: everything_except(), "at least one type"),
        (lambda: everything_except(3), "must be a type"),
    ],
)
def test_invalid_arguments_are_refused(call, message):
    with pytest.raises(InvalidArgument, match=message):
        call()
