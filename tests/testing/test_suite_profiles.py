"""The suite's own Hypothesis settings (conftest.py): `pytest` with no environment variable
runs what CI runs, derandomized and bounded, and writes nothing into the work tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.installed import ROOT

# What the conftest leaves loaded, read in a fresh interpreter (the running suite's own
# profile may have been chosen by the environment).
SHOW = """
import json, conftest, hypothesis
from hypothesis.configuration import storage_directory
s = hypothesis.settings()
print(json.dumps({
    "derandomize": s.derandomize, "max_examples": s.max_examples,
    "database": repr(s.database), "storage": str(storage_directory("examples").path),
}))
"""
#: what would choose another profile or storage folder
VARIABLES = ("CI", "HYPOTHESIS_PROFILE", "HYPOTHESIS_STORAGE_DIRECTORY", "XDG_CACHE_HOME")


def loaded(tmp_path, **env: str) -> dict:
    base = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    base.update(PYTHONPATH=str(ROOT), HOME=str(tmp_path), **env)
    result = subprocess.run(
        [sys.executable, "-c", SHOW], cwd=ROOT, env=base, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("ci", [None, "true"])
def test_the_default_profile_is_derandomized_and_bounded_with_or_without_ci(tmp_path, ci):
    settings = loaded(tmp_path, **({"CI": ci} if ci else {}))
    assert settings["derandomize"] is True
    assert settings["max_examples"] <= 30
    assert settings["database"] == "None"  # nothing replayed from a failed run


def test_hypothesis_files_go_to_the_users_cache_not_the_work_tree(tmp_path):
    settings = loaded(tmp_path)
    assert settings["storage"] == str(tmp_path / ".cache/gradcheck/hypothesis/examples")
    assert loaded(tmp_path, XDG_CACHE_HOME="/x")["storage"] == "/x/gradcheck/hypothesis/examples"
    chosen = loaded(tmp_path, HYPOTHESIS_STORAGE_DIRECTORY=str(tmp_path / "h"))
    assert chosen["storage"] == str(tmp_path / "h" / "examples")


def test_the_deep_profile_is_random_and_keeps_its_failures_outside_the_tree(tmp_path):
    settings = loaded(tmp_path, HYPOTHESIS_PROFILE="deep")
    assert settings["derandomize"] is False
    assert settings["max_examples"] > 30
    assert str(tmp_path / ".cache") in settings["database"]
    assert str(ROOT) not in settings["database"]


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    # one fast test of the suite, run as a developer runs it (in a fresh pytest process)
    test = "tests/package/test_distribution.py::test_the_license_is_a_file_and_an_spdx_expression"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *args, test],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_pytest_runs_where_xdist_is_not_installed():
    # `pip install . && pip install pytest && pytest`: -n is xdist's option, so the
    # project's own options must not name it where xdist is absent (here: not loaded)
    out = _pytest("-p", "no:xdist")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 passed" in out.stdout and "bringing up nodes" not in out.stdout


def test_the_suite_runs_on_every_core_where_xdist_is_installed():
    pytest.importorskip("xdist", reason="pytest-xdist is not installed (the 'test' extra)")
    out = _pytest()
    assert out.returncode == 0, out.stdout + out.stderr
    assert "bringing up nodes" in out.stdout  # -n auto, without naming it
    out = _pytest("-n", "0")  # an explicit -n wins
    assert out.returncode == 0 and "bringing up nodes" not in out.stdout, out.stdout
