"""A temporary project with a ``[tool.gradcheck]`` block and an ops module, as a team
would have it in CI.

Not a conftest.py: tests/cli has one, and two conftest modules without packages clash
under --doctest-modules when both folders are named on the command line. Each test
module wraps :func:`make_project` in its own ``project`` fixture."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

OPS = '''
"""Ops of the test project. The environment changes them at call time:
OPS_SIN_K scales Sin's gradient by 1 + K * 1e-9 (a small, controlled relative error:
the error ratio grows with K and stays below 1 up to K of about 90), and OPS_BREAK=1
makes Square's backward wrong."""

import os

import numpy as np

from gradcheck import Operation


class Sin(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return np.sin(x.data)

    def backward_var(self, grad, index, **kwargs):
        k = float(os.environ.get("OPS_SIN_K", "20"))
        return grad * np.cos(self.variables[0].data) * (1 + k * 1e-9)


class Square(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data**2

    def backward_var(self, grad, index, **kwargs):
        wrong = os.environ.get("OPS_BREAK") == "1"
        return grad * 2 * self.variables[0].data * (1.1 if wrong else 1.0)
'''

PYPROJECT = """
[project]
name = "demo"

[tool.gradcheck]
max-examples = 6
seed = 11

[[tool.gradcheck.targets]]
target = "ops:Sin"
domain = [-3, 3]

[[tool.gradcheck.targets]]
target = "ops:Square"
shapes = ["3,4"]
"""


def make_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The project folder, as the working directory; ops.py is forgotten afterwards."""
    (tmp_path / "ops.py").write_text(OPS)
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(PYPROJECT))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("OPS_SIN_K", "OPS_BREAK", "GITHUB_ACTIONS", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    yield tmp_path
    sys.modules.pop("ops", None)
