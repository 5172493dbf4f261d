"""What `gradcheck verify` says while it runs: a line per finished target with the
overall count, streamed (serially and with --jobs), a live line on a terminal, -q, and
--color with NO_COLOR / FORCE_COLOR / TERM=dumb (issue 23, items 6 and 7)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.cli import main
from gradcheck.frontend.progress import Progress, wants_color
from tests.cli.conftest import REPO, on_a_terminal

FAST = ["--max-examples", "3", "--seed", "1"]
SGR = re.compile(r"\x1b\[[0-9;]*m")

# Slow waits until the test has seen the line of the target that finished first (the
# test then creates the file "go"), or gives up after a while and says so ("gave-up").
OPS = """
import os, time
import gradcheck as mg


class Square(mg.Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data ** 2

    def backward_var(self, grad, index, **kw):
        return grad * 2 * self.variables[0].data


class Wrong(Square):
    def backward_var(self, grad, index, **kw):
        return grad * 3 * self.variables[0].data


class Slow(Square):
    def __call__(self, x):
        deadline = time.monotonic() + 30
        while not os.path.exists("go"):
            if time.monotonic() > deadline:
                open("gave-up", "w").close()
                break
            time.sleep(0.02)
        return super().__call__(x)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pops.py").write_text(OPS)
    return tmp_path


def env(**extra: str) -> dict[str, str]:
    out = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NO_COLOR", "FORCE_COLOR", "TERM", "CI", "GITHUB_ACTIONS")
    }
    out.update({"PYTHONPATH": str(REPO), "TERM": "xterm", **extra})
    return out


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_line_per_finished_target_streams_before_the_run_ends(project: Path, jobs: str):
    command = [sys.executable, "-m", "gradcheck", "verify", "pops:Square", "pops:Slow", *FAST]
    proc = subprocess.Popen(
        [*command, "--jobs", jobs],
        cwd=project,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # Slow is still waiting: this line came early
        assert not (project / "gave-up").exists()
        (project / "go").touch()
        rest, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert re.fullmatch(r"\[1/2\] pops:Square passed \(3 examples, \d+\.\d\d s\)\n", first)
    assert rest.startswith("[2/2] pops:Slow passed (3 examples")
    assert "target " in rest and proc.returncode == 0, err
    assert "\x1b" not in first + rest + err  # off a terminal: plain lines


def test_the_line_of_a_failure_names_its_kind(project: Path, monkeypatch):
    monkeypatch.chdir(project)
    (project / "go").touch()
    out = CliRunner().invoke(main, ["verify", "pops:Wrong", *FAST], catch_exceptions=False)
    assert out.exit_code == 1
    assert out.stdout.startswith("[1/1] pops:Wrong FAILED: mismatch (")


def test_json_keeps_stdout_one_document_the_lines_go_to_stderr(project: Path, monkeypatch):
    monkeypatch.chdir(project)
    out = CliRunner().invoke(main, ["verify", "pops:Square", *FAST, "--format", "json"])
    assert out.exit_code == 0
    assert out.stdout.startswith("{")
    assert out.stderr.startswith("[1/1] pops:Square passed")


def test_quiet_prints_what_did_not_pass_and_the_summary(project: Path, monkeypatch):
    monkeypatch.chdir(project)
    ok = CliRunner().invoke(main, ["verify", "pops:Square", *FAST, "-q"])
    assert ok.exit_code == 0
    assert ok.output.strip().splitlines() == [ok.output.strip()]  # the summary alone
    assert ok.output.startswith("1 passed in ")
    bad = CliRunner().invoke(main, ["verify", "pops:Square", "pops:Wrong", *FAST, "--quiet"])
    assert bad.exit_code == 1
    assert "[1/2]" not in bad.output and "verdict" not in bad.output  # no lines, no table
    assert "pops:Wrong failed: mismatch" in bad.output
    assert re.search(r"\n\n1 passed, 1 failed in \S+ s \(seed 1\)$", bad.output.rstrip())


def test_live_line_and_colour_on_a_terminal_none_with_term_dumb(project: Path):
    if not hasattr(os, "openpty"):
        pytest.skip("needs a pseudo-terminal")
    (project / "go").touch()

    def terminal(**extra: str) -> str:
        command = [sys.executable, "-m", "gradcheck", "verify", "pops:Square", "pops:Wrong", *FAST]
        code, out = on_a_terminal(command, project, env(**extra))
        assert code == 1
        return out

    tty = terminal()
    assert "\r\x1b[K[0/2] pops:Square" in tty  # the live line, rewritten in place
    assert SGR.search(tty)
    dumb = terminal(TERM="dumb")
    assert "[1/2] pops:Square passed" in dumb
    assert "\x1b" not in dumb  # no colour, no cursor movement
    assert not SGR.search(terminal(NO_COLOR="1"))


@pytest.mark.parametrize(
    "choice, environment, tty, expected",
    [
        ("auto", {}, False, False),
        ("auto", {}, True, True),
        ("auto", {"NO_COLOR": "1"}, True, False),
        ("auto", {"NO_COLOR": ""}, True, True),  # empty: unset
        ("auto", {"FORCE_COLOR": "1"}, False, True),
        ("auto", {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False, False),
        ("auto", {"TERM": "dumb"}, True, False),
        ("always", {"NO_COLOR": "1"}, False, True),
        ("never", {"FORCE_COLOR": "1"}, True, False),
    ],
)
def test_colour_choice(monkeypatch, choice, environment, tty, expected):
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for name, value in environment.items():
        monkeypatch.setenv(name, value)

    class Stream:
        def isatty(self) -> bool:
            return tty

    assert wants_color(choice, Stream()) is expected


def test_colour_options_reach_the_report(project: Path, monkeypatch):
    monkeypatch.chdir(project)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    args = ["verify", "pops:Square", "pops:Wrong", *FAST]
    assert not SGR.search(CliRunner().invoke(main, args).output)  # not a terminal
    assert SGR.search(CliRunner().invoke(main, [*args, "--color", "always"]).output)
    forced = CliRunner().invoke(main, args, env={"FORCE_COLOR": "1"})
    assert SGR.search(forced.output)
    bad = CliRunner().invoke(main, [*args, "--color", "sometimes"])
    assert bad.exit_code == 2 and "'--color'" in bad.output


def test_the_live_line_fits_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "30")

    class Terminal:
        def __init__(self) -> None:
            self.text = ""

        def write(self, text: str) -> None:
            self.text += text

        def flush(self) -> None:
            pass

    live = Terminal()
    progress = Progress(3, None, live)  # type: ignore[arg-type]
    progress.started(0, "a_module_with_a_long_name:AnOpWithALongName")
    progress.examples(0, 5, 100)
    time.sleep(0.11)
    progress.examples(0, 6, 100)
    last = live.text.rsplit("\r\x1b[K", 1)[-1]
    assert last.startswith("[0/3] a_module") and last.endswith("...") and len(last) <= 29
    progress.close()
    assert live.text.endswith("\r\x1b[K")
