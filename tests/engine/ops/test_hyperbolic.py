import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg
from tests.support.elementwise_support import check_unary

# name: (NumPy reference, intervals of the domain kept away from poles and branch points)
UNARY = {
    "sinh": (np.sinh, [(-3, 3)]),
    "cosh": (np.cosh, [(-3, 3)]),
    "tanh": (np.tanh, [(-3, 3)]),
    "arcsinh": (np.arcsinh, [(-4, 4)]),
    "arccosh": (np.arccosh, [(1.1, 4)]),
    "arctanh": (np.arctanh, [(-0.9, 0.9)]),
    "csch": (lambda x: 1 / np.sinh(x), [(0.2, 3), (-3, -0.2)]),
    "sech": (lambda x: 1 / np.cosh(x), [(-3, 3)]),
    "coth": (lambda x: 1 / np.tanh(x), [(0.2, 3), (-3, -0.2)]),
    "arccsch": (lambda x: np.arcsinh(1 / x), [(0.2, 4), (-4, -0.2)]),
    "arccoth": (lambda x: np.arctanh(1 / x), [(1.1, 4), (-4, -1.1)]),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@given(data=st.data())
def test_unary(name, data):
    reference, domain = UNARY[name]
    check_unary(getattr(mg, name), reference, domain, data)


def test_identities_through_the_graph():
    x = mg.Tensor(np.linspace(-2, 2, 7))
    out = mg.cosh(x) ** 2 - mg.sinh(x) ** 2 + mg.tanh(x) * mg.coth(x + 5)
    out.backward()
    expected = 1 + np.tanh(x.data) / np.tanh(x.data + 5)
    np.testing.assert_allclose(out.data, expected)
