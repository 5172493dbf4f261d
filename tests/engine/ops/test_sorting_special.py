"""sort and logsumexp."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg
from tests.support.gradients import check_gradients
from tests.support.op_inputs import floats_array, generic_array, small_shapes


@given(st.data(), small_shapes(0, 3))
def test_sort(data, shape):
    x = data.draw(generic_array(shape))  # distinct values: away from ties
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1)) if x.ndim else None
    np.testing.assert_array_equal(mg.sort(x, axis).data, np.sort(x, axis))
    check_gradients(lambda t: mg.sort(t, axis), x)


def test_sort_tie_policy_follows_a_stable_sort():
    x = mg.Tensor([2.0, 1.0, 2.0, 1.0])
    (mg.sort(x) * mg.Tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    # sorted order takes x[1], x[3], x[0], x[2]
    np.testing.assert_array_equal(x.grad, [3.0, 1.0, 4.0, 2.0])


def _logsumexp_ref(x, axis, keepdims):
    return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))


@given(st.data(), small_shapes(0, 3), st.booleans())
def test_logsumexp(data, shape, keepdims):
    x = data.draw(floats_array(shape, bound=5.0))
    n = x.ndim
    axis = data.draw(
        st.none()
        | (st.integers(-n, n - 1) if n else st.none())
        | st.permutations(range(n)).flatmap(lambda p: st.integers(0, n).map(lambda k: tuple(p[:k])))
    )
    np.testing.assert_allclose(
        mg.logsumexp(x, axis, keepdims).data, _logsumexp_ref(x, axis, keepdims), atol=1e-12
    )
    check_gradients(lambda t: mg.logsumexp(t, axis, keepdims), x)


def test_logsumexp_is_stable():
    x = mg.Tensor([1000.0, 1000.0, -np.inf])
    out = mg.logsumexp(x)
    out.backward()
    np.testing.assert_allclose(out.data, 1000.0 + np.log(2.0))
    np.testing.assert_allclose(x.grad, [0.5, 0.5, 0.0])
    np.testing.assert_array_equal(mg.logsumexp(np.array([-np.inf, -np.inf])).data, -np.inf)
