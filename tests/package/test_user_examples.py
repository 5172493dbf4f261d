"""The user-facing ops in examples/ (softplus, layer norm, gather, Lennard-Jones):
checked directly with gradcheck.check and through the CLI, as the guide shows."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from click.testing import CliRunner

from gradcheck.checking.checker import check
from gradcheck.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
rng = np.random.default_rng(11)


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"user_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_softplus_matches_its_definition_and_checks():
    op = _load("softplus").Softplus
    x = np.array([-30.0, -1.0, 0.0, 2.0, 30.0])
    result = check(op, x, beta=2.0)
    assert result.passed
    z = np.linspace(-3, 3, 7)
    from gradcheck.checking.resolve import resolve_target

    np.testing.assert_allclose(
        resolve_target(op).forward([z], {"beta": 2.0}), np.log1p(np.exp(2 * z)) / 2
    )


def test_layer_norm_normalizes_rows_and_checks():
    op = _load("layer_norm").LayerNorm
    x, gamma, beta = rng.normal(size=(3, 6)), rng.normal(size=6), rng.normal(size=6)
    assert check(op, x, gamma, beta).passed
    from gradcheck.checking.resolve import resolve_target

    y = resolve_target(op).forward([x, np.ones(6), np.zeros(6)])
    np.testing.assert_allclose(y.mean(axis=-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.std(axis=-1), 1, rtol=1e-4)


def test_gather_right_and_buggy():
    module = _load("gather")
    table = rng.normal(size=(5, 3))
    assert check(module.GatherRows, table, index=module.INDEX).passed
    failure = check(module.GatherRowsBuggy, table, index=module.INDEX).failure
    assert failure.kind == "mismatch"
    # only row 2 (picked twice) is wrong
    bad_rows = {
        e.index[0]
        for e in check(module.GatherRowsBuggy, table, index=[0, 2, 2, 4]).worst
        if abs(e.analytic - e.numeric) > 1e-6
    }
    assert bad_rows == {2}
    assert check(module.GatherRowsBuggy, table, index=[0, 1, 3]).passed  # no repeats


def test_lennard_jones_energy_and_forces():
    op = _load("lennard_jones").LennardJones
    positions = rng.uniform(-2, 2, size=(6, 3))
    assert check(op, positions).passed
    assert check(op, positions, alpha=0.0, sigma=0.8).passed  # the plain 12-6 potential
    # two particles at the minimum of the plain potential, r = 2**(1/6) sigma: E = -epsilon
    from gradcheck.checking.resolve import resolve_target

    pair = np.array([[0.0, 0.0, 0.0], [2 ** (1 / 6), 0.0, 0.0]])
    assert resolve_target(op).forward([pair], {"alpha": 0.0}) == pytest.approx(-1.0)


@pytest.mark.parametrize(
    ("spec", "code"),
    [
        ("examples/softplus.py:Softplus", 0),
        ("examples/layer_norm.py:LayerNorm", 0),
        ("examples/gather.py:GatherRows", 0),
        ("examples/gather.py:GatherRowsBuggy", 1),
        ("examples/lennard_jones.py:LennardJones", 0),
    ],
)
def test_cli_on_examples(spec, code, monkeypatch):
    monkeypatch.chdir(EXAMPLES.parent)
    monkeypatch.setattr(sys, "path", list(sys.path))
    try:
        out = CliRunner().invoke(main, ["verify", spec, "--max-examples", "15", "--seed", "1"])
    finally:  # the loader registered the file as a module under its stem
        sys.modules.pop(Path(spec.split(":")[0]).stem, None)
    assert out.exit_code == code, out.output
    if code:
        assert "mismatch (input table)" in out.output and "index (2," in out.output


def test_torch_example():
    pytest.importorskip("torch")
    op = _load("torch_softplus").TorchSoftplus
    assert check(op, rng.normal(size=7) * 10, beta=1.5).passed
