"""The Hypothesis entry point: `st.from_type(Tensor)` draws tensors."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg
from gradcheck.strategies._hypothesis_plugin import _register

ROOT = Path(__file__).resolve().parents[2]


def test_pyproject_declares_the_entry_point_and_it_resolves():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    target = config["project"]["entry-points"]["hypothesis"]["gradcheck"]
    module, _, name = target.partition(":")
    assert getattr(importlib.import_module(module), name) is _register


_register()


@given(st.from_type(mg.Tensor))
def test_from_type_draws_tensors_after_registration(t):
    assert isinstance(t, mg.Tensor)
    assert t.dtype == float
    assert np_isfinite(t)


def np_isfinite(t: mg.Tensor) -> bool:
    import numpy as np

    return bool(np.isfinite(t.data).all())


def test_hypothesis_runs_the_hook_for_an_installed_distribution(tmp_path):
    # A dist-info directory on sys.path is an installed distribution as far as
    # importlib.metadata is concerned: Hypothesis must find our hook, import it while
    # being imported itself, and register the strategy.
    dist = tmp_path / "gradcheck_plugin_probe-0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: gradcheck-plugin-probe\nVersion: 0\n"
    )
    (dist / "entry_points.txt").write_text(
        "[hypothesis]\ngradcheck = gradcheck.strategies._hypothesis_plugin:_register\n"
    )
    script = (
        "import hypothesis.strategies as st, gradcheck as mg\n"
        "from hypothesis import find\n"
        "print(type(find(st.from_type(mg.Tensor), lambda t: True)).__name__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        env={"PYTHONPATH": f"{ROOT}:{tmp_path}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Tensor"
