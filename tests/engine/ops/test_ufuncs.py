"""The elementwise ops are ufuncs: classes with numpy.ufunc's attributes, called with
NumPy's conventions (out=, where=, dtype=) plus constant=."""

from __future__ import annotations

import inspect
import typing

import numpy as np
import pytest

import gradcheck as mg
from gradcheck.ops.linalg import EinSum
from gradcheck.ops.trigonometric import Sin
from gradcheck.ufuncs import MyGradBinaryUfunc, MyGradUnaryUfunc, ufunc_creator
from gradcheck.ufuncs._ufunc_creators import MyGradBinaryUfuncNoMask

#: gradcheck's public names that NumPy has as ufuncs: each must be a gradcheck ufunc.
UFUNC_NAMES = sorted(
    name for name in mg.ops.__all__ if isinstance(getattr(np, name, None), np.ufunc)
)
ALIASES = {"abs": "absolute", "divide": "true_divide"}


def test_the_elementwise_ops_are_the_ufuncs():
    found = sorted(
        name
        for name in dir(mg)
        if not name.startswith("_")
        and isinstance(getattr(mg, name), type)
        and issubclass(getattr(mg, name), mg.ufunc)
        and getattr(mg, name) is not mg.ufunc
    )
    assert found == UFUNC_NAMES
    assert len(found) == 39 and {"add", "exp", "sin", "true_divide", "matmul"} <= set(found)


@pytest.mark.parametrize("name", UFUNC_NAMES)
def test_a_ufunc_mirrors_its_numpy_ufunc(name):
    f, np_f = getattr(mg, name), getattr(np, name)
    assert issubclass(f, mg.ufunc)
    assert f.__name__ == ALIASES.get(name, name)
    assert repr(f) == f"<mygrad-ufunc '{f.__name__}'>"
    for attr in ("nin", "nout", "nargs", "identity", "signature"):
        assert getattr(f, attr) == getattr(np_f, attr), attr
    assert f.types and set(f.types) <= set(np_f.types) and f.ntypes == len(f.types)
    assert not any(set(code) & set("FDGMmO") for code in f.types)  # real types only
    assert f._wrapped_op.numpy_ufunc is np_f
    assert f.resolve_dtypes is not None
    params = inspect.signature(f).parameters
    expected = {"out", "dtype", "constant"} | ({"where"} if name != "matmul" else set())
    assert expected <= set(params)
    assert typing.get_type_hints(f)["return"] is mg.Tensor
    assert "Parameters" in f.__doc__ and "Returns" in f.__doc__
    assert "\n    out : " in f.__doc__ and "\n    dtype : " in f.__doc__


def test_aliases_and_the_ufunc_types():
    assert mg.divide is mg.true_divide and mg.abs is mg.absolute
    assert isinstance(mg.sin, MyGradUnaryUfunc) and isinstance(mg.add, MyGradBinaryUfunc)
    assert type(mg.matmul) is MyGradBinaryUfuncNoMask
    assert issubclass(mg.ufunc, mg.ufunc) and not issubclass(mg.Tensor, mg.ufunc)


def test_ufunc_cannot_be_subclassed():
    with pytest.raises(TypeError, match="cannot be subclassed"):

        class Mine(mg.ufunc):
            pass


@pytest.mark.parametrize("method", ["at", "accumulate", "outer", "reduce", "reduceat"])
def test_ufunc_methods_exist_and_say_they_are_not_implemented(method):
    with pytest.raises(NotImplementedError, match=f"add.{method} is not implemented"):
        getattr(mg.add, method)(mg.Tensor([1.0, 2.0]))


def test_ufunc_creator_makes_a_ufunc_from_a_rule_and_a_stub():
    @ufunc_creator(Sin)
    def my_sin(x, out=None, *, where=True, dtype=None, constant=None) -> mg.Tensor:
        """My sine.

        Parameters
        ----------
        x : array_like
        constant : bool, optional

        Returns
        -------
        Tensor
        """

    assert my_sin.__name__ == "my_sin" and my_sin.nin == 1 and issubclass(my_sin, mg.ufunc)
    assert list(inspect.signature(my_sin).parameters) == [
        "x",
        "out",
        "where",
        "dtype",
        "constant",
    ]
    y = my_sin(mg.Tensor([0.0, 1.0]))
    np.testing.assert_allclose(y.data, np.sin([0.0, 1.0]))


@pytest.mark.parametrize("not_a_rule", [EinSum, object, Sin()])
def test_ufunc_creator_refuses_what_is_not_a_ufunc_rule(not_a_rule):
    with pytest.raises(TypeError, match="numpy_ufunc"):
        ufunc_creator(not_a_rule)


def test_ufunc_creator_does_not_take_method_ops():
    with pytest.raises(NotImplementedError):
        ufunc_creator(Sin, reduce_op=Sin)


def test_where_with_out_array_is_numpys_and_masks_the_gradient():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    where = np.array([True, False, True])
    target = np.full(3, 7.0)
    x, y = mg.Tensor(a), mg.Tensor(b)
    z = mg.multiply(x, y, where=where, out=target)
    assert z.data is target
    np.testing.assert_array_equal(z.data, np.multiply(a, b, where=where, out=np.full(3, 7.0)))
    z.backward()
    np.testing.assert_array_equal(x.grad, b * where)
    np.testing.assert_array_equal(y.grad, a * where)


def test_where_broadcasts_against_the_inputs():
    x = mg.Tensor([0.5, 1.0])
    where = np.array([[True, False], [False, False], [True, True]])
    out = mg.exp(x, where=where, out=np.zeros((3, 2)))
    assert out.shape == (3, 2)
    out.backward()
    np.testing.assert_allclose(x.grad, np.exp(x.data) * where.sum(axis=0))


def test_dtype_sets_the_result_dtype_and_the_gradient_keeps_the_inputs():
    x = mg.Tensor(np.array([0.5, 2.0], dtype=np.float16))
    for f in (mg.exp, mg.sqrt, mg.negative):
        y = f(x, dtype=np.float64)
        assert y.dtype == np.float64 and y.constant is False
        np.testing.assert_allclose(y.data, getattr(np, f.__name__)(x.data, dtype=np.float64))
        y.backward()
        assert x.grad.dtype == np.float16
    z = mg.add(x, x, dtype=np.float32)
    assert z.dtype == np.float32
    z.backward()
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])


def test_out_tensor_is_written_in_place_with_the_previous_value_in_the_graph():
    x = mg.Tensor([1.0, 2.0])
    target = mg.Tensor([5.0, 6.0])
    result = mg.exp(x, out=target, where=[False, True])
    assert result is target
    np.testing.assert_allclose(target.data, [5.0, np.exp(2.0)])
    (target * target).sum().backward()
    np.testing.assert_allclose(x.grad, [0.0, 2 * np.exp(2.0) ** 2])


def test_out_tensor_without_a_mask_is_assignment():
    x, target = mg.Tensor([1.0, 2.0]), mg.Tensor([0.0, 0.0])
    assert mg.square(x, target) is target  # (out is positional, as in NumPy)
    np.testing.assert_array_equal(target.data, [1.0, 4.0])
    target.sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 4.0])


def test_out_takes_numpys_one_tuple_and_refuses_more():
    x, target = mg.Tensor([1.0, -2.0]), np.zeros(2)
    assert mg.negative(x, out=(target,)).data is target
    with pytest.raises(ValueError, match="one output"):
        mg.negative(x, out=(target, target))


def test_numpy_calls_on_tensors_take_out_where_and_dtype():
    x = mg.Tensor([-1.0, -2.0])
    target = np.zeros(2)
    y = np.negative(x, out=target)
    assert isinstance(y, mg.Tensor) and y.data is target and y.creator is not None
    into = mg.Tensor([0.0, 0.0])
    assert np.negative(x, into, where=[True, False]) is into
    np.testing.assert_array_equal(into.data, [1.0, 0.0])
    assert np.sin(x, dtype=np.float32).dtype == np.float32


def test_the_op_parameters_of_a_ufunc_still_reach_the_op():
    x = mg.Tensor([-1.0, 0.0, 1.0])
    mg.abs(x, nan_to_num=False).backward()
    assert np.isnan(x.grad[1])
    y = mg.Tensor([-1.0, 0.0, 1.0])
    mg.abs(y, where=[True, True, False], out=np.zeros(3), nan_to_num=True).backward()
    np.testing.assert_array_equal(y.grad, [-1.0, 0.0, 0.0])


def test_a_ufunc_is_a_checkable_target():
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    assert mg.check(mg.multiply, a, b).passed
    assert mg.check(mg.exp, a).passed
