"""The Hypothesis entry point: `st.from_type(Tensor)` draws tensors; registering costs
nothing until gradcheck's engine is imported. (Fresh-interpreter cases, with the entry
point installed: tests/package/test_entry_points.py.)"""

from __future__ import annotations

import importlib
import os
import tomllib

import numpy as np
from hypothesis import find, given
from hypothesis import strategies as st

import _gradcheck_entry_points
import gradcheck as mg
from gradcheck.strategies._hypothesis_plugin import _register
from tests.support.installed import ROOT, run_python, site_folders


def test_pyproject_declares_the_entry_point_and_it_resolves():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    target = config["project"]["entry-points"]["hypothesis"]["gradcheck"]
    module, _, name = target.partition(":")
    hook = getattr(importlib.import_module(module), name)
    assert hook is _gradcheck_entry_points._hypothesis_setup_hook
    assert module in config["tool"]["setuptools"]["py-modules"]  # shipped


# Where this suite runs, the installed entry point may be another checkout's, or none.
_gradcheck_entry_points._hypothesis_setup_hook()


@given(st.from_type(mg.Tensor))
def test_from_type_draws_tensors_after_registration(t):
    assert isinstance(t, mg.Tensor)
    assert t.dtype == float
    assert np.isfinite(t.data).all()


def test_the_old_entry_point_still_registers():
    # environments installed before the hook moved name it in their metadata
    _register()
    assert isinstance(find(st.from_type(mg.Tensor), lambda t: True), mg.Tensor)


def run(tmp_path, code):
    path = os.pathsep.join([str(ROOT), *site_folders()])
    env = {"PYTHONPATH": path, "PATH": "/usr/bin:/bin", "HYPOTHESIS_NO_PLUGINS": "1"}
    result = run_python("-c", code, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_hook_imports_nothing_until_the_engine_is_imported(tmp_path):
    # (the hook called by hand: HYPOTHESIS_NO_PLUGINS keeps installed ones out)
    code = (
        "import sys, hypothesis, hypothesis.strategies as st, _gradcheck_entry_points as e\n"
        "e._hypothesis_setup_hook()\n"
        "print(sorted(m for m in sys.modules if m.startswith(('gradcheck', 'numpy'))))\n"
        "from gradcheck.tensor_base import Tensor\n"
        "print('gradcheck.strategies' in sys.modules)\n"
        "print(type(hypothesis.find(st.from_type(Tensor), lambda t: True)).__name__)\n"
    )
    assert run(tmp_path, code).splitlines() == ["[]", "False", "Tensor"]


def test_a_projects_own_tensor_base_gets_no_strategy_of_ours(tmp_path):
    # a project with a gradcheck package of its own: Hypothesis builds its Tensor
    (tmp_path / "gradcheck").mkdir()
    (tmp_path / "gradcheck" / "__init__.py").write_text("")
    (tmp_path / "gradcheck" / "tensor_base.py").write_text(
        "class Tensor:\n    def __init__(self, size: int):\n        self.size = size\n"
    )
    code = (
        "import hypothesis, hypothesis.strategies as st, _gradcheck_entry_points as e\n"
        "e._hypothesis_setup_hook()\n"
        "from gradcheck.tensor_base import Tensor\n"
        "print(type(hypothesis.find(st.from_type(Tensor), lambda t: True).size).__name__)\n"
    )
    assert run(tmp_path, code) == "int"
