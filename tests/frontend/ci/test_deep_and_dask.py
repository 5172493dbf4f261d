"""Deep runs (``verify --seeds S``) and the Dask executor (``--executor dask``): the
same verdicts as the local runner, one target's crash failing that target alone."""

from __future__ import annotations

import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gradcheck.checking.result import CheckResult, Failure
from gradcheck.frontend.deep import combine, combine_seeds, seed_of
from gradcheck.search.verifier import VerifyResult

REPO = Path(__file__).resolve().parents[3]

OPS = '''
import os
import time

import numpy as np

from gradcheck import Operation


class Double(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return 2 * x.data

    def backward_var(self, grad, index, **kwargs):
        return 2 * grad


class RareBug(Operation):
    """Wrong only where x > 2.5: some seeds of a short search never draw such an x."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data**2

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        return grad * 2 * x * np.where(x > 2.5, 1.5, 1.0)


class Dies(Operation):
    def __call__(self, x):
        self.variables = (x,)
        os._exit(3)


class Hangs(Operation):
    def __call__(self, x):
        self.variables = (x,)
        open("hangs.started", "w").close()
        time.sleep(600)


_recorded = False


class RecordsParent(Double):
    """Writes, once per process, the pid of the process it was forked from (the
    worker's zygote) and OMP_NUM_THREADS to parents.txt."""

    def __call__(self, x):
        global _recorded
        if not _recorded:
            _recorded = True
            with open("parents.txt", "a") as out:
                out.write(f"{os.getppid()} {os.environ.get('OMP_NUM_THREADS')}\\n")
        return super().__call__(x)


class KillsParent(Operation):
    """Kills the zygote it was forked from (and so itself)."""

    def __call__(self, x):
        self.variables = (x,)
        if os.getppid() > 1:
            os.kill(os.getppid(), 9)
        time.sleep(60)
'''


def run(
    cwd: Path, *args: str, env: dict[str, str | None] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GRADCHECK_"))},
        "PYTHONPATH": str(REPO),
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "gradcheck", "verify", *args],
        cwd=cwd,
        env={k: v for k, v in env.items() if v is not None},
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "deep_ops.py").write_text(OPS)
    return tmp_path


def result(seed: int, verdict: str = "passed", examples: int = 10, ratio: float = 0.1):
    failure = None
    if verdict == "failed":
        failure = CheckResult(verdict="failed", target="m:Op", failure=Failure("mismatch", "x"))
    return VerifyResult(
        "m:Op",
        verdict == "passed",
        verdict,
        examples,
        1,
        failure,
        ratio,
        ratio,
        ratio,
        1.0,
        seed,
        skipped={"not differentiable there": 1},
        max_abs_error_at="" if ratio != ratio else "the reported example",
        max_rel_error_at="" if ratio != ratio else f"example {examples} of the search",
    )


# --- combining seeds -----------------------------------------------------------------


def test_seeds_are_consecutive_and_wrap() -> None:
    assert [seed_of(2**32 - 2, i) for i in range(3)] == [2**32 - 2, 2**32 - 1, 0]


def test_one_failing_seed_fails_the_target_with_that_seed() -> None:
    combined = combine([result(5), result(6, "failed", 3, 4.0), result(7, "failed", 2, 9.0)])
    assert combined.verdict == "failed" and not combined.passed
    assert combined.seed == 6  # the first failing seed replays it
    assert combined.examples == 15 and combined.rejected == 3
    assert combined.skipped == {"not differentiable there": 3}
    assert combined.error_ratio == 9.0  # the worst seen
    # ...at seed 7's examples, not at the reported ones of seed 6
    assert combined.max_abs_error_at == "the shrunk failure with seed 7"
    assert combined.max_rel_error_at == "example 2 of the search with seed 7"
    assert "was seen at the shrunk failure with seed 7 (it replays with a run of that seed" in str(
        combined
    )
    assert combined.seconds == 3.0
    assert "3 seeds (5..7): seed 6 failed" in combined.note


def test_passing_seeds_pass_and_inconclusive_ones_do_not_hide_a_pass() -> None:
    combined = combine([result(1), result(2, "inconclusive", 0, math.nan), result(3)])
    assert combined.verdict == "passed" and combined.passed
    assert combined.error_ratio == 0.1
    allbad = combine([result(1, "inconclusive", 0, math.nan)] * 2)
    assert allbad.verdict == "inconclusive" and not allbad.passed
    assert [r.seed for r in combine_seeds([result(i) for i in range(6)], 3)] == [0, 3]


def test_a_deep_run_finds_a_rare_bug_that_one_seed_misses_and_replays_it(project: Path) -> None:
    # Which seeds draw x > 2.5 at 3 examples is chance: find a base seed whose first
    # search passes, then check that 40 seeds from it fail, and that the replay fails.
    base = next(
        s
        for s in range(40)
        if run(
            project, "deep_ops:RareBug", "--seed", str(s), "--max-examples", "3", "-q"
        ).returncode
        == 0
    )
    deep = run(
        project,
        "deep_ops:RareBug",
        "--seed",
        str(base),
        "--max-examples",
        "3",
        "--seeds",
        "40",
        "--format",
        "json",
        "--jobs",
        "2",
    )
    assert deep.returncode == 1, deep.stderr
    target = json.loads(deep.stdout)["targets"][0]
    assert target["verdict"] == "failed" and target["seed"] != base
    assert target["replay"].endswith(f"--seed {target['seed']}")
    replay = run(project, *target["replay"].split()[2:])
    assert replay.returncode == 1


# --- the Dask executor -----------------------------------------------------------------


def test_a_run_checks_job_after_job_and_never_takes_an_exit_for_a_later_jobs(
    project: Path,
) -> None:
    # How a Dask worker uses its run: one Run.check per task, on one zygote. The end of
    # a job's process (reported by the zygote after the job's result) must not be taken
    # for the end of the next job's; the zygote outlives an op's os._exit, and is
    # started again when an op kills it.
    from gradcheck.frontend.runner import Job, Run, WorkerSetup

    specs = ["Double", "Double", "Dies", "Double", "KillsParent", "Double", "Double"]
    run = Run(1, WorkerSetup(cwd=str(project)))
    outcomes = []
    try:
        for spec in specs:
            outcomes.append(run.check(Job(f"deep_ops:{spec}", {"seed": 1, "max_examples": 3})))
            time.sleep(0.2)  # the zygote's report of that process's end is sent by now
    finally:
        run.close()
    got = [(o.verdict, o.failure.failure.kind if o.failure else None) for o in outcomes]
    died = ("failed", "worker_died")
    ok = ("passed", None)
    assert got == [ok, ok, died, ok, died, ok, ok]


def test_a_dask_worker_keeps_its_zygote_from_task_to_task(project: Path) -> None:
    # One worker, so every task runs on it: its zygote survives an op's os._exit and
    # serves the next task (the same parent pid), and is started again after an op
    # killed it; the checks see the command's environment, not the nanny's settings.
    pytest.importorskip("distributed", reason="Dask's distributed is not installed")
    specs = ["RecordsParent", "Dies", "RecordsParent", "KillsParent", "RecordsParent"]
    out = run(
        project,
        *[f"deep_ops:{spec}" for spec in specs],
        "--seed",
        "2",
        "--max-examples",
        "3",
        "--executor",
        "dask",
        "--jobs",
        "1",
        "--format",
        "json",
        env={"OMP_NUM_THREADS": None},
    )
    assert out.returncode == 1, out.stderr
    got = [
        (t["verdict"], t["failure"]["kind"] if t["failure"] else None)
        for t in json.loads(out.stdout)["targets"]
    ]
    died = ("failed", "worker_died")
    assert got == [("passed", None), died, ("passed", None), died, ("passed", None)]
    parents = [line.split() for line in (project / "parents.txt").read_text().splitlines()]
    assert len(parents) == 3
    assert parents[0][0] == parents[1][0] != parents[2][0]
    assert {omp for _, omp in parents} == {"None"}


def test_scheduler_needs_the_dask_executor(project: Path) -> None:
    out = run(project, "deep_ops:Double", "--scheduler", "tcp://127.0.0.1:1")
    assert out.returncode == 2 and "needs --executor dask" in out.stderr


def test_without_distributed_the_executor_is_one_line(project: Path) -> None:
    fake = project / "fake"
    fake.mkdir()
    (fake / "distributed.py").write_text("raise ImportError('no distributed here')\n")
    env = {**os.environ, "PYTHONPATH": f"{fake}{os.pathsep}{REPO}"}
    out = subprocess.run(
        [sys.executable, "-m", "gradcheck", "verify", "deep_ops:Double", "--executor", "dask"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "Error: --executor dask needs Dask's distributed: pip install 'gradcheck[dask]'"
    ]


def test_the_dask_executor_gives_the_local_verdicts_and_a_crash_fails_alone(
    project: Path,
) -> None:
    pytest.importorskip("distributed", reason="Dask's distributed is not installed")
    targets = ["deep_ops:Double", "deep_ops:Dies", "deep_ops:RareBug", "deep_ops:Double"]
    args = [*targets, "--seed", "4", "--max-examples", "20", "--format", "json", "--jobs", "2"]
    local = run(project, *args)
    dask = run(project, *args, "--executor", "dask")
    assert dask.returncode == local.returncode == 1, dask.stderr

    def verdicts(out):
        return [
            (
                t["target"],
                t["verdict"],
                t["examples"],
                t["seed"],
                t["failure"]["kind"] if t["failure"] else None,
            )
            for t in json.loads(out.stdout)["targets"]
        ]

    assert verdicts(dask) == verdicts(local)
    assert verdicts(dask)[1][4] == "worker_died"
    assert verdicts(dask)[0][1] == verdicts(dask)[3][1] == "passed"


def test_a_cluster_of_ones_own_keeps_a_zygote_per_worker_too(project: Path) -> None:
    # --scheduler: no preload of ours runs on the workers; a worker makes its gradcheck
    # run at its first task, and keeps it for the next ones.
    pytest.importorskip("distributed", reason="Dask's distributed is not installed")
    import dask
    from distributed import LocalCluster

    with dask.config.set({"distributed.worker.daemon": False}):
        cluster = LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": ":0"},
            silence_logs=40,
        )
    try:
        specs = ["RecordsParent", "Dies", "RecordsParent"]
        out = run(
            project,
            *[f"deep_ops:{spec}" for spec in specs],
            "--seed",
            "2",
            "--max-examples",
            "3",
            "--executor",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
            "--format",
            "json",
        )
    finally:
        cluster.close()
    assert out.returncode == 1, out.stderr
    got = [t["verdict"] for t in json.loads(out.stdout)["targets"]]
    assert got == ["passed", "failed", "passed"]
    parents = [line.split()[0] for line in (project / "parents.txt").read_text().splitlines()]
    assert len(parents) == 2 and parents[0] == parents[1]


def test_the_dask_executor_keeps_the_time_limits_and_stops_on_sigterm(project: Path) -> None:
    pytest.importorskip("distributed", reason="Dask's distributed is not installed")
    out = run(
        project,
        "deep_ops:Hangs",
        "deep_ops:Double",
        "--seed",
        "1",
        "--executor",
        "dask",
        "--example-timeout",
        "3",
        "--format",
        "json",
    )
    assert out.returncode == 1, out.stderr
    got = [(t["target"], t["verdict"]) for t in json.loads(out.stdout)["targets"]]
    assert got == [("deep_ops:Hangs", "timed_out"), ("deep_ops:Double", "passed")]

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    (project / "hangs.started").unlink()  # (the run above made it)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gradcheck",
            "verify",
            "deep_ops:Hangs",
            "deep_ops:Double",
            "--seed",
            "1",
            "--executor",
            "dask",
            "--format",
            "json",
        ],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300  # (a loaded machine starts a cluster slowly)
    while not (project / "hangs.started").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=60)
    assert proc.returncode == 143
    verdicts = {t["target"]: t["verdict"] for t in json.loads(stdout)["targets"]}
    assert verdicts["deep_ops:Hangs"] == "not_run"


def test_a_sharded_deep_run_merges_to_the_unsharded_one(project: Path) -> None:
    targets = ["deep_ops:Double", "deep_ops:RareBug", "deep_ops:Double"]
    common = [*targets, "--seed", "9", "--max-examples", "3", "--seeds", "4", "--format", "json"]
    whole = run(project, *common)
    for k in (1, 2):
        part = run(project, *common, "--shard", f"{k}/2")
        assert part.returncode in (0, 1), part.stderr
        (project / f"r{k}.json").write_text(part.stdout)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    merged = subprocess.run(
        [sys.executable, "-m", "gradcheck", "merge", "r1.json", "r2.json", "--format", "json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert merged.returncode == whole.returncode, merged.stderr

    def key(out):
        return [
            (t["target"], t["verdict"], t["examples"], t["seed"])
            for t in json.loads(out.stdout)["targets"]
        ]

    assert key(merged) == key(whole)
    other = run(project, *common[:-4], "--seeds", "5", "--format", "json", "--shard", "2/2")
    (project / "r2.json").write_text(other.stdout)
    refused = subprocess.run(
        [sys.executable, "-m", "gradcheck", "merge", "r1.json", "r2.json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2 and "not shards of one run" in refused.stderr


def test_combining_ranges_of_seeds_is_combining_the_seeds() -> None:
    """What gradcheck merge does with the shards' entries of one target (each a range
    of its seeds, combined by the shard) gives the entry of all the seeds combined,
    whatever the verdicts and wherever the ranges end."""
    from gradcheck.frontend.deep import combine_entries

    verdicts = ["passed", "failed", "inconclusive", "timed_out"]
    rng = random.Random(0)
    for _ in range(300):
        n = rng.randint(2, 9)
        seeds = [rng.choice(verdicts) for _ in range(n)]
        results = [
            result(100 + i, v, examples=i + 1, ratio=math.nan if v == "inconclusive" else i / 3)
            for i, v in enumerate(seeds)
        ]
        cuts = sorted(rng.sample(range(1, n), rng.randint(1, n - 1)))
        ranges = list(zip([0, *cuts], [*cuts, n]))
        parts = [combine(results[a:b]).to_dict() for a, b in ranges]
        spans = [(b - a, 100 + a, 100 + b - 1) for a, b in ranges]
        assert combine_entries(parts, spans) == combine(results).to_dict(), (seeds, ranges)


def test_a_targets_seeds_split_over_shards_merge_to_the_unsharded_run(project: Path) -> None:
    """RareBug takes most of the recorded time: its 6 seeds spread over the 3 shards,
    and the merged JSON report, baseline and JUnit file are the unsharded run's (the
    shrunk failure and replay of the first failing seed included); without a shard the
    merge is refused in one line."""
    import xml.etree.ElementTree as ET

    (project / "durations.json").write_text(
        json.dumps({"deep_ops:RareBug": 60.0, "deep_ops:Double": 1.0})
    )
    common = ["deep_ops:Double", "deep_ops:RareBug", "--seed", "9", "--max-examples", "3"]
    common += ["--seeds", "6", "--format", "json"]
    whole = run(project, *common, "--junit-xml", "w.xml", "--save-baseline", "wb.json")
    assert whole.returncode == 1, whole.stderr
    files = []
    held = []
    for k in (1, 2, 3):
        outputs = ["--junit-xml", f"j{k}.xml", "--save-baseline", f"b{k}.json"]
        part = run(project, *common, "--shard", f"{k}/3", "--durations", "durations.json", *outputs)
        assert part.returncode in (0, 1), part.stderr
        (project / f"r{k}.json").write_text(part.stdout)
        manifest = json.loads(part.stdout)["shard"]
        held.append({p: r[:2] for p, r in zip(manifest["positions"], manifest["ranges"])})
        files += [f"r{k}.json", f"j{k}.xml", f"b{k}.json"]
    assert sum(1 in shard for shard in held) > 1  # RareBug's seeds are in several shards
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def merge(*names: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gradcheck", "merge", *names],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    out = merge(*files, "--json", "m.json", "--junit-xml", "m.xml", "--save-baseline", "mb.json")
    assert out.returncode == 1, out.stderr

    def timeless(value):  # the seconds of a run are never the same twice
        if isinstance(value, dict):
            return {k: timeless(v) for k, v in value.items() if k != "seconds"}
        if isinstance(value, list):
            return [timeless(v) for v in value]
        return value

    merged, unsharded = json.loads((project / "m.json").read_text()), json.loads(whole.stdout)
    assert timeless(merged["targets"]) == timeless(unsharded["targets"])
    rare = merged["targets"][1]
    assert rare["verdict"] == "failed" and rare["note"].startswith("6 seeds (9..14): seed")
    base, whole_base = (json.loads((project / f).read_text()) for f in ("mb.json", "wb.json"))
    assert timeless(base["targets"]) == timeless(whole_base["targets"])

    def cases(name: str) -> list:  # the report's "calls in 0.002 s" is the check's time
        return [
            (
                c.get("name"),
                [
                    (f.get("type"), re.sub(r"in [0-9.e-]+ s", "in _ s", f.text))
                    for f in c.iter("failure")
                ],
            )
            for c in ET.parse(project / name).iter("testcase")
        ]

    assert cases("m.xml") == cases("w.xml")
    missing = merge(*[f for f in files if "2." not in f])
    assert missing.returncode == 2
    assert len(missing.stderr.strip().splitlines()) == 1, missing.stderr
    assert "shard 2 of 3 missing" in missing.stderr
