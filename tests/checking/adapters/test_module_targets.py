"""A module of torch, JAX or MyGrad ops is every op in it, as each is when named alone:
`gradcheck verify module`, `gradcheck list module` and a configuration's module entry
check them all (each test skips without its framework)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.cli import main
from gradcheck.frontend.loading import load_module, load_targets

TORCH_LAYERS = """
import torch
from torch import nn
from torch.nn import Linear

from shared_layers import shared


class _WrongScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, s):
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, g):
        x, s = ctx.saved_tensors
        return g * s, 2 * (g * x).sum()  # twice the scale's gradient


class ScaleLayer(nn.Module):
    def __init__(self, value):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(value, dtype=torch.float64))

    def forward(self, x):
        return _WrongScale.apply(x, self.scale)


class Base(nn.Module):
    pass


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * x * x * g


cube = Cube.apply
layer = ScaleLayer(1.5)
"""

SHARED = """
import torch
from torch import nn

shared = nn.Tanh()
"""

JAX_OPS = """
import jax
import jax.numpy as jnp


@jax.custom_vjp
def wrong_square(x):
    return x * x


def _fwd(x):
    return x * x, x


def _bwd(x, g):
    return (3 * x * g,)  # 3x, not 2x


wrong_square.defvjp(_fwd, _bwd)


@jax.custom_jvp
def cube(x):
    return x**3


@cube.defjvp
def _cube_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return x**3, 3 * x * x * t


@jax.custom_vjp
def _softsign(x):
    return x / (1 + jnp.abs(x))


_softsign.defvjp(lambda x: (x / (1 + jnp.abs(x)), x), lambda x, g: (g / (1 + jnp.abs(x)) ** 2,))
softsign = jax.jit(_softsign)
fast_cube = jax.jit(cube)
safe_log = jax.custom_jvp(jnp.log)  # made here, of a function of jax.numpy's
safe_log.defjvp(lambda p, t: (jnp.log(p[0]), t[0] / p[0]))


def plain(x):
    return jnp.sin(x)
"""

MYGRAD_OPS = """
from mygrad.operation_base import Operation
from mygrad.nnet.losses.focal_loss import FocalLoss
from mygrad.nnet.losses.softmax_crossentropy import SoftmaxCrossEntropy


class Square(Operation):
    def __call__(self, a):
        self.variables = (a,)
        return a.data**2

    def backward_var(self, grad, index, **kwargs):
        return grad * 2 * self.variables[0].data
"""


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary working directory holding user modules, cleaned from sys.modules."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if (getattr(sys.modules[name], "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return path


def reasons(module_name: str) -> dict[str, str | None]:
    from gradcheck.frontend.discovery import discover

    return {f.name: f.reason for f in discover(load_module(module_name))}


def verify(*args: str) -> object:
    return CliRunner().invoke(main, ["verify", *args, "--max-examples", "10", "--seed", "0"])


# --- torch ----------------------------------------------------------------------------


def test_a_torch_module_offers_functions_module_classes_and_instances(user_dir: Path) -> None:
    pytest.importorskip("torch")
    write(user_dir, "shared_layers.py", SHARED)
    write(user_dir, "torch_layers.py", TORCH_LAYERS)
    found = reasons("torch_layers")
    assert [n for n, r in found.items() if r is None] == ["Cube", "layer"]
    assert found["torch"] == "the module torch, imported"
    assert found["nn"] == "the module torch.nn, imported"
    assert found["Linear"] == "imported from torch.nn.modules.linear"
    assert found["shared"] == "imported from shared_layers"  # an instance made elsewhere
    assert "cannot be made without arguments" in str(found["ScaleLayer"])
    assert "defines no forward" in str(found["Base"])
    assert "private" in str(found["_WrongScale"])
    assert found["cube"] == "the same op as Cube"
    assert reasons("shared_layers")["shared"] is None  # where it was made, it is a target


def test_verify_of_a_torch_module_checks_its_layer_instance(user_dir: Path) -> None:
    pytest.importorskip("torch")
    write(user_dir, "shared_layers.py", SHARED)
    write(user_dir, "torch_layers.py", TORCH_LAYERS)
    result = verify("torch_layers")
    assert result.exit_code == 1, result.output
    assert "torch_layers:layer" in result.output and "1 passed, 1 failed" in result.output
    listed = CliRunner().invoke(main, ["list", "torch_layers"])
    assert "torch_layers:layer  " in listed.output and "torch nn.Module instance" in listed.output


def test_a_layer_instance_s_report_names_it_as_it_was_loaded(user_dir: Path) -> None:
    # Its headline named its class, `torch_layers.ScaleLayer instance`: no name to
    # replay with, and the same for every instance of the class.
    pytest.importorskip("torch")
    write(user_dir, "shared_layers.py", SHARED)
    write(user_dir, "torch_layers.py", TORCH_LAYERS)
    for args in (["torch_layers"], ["torch_layers:layer"], ["torch_layers:layer", "--order", "2"]):
        result = verify(*args)
        assert result.exit_code == 1, result.output
        assert "gradcheck: torch_layers:layer failed: mismatch (input scale)" in result.output
        assert "ScaleLayer instance" not in result.output


def test_a_layer_instance_given_in_python_is_named_by_its_module(user_dir: Path) -> None:
    # gradcheck.check(layer, x) and gradcheck.verify(layer) named its class
    # ('torch_layers.ScaleLayer instance'), and the replay line made a new one
    # ('gradcheck.verify(torch_layers.ScaleLayer(), ...)', which takes an argument).
    pytest.importorskip("torch")
    import numpy as np

    import gradcheck

    write(user_dir, "shared_layers.py", SHARED)
    write(user_dir, "torch_layers.py", TORCH_LAYERS)
    import torch_layers

    checked = gradcheck.check(torch_layers.layer, np.array([0.5, -1.0]))
    assert str(checked).startswith("gradcheck: torch_layers:layer failed"), checked
    searched = str(gradcheck.verify(torch_layers.layer, max_examples=10, seed=0))
    assert searched.startswith("gradcheck: torch_layers:layer failed"), searched
    assert "Replay: gradcheck.verify(torch_layers.layer, seed=0)" in searched


def test_a_configured_module_entry_checks_every_op_in_it(user_dir: Path) -> None:
    pytest.importorskip("torch")
    write(user_dir, "shared_layers.py", SHARED)
    write(user_dir, "torch_layers.py", TORCH_LAYERS)
    write(user_dir, "pyproject.toml", '[[tool.gradcheck.targets]]\ntarget = "torch_layers"\n')
    result = CliRunner().invoke(main, ["verify", "--max-examples", "10", "--seed", "0"])
    assert result.exit_code == 1, result.output
    assert "torch_layers:layer" in result.output and "torch_layers:Cube" in result.output


# --- JAX ------------------------------------------------------------------------------


def test_a_jax_module_offers_its_custom_derivatives(user_dir: Path) -> None:
    pytest.importorskip("jax")
    write(user_dir, "jax_ops.py", JAX_OPS)
    found = reasons("jax_ops")
    # a jitted custom_vjp is checked under its public name, once
    targets = [n for n, r in found.items() if r is None]
    assert targets == ["wrong_square", "cube", "softsign", "safe_log"]
    assert found["fast_cube"] == "the same op as cube"
    assert "without @gradcheck.describe" in str(found["plain"])
    assert found["jnp"] == "the module jax.numpy, imported"
    result = verify("jax_ops")
    assert result.exit_code == 1, result.output
    assert "jax_ops:wrong_square" in result.output and "3 passed, 1 failed" in result.output


def test_list_names_each_jax_kind_as_its_user_wrote_it(user_dir: Path) -> None:
    # a custom_jvp function was listed as a "jax op instance": no word of the docs or
    # of the user's code (issue 34)
    pytest.importorskip("jax")
    write(user_dir, "jax_ops.py", JAX_OPS)
    listed = CliRunner().invoke(main, ["list", "jax_ops"])
    assert listed.exit_code == 0, listed.output
    rows = {ln.split()[0]: ln for ln in listed.output.splitlines() if ln.startswith("jax_ops:")}
    assert "jax custom_vjp function" in rows["jax_ops:wrong_square"]
    assert "jax custom_jvp function" in rows["jax_ops:cube"]
    assert "jax custom_vjp function" in rows["jax_ops:softsign"]  # (jax.jit of one)
    assert "jax custom_jvp function" in rows["jax_ops:safe_log"]
    assert "op instance" not in listed.output


# --- MyGrad ---------------------------------------------------------------------------


def test_every_mygrad_operation_is_an_op_wherever_it_is_defined(user_dir: Path) -> None:
    pytest.importorskip("mygrad")
    from gradcheck import verify as verify_op
    from gradcheck.checking.adapters import framework_of

    write(user_dir, "users_mygrad_ops.py", MYGRAD_OPS)
    found = reasons("users_mygrad_ops")
    assert [n for n, r in found.items() if r is None] == ["Square"]
    assert found["FocalLoss"] == "imported from mygrad.nnet.losses.focal_loss"
    # named alone, MyGrad's own ops load and run (they were "not an Operation subclass")
    (loss,) = load_targets("users_mygrad_ops:SoftmaxCrossEntropy")
    assert framework_of(loss.obj) == "mygrad"
    assert load_targets("users_mygrad_ops:FocalLoss")[0].obj.__name__ == "FocalLoss"
    result = verify_op(loss.obj, shapes=["n,3", "n"], integers={1: (0, 3)}, max_examples=5, seed=0)
    assert result.passed, result
    names = [t.name for t in load_targets("mygrad.nnet.losses.focal_loss")]
    assert "mygrad.nnet.losses.focal_loss:FocalLoss" in names
    # MyGrad's abstract bases are not ops
    assert framework_of(sys.modules["mygrad.operation_base"].BinaryUfunc) is None


def test_a_module_of_mygrad_ops_is_verified(user_dir: Path) -> None:
    pytest.importorskip("mygrad")
    write(user_dir, "users_mygrad_ops.py", MYGRAD_OPS)
    result = verify("users_mygrad_ops", "-v")
    assert result.exit_code == 0, result.output
    assert "users_mygrad_ops:Square" in result.output
    assert "skipped users_mygrad_ops:FocalLoss: imported from mygrad.nnet.losses.focal_loss" in (
        result.output
    )


def test_a_module_class_whose_constructor_raises_is_a_load_error(user_dir: Path) -> None:
    pytest.importorskip("torch")
    from gradcheck.errors import ModuleLoadError

    write(
        user_dir,
        "broken_layers.py",
        """
        from torch import nn


        class Broken(nn.Module):
            def __init__(self):
                super().__init__()
                raise RuntimeError("no weights file")

            def forward(self, x):
                return x
        """,
    )
    with pytest.raises(ModuleLoadError, match=r"broken_layers:Broken raised .*no weights file"):
        load_targets("broken_layers")
    out = CliRunner().invoke(main, ["list", "broken_layers"])
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1, out.output


FACTORY_OPS = """
import gradcheck


def _square(slope):
    class Square(gradcheck.Operation):
        def __call__(self, x):
            self.variables = (x,)
            return x.data * x.data

        def backward_var(self, grad, index, **kwargs):
            return grad * slope * self.variables[0].data

    return Square


square_bug = _square(2.2)
square_ok = _square(2.0)
"""


def test_an_op_a_factory_made_is_named_as_it_was_loaded(user_dir: Path) -> None:
    # An op made inside a function ('_square.<locals>.Square'), bound under another
    # name, was named by its own qualified name in the headline: no name to replay
    # with. Only the name it was loaded under finds it again.
    write(user_dir, "factory_ops.py", FACTORY_OPS)
    result = verify("factory_ops")
    assert "gradcheck: factory_ops:square_bug failed" in result.output, result.output
    assert "<locals>" not in result.output and "1 passed, 1 failed" in result.output
    replay = "Replay: gradcheck verify factory_ops:square_bug --max-examples 10 --seed 0"
    assert replay in result.output
