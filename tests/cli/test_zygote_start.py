"""How the worker that loads the targets (the zygote) starts (issue 40, item 1): forked
from the command's own process, where that is safe, instead of a new Python
(gradcheck.frontend.worker.zygote_context); spawned for a caller's argument list, and
while another thread runs. A forked worker starts as a spawned one would."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.cli import main
from tests.cli.conftest import REPO

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's fork")

# A module that notes, as the worker imports it, how that process was started (its
# command line: a spawned worker's is multiprocessing's), its SIGTERM handler, and
# whether its __main__ is a file's.
NOTES_HOW_IT_STARTED = """
import signal, sys
import gradcheck as mg

with open("/proc/self/cmdline", "rb") as f:
    words = f.read().split(b"\\0")
with open("worker-start", "w") as f:
    f.write("spawned" if b"--multiprocessing-fork" in words else "forked")
    f.write(" " + repr(signal.getsignal(signal.SIGTERM)))
    f.write(" " + str(hasattr(sys.modules["__main__"], "__file__")))


class Square(mg.Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data ** 2

    def backward_var(self, grad, index, **kw):
        return grad * 2 * self.variables[0].data
"""


def _command(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "gradcheck", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@linux_only
def test_the_commands_own_worker_is_forked_and_starts_as_a_spawned_one(tmp_path: Path):
    # No second Python start, and nothing of the command's: SIGTERM's default action,
    # an empty __main__ (as a spawned worker has).
    (tmp_path / "notes.py").write_text(NOTES_HOW_IT_STARTED)
    out = _command(tmp_path, "verify", "notes:Square", "--max-examples", "2", "--seed", "0")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (tmp_path / "worker-start").read_text() == "forked <Handlers.SIG_DFL: 0> False"


def test_a_callers_argument_list_gets_a_spawned_worker(tmp_path: Path, monkeypatch):
    # The calling process may have imported modules of the names the run loads
    # (a test suite's): a forked worker would find those instead of the files.
    (tmp_path / "notes.py").write_text(NOTES_HOW_IT_STARTED)
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["verify", "notes:Square", "--max-examples", "2"])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "worker-start").read_text().split()[0] == "spawned"


# Which start the zygote gets, in a fresh process (pytest's may run threads of its own).
STARTS = """
import threading
from gradcheck.frontend.runner import WorkerSetup
from gradcheck.frontend.worker import zygote_context

def how(setup):
    context, forked = zygote_context(setup)
    return f"{context.get_start_method()}-{forked}"

asked = WorkerSetup(cwd=".", fork=True)
seen = [how(asked), how(WorkerSetup(cwd="."))]
stop = threading.Event()
other = threading.Thread(target=stop.wait)
other.start()
seen.append(how(asked))
stop.set()
other.join()
print(*seen)
"""


@linux_only
def test_the_worker_is_forked_only_when_asked_and_no_other_thread_runs(tmp_path: Path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", STARTS], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert out.stdout.split() == ["fork-True", "spawn-False", "spawn-False"], out.stderr


# A module that sends its own process SIGTERM at import: the worker loading it ends
# (a load error), as a spawned worker does, instead of running the command's handler.
TERMINATES_ITS_PROCESS = """
import os, signal
os.kill(os.getpid(), signal.SIGTERM)
"""


@linux_only
def test_a_sigterm_to_a_forked_worker_ends_it(tmp_path: Path):
    (tmp_path / "term.py").write_text(TERMINATES_ITS_PROCESS)
    out = _command(tmp_path, "verify", "term:op", "--max-examples", "2")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "killed by signal 15 (SIGTERM)" in out.stderr, out.stderr


def test_a_dask_workers_zygote_is_never_forked_from_it():
    # The setup travels to the Dask workers, whose processes are Dask's (an event
    # loop, its descriptors), not the command's.
    from gradcheck.frontend.dask_executor import DaskRun
    from gradcheck.frontend.runner import WorkerSetup

    run = DaskRun(1, WorkerSetup(cwd=".", fork=True))
    assert run.setup.fork is False


# -- the early zygote (gradcheck.frontend.early) --------------------------------------
@linux_only
def test_the_commands_worker_is_forked_before_the_command_imports_click(tmp_path: Path):
    # `python -m gradcheck verify` forks its zygote first thing: its imports (NumPy,
    # Hypothesis, the checker) run beside the command's (click, its modules, the
    # options), not after them. On main the zygote was forked from the command once
    # those were imported, and had them: "click gradcheck.cli".
    from tests.cli.test_framework_preload import NOTES_THE_WORKERS_MODULES

    (tmp_path / "notes.py").write_text(NOTES_THE_WORKERS_MODULES)
    out = _command(tmp_path, "verify", "notes:Square", "--max-examples", "2", "--seed", "0")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (tmp_path / "worker-modules").read_text() == ""


@linux_only
def test_the_early_worker_also_starts_as_a_spawned_one(tmp_path: Path):
    (tmp_path / "notes.py").write_text(NOTES_HOW_IT_STARTED)
    out = _command(tmp_path, "verify", "notes:Square", "--max-examples", "2", "--seed", "0")
    assert out.returncode == 0, out.stdout + out.stderr
    assert (tmp_path / "worker-start").read_text() == "forked <Handlers.SIG_DFL: 0> False"


@linux_only
@pytest.mark.parametrize("args", [["--bogus"], ["--help"], ["nowhere:op"]])
def test_an_early_worker_never_taken_ends_with_the_command(tmp_path: Path, args):
    # A usage error, --help, a load error: the command ends, and no process of it is
    # left holding its output (a pipe's reader would wait for it).
    started = time.monotonic()
    out = _command(tmp_path, "verify", *args)
    assert out.returncode in (0, 2), out.stdout + out.stderr
    assert time.monotonic() - started < 60


def test_which_command_lines_fork_early():
    from gradcheck.frontend.early import wanted

    linux = sys.platform.startswith("linux")
    assert wanted(["gradcheck", "verify", "good:Cube"]) is linux
    assert not wanted(["gradcheck", "verify", "--help"])
    assert not wanted(["gradcheck", "verify", "t:op", "--executor", "dask"])
    assert not wanted(["gradcheck", "verify", "t:op", "--executor=dask"])
    assert not wanted(["gradcheck", "replay", "x.json"])
    assert not wanted(["gradcheck"])


# What the command and the zygote both import, imported in the command before the fork:
# the zygote inherits it instead of importing it again (about 0.09 s of CPU a run).
AT_THE_FORK = """
import os, sys
import multiprocessing.process as process
def start(self):
    shared = ("numpy", "gradcheck.frontend.worker", "gradcheck.search.verifier")
    print(sorted(m for m in shared if m in sys.modules), "click" in sys.modules, flush=True)
    os._exit(0)
process.BaseProcess.start = start
sys.argv = ["gradcheck", "verify", "good:Cube", "--max-examples", "2"]
from gradcheck.__main__ import run
run()
"""


@linux_only
def test_the_early_zygote_inherits_what_the_command_imports_too(tmp_path: Path):
    (tmp_path / "good.py").write_text("import torch\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", AT_THE_FORK],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    shared = "['gradcheck.frontend.worker', 'gradcheck.search.verifier', 'numpy']"
    assert out.stdout.strip() == f"{shared} False", out.stdout + out.stderr
