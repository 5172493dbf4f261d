import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg
from tests.support.elementwise_support import (
    arrays_in,
    assert_float32_gradients,
    assert_forward_matches,
    check_gradients,
    check_unary,
)

UNARY = {
    "exp": (np.exp, [(-4, 4)]),
    "exp2": (np.exp2, [(-4, 4)]),
    "expm1": (np.expm1, [(-4, 4)]),
    "log": (np.log, [(0.1, 10)]),
    "log2": (np.log2, [(0.1, 10)]),
    "log10": (np.log10, [(0.1, 10)]),
    "log1p": (np.log1p, [(-0.9, 10)]),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@given(data=st.data())
def test_unary(name, data):
    reference, domain = UNARY[name]
    check_unary(getattr(mg, name), reference, domain, data)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
    data=st.data(),
)
def test_binary(name, shapes, data):
    a, b = (data.draw(arrays_in((-5, 5), shape=s)) for s in shapes.input_shapes)
    assert_forward_matches(getattr(mg, name), getattr(np, name), a, b)
    check_gradients(getattr(mg, name), a, b)
    assert_float32_gradients(getattr(mg, name), a, b)


def test_logaddexp_gradient_does_not_overflow():
    a, b = mg.Tensor([1000.0, -1000.0]), mg.Tensor([1000.0, 0.0])
    mg.logaddexp(a, b).backward()
    np.testing.assert_allclose(a.grad, [0.5, 0.0])
    np.testing.assert_allclose(b.grad, [0.5, 1.0])
