"""``gradcheck verify --executor dask`` against ``--jobs 2``, side by side.

Runs the built-in library (``gradcheck verify`` with no target) as a user runs it,
``python -m gradcheck`` in a fresh process each time, alternately:

- ``--jobs``: ``gradcheck verify --seed 3 --jobs 2 --format json``
- ``dask``: ``gradcheck verify --seed 3 --executor dask --jobs 2 --format json``
  (a LocalCluster of 2 worker processes, started by the command)

in pairs whose order alternates (``--jobs`` first in odd pairs, ``dask`` first in
even ones), so that a change in the machine's load weighs on both. Each run's wall time
and CPU time (its own and its descendants', every process of the run: this process is
their subreaper on Linux, so that the CPU of a process orphaned when the cluster is
killed is counted too) are printed, then the medians and the ratio dask / --jobs of the
median wall times, the issue's bar (issue 36: at most 1.15). Each pair's two JSON
reports must hold the same targets with the same verdicts, examples, seeds and failure
kinds (the acceptance); whether everything else but the seconds is equal too (errors
to the last bit) is printed beside.

Run from the repository root::

    PYTHONPATH=. python benchmarks/dask_vs_jobs.py [--pairs 2] [--keep DIR] [--target T ...]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

COMMON = ["verify", "--seed", "3", "--format", "json"]
VARIANTS = {
    "--jobs": [*COMMON, "--jobs", "2"],
    "dask": [*COMMON, "--executor", "dask", "--jobs", "2"],
}


def become_subreaper() -> bool:
    """Orphaned descendants of this process are re-parented to it (Linux), so that
    reaping them adds their CPU time to RUSAGE_CHILDREN."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(36, 1) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def reap_orphans(limit: float = 10.0) -> None:
    """Wait for every descendant left (processes orphaned by the command's end)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.02)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(name: str, out: Path, targets: list[str]) -> tuple[float, float, int]:
    """One run: wall seconds, CPU seconds, exit code; its JSON report in ``out``."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cpu = children_cpu()
    start = time.perf_counter()
    with out.open("w") as stdout:
        proc = subprocess.run(
            [sys.executable, "-m", "gradcheck", *VARIANTS[name], *targets],
            stdout=stdout,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=REPO,
        )
    wall = time.perf_counter() - start
    reap_orphans()
    return wall, children_cpu() - cpu, proc.returncode


def report(path: Path) -> list[dict]:
    return json.loads(path.read_text())["targets"]


def verdicts(report: list[dict]) -> list[tuple]:
    return [
        (
            t["target"],
            t["verdict"],
            t["examples"],
            t["seed"],
            t["failure"]["kind"] if t["failure"] else None,
        )
        for t in report
    ]


def all_but_seconds(report: list[dict]) -> list[dict]:
    return [{k: v for k, v in t.items() if k != "seconds"} for t in report]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="a folder to keep the JSON reports in")
    parser.add_argument(
        "--target",
        action="append",
        default=[],
        help="check only this target (repeatable; a quicker look) [default: the library]",
    )
    args = parser.parse_args()
    subreaper = become_subreaper()
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in VARIANTS}
    same = True
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        print(f"{'pair':>4s} {'run':6s} {'exit':>4s} {'wall s':>7s} {'CPU s':>7s}  load")
        for pair in range(1, args.pairs + 1):
            order = list(VARIANTS) if pair % 2 else list(reversed(VARIANTS))
            paths = {}
            for name in order:
                paths[name] = folder / f"{name.strip('-')}-{pair}.json"
                wall, cpu, code = run(name, paths[name], args.target)
                times[name].append((wall, cpu))
                load = os.getloadavg()[0]
                print(f"{pair:4d} {name:6s} {code:4d} {wall:7.2f} {cpu:7.2f}  {load:.1f}")
            a, b = report(paths["--jobs"]), report(paths["dask"])
            agree = verdicts(a) == verdicts(b)
            exact = all_but_seconds(a) == all_but_seconds(b)
            same = same and agree
            print(
                f"     pair {pair}: {len(a)} targets; verdicts, examples, seeds, failure "
                f"kinds {'the same' if agree else 'DIFFER'}; every field but the seconds "
                f"{'the same' if exact else 'not the same'}"
            )
    median = {
        name: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
        for name, runs in times.items()
    }
    for name, (wall, cpu) in median.items():
        print(f"median {name:6s}: wall {wall:.2f} s, CPU {cpu:.2f} s")
    ratio = median["dask"][0] / median["--jobs"][0]
    cpu_ratio = median["dask"][1] / median["--jobs"][1]
    print(f"dask / --jobs: wall {ratio:.3f}x (bar: 1.15x), CPU {cpu_ratio:.3f}x")
    if not subreaper:
        print("(not Linux: the CPU of processes orphaned at the cluster's end is not counted)")
    if not same:
        sys.exit("the verdicts differ")


if __name__ == "__main__":
    main()
