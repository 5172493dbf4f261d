"""The user guide's code runs: every ```python block of docs/guide.md in order, in one
namespace, in a temporary directory; its TOML parses; and (slow) its commands exit as
the output shown next to them says."""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.checking.adapters import FRAMEWORKS
from gradcheck.cli import main

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def blocks(language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(GUIDE.read_text()) if lang == language]


#: The frameworks' packages (torch, mygrad...): the guide's blocks that import one run
#: only where it is installed.
PACKAGES = tuple(package for fw in FRAMEWORKS for package in fw.packages)


def _needs_missing_framework(code: str) -> str | None:
    for name in PACKAGES:
        if re.search(rf"^import {name}\b", code, re.M) and importlib.util.find_spec(name) is None:
            return name
    return None


@pytest.fixture
def guide_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "docs" / "img").mkdir(parents=True)
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:  # the guide's modules, not the libraries
        if (getattr(sys.modules[name], "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def test_guide_has_code():
    assert len(blocks("python")) >= 8 and blocks("console") and blocks("toml")


# The plugin registers the marker; this test only defines the guide's pytest tests.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")
def test_python_blocks_run(guide_dir, capsys):
    namespace: dict = {"__name__": "guide", "EXAMPLES": ROOT / "examples"}
    skipped = []
    for i, code in enumerate(blocks("python")):
        missing = _needs_missing_framework(code)
        if missing:
            skipped.append(missing)
            continue
        try:
            exec(compile(code, f"{GUIDE}:block{i}", "exec"), namespace)
        except Exception as exc:
            raise AssertionError(f"python block {i} of the guide failed:\n{code}") from exc
    out = capsys.readouterr().out
    assert "passed" in out and "mismatch [2]" in out
    if skipped:
        pytest.skip(f"blocks needing {', '.join(sorted(set(skipped)))} were not run")


def test_toml_blocks_parse():
    for code in blocks("toml"):
        config = tomllib.loads(code)["tool"]["gradcheck"]
        assert all("target" in t for t in config["targets"])


def _commands() -> list[tuple[str, int]]:
    """Each ``$ gradcheck ...`` line and the exit status its shown output implies."""
    found = []
    for body in blocks("console"):
        parts = re.split(r"^\$ ", body, flags=re.M)[1:]
        for part in parts:
            command, _, output = part.partition("\n")
            words = shlex.split(command, comments=True)
            failed = "FAILED" in output or "looks WRONG" in output
            found.append((words, 1 if failed else 0))
    return found


@pytest.mark.slow
def test_console_commands_exit_as_shown(guide_dir):
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    namespace: dict = {"__name__": "guide", "EXAMPLES": ROOT / "examples"}
    exec(blocks("python")[2], namespace)  # writes my_ops.py
    runner = CliRunner()
    for words, code in _commands():
        assert words[0] == "gradcheck"
        out = runner.invoke(main, words[1:])
        assert out.exit_code == code, (words, out.output)
