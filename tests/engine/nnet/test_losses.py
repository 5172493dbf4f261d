"""nnet losses: forward against independent NumPy references (and MyGrad when
installed), backward against finite differences, kink policies checked exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg
from gradcheck.nnet import losses as L
from tests.support.gradients import check_gradients
from tests.support.op_inputs import generic_array


@st.composite
def scores_and_labels(draw, *, scale=2.0):
    n, c = draw(st.integers(1, 4)), draw(st.integers(2, 4))
    x = draw(generic_array((n, c), scale=scale))
    y = np.array(draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n)), dtype=np.intp)
    return x, y


def _log_softmax(x):
    z = x - x.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


@given(scores_and_labels())
def test_softmax_crossentropy(xy):
    x, y = xy
    expected = -np.mean(_log_softmax(x)[np.arange(len(y)), y])
    np.testing.assert_allclose(L.softmax_crossentropy(x, y).data, expected, rtol=1e-12)
    check_gradients(lambda t: L.softmax_crossentropy(t, y), x)


def test_softmax_crossentropy_is_stable():
    t = mg.Tensor([[1000.0, -1000.0]])
    loss = L.softmax_crossentropy(t, [1])
    loss.backward()
    np.testing.assert_allclose(loss.data, 2000.0)
    np.testing.assert_allclose(t.grad, [[1.0, -1.0]])


@given(scores_and_labels(), st.booleans())
def test_negative_log_likelihood(xy, weighted):
    x, y = xy
    weights = np.arange(1.0, x.shape[1] + 1) if weighted else None
    w = weights[y] if weighted else 1.0
    expected = -np.mean(w * x[np.arange(len(y)), y])
    out = L.negative_log_likelihood(x, y, weights=weights)
    np.testing.assert_allclose(out.data, expected, rtol=1e-12)
    check_gradients(lambda t: L.negative_log_likelihood(t, y, weights=weights), x)


@given(scores_and_labels(), st.sampled_from([0.5, 1.0]))
def test_multiclass_hinge(xy, hinge):
    x, y = xy
    rows = np.arange(len(y))
    margins = np.maximum(0, x - x[rows, y][:, None] + hinge)
    margins[rows, y] = 0
    np.testing.assert_allclose(
        L.multiclass_hinge(x, y, hinge).data, margins.sum() / len(y), rtol=1e-12
    )
    check_gradients(lambda t: L.multiclass_hinge(t, y, hinge), x)


def test_multiclass_hinge_kink_policy():
    t = mg.Tensor([[1.0, 0.0, 0.5]])  # class 1 has margin exactly 0
    L.multiclass_hinge(t, [0]).backward()
    np.testing.assert_array_equal(t.grad, [[-1.0, 0.0, 1.0]])


@given(st.data(), st.integers(1, 4), st.sampled_from([0.0, 0.5, 1.0]))
def test_margin_ranking_loss(data, n, margin):
    x1, x2 = data.draw(generic_array((2, n)))  # one draw: distinct values
    y = np.array(data.draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n)))
    expected = np.mean(np.maximum(0, margin - y * (x1 - x2)))
    np.testing.assert_allclose(L.margin_ranking_loss(x1, x2, y, margin).data, expected)
    check_gradients(lambda a, b: L.margin_ranking_loss(a, b, y, margin), x1, x2)


@given(
    st.data(), scores_and_labels(), st.sampled_from([0.0, 1.0, 2.0]), st.sampled_from([0.25, 1.0])
)
def test_focal_losses(data, xy, gamma, alpha):
    x, y = xy
    rows = np.arange(len(y))
    probs = np.exp(_log_softmax(x))
    p = probs[rows, y]
    expected = -alpha * (1 - p) ** gamma * np.log(p)
    np.testing.assert_allclose(
        L.softmax_focal_loss(x, y, alpha=alpha, gamma=gamma).data, expected, rtol=1e-10
    )
    np.testing.assert_allclose(
        L.focal_loss(probs, y, alpha=alpha, gamma=gamma).data, expected, rtol=1e-10
    )
    check_gradients(lambda t: L.softmax_focal_loss(t, y, alpha=alpha, gamma=gamma), x)
    # focal_loss on probabilities strictly inside (0, 1)
    check_gradients(lambda t: L.focal_loss(t, y, alpha=alpha, gamma=gamma), 0.1 + 0.8 * probs)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_softmax_focal_loss_has_a_finite_gradient_where_a_probability_underflows(dtype):
    # softmax(x)[0] = e^-12 is ~6e-6, below float16's smallest normal: the log of the
    # softmax had the gradient 1/p = inf there (then inf * 0 = nan), for a loss
    # whose gradient is bounded.
    x = mg.Tensor(np.array([[-7.0, 5.0]], dtype=dtype))
    with np.errstate(divide="raise", over="raise", invalid="raise"):
        loss = L.softmax_focal_loss(x, np.array([0]), alpha=0.5, gamma=1.5)
        loss.backward()
    assert x.grad.dtype == dtype and np.all(np.isfinite(x.grad))
    # d/dx of -alpha (1 - p)^gamma log p, p = softmax(x)[0], in float64
    z = np.array([-7.0, 5.0])
    p = np.exp(z[0] - np.logaddexp(z[0], z[1]))
    dloss_dp = -0.5 * (-1.5 * (1 - p) ** 0.5 * np.log(p) + (1 - p) ** 1.5 / p)
    expected = dloss_dp * p * (np.array([1.0, 0.0]) - np.array([p, 1 - p]))
    np.testing.assert_allclose(x.grad[0], expected, rtol=4 * np.finfo(dtype).eps, atol=0)


def test_losses_agree_with_mygrad():
    mygrad = pytest.importorskip("mygrad")
    ml = mygrad.nnet.losses
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4))
    y = rng.integers(0, 4, size=5)
    probs = np.exp(_log_softmax(x))
    w = np.array([1.0, 2.0, 0.5, 3.0])
    pairs = [
        (L.softmax_crossentropy(x, y), ml.softmax_crossentropy(x, y)),
        (L.negative_log_likelihood(x, y, weights=w), ml.negative_log_likelihood(x, y, weights=w)),
        (L.multiclass_hinge(x, y, 0.7), ml.multiclass_hinge(x, y, 0.7)),
        (L.focal_loss(probs, y, alpha=0.5, gamma=2), ml.focal_loss(probs, y, alpha=0.5, gamma=2)),
        (
            L.softmax_focal_loss(x, y, alpha=0.5, gamma=2),
            ml.softmax_focal_loss(x, y, alpha=0.5, gamma=2),
        ),
        (
            L.margin_ranking_loss(x[:, 0], x[:, 1], np.sign(x[:, 2]), 0.3),
            ml.margin_ranking_loss(x[:, 0], x[:, 1], np.sign(x[:, 2]), 0.3),
        ),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours.data, theirs.data, rtol=1e-10)


def test_losses_validate_labels():
    # (non-integer labels: TypeError, as in MyGrad; a wrong shape: ValueError)
    with pytest.raises(TypeError, match="labels"):
        L.softmax_crossentropy(np.zeros((2, 3)), [0.5, 1.0])
    with pytest.raises(TypeError, match="labels"):
        L.multiclass_hinge(np.zeros((2, 3)), np.zeros(2, dtype=bool))
    with pytest.raises(ValueError, match="shape"):
        L.softmax_crossentropy(np.zeros(3), [0])


def test_margin_ranking_kink_policy():
    x1, x2 = mg.Tensor([1.0]), mg.Tensor([0.5])
    L.margin_ranking_loss(x1, x2, np.array([1]), 0.5).backward()  # margin exactly 0
    np.testing.assert_array_equal(x1.grad, [0.0])
    np.testing.assert_array_equal(x2.grad, [0.0])


def test_focal_loss_clips_one_minus_p_and_takes_the_limit_at_p_equal_1():
    # p > 1 (scores that are not probabilities): (1 - p) is clipped to 0, so the loss
    # and its gradient are 0 for gamma > 0; at p = 1 the gradient is the limit, 0.
    x = mg.Tensor([[3.0, 0.5], [1.0, 0.2]])
    loss = L.focal_loss(x, [0, 0], alpha=1.5, gamma=2.0)
    np.testing.assert_array_equal(loss.data, [0.0, 0.0])
    loss.backward()
    np.testing.assert_array_equal(x.grad, np.zeros((2, 2)))
    # gamma = 0: the cross-entropy, -alpha log p, whatever p is
    x = mg.Tensor([[3.0, 0.5]])
    L.focal_loss(x, [0], alpha=2.0, gamma=0.0).backward()
    np.testing.assert_allclose(x.grad, [[-2.0 / 3.0, 0.0]])
    # a single class: softmax gives p = 1 exactly; the gradient is 0, not nan
    for gamma in (1e-300, 0.5, 1.0, 3.0):
        s = mg.Tensor([[0.3], [-2.0]])
        with np.errstate(all="raise"):
            L.softmax_focal_loss(s, [0, 0], alpha=-1.2, gamma=gamma).backward()
        np.testing.assert_array_equal(s.grad, np.zeros((2, 1)))


@pytest.mark.parametrize("gamma", [0.3, 1.0, 2.5])
def test_focal_loss_gradient_inside_the_unit_interval(gamma):
    probs = np.array([[0.2, 0.7], [0.55, 0.1], [0.9, 0.05]])
    check_gradients(lambda t: L.focal_loss(t, [1, 0, 0], alpha=0.7, gamma=gamma), probs)


@pytest.mark.parametrize("gamma", [-1.0, -1e-300, [1.0], "2", None])
def test_focal_loss_gamma_must_be_a_non_negative_number(gamma):
    with pytest.raises(ValueError, match="gamma"):
        L.focal_loss(np.array([[1.0]]), np.array([0]), gamma=gamma)
    with pytest.raises(ValueError, match="gamma"):
        L.softmax_focal_loss(np.array([[1.0]]), np.array([0]), gamma=gamma)


def test_margin_ranking_loss_on_rows_takes_one_label_per_row():
    x1 = mg.Tensor([[1.0, 2.0], [0.0, 5.0]])
    x2 = mg.Tensor([[0.2, 3.0], [1.0, 1.0]])
    y = np.array([1, -1])
    expected = np.mean(np.maximum(0, 0.5 - y[:, None] * (x1.data - x2.data)))
    loss = L.margin_ranking_loss(x1, x2, y, 0.5)
    np.testing.assert_allclose(loss.data, expected)
    check_gradients(lambda a, b: L.margin_ranking_loss(a, b, y, 0.5), x1.data, x2.data)
    # a size-1 label is a scalar label
    np.testing.assert_allclose(
        L.margin_ranking_loss(x1, x2, mg.Tensor([1]), 0.5).data,
        np.mean(np.maximum(0, 0.5 - (x1.data - x2.data))),
    )


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"x1": np.ones((3, 4, 1)), "x2": np.ones((3, 4, 1))}, ValueError),
        ({"x1": np.ones(()), "x2": np.ones(())}, ValueError),
        ({"x2": np.ones((3, 5))}, ValueError),
        ({"x1": np.ones((3, 4), dtype=int)}, TypeError),
        ({"margin": -1}, ValueError),
        ({"margin": None}, ValueError),
        ({"y": np.ones((3, 4))}, ValueError),
        ({"y": np.ones(5)}, ValueError),
    ],
)
def test_margin_ranking_loss_validates_its_inputs(kwargs, error):
    args = {"x1": np.ones((3, 4)), "x2": np.ones((3, 4)), "y": 1, "margin": 0.5, **kwargs}
    with pytest.raises(error):
        L.margin_ranking_loss(**args)


def test_negative_log_likelihood_weights_are_one_per_class():
    with pytest.raises(ValueError, match="weights"):
        L.negative_log_likelihood(np.zeros((2, 2)), [0, 1], weights=np.ones(1))
