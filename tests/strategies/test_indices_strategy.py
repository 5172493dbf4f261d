"""Basic and advanced indices, and the engine's indexing gradient on them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import find, given
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.extra import numpy as hnp

from gradcheck.strategies import advanced_indices, basic_indices
from tests.support.helpers import assert_grads_match

shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)


@given(shapes, st.data())
def test_basic_indices_index_the_shape_and_backprop(shape, data):
    x = np.arange(float(np.prod(shape))).reshape(shape)
    index = data.draw(basic_indices(shape, allow_newaxis=True))
    x[index]  # NumPy accepts it
    assert_grads_match(lambda t: t[index], x)


@given(shapes, st.data())
def test_advanced_indices_index_the_shape_and_accumulate_gradient(shape, data):
    x = np.arange(float(np.prod(shape))).reshape(shape)
    index = data.draw(advanced_indices(shape, max_side=4))
    if isinstance(index, np.ndarray):
        assert index.dtype == bool and index.shape == shape
    else:
        assert len(index) == len(shape) and all(i.dtype.kind == "i" for i in index)
    assert_grads_match(lambda t: t[index], x)


def test_advanced_indices_draw_masks_and_repeats():
    assert find(advanced_indices((3,)), lambda ix: isinstance(ix, np.ndarray)).dtype == bool
    (repeated,) = find(
        advanced_indices((3,), allow_masks=False),
        lambda ix: len(set(ix[0].ravel().tolist())) < ix[0].size,
    )
    assert repeated.size == 2 and repeated[0] == repeated[1]


def test_advanced_indices_shrink_to_one_element():
    (index,) = find(advanced_indices((5,), allow_masks=False), lambda ix: ix[0].max() >= 3)
    assert index.shape == (1,) and index[0] == 3


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: advanced_indices((2, 0)), "no side of 0"),
        (lambda: advanced_indices(()), "at least one axis"),
        (lambda: advanced_indices((2,), min_dims=2, max_dims=1), "max_dims"),
        (lambda: advanced_indices((2,), min_side=3, max_side=2), "max_side"),
        (lambda: advanced_indices((2,), allow_masks=0), "allow_masks"),
        (lambda: basic_indices((2, -1)), "shape"),
        (lambda: basic_indices(shapes), "strategy"),
    ],
)
def test_invalid_arguments_are_refused(call, message):
    with pytest.raises(InvalidArgument, match=message):
        call()
