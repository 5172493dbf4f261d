"""The CI run as a workflow runs it: `python -m gradcheck verify` in the project folder
(the package found through PYTHONPATH, as it is not installed here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.ci_project import make_project

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from make_project(tmp_path, monkeypatch)


def gradcheck(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OPS_", "GITHUB_"))}
    environ.update(PYTHONPATH=str(REPO), **env)
    return subprocess.run(
        [sys.executable, "-m", "gradcheck", "verify", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_record_then_compare_on_a_pull_request(project: Path) -> None:
    main = gradcheck(project, "--save-baseline", "base.json")
    assert main.returncode == 0, main.stderr
    assert json.loads((project / "base.json").read_text())["seed"] == 11
    pr = gradcheck(
        project,
        "--baseline",
        "base.json",
        "--junit-xml",
        "report.xml",
        GITHUB_ACTIONS="true",
        OPS_SIN_K="40",
    )
    assert pr.returncode == 1
    # the config file used, a line per target as it finishes, then the annotations
    lines = pr.stdout.splitlines()
    assert lines[0] == "config: pyproject.toml"
    # (in the order they finish: with a job per core either may come first)
    finished = sorted(line.split(" ", 2)[1:] for line in lines[1:3])
    assert [name for name, _ in finished] == ["ops:Sin", "ops:Square"], lines
    assert finished[0][1].startswith("passed") and {lines[1][:5], lines[2][:5]} == {
        "[1/2]",
        "[2/2]",
    }
    assert lines[3].startswith("::error file=ops.py,line=")
    assert "regression: ops:Sin: error ratio grew" in pr.stdout
    assert pr.stderr == ""
    cases = list(ET.parse(project / "report.xml").iter("testcase"))
    assert [c.get("name") for c in cases] == ["Sin", "Square"]


@pytest.mark.slow
def test_jobs_in_a_real_process(project: Path) -> None:
    serial = gradcheck(project, "--format", "json", OPS_BREAK="1")
    parallel = gradcheck(project, "--format", "json", "--jobs", "2", OPS_BREAK="1")
    assert serial.returncode == parallel.returncode == 1, parallel.stderr
    a, b = json.loads(serial.stdout), json.loads(parallel.stdout)
    for doc in (a, b):
        for t in doc["targets"]:
            t.pop("seconds")
            if t["failure"]:
                t["failure"].pop("seconds")
    assert a == b
