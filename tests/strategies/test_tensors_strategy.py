"""`tensors()`: what it draws obeys its arguments; bad arguments are refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import find, given
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.extra import numpy as hnp

import gradcheck as mg
from gradcheck.strategies import tensors


@given(tensors(dtype=np.float32, shape=(2, 3)))
def test_dtype_and_shape_are_obeyed(t):
    assert isinstance(t, mg.Tensor)
    assert t.dtype == np.float32 and t.shape == (2, 3)


@given(tensors(shape=hnp.array_shapes(min_dims=1, max_dims=2, min_side=2, max_side=3)))
def test_shape_strategies_are_obeyed(t):
    assert 1 <= t.ndim <= 2 and all(2 <= n <= 3 for n in t.shape)


@given(tensors())
def test_default_values_are_well_conditioned(t):
    x = t.data
    assert np.isfinite(x).all()
    assert (np.abs(x) <= 10).all()
    # No subnormals: every nonzero magnitude is at least the smallest normal.
    assert (np.abs(x[x != 0]) >= np.finfo(x.dtype).tiny).all()


@pytest.mark.parametrize("constant", [True, False])
@given(data=st.data())
def test_a_fixed_constant_flag_is_obeyed(constant, data):
    assert data.draw(tensors(constant=constant)).constant is constant


def test_constant_none_draws_both():
    assert find(tensors(), lambda t: t.constant).constant
    assert not find(tensors(), lambda t: not t.constant).constant


@given(tensors(dtype=st.sampled_from([np.int8, np.int64, np.uint8, np.bool_])))
def test_integer_and_bool_tensors_are_always_constant(t):
    assert t.constant and t.dtype.kind in "iub"


@given(tensors(include_grad=True))
def test_include_grad_sets_a_valid_grad_on_every_non_constant_tensor(t):
    if t.constant:
        assert t.grad is None
    else:
        assert isinstance(t.grad, np.ndarray)
        assert t.grad.shape == t.shape and t.grad.dtype == t.dtype
        assert not mg.is_invalid_gradient(t.grad)


@given(tensors(shape=(3,), elements=st.just(1.5)))
def test_elements_are_used(t):
    assert (t.data == 1.5).all()


def test_shrinks_to_a_zero_dimensional_zero_that_is_not_constant():
    t = find(tensors(), lambda t: not t.constant)
    assert t.shape == () and t.item() == 0.0
    assert find(tensors(), lambda t: t.size >= 2).shape == (2,)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"dtype": "U3"}, "dtype"),
        ({"dtype": object}, "dtype"),
        ({"dtype": "not a dtype"}, "dtype"),
        ({"dtype": np.int32, "constant": False}, "constant=False"),
        ({"constant": "yes"}, "constant"),
        ({"include_grad": 1}, "include_grad"),
        ({"shape": (-1, 2)}, "shape"),
        ({"shape": "2,3"}, "shape"),
        ({"elements": 3.0}, "elements"),
    ],
)
def test_invalid_arguments_are_refused_up_front(kwargs, message):
    with pytest.raises(InvalidArgument, match=message):
        tensors(**kwargs)


@given(tensors(dtype=st.sampled_from([np.int16, np.float32]), constant=False))
def test_constant_false_with_a_dtype_strategy_applies_to_floats_only(t):
    assert t.constant is (t.dtype.kind != "f")


@given(tensors(include_grad=True, constant=False))
def test_a_drawn_grad_is_reset_when_the_tensor_is_used_again(t):
    assert t.grad is not None
    t * 2.0  # MyGrad semantics: a tensor used in a new op forgets its old gradient
    assert t.grad is None
