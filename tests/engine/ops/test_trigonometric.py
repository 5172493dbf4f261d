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
    floats_in,
)

# name: (NumPy reference, intervals of the domain kept away from poles and branch points)
UNARY = {
    "sin": (np.sin, [(-4, 4)]),
    "cos": (np.cos, [(-4, 4)]),
    "tan": (np.tan, [(-1.2, 1.2)]),
    "arcsin": (np.arcsin, [(-0.9, 0.9)]),
    "arccos": (np.arccos, [(-0.9, 0.9)]),
    "arctan": (np.arctan, [(-4, 4)]),
    "sinc": (np.sinc, [(-3, 3)]),
    "csc": (lambda x: 1 / np.sin(x), [(0.3, 2.8), (-2.8, -0.3)]),
    "sec": (lambda x: 1 / np.cos(x), [(-1.2, 1.2)]),
    "cot": (lambda x: 1 / np.tan(x), [(0.3, 2.8), (-2.8, -0.3)]),
    "arccsc": (lambda x: np.arcsin(1 / x), [(1.1, 4), (-4, -1.1)]),
    "arcsec": (lambda x: np.arccos(1 / x), [(1.1, 4), (-4, -1.1)]),
    "arccot": (lambda x: np.arctan(1 / x), [(0.2, 4), (-4, -0.2)]),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@given(data=st.data())
def test_unary(name, data):
    reference, domain = UNARY[name]
    check_unary(getattr(mg, name), reference, domain, data)


def test_sinc_gradient_at_zero_is_its_limit():
    x = mg.Tensor([0.0, 1.0])
    mg.sinc(x).backward()
    np.testing.assert_allclose(x.grad, [0.0, -1.0])  # d sinc/dx at 1 = cos(pi)/1


@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
    data=st.data(),
)
def test_arctan2(shapes, data):
    shape_y, shape_x = shapes.input_shapes
    # |y| >= 0.5 keeps away from the origin and from the branch cut (y = 0, x < 0).
    y = data.draw(arrays_in((0.5, 3), (-3, -0.5), shape=shape_y))
    x = data.draw(arrays_in((-3, 3), shape=shape_x))
    assert_forward_matches(mg.arctan2, np.arctan2, y, x)
    check_gradients(mg.arctan2, y, x)
    assert_float32_gradients(mg.arctan2, y, x)


@given(st.lists(floats_in((-3, 3)), min_size=1, max_size=4))
def test_trig_identities_hold_through_the_graph(values):
    x = mg.Tensor(values)
    total = mg.sin(x) ** 2 + mg.cos(x) ** 2
    total.backward()
    np.testing.assert_allclose(total.data, 1.0)
    np.testing.assert_allclose(x.grad, 0.0, atol=1e-12)


def test_sinc_gradient_near_zero_does_not_cancel():
    # (cos(pi x) - sinc(x)) / x rounds to 0 for tiny x; the true slope is -pi^2 x / 3
    x = mg.Tensor([1e-9, -1e-6, 0.0])
    mg.sinc(x).backward()
    np.testing.assert_allclose(x.grad, -(np.pi**2) * np.array([1e-9, -1e-6, 0.0]) / 3, rtol=1e-12)
