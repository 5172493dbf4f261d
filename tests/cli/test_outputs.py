"""The files `gradcheck verify` writes (--junit-xml, --save-baseline) and its stdout:
checked before the run, written atomically, their folders created (issue 22, item 4)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.cli import main
from gradcheck.errors import OutputError
from gradcheck.frontend.files import OutputFile
from tests.cli.conftest import REPO

FAST = ["--max-examples", "2", "--seed", "1"]
OPS = """
import os
import gradcheck as mg


class Square(mg.Operation):
    def __call__(self, x):
        open(os.path.join(os.environ["MARK_DIR"], "ran"), "a").close()
        self.variables = (x,)
        return x.data ** 2

    def backward_var(self, grad, index, **kw):
        return grad * 2 * self.variables[0].data


class Wrong(Square):
    def backward_var(self, grad, index, **kw):
        return grad * 3 * self.variables[0].data
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "outops.py").write_text(OPS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("MARK_DIR", str(tmp_path))
    yield tmp_path
    sys.modules.pop("outops", None)


def verify(*args: str):
    return CliRunner().invoke(main, ["verify", "outops:Square", *FAST, *args])


@pytest.mark.parametrize("flag", ["--junit-xml", "--save-baseline"])
def test_missing_folders_are_created_and_nothing_else_is_left(project: Path, flag: str):
    out = verify(flag, "out/sub/file")
    assert out.exit_code == 0, out.output
    assert os.listdir(project / "out" / "sub") == ["file"]


@pytest.mark.parametrize("flag", ["--junit-xml", "--save-baseline"])
@pytest.mark.parametrize("path", ["afile/x", "adir", "/proc/version", "/proc/no-such-file"])
def test_an_unwritable_output_is_an_error_before_any_check_runs(
    project: Path, flag: str, path: str
):
    if path.startswith("/proc") and not Path("/proc/version").exists():
        pytest.skip("Linux /proc")
    (project / "afile").write_text("x")
    (project / "adir").mkdir()
    out = verify(flag, path)
    assert out.exit_code == 2
    assert path.split("/")[-1] in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert not (project / "ran").exists()  # nothing was checked


def test_the_baseline_can_be_read_and_rewritten_in_place(project: Path):
    assert verify("--save-baseline", "b.json").exit_code == 0
    out = verify("--baseline", "b.json", "--save-baseline", "b.json")
    assert out.exit_code == 0, out.output
    assert "outops:Square" in json.loads((project / "b.json").read_text())["targets"]


def test_a_relative_path_is_the_working_directory_of_the_start(project: Path):
    (project / "wanders.py").write_text("import os\nos.chdir('/')\nfrom outops import Square\n")
    sys.modules.pop("wanders", None)
    out = CliRunner().invoke(main, ["verify", "wanders:Square", *FAST, "--junit-xml", "r.xml"])
    os.chdir(project)
    assert out.exit_code == 0, out.output
    assert (project / "r.xml").exists()


def run_limited(cwd: Path, limit: int, *args: str) -> subprocess.CompletedProcess[str]:
    # The limit is set by the child itself, before it runs the command: a preexec_fn
    # would fork this process, which may have JAX's or torch's threads running (JAX
    # warns of a deadlock), where a plain subprocess start (fork and exec at once) is safe.
    launcher = (
        "import resource, runpy, signal, sys\n"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG\n"
        "sys.argv = ['gradcheck', *sys.argv[1:]]\n"
        "runpy.run_module('gradcheck', run_name='__main__', alter_sys=True)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "MARK_DIR": str(cwd)}
    return subprocess.run(
        [sys.executable, "-c", launcher, "verify", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE")
def test_a_write_that_fails_half_way_leaves_the_previous_file(project: Path):
    outputs = ["--junit-xml", "out/r.xml", "--save-baseline", "out/b.json"]
    assert verify(*outputs).exit_code == 0
    before = {name: (project / "out" / name).read_bytes() for name in ("r.xml", "b.json")}
    limit = min(len(data) for data in before.values()) // 2
    out = run_limited(project, limit, "outops:Square", "outops:Wrong", *FAST, *outputs)
    assert out.returncode == 2, out.stderr
    assert "cannot write the JUnit report" in out.stderr
    assert "cannot write the baseline" in out.stderr and "unchanged" in out.stderr
    for name, data in before.items():
        assert (project / "out" / name).read_bytes() == data
    assert sorted(os.listdir(project / "out")) == ["b.json", "r.xml"]  # no temporary file
    assert "outops:Wrong" in out.stdout  # the results are still printed


def test_stdout_that_cannot_be_written_fails_the_command(project: Path):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    env = {**os.environ, "PYTHONPATH": str(REPO), "MARK_DIR": str(project)}
    with open("/dev/full", "w") as full:
        out = subprocess.run(
            [sys.executable, "-m", "gradcheck", "verify", "outops:Square", *FAST],
            cwd=project,
            env=env,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert out.returncode == 2
    assert out.stderr.strip() == (
        "Error: cannot write the output to stdout (No space left on device)"
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_a_destination_that_is_not_a_regular_file_is_refused_before_the_run(tmp_path: Path):
    # Issue 35: a FIFO would block the write forever (after every check ran), a
    # device would be written through; both are refused up front, and left as they are.
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="not a regular file"):
        OutputFile(fifo, what="JUnit report", error=OutputError)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    if Path("/dev/null").exists():
        with pytest.raises(OutputError, match="not a regular file"):
            OutputFile("/dev/null", what="JUnit report", error=OutputError)
