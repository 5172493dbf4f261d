"""How the torch adapter runs a backward (issue 40): through torch's engine directly,
without ``torch.autograd.grad``'s import of SymPy, and through the public function
where the engine's entry point is missing or does not answer as expected; the same
verdicts either way."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gradcheck.checking.adapters import _torch_autograd  # noqa: E402
from gradcheck.checking.checker import check  # noqa: E402
from tests.cli.conftest import REPO  # noqa: E402
from tests.support import torch_ops as ops  # noqa: E402
from tests.support import torch_order_ops as order_ops  # noqa: E402

X = np.random.default_rng(0).normal(size=(3, 4))
V = np.array([0.3, 1.2, -0.7])
Z = np.array([0.3 + 0.2j, -1.1 + 0.7j])

# (target, arrays, options, verdict): a Function, a wrong one, several outputs, a
# module, order 3, complex inputs at order 2.
CASES = [
    (ops.Cube, (X,), {}, "passed"),
    (ops.WrongCube, (X,), {}, "failed"),
    (ops.SortValues, (V,), {}, "passed"),
    (ops.WrongSortValues, (V,), {}, "failed"),
    (ops.CubeModule, (X,), {}, "passed"),
    (ops.WithNone, (X,), {}, "passed"),
    (order_ops.CubeThirdWrong, (V,), {"order": 3}, "failed"),
    (order_ops.CubeRight, (V,), {"order": 3}, "passed"),
    (order_ops.ComplexSquare, (Z,), {"order": 2}, "passed"),
    (order_ops.ComplexSquareDetached, (Z,), {"order": 2}, "failed"),
]


@pytest.fixture
def engine(monkeypatch):
    """Set whether the adapter may use torch's engine directly (its probe's answer)."""

    def use(ok: bool | None) -> None:
        monkeypatch.setattr(_torch_autograd, "_ENGINE", [] if ok is None else [ok])

    return use


def summary(result):
    failure = result.failure
    return result.verdict, None if failure is None else (failure.kind, failure.message)


@pytest.mark.parametrize(("target", "arrays", "options", "verdict"), CASES)
def test_the_engine_and_the_public_function_give_the_same_results(
    engine, monkeypatch, target, arrays, options, verdict
):
    public = torch.autograd.grad
    calls: list[int] = []

    def counted(*args, **kwargs):
        calls.append(1)
        return public(*args, **kwargs)

    monkeypatch.setattr(torch.autograd, "grad", counted)
    engine(True)
    direct = check(target, *arrays, seed=1, **options)
    assert calls == []  # every backward went to the engine itself
    engine(False)
    fallback = check(target, *arrays, seed=1, **options)
    assert calls  # the public function, where the engine's entry point is not usable
    assert summary(direct) == summary(fallback)
    if verdict is not None:
        assert direct.verdict == verdict


def test_the_probe_finds_the_entry_point_of_this_torch(engine):
    engine(None)
    assert _torch_autograd._engine_ok() is True
    assert _torch_autograd._ENGINE == [True]


@pytest.mark.parametrize("mode", [torch.no_grad, torch.inference_mode])
def test_the_probe_answers_the_same_in_any_grad_mode(engine, mode):
    engine(None)
    with mode():
        assert _torch_autograd._engine_ok() is True


def test_a_torch_without_the_entry_point_uses_the_public_function(engine, monkeypatch):
    monkeypatch.delattr(torch.autograd.graph, "_engine_run_backward")
    engine(None)
    assert check(ops.Cube, X).verdict == "passed"
    assert check(ops.WrongCube, X).verdict == "failed"
    assert _torch_autograd._ENGINE == [False]


def test_an_entry_point_of_another_signature_is_not_used(engine, monkeypatch):
    def other(outputs, grads, keep_graph):  # fewer arguments than gradcheck passes
        raise AssertionError("not to be called with gradcheck's arguments")

    monkeypatch.setattr(torch.autograd.graph, "_engine_run_backward", other)
    engine(None)
    assert check(ops.Cube, X).verdict == "passed"
    assert _torch_autograd._ENGINE == [False]


def test_an_upstream_gradient_of_another_shape_gets_torchs_own_error(engine):
    engine(True)
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        _torch_autograd._grad([x * 2], [x], [torch.ones(4, dtype=torch.float64)], True)
    # the right shape: the engine's gradient, as torch.autograd.grad gives it
    w = torch.arange(3, dtype=torch.float64)
    (got,) = _torch_autograd._grad([x * x], [x], [w], True)
    assert torch.equal(got, 2 * w)


def test_a_torch_targets_check_imports_no_sympy():
    # torch.autograd.grad imports torch.fx.experimental.symbolic_shapes and SymPy
    # (tenths of a second) for its shape check; the adapter needs neither.
    code = (
        "import sys, numpy as np; from gradcheck.checking.checker import check; "
        "from tests.support import torch_ops as ops; "
        "r = check(ops.Cube, np.ones((3, 4))); "
        "print(r.verdict, 'sympy' in sys.modules, "
        "'torch.fx.experimental.symbolic_shapes' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["passed", "False", "False"], out.stderr
