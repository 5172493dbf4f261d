"""MyGrad targets, run through MyGrad itself."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

mygrad = pytest.importorskip("mygrad")

from click.testing import CliRunner  # noqa: E402

import gradcheck  # noqa: E402
from gradcheck.checking.adapters import framework_of  # noqa: E402
from gradcheck.checking.checker import check  # noqa: E402
from gradcheck.checking.resolve import resolve_target  # noqa: E402
from gradcheck.checking.signature import op_signature  # noqa: E402
from gradcheck.cli import main  # noqa: E402
from tests.support import mygrad_ops as ops  # noqa: E402

HERE = Path(__file__).resolve().parents[2] / "support"
rng = np.random.default_rng(1)
A, B = rng.normal(size=(2, 5)), rng.normal(size=(2, 5))


def test_framework_and_signature():
    assert framework_of(ops.Mul) == "mygrad"
    assert framework_of(ops.tanh_times) == "mygrad"
    assert framework_of(mygrad.operation_base.Operation) is None
    assert op_signature(ops.Power).input_names == ("x",)
    assert op_signature(ops.Power).parameters == ("p",)


def test_runs_through_mygrad():
    seen = []

    class Spy(ops.Mul):
        def backward_var(self, grad, index, **kwargs):
            seen.append(type(self.variables[0]))
            return super().backward_var(grad, index, **kwargs)

    _, grads = resolve_target(Spy).run([A, B], None, np.ones_like(A))
    assert seen and all(t is mygrad.Tensor for t in seen)
    np.testing.assert_allclose(grads[0], B)
    np.testing.assert_allclose(grads[1], A)


def test_correct_ops_pass_and_a_wrong_one_fails_on_its_input():
    assert check(ops.Mul, A, B).verdict == "passed"
    assert check(ops.Power, A, p=3.0).verdict == "passed"
    assert check(ops.tanh_times, A).verdict == "passed"
    failure = check(ops.WrongMul, A, B).failure
    assert failure.kind == "mismatch" and failure.input == 1


def test_structural_checks_apply():
    # MyGrad locks the memory of tensors in a graph: the write itself raises.
    failure = check(ops.MutatesInput, A).failure
    assert failure.kind == "forward_error" and "read-only" in failure.message
    assert "mygrad_ops.py" in failure.frame  # the op's own line is named
    assert check(ops.abs_op, np.array([0.0, 1.0])).verdict == "not differentiable"


def test_verify_shrinks_and_cli_reports(tmp_path, monkeypatch):
    result = gradcheck.verify(ops.WrongMul, max_examples=20, seed=4)
    assert result.verdict == "failed" and all(x.size == 1 for x in result.failure.inputs)
    shutil.copy(HERE / "mygrad_ops.py", tmp_path / "my_mygrad_ops.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    try:
        runner = CliRunner()
        args = ["--max-examples", "10", "--seed", "3"]
        ok = runner.invoke(main, ["verify", "my_mygrad_ops:Mul", *args])
        assert ok.exit_code == 0, ok.output
        bad = runner.invoke(main, ["verify", "my_mygrad_ops:WrongMul", *args])
        assert bad.exit_code == 1 and "mismatch (input b)" in bad.output, bad.output
    finally:
        sys.modules.pop("my_mygrad_ops", None)


def test_a_positional_parameter_given_in_kwargs():
    x = np.array([0.5, -1.2, 2.0])
    assert check(ops.Leaky, x, slope=0.1).verdict == "passed"
    result = gradcheck.verify(ops.Leaky, kwargs={"slope": 0.2}, avoid=[0.0], max_examples=5, seed=0)
    assert result.verdict == "passed", result.note


def test_integer_inputs_reach_a_mygrad_op_as_arrays():
    result = gradcheck.verify(
        ops.Ranking, shapes=["n", "n", "n"], integers={2: (-1, 2)}, max_examples=10, seed=0
    )
    assert result.verdict == "passed", result.note


class _Cosh(mygrad.operation_base.Operation):
    def __call__(self, x):
        self.variables = (x,)
        return np.cosh(x.data)

    def backward_var(self, grad, index, **kwargs):
        return self.sign * grad * np.sinh(self.variables[0].data)


class _RightCosh(_Cosh):
    sign = 1.0


class _WrongCosh(_Cosh):
    sign = -1.0


def test_a_function_of_mygrad_tensors_with_two_outputs_is_checked_output_by_output():
    # It failed as forward_error: 'the target returned tuple, not a mygrad.Tensor'.
    x = np.array([0.3, -1.1])
    right = check(lambda x: (mygrad.sinh(x), mygrad.execute_op(_RightCosh, x)), x)
    assert right.verdict == "passed", right
    wrong = check(lambda x: (mygrad.sinh(x), mygrad.execute_op(_WrongCosh, x)), x)
    assert wrong.failure is not None and wrong.failure.kind == "mismatch", wrong
    assert wrong.failure.message.startswith("output 1 of 2"), wrong
    assert gradcheck.verify(
        lambda x: (mygrad.sinh(x), mygrad.execute_op(_RightCosh, x)), max_examples=30, seed=0
    ).passed


class _MaskedMeanF32(mygrad.operation_base.Operation):
    """User round 7: a masked mean whose backward_var builds its gradient as float32
    (``np.zeros(shape, dtype=np.float32)``); MyGrad casts it back to float64 silently,
    the precision lost (a relative error of 1e-8, inside float64's tolerances)."""

    dtype: type = np.float32

    def __call__(self, x, mask):
        self.variables = (x,)
        self.mask = np.broadcast_to(np.asarray(getattr(mask, "data", mask), dtype=bool), x.shape)
        self.count = max(int(self.mask.sum()), 1)
        return np.sum(np.where(self.mask, x.data, 0.0)) / self.count

    def backward_var(self, grad, index, **kwargs):
        out = np.zeros(self.mask.shape, dtype=self.dtype or self.variables[0].data.dtype)
        out[self.mask] = grad / self.count
        return out


class _MaskedMeanRight(_MaskedMeanF32):
    dtype = None


class _LeakyWider(mygrad.operation_base.Operation):
    """The docs' LeakyRelu: ``np.where(..., 1.0, slope)`` is float64, so its gradient
    of a float32 input is float64, which MyGrad casts to float32: no precision lost."""

    def __call__(self, x):
        self.variables = (x,)
        return np.where(x.data > 0, x.data, 0.1 * x.data).astype(x.data.dtype)

    def backward_var(self, grad, index, **kwargs):
        (x,) = self.variables
        return grad * np.where(x.data > 0, 1.0, 0.1)


def test_a_mygrad_op_s_float32_gradient_of_a_float64_input_is_wrong_dtype():
    x = np.array([[0.3, -1.2, 2.0], [0.5, 0.7, -0.1]])
    mask = np.array([[True, False, True], [True, True, False]])
    failure = check(_MaskedMeanF32, x, mask).failure
    assert failure is not None and failure.kind == "wrong_dtype", failure
    assert "float32" in failure.message and "float64" in failure.message
    assert check(_MaskedMeanRight, x, mask).passed
    for seed in (0, 1, 2):
        found = gradcheck.verify(_MaskedMeanF32, booleans=[1], max_examples=10, seed=seed)
        assert found.verdict == "failed" and found.failure.failure.kind == "wrong_dtype"
    x32 = np.array([0.3, -1.2, 2.0], dtype=np.float32)
    assert check(_LeakyWider, x32).passed
