"""Named shapes, their text form, and reduction axes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import find, given
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from gradcheck.strategies import named_shapes, parse_shape_spec, valid_axes


@pytest.mark.parametrize(
    "text, spec",
    [
        ("n,k", ("n", "k")),
        ("", ()),
        ("()", ()),
        ("  ", ()),
        ("3", (3,)),
        ("n,", ("n",)),
        (" n , 3 ", ("n", 3)),
        ("(batch, k_1, 0)", ("batch", "k_1", 0)),
    ],
)
def test_parse_shape_spec_reads_names_and_sizes(text, spec):
    assert parse_shape_spec(text) == spec


@pytest.mark.parametrize("text", ["n,,k", ",", "1.5", "n k", "-1", "n-1", "2n", "(n", None, 3])
def test_parse_shape_spec_refuses_bad_specs_with_a_clear_message(text):
    with pytest.raises(InvalidArgument, match="shape spec"):
        parse_shape_spec(text)


@given(named_shapes(("n", "k"), ("k", "m"), (2, "n"), (), min_side=2, max_side=4))
def test_named_dimensions_are_drawn_once_and_shared(shapes):
    (n, k), (k2, m), (two, n2), scalar = shapes
    assert k == k2 and n == n2 and two == 2 and scalar == ()
    assert all(2 <= d <= 4 for d in (n, k, m))
    np.matmul(np.ones(shapes[0]), np.ones(shapes[1]))


@given(named_shapes("n,k", "k,3"))
def test_text_specs_are_accepted(shapes):
    assert shapes[0][1] == shapes[1][0] and shapes[1][1] == 3


def test_named_shapes_shrink_to_min_side():
    shapes = find(named_shapes(("a", "b"), ("b",), min_side=2), lambda s: s[0][0] >= 3)
    assert shapes == ((3, 2), (2,))
    # k is shared: once it must be large, both shapes carry it.
    assert find(named_shapes("n,k", "k,m"), lambda s: s[0][1] >= 3) == ((1, 3), (3, 1))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: named_shapes(), "at least one"),
        (lambda: named_shapes(("n",), min_side=3, max_side=2), "max_side"),
        (lambda: named_shapes(("n",), min_side=-1), "min_side"),
        (lambda: named_shapes(["n"]), "tuple"),
        (lambda: named_shapes(("n", -2)), "size >= 0"),
        (lambda: named_shapes(("n", 2.5)), "size >= 0"),
        (lambda: named_shapes(("not a name",)), "not a valid dimension name"),
        (lambda: named_shapes("n,,k"), "shape spec"),
    ],
)
def test_named_shapes_refuses_bad_arguments(call, message):
    with pytest.raises(InvalidArgument, match=message):
        call()


@given(st.data(), st.integers(0, 4), st.booleans(), st.booleans())
def test_valid_axes_are_valid_reduction_axes(data, ndim, single, permit_none):
    if ndim == 0 and single and not permit_none:
        return
    min_dim = data.draw(st.integers(0, ndim))
    max_dim = data.draw(st.integers(min_dim, ndim))
    if single and not permit_none and not min_dim <= 1 <= max_dim:
        return
    axis = data.draw(
        valid_axes(
            ndim,
            min_dim=min_dim,
            max_dim=max_dim,
            single_axis_only=single,
            permit_none=permit_none,
        )
    )
    np.sum(np.ones((2,) * ndim), axis=axis)  # NumPy accepts it
    if axis is None:
        assert permit_none
    elif isinstance(axis, int):
        assert -ndim <= axis < ndim and min_dim <= 1 <= max_dim
    else:
        assert not single
        assert min_dim <= len(axis) <= max_dim
        assert len({a % ndim for a in axis}) == len(axis)


def test_valid_axes_draw_each_form_and_shrink_to_none():
    assert find(valid_axes(3), lambda a: not isinstance(a, int)) is None
    assert isinstance(find(valid_axes(3), lambda a: isinstance(a, int)), int)
    assert find(valid_axes(3), lambda a: isinstance(a, tuple) and len(a) == 2) == (0, 1)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"ndim": -1}, "ndim"),
        ({"ndim": 2.0}, "ndim"),
        ({"ndim": 2, "min_dim": 3}, "min_dim"),
        ({"ndim": 2, "max_dim": 3}, "max_dim"),
        ({"ndim": 2, "min_dim": 2, "max_dim": 1}, "max_dim"),
        ({"ndim": 2, "single_axis_only": "yes"}, "single_axis_only"),
        ({"ndim": 0, "single_axis_only": True, "permit_none": False}, "can draw nothing"),
    ],
)
def test_valid_axes_refuses_bad_arguments(kwargs, message):
    ndim = kwargs.pop("ndim")
    with pytest.raises(InvalidArgument, match=message):
        valid_axes(ndim, **kwargs)
