"""Shape manipulation, joining and tiling ops: forward against NumPy, backward
against finite differences, over generated shapes and arguments."""

from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg
from tests.support.gradients import check_gradients
from tests.support.op_inputs import floats_array, small_shapes


def _same(op, reference, x, *args, **kwargs):
    """Forward equals NumPy's, and the gradient matches finite differences."""
    out = op(x, *args, **kwargs)
    np.testing.assert_array_equal(out.data, reference(x, *args, **kwargs))
    check_gradients(lambda t: op(t, *args, **kwargs), x)


@given(st.data(), small_shapes(0, 4))
def test_reshape_ravel_flatten(data, shape):
    x = data.draw(floats_array(shape))
    newshape = data.draw(st.permutations([*list(shape), 1]))
    if newshape and data.draw(st.booleans()):
        newshape[data.draw(st.integers(0, len(newshape) - 1))] = -1
    _same(mg.reshape, np.reshape, x, tuple(newshape))
    _same(mg.ravel, np.ravel, x)
    _same(mg.flatten, lambda a: a.flatten(), x)
    t = mg.Tensor(x)
    np.testing.assert_array_equal(t.reshape(*newshape).data, x.reshape(newshape))
    np.testing.assert_array_equal(t.flatten().data, x.flatten())


@given(st.data(), small_shapes(0, 4))
def test_squeeze_expand_dims(data, shape):
    x = data.draw(floats_array(shape))
    ones = [i for i, n in enumerate(shape) if n == 1]
    axis = data.draw(st.none() | st.sampled_from(ones) if ones else st.none())
    _same(mg.squeeze, np.squeeze, x, axis)
    new = data.draw(st.integers(-x.ndim - 1, x.ndim))
    _same(mg.expand_dims, np.expand_dims, x, new)
    np.testing.assert_array_equal(mg.Tensor(x).squeeze(axis).data, np.squeeze(x, axis))


@given(st.data(), hnp.mutually_broadcastable_shapes(num_shapes=1, max_side=3))
def test_broadcast_to(data, shapes):
    x = data.draw(floats_array(shapes.input_shapes[0]))
    _same(mg.broadcast_to, np.broadcast_to, x, shapes.result_shape)


@pytest.mark.parametrize(
    "op, ref",
    [
        (mg.atleast_1d, np.atleast_1d),
        (mg.atleast_2d, np.atleast_2d),
        (mg.atleast_3d, np.atleast_3d),
    ],
)
@given(data=st.data(), shape=small_shapes(0, 4))
def test_atleast(op, ref, data, shape):
    x = data.draw(floats_array(shape))
    _same(op, ref, x)
    both = op(x, x[..., None])
    assert isinstance(both, list) and len(both) == 2
    np.testing.assert_array_equal(both[1].data, ref(x[..., None]))


@given(st.data(), small_shapes(0, 4))
def test_transpose_moveaxis_swapaxes(data, shape):
    x = data.draw(floats_array(shape))
    n = x.ndim
    perm = tuple(data.draw(st.permutations(range(n))))
    _same(mg.transpose, np.transpose, x)
    _same(mg.transpose, np.transpose, x, perm)
    np.testing.assert_array_equal(mg.transpose(x, *perm).data, np.transpose(x, perm))
    np.testing.assert_array_equal(mg.Tensor(x).transpose(*perm).data, np.transpose(x, perm))
    np.testing.assert_array_equal(mg.Tensor(x).T.data, x.T)
    if n:
        k = data.draw(st.integers(1, n))
        src = data.draw(st.permutations(range(-n, 0)))[:k]
        dst = data.draw(st.permutations(range(n)))[:k]
        _same(mg.moveaxis, np.moveaxis, x, src, dst)
        _same(mg.moveaxis, np.moveaxis, x, src[0], dst[0])
        a1, a2 = data.draw(st.integers(-n, n - 1)), data.draw(st.integers(-n, n - 1))
        _same(mg.swapaxes, np.swapaxes, x, a1, a2)
        np.testing.assert_array_equal(mg.Tensor(x).swapaxes(a1, a2).data, np.swapaxes(x, a1, a2))
        np.testing.assert_array_equal(
            mg.Tensor(x).moveaxis(src, dst).data, np.moveaxis(x, src, dst)
        )


@given(st.data(), small_shapes(0, 3))
def test_roll(data, shape):
    x = data.draw(floats_array(shape))
    _same(mg.roll, np.roll, x, data.draw(st.integers(-4, 4)))
    if x.ndim:
        axes = tuple(data.draw(st.permutations(range(x.ndim))))[: data.draw(st.integers(1, x.ndim))]
        shifts = tuple(data.draw(st.integers(-4, 4)) for _ in axes)
        _same(mg.roll, np.roll, x, shifts, axes)


@given(st.data(), small_shapes(1, 3), st.integers(1, 3))
def test_concatenate_and_stack(data, shape, count):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    arrays = []
    for _ in range(count):
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        arrays.append(data.draw(floats_array(tuple(s))))
    np.testing.assert_array_equal(mg.concatenate(arrays, axis).data, np.concatenate(arrays, axis))
    np.testing.assert_array_equal(mg.concatenate(arrays, None).data, np.concatenate(arrays, None))
    check_gradients(lambda *ts: mg.concatenate(ts, axis), *arrays)
    check_gradients(lambda *ts: mg.concatenate(ts, axis=None), *arrays)
    same = [data.draw(floats_array(shape)) for _ in range(count)]
    new = data.draw(st.integers(-len(shape) - 1, len(shape)))
    np.testing.assert_array_equal(mg.stack(same, new).data, np.stack(same, new))
    check_gradients(lambda *ts: mg.stack(ts, axis=new), *same)


@given(st.data(), small_shapes(0, 3))
def test_repeat_and_tile(data, shape):
    x = data.draw(floats_array(shape))
    _same(mg.repeat, np.repeat, x, data.draw(st.integers(0, 3)))
    if x.ndim:
        axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
        reps = data.draw(st.lists(st.integers(0, 2), min_size=shape[axis], max_size=shape[axis]))
        _same(mg.repeat, np.repeat, x, reps, axis)
    reps = tuple(data.draw(st.lists(st.integers(1, 3), min_size=0, max_size=4)))
    _same(mg.tile, np.tile, x, reps)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
@given(data=st.data(), shape=small_shapes(1, 3, min_side=2))
def test_pad(mode, data, shape):
    x = data.draw(floats_array(shape))
    width = [tuple(data.draw(st.integers(0, 2)) for _ in range(2)) for _ in shape]
    kwargs = {"constant_values": 1.5} if mode == "constant" else {}
    _same(mg.pad, np.pad, x, width, mode, **kwargs)


def test_pad_rejects_modes_that_do_not_copy():
    with pytest.raises(ValueError, match="mode"):
        mg.pad(np.ones(3), 1, mode="mean")


@given(st.data(), small_shapes(0, 3))
def test_flip(data, shape):
    x = data.draw(floats_array(shape))
    _same(mg.flip, np.flip, x)
    if x.ndim:
        _same(mg.flip, np.flip, x, data.draw(st.integers(-x.ndim, x.ndim - 1)))


def test_repeated_copies_accumulate_gradient():
    x = mg.Tensor([1.0, 2.0])
    mg.tile(x, 3).sum().backward()
    np.testing.assert_array_equal(x.grad, [3.0, 3.0])
    x = mg.Tensor([1.0, 2.0])
    mg.repeat(x, [2, 0]).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 0.0])


@pytest.mark.parametrize("op", [mg.atleast_1d, mg.atleast_2d, mg.atleast_3d])
def test_atleast_returns_a_tensor_that_has_the_dimensions_and_constant_as_is(op):
    t = mg.Tensor(np.ones((2, 2, 2)))
    assert op(t) is t and op(t, constant=False) is t
    assert op(t, constant=True) is not t and op(t, constant=True).constant
    c = mg.Tensor(np.ones((1, 1, 1)), constant=True)
    assert op(c, constant=True) is c
    i = mg.Tensor(np.ones((1, 1, 1), dtype=int))
    assert op(i, constant=False) is i  # (an integer tensor is constant anyway)
    first = op(1.0, np.ones(3), constant=True)
    again = op(*first, constant=True)
    assert all(a is b for a, b in zip(first, again))
