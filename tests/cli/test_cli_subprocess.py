"""`gradcheck` as a user runs it: a real process in a temporary working directory
holding their module (the package itself is found through PYTHONPATH, as it is not
installed here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import REPO, on_a_terminal

ARGS = ["--max-examples", "10", "--seed", "1"]


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    out["PYTHONPATH"] = str(REPO)
    out.update(extra)
    return out


def gradcheck(cwd: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gradcheck", *args],
        cwd=cwd,
        env=env(**extra),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_module_run_passes_and_fails_with_exit_codes(workdir: Path) -> None:
    ok = gradcheck(workdir, "verify", "user_ops:Square", *ARGS)
    assert ok.returncode == 0, ok.stderr
    assert "1 passed" in ok.stdout and ok.stderr == ""
    bad = gradcheck(workdir, "verify", "user_ops:WrongSquare", *ARGS)
    assert bad.returncode == 1
    assert "mismatch (input x)" in bad.stdout and "Index" in bad.stdout
    # No Hypothesis output, and no example database written into the user's directory.
    assert bad.stderr == ""
    assert "Falsifying" not in bad.stdout
    assert not (workdir / ".hypothesis").exists()


def test_json_on_stdout_only(workdir: Path) -> None:
    targets = ["user_ops:Square", "user_ops:WrongSquare", "user_ops:Raises"]
    result = gradcheck(workdir, "verify", *targets, *ARGS, "--format", "json")
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    verdicts = {t["target"]: t["verdict"] for t in doc["targets"]}
    assert verdicts["user_ops:Square"] == "passed"
    assert verdicts["user_ops:WrongSquare"] == "failed"
    assert verdicts["user_ops:Raises"] == "failed"
    # stderr: a line per target as it finishes, nothing else
    assert [line[:5] for line in result.stderr.splitlines()] == ["[1/3]", "[2/3]", "[3/3]"]


def test_load_error_is_one_line_exit_2(workdir: Path) -> None:
    result = gradcheck(workdir, "verify", "user_ops:Missing")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "has no attribute 'Missing'" in result.stderr


def test_console_script_style_launch_imports_the_working_directory(
    workdir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # A console script's sys.path[0] is its own directory, not the working directory.
    bin_dir = tmp_path_factory.mktemp("bin")
    launcher = bin_dir / "gradcheck_launcher.py"
    launcher.write_text("from gradcheck.cli import main\nmain()\n")
    result = subprocess.run(
        [sys.executable, str(launcher), "verify", "user_ops:Square", *ARGS],
        cwd=workdir,
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
@pytest.mark.parametrize("no_color", [False, True])
def test_colour_only_on_a_tty_and_never_with_no_color(workdir: Path, no_color: bool) -> None:
    extra = {"NO_COLOR": "1"} if no_color else {}
    command = [sys.executable, "-m", "gradcheck", "verify", "user_ops:WrongSquare", *ARGS]
    code, out = on_a_terminal(command, workdir, env(**extra), stderr=False)
    assert code == 1
    assert "FAILED" in out
    assert ("\x1b[" in out) is not no_color


# A target module that breaks gradcheck itself when imported (in the parent and in
# every worker): the search's per-example check raises an exception of no kind
# gradcheck expects, as a bug of ours would.
BROKEN_GRADCHECK = """
import gradcheck.search.example_check as example_check


def _bug(*args, **kwargs):
    raise RuntimeError("simulated bug in gradcheck")


example_check._check = _bug


def square(x):
    return x * x


def cube(x):
    return x * x * x
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_internal_error_exits_101_with_the_traceback_and_please_report(
    workdir: Path, jobs: str
) -> None:
    (workdir / "breaks_gradcheck.py").write_text(BROKEN_GRADCHECK)
    out = gradcheck(
        workdir, "verify", "breaks_gradcheck:square", "breaks_gradcheck:cube", "--jobs", jobs, *ARGS
    )
    assert out.returncode == 101, out.stderr
    # the traceback, from the worker, without --verbose
    assert "Traceback (most recent call last)" in out.stderr
    assert "RuntimeError: simulated bug in gradcheck" in out.stderr
    assert "example_check.py" in out.stderr
    # each target fails with kind internal_error, asking for a report; both reported
    # (issue 35: a bug of gradcheck's on one target loses no other verdict)
    assert out.stdout.count("internal_error") >= 2 and "please report" in out.stdout
    assert "breaks_gradcheck:square" in out.stdout and "breaks_gradcheck:cube" in out.stdout
    assert out.stdout.rstrip().splitlines()[-1].startswith("2 failed")


def test_an_internal_error_outside_a_run_exits_101(workdir: Path) -> None:
    # `gradcheck list` on a module whose target makes the listing itself raise.
    (workdir / "breaks_listing.py").write_text(
        "import gradcheck.cli as cli\n\n"
        "def _bug(*args, **kwargs):\n"
        "    raise RuntimeError('simulated bug in gradcheck')\n\n"
        "cli._target_row = _bug\n\n"
        "def square(x):\n"
        "    return x * x\n"
    )
    out = gradcheck(workdir, "list", "breaks_listing:square")
    assert out.returncode == 101, out.stderr
    assert "please report" in out.stderr
    assert "RuntimeError: simulated bug in gradcheck" in out.stderr


# The commands that check nothing start without NumPy (and without the engine): a
# fresh interpreter, asked at its exit what it imported.
IMPORTED_AT_EXIT = """
import atexit, sys
heavy = ("numpy", "hypothesis", "gradcheck.engine.tensor_base")
atexit.register(lambda: print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr))
from gradcheck.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["verify", "--help"], ["list", "-h"]])
def test_commands_that_check_nothing_do_not_import_numpy(tmp_path: Path, args: list[str]) -> None:
    out = subprocess.run(
        [sys.executable, "-c", IMPORTED_AT_EXIT, *args],
        cwd=tmp_path,
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip().splitlines()[-1] == "[]"


def test_no_command_is_a_usage_error(tmp_path: Path) -> None:
    out = gradcheck(tmp_path)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.startswith("Usage: gradcheck [OPTIONS] COMMAND [ARGS]...")
    assert "verify" in out.stderr  # the commands are listed
