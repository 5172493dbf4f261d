import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg
from gradcheck import random as mg_random

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def assert_leaf_like(out, expected, *, constant=None):
    assert isinstance(out, mg.Tensor) and out.creator is None
    assert out.shape == expected.shape and out.dtype == expected.dtype
    if constant is not None:
        assert out.constant is constant


@given(shape=shapes, constant=st.sampled_from([None, True, False]))
def test_filled_creators(shape, constant):
    for name in ["zeros", "ones", "empty"]:
        out = getattr(mg, name)(shape, constant=constant)
        expected = getattr(np, name)(shape, dtype=np.float32)  # MyGrad's default dtype
        assert_leaf_like(out, expected, constant=bool(constant))
        if name != "empty":
            np.testing.assert_array_equal(out.data, expected)
    out = mg.full(shape, 2.5, constant=constant)
    np.testing.assert_array_equal(out.data, np.full(shape, 2.5))
    assert_leaf_like(out, np.full(shape, 2.5), constant=bool(constant))


@given(x=hnp.arrays(st.sampled_from([np.float64, np.float32, np.int64]), shapes))
def test_like_creators(x):
    for other in (x, mg.Tensor(x)):
        # (MyGrad's rule: constant unless `other` is a tensor that takes a gradient)
        constant = x.dtype.kind != "f" or not isinstance(other, mg.Tensor)
        for name, args in [("zeros_like", ()), ("ones_like", ()), ("full_like", (3,))]:
            out = getattr(mg, name)(other, *args)
            expected = getattr(np, name)(x, *args)
            assert_leaf_like(out, expected, constant=constant)
            np.testing.assert_array_equal(out.data, expected)
        assert_leaf_like(mg.empty_like(other), np.empty_like(x))
    out = mg.ones_like(x, dtype=np.float64, shape=(2, 1))
    assert out.shape == (2, 1) and out.dtype == np.float64


def test_ranges_match_numpy():
    cases = [
        (mg.arange(5), np.arange(5)),
        (mg.arange(1.0, 2.0, 0.25), np.arange(1.0, 2.0, 0.25)),
        (mg.arange(3, dtype=float), np.arange(3, dtype=float)),
        (mg.linspace(0, 1, 7), np.linspace(0, 1, 7)),
        (mg.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False)),
        (mg.linspace([0, 1], [2, 3], 3, axis=1), np.linspace([0, 1], [2, 3], 3, axis=1)),
        (mg.logspace(0, 3, 4, base=2), np.logspace(0, 3, 4, base=2)),
        (mg.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4)),
        (mg.eye(3, 4, k=-1), np.eye(3, 4, k=-1)),
        (mg.identity(3, dtype=np.float32), np.identity(3, dtype=np.float32)),
        (mg.linspace(mg.Tensor(0.0), mg.Tensor(1.0), 3), np.linspace(0, 1, 3)),
    ]
    for out, expected in cases:
        assert_leaf_like(out, expected, constant=expected.dtype.kind != "f")
        np.testing.assert_allclose(out.data, expected)


def test_integer_creations_are_constant():
    assert mg.arange(3).constant and mg.zeros(2, dtype=int).constant
    with pytest.raises(ValueError):
        mg.ones(2, dtype=int, constant=False)


# -- gradcheck.random ---------------------------------------------------------------


SAMPLERS = {
    "rand": lambda: mg_random.rand(2, 3),
    "randn": lambda: mg_random.randn(2, 3),
    "random": lambda: mg_random.random((2, 3)),
    "random_sample": lambda: mg_random.random_sample((2, 3)),
    "ranf": lambda: mg_random.ranf((2, 3)),
    "sample": lambda: mg_random.sample((2, 3)),
    "uniform": lambda: mg_random.uniform(-1, 1, shape=(2, 3)),
    "normal": lambda: mg_random.normal(1.0, 2.0, shape=(2, 3)),
    "randint": lambda: mg_random.randint(0, 10, shape=(2, 3)),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_seed_makes_random_tensors_reproducible(name):
    draw = SAMPLERS[name]
    mg_random.seed(123)
    first = draw()
    mg_random.seed(123)
    second = draw()
    assert isinstance(first, mg.Tensor) and first.shape == (2, 3)
    np.testing.assert_array_equal(first.data, second.data)
    assert first.constant is (name == "randint")
    mg_random.seed(124)
    assert not np.array_equal(draw().data, first.data)


def test_random_leaves_the_global_numpy_state_alone():
    before = np.random.get_state()[1].copy()
    mg_random.seed(0)
    mg_random.rand(10)
    mg_random.randn(3)
    np.testing.assert_array_equal(np.random.get_state()[1], before)


def test_random_values_are_in_range():
    mg_random.seed(1)
    assert np.all((mg_random.rand(100).data >= 0) & (mg_random.rand(100).data < 1))
    ints = mg_random.randint(3, shape=100).data
    assert ints.min() >= 0 and ints.max() < 3
    assert mg_random.rand().shape == ()
    assert mg_random.rand(2, constant=True).constant
