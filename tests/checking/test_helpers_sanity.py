import numpy as np

import gradcheck as mg
from tests.support.helpers import assert_grads_match, central_difference


def test_central_difference_of_a_known_function():
    g = central_difference(lambda x: x**3, [np.array([1.0, 2.0])], 0)
    np.testing.assert_allclose(g, [3.0, 12.0], rtol=1e-6)


def test_assert_grads_match_catches_a_wrong_gradient():
    class Wrong(mg.Operation):
        def __call__(self, a):
            self.variables = (a,)
            return a.data**2

        def backward_var(self, grad, index, **kwargs):
            return grad * 2.1 * self.variables[0].data

    try:
        assert_grads_match(lambda x: mg.execute_op(Wrong, x), [1.0, 2.0])
    except AssertionError:
        return
    raise AssertionError("the wrong gradient was not caught")
