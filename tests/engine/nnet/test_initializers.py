"""nnet initializers: shapes, dtypes, statistics, reproducibility from seeds."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.nnet import initializers as I


@pytest.mark.parametrize(
    "init, std",
    [
        # (MyGrad's glorot_normal counts only the last axis as the receptive field)
        (I.glorot_normal, np.sqrt(2 / (60 * 3 + 40 * 3))),
        (I.he_normal, 1 / np.sqrt(60 * 9)),
        (lambda *s, **k: I.normal(*s, mean=0, std=0.3, **k), 0.3),
    ],
)
def test_normal_initializers_statistics(init, std):
    t = init(40, 60, 3, 3, rng=0)
    assert t.shape == (40, 60, 3, 3) and t.dtype == np.float32
    np.testing.assert_allclose(t.data.std(), std, rtol=0.03)
    assert abs(t.data.mean()) < 0.05 * std


@pytest.mark.parametrize(
    "init, bound",
    [
        (I.glorot_uniform, np.sqrt(6 / (30 + 20))),
        (I.he_uniform, np.sqrt(3 / 30)),
        (lambda *s, **k: I.uniform(*s, lower_bound=-0.2, upper_bound=0.2, **k), 0.2),
    ],
)
def test_uniform_initializers_bounds(init, bound):
    t = init(20, 30, rng=1)
    assert np.all(np.abs(t.data) <= bound)
    assert np.abs(t.data).max() > 0.9 * bound


def test_initializers_are_reproducible_and_independent_of_global_state():
    np.random.seed(0)
    a = I.glorot_normal(3, 4, rng=7).data
    np.random.seed(1)
    b = I.glorot_normal(3, 4, rng=7).data
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, I.glorot_normal(3, 4, rng=8).data)
    assert I.he_normal((3, 4), rng=0).shape == (3, 4)


def test_deterministic_initializers():
    np.testing.assert_array_equal(I.constant(2, 3, value=1.5).data, np.full((2, 3), 1.5))
    np.testing.assert_array_equal(I.identity(3).data, np.eye(3))
    d = I.dirac(2, 3, 3, 3).data
    assert d.shape == (2, 3, 3, 3) and d.sum() == 2
    assert d[0, 0, 1, 1] == 1 and d[1, 1, 1, 1] == 1
    assert not I.constant(2, constant=False).constant


def test_dirac_makes_conv_an_identity():
    from gradcheck.nnet.layers import conv_nd

    x = np.random.default_rng(0).standard_normal((1, 2, 5, 5))
    out = conv_nd(x, I.dirac(2, 2, 3, 3, dtype=float), stride=1, padding=1)
    np.testing.assert_allclose(out.data, x)


def test_initializers_validate_arguments():
    with pytest.raises(ValueError):
        I.glorot_normal(3)
    with pytest.raises(ValueError):
        I.uniform(2, lower_bound=1, upper_bound=0)
    with pytest.raises(ValueError):
        I.normal(2, std=-1)


def test_initializers_agree_with_mygrad_conventions():
    mygrad = pytest.importorskip("mygrad")
    mi = mygrad.nnet.initializers
    np.testing.assert_array_equal(I.dirac(3, 2, 3).data, mi.dirac(3, 2, 3).data)
    np.testing.assert_array_equal(I.identity(4).data, mi.identity(4).data)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.complex128, bool])
@pytest.mark.parametrize("name", ["normal", "uniform", "glorot_normal", "he_uniform"])
def test_sampling_initializers_need_a_float_dtype(name, dtype):
    with pytest.raises(ValueError, match="floating-point"):
        getattr(I, name)(2, 3, dtype=dtype)
