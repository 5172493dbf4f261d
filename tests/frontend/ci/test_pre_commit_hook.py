"""The pre-commit hook (issue 37, item 5): `pre-commit try-repo` with this repository's
.pre-commit-hooks.yaml, on a small git project: a wrong op fails the hook with the
report, the fixed op passes. pre-commit builds the hook's environment as for a user
(`language: python`: it pip-installs this repository, about a minute the first time)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.installed import ROOT

pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("pre_commit") is None, reason="pre-commit is not installed"
    ),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]

OPS = """import gradcheck as mg

class Cube(mg.Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data ** 3

    def backward_var(self, grad, index, **kwargs):
        return grad * {factor} * self.variables[0].data ** 2
"""
CONFIG = """[tool.gradcheck]
max-examples = 5
seed = 1
domain = "0.5:2"

[[tool.gradcheck.targets]]
target = "ops:Cube"
"""


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


def try_repo(project: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PYTEST_"))}
    env.update(PRE_COMMIT_HOME=str(home))
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "gradcheck"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_the_hook_fails_on_a_wrong_op_with_the_report_and_passes_once_fixed(tmp_path):
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: try-repo needs this repository's history")
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / "ops.py").write_text(OPS.format(factor=2))  # d(x³)/dx is 3x², not 2x²
    (project / "pyproject.toml").write_text(CONFIG)
    # as in any project: importing ops.py writes bytecode, which pre-commit would take
    # for a file the hook modified if it were committed with the sources
    (project / ".gitignore").write_text("__pycache__/\n")
    git(project, "add", "-A")
    out = try_repo(project, tmp_path / "pre-commit-home")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "gradcheck" in out.stdout and "Failed" in out.stdout
    assert "ops:Cube failed: mismatch (input x)" in out.stdout  # the report
    assert "Replay: gradcheck verify ops:Cube --seed 1" in out.stdout

    (project / "ops.py").write_text(OPS.format(factor=3))
    git(project, "add", "-A")
    out = try_repo(project, tmp_path / "pre-commit-home")  # the environment is reused
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Passed" in out.stdout and "mismatch" not in out.stdout
