"""Every target is named ``module:name`` in its report, whatever its kind (issue 34):
module-level functions and classes were headlined ``mod.name`` (a dot, which
``gradcheck verify`` does not take) beside ``mod:name`` for instances and ops a
factory made, and ``gradcheck.check`` named them with a dot too."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import gradcheck
from gradcheck.cli import main
from tests.support import user_ops

OPS = """
import gradcheck


class WrongCube(gradcheck.Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data**3

    def backward_var(self, grad, index, **kwargs):
        return grad * 2 * self.variables[0].data ** 2


@gradcheck.describe()
def wrong_cube(x):
    return gradcheck.execute_op(WrongCube, x)


def _make():
    class Inner(WrongCube):
        pass

    return Inner


made_here = _make()
"""


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    (tmp_path / "named_ops.py").write_text(textwrap.dedent(OPS))
    yield tmp_path
    sys.modules.pop("named_ops", None)


def test_every_headline_names_its_target_as_verify_takes_it(user_dir: Path) -> None:
    args = ["verify", "named_ops", "--max-examples", "5", "--seed", "0", "--jobs", "1"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    heads = re.findall(r"^gradcheck: (\S+) failed", result.output, re.M)
    assert sorted(heads) == ["named_ops:WrongCube", "named_ops:made_here", "named_ops:wrong_cube"]
    for name in heads:
        assert f"Replay: gradcheck verify {name} " in result.output


def test_check_names_its_target_module_colon_name() -> None:
    result = gradcheck.check(user_ops.WrongSquare, np.array([0.5, 1.5]))
    assert result.target == "tests.support.user_ops:WrongSquare"
    assert str(result).startswith("gradcheck: tests.support.user_ops:WrongSquare failed")
