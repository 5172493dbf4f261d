"""The worker pool of `gradcheck verify` (gradcheck.frontend.runner), driven directly."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.cli import main
from gradcheck.errors import InternalError, LoadError
from gradcheck.frontend.runner import Job, Run, WorkerSetup
from gradcheck.search.verifier import VerifyResult

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
