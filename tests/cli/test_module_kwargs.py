"""``--kwargs`` on a module named whole (issue 34, item 1: every way to ask takes the
same settings): each target takes the parameters it has, a key no target of the
module has is still a usage error (exit 2), and each replay command gives its target
the parameters it took. Before, the first op without the parameter ended the run
with exit 2 after the others had been checked (``the op has no parameter 'eps'``)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.cli import main

OPS = """
import numpy as np
import gradcheck as mg


class SmoothAbs(mg.Operation):
    def __call__(self, x, eps=1.0):
        self.variables = (x,)
        self.eps = eps
        return np.sqrt(x.data**2 + eps)

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        return grad * x / np.sqrt(x**2 + self.eps * self.eps)  # wrong but at eps = 1


class Double(mg.Operation):
    def __call__(self, x):
        self.variables = (x,)
        return 2 * x.data

    def backward_var(self, grad, index, **kwargs):
        return 2 * grad
"""


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    (tmp_path / "kwops.py").write_text(textwrap.dedent(OPS))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if (getattr(sys.modules[name], "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def run(*args: str) -> object:
    return CliRunner().invoke(
        main, ["verify", *args, "--max-examples", "10", "--seed", "0", "--format", "json"]
    )


def test_each_target_of_a_module_takes_the_kwargs_it_has(user_dir: Path) -> None:
    result = run("kwops", "--kwargs", '{"eps": 0.25}')
    assert result.exit_code == 1, result.output
    targets = {t["target"]: t for t in json.loads(result.stdout)["targets"]}
    assert targets["kwops:Double"]["verdict"] == "passed"
    assert targets["kwops:SmoothAbs"]["verdict"] == "failed"  # eps = 0.25 reached it
    replay = targets["kwops:SmoothAbs"]["replay"]
    assert "--kwargs" in replay and '"eps": 0.25' in replay
    # (with eps at its default, 1, the wrong backward is right)
    assert run("kwops:SmoothAbs").exit_code == 0


def test_a_key_no_target_of_the_module_has_is_a_usage_error(user_dir: Path) -> None:
    result = CliRunner().invoke(main, ["verify", "kwops", "--kwargs", '{"epz": 0.25}'])
    assert result.exit_code == 2, result.output
    assert "no op of kwops has a parameter 'epz'" in result.output
    assert "Traceback" not in result.output
