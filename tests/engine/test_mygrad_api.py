"""MyGrad's API that code written for it uses: Tensor.copy/astype/argmax, ``+x``,
asarray, Tensor(ndmin=), NumPy's re-exported names, the ``_NoValue`` sentinel."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import gradcheck as mg
from gradcheck.operation import _NoValue, _NoValueType
from gradcheck.ops.arithmetic import Multiply


def test_positive_is_a_new_tensor_in_the_graph() -> None:
    x = mg.Tensor([1.0, -2.0])
    y = +x
    assert y is not x and y.creator is not None
    (y * y).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, -4.0])


def test_copy_copies_data_and_gradient_and_leaves_the_graph() -> None:
    x = mg.Tensor([1.0, 2.0])
    y = x * 3
    y.backward()
    c = x.copy()
    assert c.creator is None and c.constant is False
    np.testing.assert_array_equal(c.data, x.data)
    np.testing.assert_array_equal(c.grad, x.grad)
    assert not np.shares_memory(c.data, x.data)
    assert not np.shares_memory(c.grad, x.grad)
    assert x.copy(constant=True).constant is True
    assert (y * 1).copy().creator is None


def test_astype_casts_into_a_new_tensor_without_a_graph() -> None:
    x = +mg.Tensor([1.5, 2.5])
    y = x.astype(np.float32)
    assert y.dtype == np.float32 and y.creator is None and y.grad is None
    assert y.constant is False
    assert x.astype(np.int64).constant is True
    np.testing.assert_array_equal(x.astype(np.int64).data, [1, 2])
    assert x.astype(x.dtype, copy=False) is x
    assert x.astype(x.dtype) is not x


def test_argmax_argmin_any_are_arrays() -> None:
    x = mg.Tensor([[1.0, 5.0], [7.0, 0.0]])
    np.testing.assert_array_equal(x.argmax(axis=1), [1, 0])
    assert x.argmax() == 2 and x.argmin() == 3
    assert isinstance(x.any(), np.bool_ | bool | np.ndarray) and bool(x.any())


def test_op_is_execute_op() -> None:
    x = mg.Tensor(2.0)
    y = mg.Tensor._op(Multiply, x, 3.0)
    assert y.item() == 6.0 and isinstance(y.creator, Multiply)
    assert mg.Tensor._op(Multiply, x, 3.0, constant=True).constant


def test_asarray_gives_a_tensors_own_array() -> None:
    x = mg.Tensor([1.0, 2.0])
    assert mg.asarray(x) is x.data
    assert mg.asarray(x, dtype=np.float32).dtype == np.float32
    np.testing.assert_array_equal(mg.asarray([1, 2]), [1, 2])


@pytest.mark.parametrize("ndmin", [0, 1, 3])
def test_tensor_ndmin(ndmin: int) -> None:
    assert mg.Tensor(1.0, ndmin=ndmin).shape == np.array(1.0, ndmin=ndmin).shape


@pytest.mark.parametrize("bad", [1, 0, "true", (1,)])
def test_constant_must_be_a_bool(bad: object) -> None:
    with pytest.raises(TypeError):
        mg.Tensor(1.0, constant=bad)  # type: ignore[arg-type]


def test_numpy_names_are_numpys() -> None:
    assert mg.float32 is np.float32 and mg.bool_ is np.bool_ and mg.intp is np.intp
    assert mg.pi == np.pi and mg.newaxis is None and np.isnan(mg.nan)
    assert mg.isnan is np.isnan and mg.mod is np.remainder and mg.allclose is np.allclose
    np.testing.assert_array_equal(mg.isfinite(mg.Tensor([1.0, np.inf])), [True, False])
    assert mg.tensor(1, dtype=mg.float16).dtype == np.float16


def test_no_value_is_one_sentinel() -> None:
    assert _NoValueType() is _NoValue
    assert pickle.loads(pickle.dumps(_NoValue)) is _NoValue
    assert repr(_NoValue) == "<no value>"


def test_typing_names_take_a_hypothesis_strategy() -> None:
    from hypothesis import strategies as st

    from gradcheck.typing import ArrayLike, DTypeLikeReals, Shape

    for name in (ArrayLike, DTypeLikeReals, Shape):  # (MyGrad's tests register them)
        assert isinstance(name, type)
        st.register_type_strategy(name, st.none())
        assert "none()" in repr(st.from_type(name))


def test_base_is_the_tensor_a_view_is_of() -> None:
    x = mg.Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.base is None and (x * 1).base is None
    assert x[...].base is x and x[0][1:].base is x
    assert x.T.base is x and x.reshape(3, 2).base is x
    assert x[[0, 1]].base is None  # advanced indexing copies, as in NumPy
    assert mg.Tensor(x).base is None


def test_sliding_window_view_lays_the_grid_first() -> None:
    from gradcheck.nnet.layers.windows import sliding_window_view

    x = np.arange(36).reshape(6, 6)
    y = sliding_window_view(x, window_shape=(3, 2), step=(2, 2))
    assert y.shape == (2, 3, 3, 2)
    np.testing.assert_array_equal(y[1, 0], x[2:5, 0:2])
    z = sliding_window_view(np.arange(120).reshape(2, 6, 10), (2, 3), step=1, dilation=(2, 3))
    assert z.shape == (4, 4, 2, 2, 3)
    np.testing.assert_array_equal(z[1, 2], np.arange(120).reshape(2, 6, 10)[:, 1:4:2, 2:9:3])
    for bad in ({"step": 0}, {"window_shape": (7, 1)}, {"dilation": (1, 0)}, {"step": "a"}):
        kwargs = {"arr": x, "window_shape": (1, 1), "step": 1, **bad}
        with pytest.raises((ValueError, TypeError)):
            sliding_window_view(**kwargs)


def test_floor_division_is_for_constants_and_gives_an_array() -> None:
    a, b = np.array([7.0, -7.0]), np.array([2.0, 2.0])
    got = mg.Tensor(a, constant=True) // b
    assert isinstance(got, np.ndarray) and got.dtype == (a // b).dtype
    np.testing.assert_array_equal(got, a // b)
    np.testing.assert_array_equal(7 // mg.Tensor(b, constant=True), 7 // b)
    with pytest.raises(ValueError):
        mg.Tensor(1.0) // 1
    with pytest.raises(ValueError):
        1 // mg.Tensor(1.0)


def test_registries_name_what_tensors_support() -> None:
    from gradcheck import tensor_base

    assert tensor_base._REGISTERED_UFUNC[np.add] is mg.add
    assert tensor_base._REGISTERED_DIFFERENTIABLE_NUMPY_FUNCS[np.sum] is mg.sum
    assert np.isnan in tensor_base._REGISTERED_BOOL_ONLY_UFUNC
    assert np.floor in tensor_base._REGISTERED_CONST_ONLY_UFUNC
    for func in tensor_base._REGISTERED_NO_DIFF_NUMPY_FUNCS:
        assert getattr(mg, func.__name__) is func
    assert issubclass(np.int8, tensor_base.CONSTANT_ONLY_DTYPES)
    assert not issubclass(np.float16, tensor_base.CONSTANT_ONLY_DTYPES)


def test_numpy_functions_without_gradient_on_tensors() -> None:
    w, x = mg.tensor([0.3, 0.5, 0.2]), mg.tensor([0, 1, 1])
    np.testing.assert_allclose(np.bincount(x, weights=w), [0.3, 0.7])
    y = mg.zeros(3, dtype=float)
    np.copyto(y, mg.tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(y.data, [1.0, 2.0, 3.0])
    z = y * 2  # y's array is now needed by z's graph: copyto cannot write it
    with pytest.raises(ValueError):
        np.copyto(y, np.zeros(3))
    del z


def test_implements_numpy_override_needs_a_numpy_name() -> None:
    from gradcheck.tensor_base import implements_numpy_override

    def not_a_numpy_function() -> None: ...

    with pytest.raises(AttributeError):
        implements_numpy_override()(not_a_numpy_function)


def test_arr_reveals_flat_positions() -> None:
    from gradcheck.ops.indexing import _arr

    np.testing.assert_array_equal(_arr(2, 3), [[0, 1, 2], [3, 4, 5]])


def test_no_autodiff_to_numpy_returns_arrays() -> None:
    x = mg.Tensor([1.0, 3.0, 2.0])
    got = mg.no_autodiff(mg.max, to_numpy=True)(x)
    assert isinstance(got, np.ndarray) and got == 3.0

    @mg.no_autodiff(to_numpy=True)
    def pair(t: mg.Tensor) -> tuple[mg.Tensor, int]:
        assert not mg.graph.is_tracking()
        return t * 2, 1

    doubled, one = pair(x)
    assert isinstance(doubled, np.ndarray) and one == 1
    assert isinstance(mg.no_autodiff(mg.max)(x), mg.Tensor)


def test_index_kinds() -> None:
    from gradcheck.ops.indexing import _is_bool_array_index, _is_int_array_index

    assert _is_int_array_index((np.array([True]), [1]))
    assert not _is_int_array_index((0, 0)) and not _is_int_array_index((np.array([True]), 1))
    assert _is_bool_array_index((np.array([True]),))
    assert not _is_bool_array_index((np.array([True]), np.array([False])))
    assert not _is_bool_array_index((np.array([1]),))


def test_like_creators_infer_constant_from_their_model() -> None:
    for make in (mg.zeros_like, mg.ones_like, mg.empty_like):
        assert make(np.zeros(2)).constant is True
        assert make(mg.Tensor([1.0], constant=True)).constant is True
        assert make(mg.Tensor([1.0])).constant is False
        assert make(np.zeros(2), constant=False).constant is False
    assert mg.full_like(np.zeros(2), 3.0).constant is True
    assert mg.tensor(1.0, ndmin=2).shape == (1, 1)


def test_contains_and_index_and_scalar_conversions_as_the_array() -> None:
    t = mg.Tensor([[0, 1, 2], [3, 4, 5]])
    assert 4 in t and [3, 4, 5] in t and 9 not in t and mg.Tensor(0) in t
    assert [10, 20, 30][mg.tensor(2)] == 30
    assert range(5)[mg.Tensor(np.int8(1))] == 1
    with pytest.raises(TypeError):
        [1, 2][mg.Tensor(1.0)]  # (a float is no index, as for NumPy)
    assert float(mg.Tensor([[2]])) == 2.0 and int(mg.Tensor([[3.7]])) == 3
    for convert in (float, int):
        with pytest.raises(TypeError):
            convert(mg.Tensor([1.0, 2.0]))


def test_creator_can_be_given_as_mygrad_does() -> None:
    op = Multiply()
    t = mg.Tensor([1.0], _creator=op)
    assert t.creator is op and t.base is None and not t.constant


def test_complex_tensors_only_without_a_graph() -> None:
    for constant in (None, True, False):
        with pytest.raises(TypeError):
            mg.Tensor(1j, constant=constant)
    with mg.no_autodiff:
        assert mg.Tensor([1j]).dtype.kind == "c"


def test_null_gradients_is_deprecated_and_nulls_the_graphs_gradients() -> None:
    x = mg.Tensor([1.0, 2.0])
    x.backward()
    with pytest.warns(FutureWarning):
        x.null_gradients()
    assert x.grad is None
    y = x * 2
    y.grad = np.ones(2)
    with pytest.warns(FutureWarning):
        y.null_gradients(clear_graph=False)
    assert y.grad is None and y.creator is not None


@pytest.mark.parametrize("power", [1, 2, 1.0, 2.0, np.array(2), np.array(1.0)])
def test_square_and_positive_for_powers_1_and_2(power: object) -> None:
    from gradcheck.ops.arithmetic import Positive, Square

    op = Positive if power == 1 else Square
    x = mg.Tensor([-1.5, 0.0, 3.0])
    y = x**power
    assert isinstance(y.creator, op)
    np.testing.assert_array_equal(y.data, x.data**power)
    y.backward()
    np.testing.assert_array_equal(x.grad, power * x.data ** (power - 1))
    ints = mg.arange(3) ** power  # NumPy's dtype: int ** 2.0 is float64
    assert isinstance(ints.creator, op) and ints.dtype == (np.arange(3) ** power).dtype
    f32 = mg.Tensor([1.0, 2.0], dtype=np.float32) ** power
    assert f32.dtype == (np.ones(2, np.float32) ** power).dtype


def test_argmax_argmin_any_functions_take_tensors_and_arrays() -> None:
    a = np.array([[1.0, 5.0], [7.0, 0.0]])
    for x in (a, mg.Tensor(a)):
        np.testing.assert_array_equal(mg.argmax(x, axis=0), [1, 0])
        assert mg.argmin(x) == 3
        np.testing.assert_array_equal(mg.any(x, axis=1, keepdims=True), [[True], [True]])
        assert not isinstance(mg.argmax(x), mg.Tensor)
    assert mg.any is not any and "any" in mg.__all__


def test_save_and_load_round_trip_data_and_gradient(tmp_path: object) -> None:
    import pathlib

    path = pathlib.Path(str(tmp_path)) / "t.npz"
    x = mg.Tensor([1.0, 2.0], dtype=np.float32)
    (x * x).backward()
    mg.save(path, x)
    y = mg.load(path)
    assert y.dtype == np.float32 and y.creator is None
    np.testing.assert_array_equal(y.data, x.data)
    np.testing.assert_array_equal(y.grad, [2.0, 4.0])
    mg.save(str(path), mg.arange(3))  # (no gradient, an integer tensor)
    z = mg.load(str(path))
    assert z.grad is None and z.constant
    np.testing.assert_array_equal(z.data, [0, 1, 2])
    with pytest.raises(TypeError):
        mg.save(path, np.ones(2))  # type: ignore[arg-type]


def test_tensor_without_copy_returns_a_matching_tensor_itself() -> None:
    t = mg.Tensor([1.0, 2.0])
    assert mg.tensor(t, copy=False) is t
    assert mg.tensor(t, copy=False, constant=False, dtype=np.float64) is t
    assert mg.tensor(t) is not t  # (a copy by default)
    assert mg.tensor(t, copy=False, dtype=np.float32) is not t
    assert mg.tensor(t, copy=False, constant=True) is not t
    view = mg.tensor(t, copy=False, ndmin=3)
    assert view.shape == (1, 1, 2) and view.base is t


def test_like_creators_of_a_tensor_with_a_gradient_in_an_integer_dtype() -> None:
    x = mg.Tensor([1.0, 2.0])
    for make in (mg.zeros_like, mg.ones_like, mg.empty_like):
        made = make(x, dtype=np.int16)
        assert made.dtype == np.int16 and made.constant
        assert make(x).constant is False


def test_concatenate_and_stack_take_a_dtype() -> None:
    x = mg.Tensor([1.0, 2.0])
    for join in (mg.concatenate, mg.stack):
        y = join([x, x], dtype="float32")
        assert y.dtype == np.float32
        (y * y).sum().backward()
        assert x.grad.dtype == np.float64
        np.testing.assert_array_equal(x.grad, [4.0, 8.0])
    assert np.concatenate([x, x], dtype=np.float16).dtype == np.float16


def test_using_a_constant_in_an_op_nulls_a_gradient_set_on_it() -> None:
    c = mg.Tensor([1.0], constant=True)
    c.grad = np.ones(1)
    _ = c * 2
    assert c.grad is None
