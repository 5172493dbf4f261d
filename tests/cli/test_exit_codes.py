"""Exit status 5: a run that checked nothing is never a pass (issue 37, item 4); every
exit code is listed where users look for it (--help, docs/ci.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
#: every status the command exits with, and where each comes from
EXIT_CODES = ("0", "1", "2", "5", "101", "130", "143")


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: nothing to check: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("output", [[], ["--format", "json"], ["-q"]])
def test_a_module_without_targets_checks_nothing_exit_5(workdir: Path, output) -> None:
    (workdir / "no_ops.py").write_text("import numpy as np\nX = np.ones(3)\n")
    result = run("verify", "no_ops", *output)
    assert result.exit_code == 5, result.output
    assert "module 'no_ops' offers no target" in one_error_line(result)
    assert result.stdout == ""


def test_an_empty_targets_list_in_the_config_checks_nothing_exit_5(workdir: Path) -> None:
    (workdir / "pyproject.toml").write_text("[tool.gradcheck]\nmax-examples = 3\ntargets = []\n")
    result = run("verify")
    assert result.exit_code == 5, result.output
    assert "targets lists no target" in one_error_line(result)


def test_a_config_of_empty_modules_checks_nothing_exit_5(workdir: Path) -> None:
    (workdir / "no_ops.py").write_text("X = 1\n")
    (workdir / "pyproject.toml").write_text(
        '[tool.gradcheck]\n[[tool.gradcheck.targets]]\ntarget = "no_ops"\n'
    )
    result = run("verify")
    assert result.exit_code == 5, result.output
    assert "module 'no_ops' offers no target" in one_error_line(result)


def test_a_module_without_targets_beside_others_is_a_note(workdir: Path) -> None:
    (workdir / "no_ops.py").write_text("X = 1\n")
    result = run("verify", "no_ops", "user_ops:Square", "--max-examples", "3", "--seed", "1")
    assert result.exit_code == 0, result.output
    assert "module 'no_ops' offers no target" in result.stdout
    assert "1 passed" in result.stdout


def test_a_run_with_no_results_exits_5_whatever_selected_nothing(workdir, monkeypatch) -> None:
    # a later filter (or anything else) that leaves the plan empty: never exit 0
    # (the targets are loaded in the worker: what it sends back is empty here)
    from gradcheck.frontend.runner import Run

    monkeypatch.setattr(Run, "load", lambda self, *args, **kwargs: ([], None, []))
    assert run("verify", "user_ops:Square").exit_code == 5


def test_help_and_docs_list_every_exit_code() -> None:
    for args in (["--help"], ["verify", "--help"]):
        text = " ".join(run(*args).stdout.split())
        status = text[text.index("Exit status:") :]
        for code in EXIT_CODES:
            assert re.search(rf"\b{code}\b", status), (args, code)
    table = (ROOT / "docs" / "ci.md").read_text().split("## Exit status", 1)[1]
    codes = set(re.findall(r"^\| ([\d, ]+) \|", table, re.M))
    assert {c.strip() for row in codes for c in row.split(",")} == set(EXIT_CODES)
