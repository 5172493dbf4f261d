"""A tensor's gradient has the tensor's dtype (as in MyGrad 2.x and torch), whatever
dtypes the ops and arrays it met computed in; and the linalg ops that NumPy cannot run
in float16 say so."""

from __future__ import annotations

import re

import numpy as np
import pytest

import gradcheck as mg
from gradcheck import Operation
from gradcheck.errors import UnsupportedDtype
from gradcheck.ops._rules.unary import UnaryOp

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
LOW = [F32, F16]


@pytest.mark.parametrize("dtype", LOW)
def test_a_tensor_times_a_float64_array_gets_a_gradient_of_its_own_dtype(dtype):
    x = mg.Tensor(np.ones(3, dtype=dtype))
    y = x * np.ones(3)  # float64 (NumPy's promotion)
    assert y.dtype == F64
    y.sum().backward()
    assert x.grad.dtype == dtype
    np.testing.assert_array_equal(x.grad, np.ones(3))


@pytest.mark.parametrize("dtype", LOW)
def test_every_tensor_of_a_mixed_graph_keeps_its_dtype(dtype):
    x = mg.Tensor(np.linspace(0.1, 1.0, 6, dtype=dtype).reshape(2, 3))
    h = mg.tanh(x) * 2  # own dtype
    w = mg.Tensor(np.full(3, 0.5))  # float64, broadcast against (2, 3)
    z = (h * w + x * np.ones((2, 3))).sum()  # x reached twice, via float64 products
    z.backward()
    assert (x.grad.dtype, h.grad.dtype, w.grad.dtype, z.grad.dtype) == (dtype, dtype, F64, F64)
    x64 = x.data.astype(np.float64)
    expected = 2 * (1 - np.tanh(x64) ** 2) * 0.5 + 1
    np.testing.assert_allclose(x.grad, expected, rtol=np.finfo(dtype).eps * 8)


def test_a_gradient_handed_on_unchanged_is_cast_and_not_shared():
    # `add` hands its upstream gradient on as it is (shared between tensors inside the
    # engine); cast, it is an array of its own.
    x = mg.Tensor(np.ones(4, dtype=np.float32))
    y = mg.Tensor(np.ones(4))
    s = x + y
    s.backward(np.arange(4.0))
    assert x.grad.dtype == F32 and y.grad.dtype == F64
    assert not np.shares_memory(x.grad, y.grad) and not np.shares_memory(x.grad, s.grad)
    x.grad[0] = 99.0  # its own array: nobody else sees the change
    assert y.grad[0] == 0.0 and s.grad[0] == 0.0


@pytest.mark.parametrize("dtype", LOW)
def test_the_given_seed_gradient_is_cast(dtype):
    y = mg.Tensor(np.ones(3, dtype=dtype))
    z = y * 3
    z.backward(np.array([1.0, 2.0, 3.0]))  # float64
    assert z.grad.dtype == dtype and y.grad.dtype == dtype
    np.testing.assert_array_equal(y.grad, [3.0, 6.0, 9.0])


class _Float64Derivative(UnaryOp):
    """An elementwise op (UnaryOp's short path) whose derivative is float64."""

    func = staticmethod(np.sin)

    def derivative(self, x, out):
        return np.cos(x.astype(np.float64))


class _Float64Backward(Operation):
    """A user's op whose backward_var always returns float64 (the general path)."""

    def __call__(self, a):
        self.variables = (a,)
        return np.sin(a.data)

    def backward_var(self, grad, index, **kwargs):
        return np.asarray(grad, dtype=np.float64) * np.cos(self.variables[0].data.astype(float))


class _IntegerBackward(Operation):
    def __call__(self, a):
        self.variables = (a,)
        return 2 * a.data

    def backward_var(self, grad, index, **kwargs):
        return np.full(self.variables[0].shape, 2)  # an int array


@pytest.mark.parametrize("Op", [_Float64Derivative, _Float64Backward])
@pytest.mark.parametrize("dtype", LOW)
def test_an_ops_wider_gradient_is_cast_to_its_inputs_dtype(Op, dtype):
    x = mg.Tensor(np.array([0.0, 0.5, 1.0], dtype=dtype))
    mg.execute_op(Op, x).backward()
    assert x.grad.dtype == dtype
    np.testing.assert_allclose(x.grad, np.cos(x.data.astype(float)), rtol=np.finfo(dtype).eps)


def test_an_integer_gradient_is_stored_as_a_float_of_the_tensors_dtype():
    x = mg.Tensor(np.ones(3, dtype=np.float32))
    mg.execute_op(_IntegerBackward, x).backward()
    assert x.grad.dtype == F32
    np.testing.assert_array_equal(x.grad, [2.0, 2.0, 2.0])


def test_a_float64_tensor_keeps_float64_gradients_from_float32_arrays():
    x = mg.Tensor(np.ones(3))
    (x * np.ones(3, dtype=np.float32)).sum().backward()
    assert x.grad.dtype == F64


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("inv", lambda a: mg.linalg.inv(a)),
        ("det", lambda a: mg.linalg.det(a)),
        ("slogdet", lambda a: mg.linalg.slogdet(a)),
        ("solve", lambda a: mg.linalg.solve(np.eye(2), a)),
        ("norm (ord='nuc'", lambda a: mg.linalg.norm(a, "nuc")),
        ("norm (ord=2", lambda a: mg.linalg.norm(a, 2, axis=(0, 1))),
    ],
)
def test_linalg_ops_name_float16_as_unsupported(name, call):
    a = mg.Tensor(np.eye(2, dtype=np.float16))
    pattern = rf"gradcheck\.linalg\.{re.escape(name)}.*float16"
    with pytest.raises(UnsupportedDtype, match=pattern) as info:
        call(a)
    assert isinstance(info.value, TypeError)  # as NumPy's own refusal is
    assert "use float32 or float64" in str(info.value)
    # float32 works
    call(mg.Tensor(np.eye(2, dtype=np.float32)))


def test_vector_norms_run_in_float16():
    x = mg.Tensor(np.array([3.0, 4.0], dtype=np.float16))
    n = mg.linalg.norm(x)
    n.backward()
    assert n.dtype == F16 and x.grad.dtype == F16
    np.testing.assert_allclose(x.grad, [0.6, 0.8], rtol=1e-3)
