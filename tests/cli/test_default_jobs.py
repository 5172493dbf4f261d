"""Without --jobs, `gradcheck verify` checks one target per usable CPU core at once
(issue 40 item 2), no more than there are targets, and one at a time where a target
runs on a device; --jobs N still decides when given. The results and their order are
the same whatever the number (tests/frontend/ci/test_ci_project.py compares them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import gradcheck.frontend.runner as runner
from gradcheck.cli import main

FAST = ["--max-examples", "2", "--seed", "1", "-q"]
TARGETS = ["user_ops:Square", "user_ops:MatMul", "user_ops:Sum"]


@pytest.fixture
def at_once(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many jobs each run checked at once (as its Run was told)."""
    seen: list[int] = []
    results = runner.Run.results

    def recording(self, jobs):
        seen.append(self.n_jobs)
        return results(self, jobs)

    monkeypatch.setattr(runner.Run, "results", recording)
    return seen


def run(*args: str):
    return CliRunner().invoke(main, ["verify", *args], catch_exceptions=False)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no affinity mask here")
def test_one_job_per_usable_core_by_default(workdir: Path, at_once, monkeypatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 5, 7})
    assert run(*TARGETS, *FAST).exit_code == 0
    assert at_once == [3]  # four cores, three targets
    assert run(*TARGETS[:1], *FAST).exit_code == 0
    assert at_once[-1] == 1


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no affinity mask here")
def test_the_jobs_option_still_decides(workdir: Path, at_once, monkeypatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert run(*TARGETS, *FAST, "--jobs", "1").exit_code == 0
    assert run(*TARGETS, *FAST, "--jobs", "3").exit_code == 0
    assert at_once == [1, 3]


def test_a_device_means_one_at_a_time(monkeypatch) -> None:
    from gradcheck.cli import _jobs_at_once

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    run = runner.Run(4, runner.WorkerSetup(cwd="."))
    assert _jobs_at_once(None, [{}, {"device": "cuda"}], run) == 1 and run.n_jobs == 1
    assert _jobs_at_once(None, [{}, {}, {}], run) == 2 and run.n_jobs == 2
    assert _jobs_at_once(None, [{}], run, seeds=3) == 2  # a deep run: a job per seed
    assert _jobs_at_once(5, [{}, {}], run) == 2 and run.n_jobs == 2  # --jobs: as given


def test_the_default_follows_the_affinity_mask(monkeypatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3}, raising=False)
    assert runner.default_jobs(10) == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert runner.default_jobs(10) == 3 and runner.default_jobs(2) == 2
    assert runner.default_jobs(10, devices=True) == 1 and runner.default_jobs(0) == 1
