"""PyTorch targets through gradcheck.check, gradcheck.verify and the CLI."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

import gradcheck  # noqa: E402
from gradcheck.checking.adapters import framework_of  # noqa: E402
from gradcheck.checking.checker import check  # noqa: E402
from gradcheck.checking.resolve import resolve_target  # noqa: E402
from gradcheck.checking.signature import op_signature  # noqa: E402
from gradcheck.cli import main  # noqa: E402
from tests.support import torch_ops as ops  # noqa: E402

HERE = Path(__file__).resolve().parents[2] / "support"
X = np.random.default_rng(0).normal(size=(3, 4))


def test_framework_and_signature_are_read_without_running_the_op():
    assert framework_of(ops.Cube) == "torch"
    assert framework_of(ops.sin_times) == "torch"
    assert framework_of(torch.autograd.Function) is None  # torch's own base class
    assert op_signature(ops.Cube).input_names == ("x",)  # ctx is not an input
    sig = op_signature(ops.Scale)  # new style: forward(x, alpha) and setup_context
    assert (sig.input_names, sig.parameters) == (("x",), ("alpha",))
    assert op_signature(ops.sin_times).arity == 2


def test_resolved_target_runs_forward_and_backward_through_torch():
    t = resolve_target(ops.Cube)
    np.testing.assert_allclose(t.forward([X]), X**3)
    v = np.ones_like(X)
    out, (g,) = t.run([X], None, v)
    np.testing.assert_allclose(out, X**3)
    np.testing.assert_allclose(g, 3 * X**2)
    assert isinstance(g, np.ndarray) and g.dtype == np.float64


def test_correct_function_and_functions_pass():
    assert check(ops.Cube, X).verdict == "passed"
    assert check(ops.Scale, X, alpha=3.0).verdict == "passed"
    assert check(ops.sin_times, X, X + 1).verdict == "passed"


def test_wrong_function_is_a_mismatch_naming_the_element():
    result = check(ops.WrongCube, X)
    assert result.verdict == "failed"
    assert result.failure.kind == "mismatch"
    worst = result.worst[0]
    # numeric 3x²·v against analytic 3x·v: their ratio is x at that element
    assert worst.numeric / worst.analytic == pytest.approx(X[worst.index], rel=1e-6)
    assert check(ops.wrong_softplus, X).failure.kind == "mismatch"


def test_returning_the_upstream_gradient_is_not_an_aliasing_alarm():
    assert check(ops.Identity, X).verdict == "passed"


def test_constants_get_no_gradient_and_no_false_alarm():
    result = check(ops.sin_times, X, X, constants=[1])
    assert result.verdict == "passed"


def test_nondeterministic_backward_is_caught():
    assert check(ops.Flaky, X).failure.kind == "nondeterministic"


def test_verify_shrinks_a_torch_failure():
    result = gradcheck.verify(ops.WrongCube, max_examples=20, seed=1)
    assert result.verdict == "failed"
    (x,) = result.failure.inputs
    assert x.size == 1  # shrunk to a single element
    assert gradcheck.verify(ops.Cube, max_examples=10, seed=1).passed


@pytest.fixture
def torch_workdir(tmp_path, monkeypatch):
    shutil.copy(HERE / "torch_ops.py", tmp_path / "my_torch_ops.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    sys.modules.pop("my_torch_ops", None)


def test_cli_verifies_torch_targets(torch_workdir):
    runner = CliRunner()
    ok = runner.invoke(main, ["verify", "my_torch_ops:Cube", "--max-examples", "10", "--seed", "2"])
    assert ok.exit_code == 0, ok.output
    assert "passed" in ok.output
    bad = runner.invoke(
        main,
        ["verify", "my_torch_ops:WrongCube", "--max-examples", "10", "--seed", "2"],
    )
    assert bad.exit_code == 1, bad.output
    assert "mismatch" in bad.output and "Replay: gradcheck verify my_torch_ops:WrongCube" in (
        bad.output
    )
    doc = runner.invoke(
        main,
        ["verify", "my_torch_ops:sin_times", "--max-examples", "5", "--format", "json"],
    )
    assert doc.exit_code == 0, doc.output
    assert json.loads(doc.stdout)["targets"][0]["verdict"] == "passed"


def test_cli_lists_torch_classes_of_a_module(torch_workdir):
    out = CliRunner().invoke(main, ["list", "my_torch_ops"])
    assert out.exit_code == 0, out.output
    for name in ("Cube", "WrongCube", "Scale", "sin_times", "wrong_softplus"):
        assert f"my_torch_ops:{name} " in out.output
    assert "_BadSoftplus" not in out.output


class _RaisesInTorch(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.einsum("ij,jk->ik", x, x)  # raises inside torch for a 1-d x

    @staticmethod
    def backward(ctx, grad):
        return grad


def test_an_error_raised_inside_torch_names_the_ops_line():
    failure = check(_RaisesInTorch, np.ones(3)).failure
    assert failure.kind == "forward_error"
    assert failure.frame is not None and "test_torch_adapter.py" in failure.frame
    assert "einsum" in failure.frame


class _SinFloat32Backward(torch.autograd.Function):
    """Right values, wrong precision: float32 gradients for float64 inputs (torch casts
    them back to float64 silently)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return (g * x.cos()).float()


class _SinRightBackward(_SinFloat32Backward):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos()


def test_a_gradient_of_another_dtype_than_its_input_is_wrong_dtype():
    x = np.array([0.1, 0.5, 2.0])
    result = check(_SinFloat32Backward, x)
    assert result.failure is not None and result.failure.kind == "wrong_dtype", result
    assert "float32" in result.failure.message
    assert check(_SinRightBackward, x).verdict == "passed"
    assert check(_SinRightBackward, x.astype(np.float32)).verdict == "passed"


def test_positional_parameters_given_in_kwargs_go_by_position():
    # issue 19: `alpha`, `v`, `row` have no default and are not tensors
    assert op_signature(ops.ScaleBy).given({"alpha": 1}).input_names == ("x",)
    assert check(ops.ScaleBy, X, alpha=0.5).verdict == "passed"
    z = np.abs(X) + 0.5
    assert check(ops.PowerOf, z, v=2.5).verdict == "passed"
    assert check(ops.TakeRow, X, row=1, scale=3.0).verdict == "passed"
    result = gradcheck.verify(ops.ScaleBy, kwargs={"alpha": -2.0}, max_examples=5, seed=0)
    assert result.verdict == "passed", result.note


def test_cli_kwargs_for_a_positional_parameter(tmp_path, monkeypatch):
    shutil.copy(HERE / "torch_ops.py", tmp_path / "torch_user_ops.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    args = ["verify", "torch_user_ops:PowerOf", "--kwargs", '{"v": 2.5}', "--domain", "0.1:3"]
    out = CliRunner().invoke(main, [*args, "--max-examples", "5", "--seed", "0"])
    assert out.exit_code == 0, out.output


def test_integer_labels_and_constant_inputs():
    result = gradcheck.verify(
        ops.PickLogit, shapes=["n,3", "n"], integers={1: (0, 3)}, max_examples=10, seed=0
    )
    assert result.verdict == "passed", result.note
    # the label needs no gradient: its backward returns None for it
    assert gradcheck.verify(ops.BCEWithLabel, max_examples=5, seed=0).verdict == "failed"
    result = gradcheck.verify(ops.BCEWithLabel, constants=[1], max_examples=10, seed=0)
    assert result.verdict == "passed", result.note


def test_an_alias_of_apply_is_its_function():
    assert framework_of(ops.affine) == "torch"
    sig = op_signature(ops.affine)
    assert sig.input_names == ("x", "w", "b")
    x, w, b = np.ones((4, 3)), np.ones((2, 3)) / 3, np.arange(2.0)
    result = check(ops.affine, x, w, b)
    assert result.verdict == "passed" and result.target.endswith("AffineFunction")


def test_a_function_calling_apply_through_a_module_alias(tmp_path, monkeypatch):
    (tmp_path / "through_alias.py").write_text(
        "import tests.support.torch_ops as L\n\ndef cube(x):\n    return L.Cube.apply(x)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import through_alias

    assert framework_of(through_alias.cube) == "torch"
    assert check(through_alias.cube, X).verdict == "passed"


def test_module_instances_check_their_parameters_too():
    torch.manual_seed(0)
    layer = ops.Affine(3, 2)
    x = np.random.default_rng(1).normal(size=(4, 3))
    result = check(layer, x)
    assert result.verdict == "passed"
    assert [p.input for p in result.per_input] == [0, 1, 2]  # x, weight, bias
    np.testing.assert_array_equal(result.inputs[1], layer.weight.detach().numpy())
    wrong = check(ops.WrongAffine(3, 2), x)
    assert wrong.failure.kind == "mismatch" and wrong.failure.input == 1  # the weight
    layer.bias.requires_grad_(False)  # then a constant
    assert check(layer, x).settings["constants"] == [2]
    found = gradcheck.verify(ops.WrongAffine(3, 2), shapes=["n,3"], max_examples=10, seed=0)
    assert found.verdict == "failed"


def test_module_classes_and_torch_modules():
    assert gradcheck.verify(ops.CubeModule, max_examples=5, seed=0).verdict == "passed"
    from gradcheck.errors import NotATarget

    with pytest.raises(NotATarget, match=r"make an instance in your module"):
        resolve_target(ops.Affine)
    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 2)  # float32 parameters, checked in float64
    assert framework_of(layer) == "torch"
    assert check(layer, np.ones((2, 3))).verdict == "passed"


def test_several_outputs_are_checked_output_by_output():
    assert check(ops.SortValues, X[0]).verdict == "passed"
    assert check(ops.WithNone, X).verdict == "passed"
    wrong = check(ops.WrongSortValues, X[0])
    assert wrong.failure.kind == "mismatch" and wrong.failure.output == 0
    assert wrong.failure.message.startswith("output 0 of 2 (float64[4])")


def test_a_backward_that_changes_what_forward_saved_is_not_reentrant():
    result = check(ops.MutatesSaved, X)
    assert result.failure.kind == "not_reentrant", result.failure
    assert "Backward is not reentrant" in result.failure.message
    assert check(ops.ScalesSaved, X).verdict == "passed"
    raised = check(ops.MutatesSavedTensor, X)  # the second backward raises
    assert raised.failure.kind == "not_reentrant", raised.failure


def test_a_float32_output_for_float64_inputs():
    result = check(ops.Float32Output, X)
    assert result.failure.kind == "low_precision_output"
    assert check(ops.Float32Output, X.astype(np.float32)).verdict == "passed"


def test_the_needs_input_grad_paths_are_checked():
    result = check(ops.MulIgnoringNeeds, X, X + 1)
    assert result.failure.kind == "mismatch" and result.failure.input == 0
    assert "needs_input_grad[1] False" in result.failure.message


def test_a_module_in_training_mode_with_dropout_is_told_to_use_eval():
    # nn.Dropout in training mode draws a new mask per forward: the report says how to
    # check the module as it is used for inference (`.eval()`), which then passes.
    torch.manual_seed(0)
    layer = torch.nn.Sequential(torch.nn.Linear(3, 2).double(), torch.nn.Dropout(0.5))
    x = np.random.default_rng(0).standard_normal((4, 3))
    failure = check(layer, x).failure
    assert failure.kind == "nondeterministic" and "module.eval()" in failure.message
    assert check(layer.eval(), x).passed


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_functions_that_mark_their_input_dirty_are_checked(seed):
    # an in-place Function (ctx.mark_dirty) cannot take a leaf that requires a
    # gradient: it gets a copy, its gradient is taken at the leaf, and the drawn
    # arrays stay as drawn
    for right, wrong in [
        (ops.DoubleInPlace, ops.WrongDoubleInPlace),
        (ops.AddSquareInPlace, ops.WrongAddSquareInPlace),
    ]:
        for order in (1, 2):
            ok = gradcheck.verify(right, max_examples=15, seed=seed, order=order)
            assert ok.verdict == "passed", (right, order, ok.note, ok.failure)
            bad = gradcheck.verify(wrong, max_examples=15, seed=seed, order=order)
            assert bad.verdict == "failed", (wrong, order)
            assert bad.failure.failure.kind == "mismatch", bad.failure
    x = np.array([1.0, -2.0, 3.0])
    assert check(ops.DoubleInPlace, x).passed
    assert check(ops.WrongDoubleInPlace, x).failure.kind == "mismatch"
    assert x.tolist() == [1.0, -2.0, 3.0]  # not doubled by the check


def test_cli_checks_an_in_place_function(torch_workdir):
    runner = CliRunner()
    args = ["--max-examples", "10", "--seed", "1"]
    ok = runner.invoke(main, ["verify", "my_torch_ops:AddSquareInPlace", *args])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(main, ["verify", "my_torch_ops:WrongDoubleInPlace", *args])
    assert bad.exit_code == 1, bad.output
    assert "mismatch" in bad.output
