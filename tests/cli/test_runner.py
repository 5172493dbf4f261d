"""The worker pool of `gradcheck verify` (gradcheck.frontend.runner), driven directly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.cli import main
from gradcheck.errors import InternalError, LoadError
from gradcheck.frontend.runner import Job, Run, WorkerSetup
from gradcheck.search.verifier import VerifyResult
from tests.cli.conftest import REPO

SQUARE = "gradcheck.builtin_targets:square"


def setup(**changes) -> WorkerSetup:
    return WorkerSetup(**{"cwd": os.getcwd(), **changes})


def test_results_come_in_the_order_of_the_jobs_errors_in_their_place():
    jobs = [
        Job(SQUARE, {"max_examples": 2, "seed": 1}),
        Job("gradcheck.builtin_targets:no_such_op", {"seed": 1}),
        Job(SQUARE, {"max_examples": 3, "seed": 2}),
    ]
    run = Run(2, setup())
    try:
        outcomes = list(run.results(jobs))
    finally:
        run.close()
    assert [i for i, _ in outcomes] == [0, 1, 2]
    assert isinstance(outcomes[0][1], VerifyResult) and outcomes[0][1].examples == 2
    assert isinstance(outcomes[1][1], LoadError)
    assert isinstance(outcomes[2][1], VerifyResult) and outcomes[2][1].seed == 2


def test_a_worker_that_cannot_start_ends_the_run_instead_of_respawning_forever(tmp_path: Path):
    run = Run(1, setup(cwd=str(tmp_path / "gone")))
    with pytest.raises(InternalError, match="cannot start a worker process"):
        list(run.results([Job(SQUARE, {"seed": 1})]))
    run.close()


def test_the_command_leaves_no_hypothesis_state_behind(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    before = dict(os.environ)
    out = CliRunner().invoke(main, ["verify", SQUARE, "--max-examples", "2", "--seed", "0"])
    assert out.exit_code == 0, out.output
    assert dict(os.environ) == before  # nothing set for later subprocesses
    assert not (tmp_path / ".hypothesis").exists()


def test_workers_start_without_forking_the_coordinator(tmp_path: Path):
    # The coordinator may hold threads (JAX's, torch's thread pools, the user's): a
    # forked child inherits their locks held and can deadlock. Workers are started by
    # fork-and-exec (spawn), which runs no fork handler in the coordinator; with
    # os.fork (a "fork" start method, a preexec_fn) the handler below would run.
    script = f"""
import os, sys, threading
sys.path.insert(0, {str(REPO)!r})
forks = []
os.register_at_fork(before=lambda: forks.append(os.getpid()))
threading.Thread(target=threading.Event().wait, daemon=True).start()  # a busy library
from gradcheck.frontend.runner import Job, Run, WorkerSetup
run = Run(2, WorkerSetup(cwd=os.getcwd()))
try:
    jobs = [Job({SQUARE!r}, {{"max_examples": 2, "seed": s}}) for s in (1, 2, 3)]
    outcomes = [outcome for _, outcome in run.results(jobs)]
finally:
    run.close()
assert all(o.passed for o in outcomes), outcomes
print("forks", len(forks))
"""
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["forks", "0"]


SPARE_OPS = """
import os, time
import numpy as np
import gradcheck as mg

HERE = os.path.dirname(os.path.abspath(__file__))


def ticks_now():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0]) * os.sysconf("SC_CLK_TCK")


class First(mg.Operation):
    def __call__(self, x):
        self.variables = (x,)
        time.sleep(0.01)
        with open(os.path.join(HERE, "first-ended"), "w") as f:
            f.write(repr(ticks_now()))
        return x.data * 2

    def backward_var(self, grad, index, **kw):
        return grad * 2


class Second(First):
    def __call__(self, x):
        self.variables = (x,)
        with open("/proc/self/stat") as f:
            started = float(f.read().rsplit(")", 1)[1].split()[19])
        with open(os.path.join(HERE, "second-started"), "w") as f:
            f.write(repr(started))
        return x.data * 2
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_the_next_job_is_forked_while_the_one_before_runs(tmp_path: Path):
    """One job at a time, and yet the next job's process exists before the one before
    it ends (the spare): the fork is not on the way from one job to the next. Its
    job starts with its turn all the same (it ran after First's last call)."""
    ops = tmp_path / "spare_ops.py"
    ops.write_text(SPARE_OPS)
    jobs = [Job(f"{ops}:{name}", {"max_examples": 5, "seed": 1}) for name in ("First", "Second")]
    run = Run(1, setup(cwd=str(tmp_path)))
    try:
        outcomes = [outcome for _, outcome in run.results(jobs)]
    finally:
        run.close()
    assert all(isinstance(o, VerifyResult) and o.passed for o in outcomes), outcomes
    first_ended = float((tmp_path / "first-ended").read_text())
    second_forked = float((tmp_path / "second-started").read_text())
    assert second_forked < first_ended
