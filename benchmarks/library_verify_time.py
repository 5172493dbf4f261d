"""``gradcheck verify`` over the built-in library (no target, no flag: what the README
shows a newcomer), old code against new, side by side in one run.

Each repeat runs the command once with each tree, alternately (``python -m gradcheck
verify --seed S --format json``, the tree found through PYTHONPATH), and measures the
wall time and the CPU time (user + system of the command and every process under it,
from ``getrusage(RUSAGE_CHILDREN)``): the CPU time is the figure a loaded machine
disturbs least. Reported: the medians, their ratios (new / old), and whether every
target got the same verdict (and the same examples, errors and shrink steps: the
runs are seeded, so the same searches give the same JSON but for the timings).

The old tree defaults to ``git archive main`` unpacked in a temporary folder::

    PYTHONPATH=. python benchmarks/library_verify_time.py --repeats 3 --seed 0
    PYTHONPATH=. python benchmarks/library_verify_time.py --old /tmp/old --args=--jobs=1

``--base /tmp/base`` runs a third tree in each repeat too (the branch's base: the
ratio before and after a change, in the same run). ``--compile`` first writes the
bytecode of every tree measured (``python -m compileall``, as ``pip install`` does for
an installed package; ``torch_target_time.py``'s option): where the environment sets
``PYTHONDONTWRITEBYTECODE`` (this project's shared machines do), each run otherwise
compiles the tree's modules again, in the command and in the process the workers are
forked from, before the first target starts.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from torch_target_time import _become_subreaper, _reap_descendants

REPO = Path(__file__).resolve().parent.parent


def old_tree(ref: str, into: Path) -> Path:
    """``ref`` of this repository, unpacked into ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def timed(tree: Path, args: list[str], cwd: Path) -> tuple[float, float, dict[str, Any]]:
    """Wall seconds, CPU seconds and the JSON document of one run with ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "gradcheck", "verify", *args, "--format", "json"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    _reap_descendants()  # (a worker the command let go: its CPU seconds count too)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{tree}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    return wall, cpu, json.loads(proc.stdout)


def verdicts(document: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    """Per target: what the search decided and saw (not how long it took)."""
    return {
        t["target"]: (
            t["verdict"],
            t["examples"],
            t["rejected"],
            t["error_ratio"],
            t["shrink_steps"],
        )
        for t in document["targets"]
    }


def main() -> None:
    # The processes a command leaves behind become ours and are waited for
    # (torch_target_time's helpers): without it a worker reaped by a thread of the
    # command after its exit went uncounted (new runs of 0.9-1.1 s of CPU for ~18 s).
    _become_subreaper()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--old", type=Path, help="the old tree [default: git archive main]")
    parser.add_argument("--ref", default="main", help="what --old defaults to")
    parser.add_argument("--args", default="", help="more arguments for both, one string")
    parser.add_argument("--new-args", default="", help="more arguments for the new tree only")
    parser.add_argument("--base", type=Path, help="a third tree, run alike")
    parser.add_argument(
        "--compile", action="store_true", help="write each tree's bytecode first (as an install)"
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old = options.old or old_tree(options.ref, Path(tmp) / "old")
        cwd = Path(tmp) / "cwd"
        cwd.mkdir()
        common = ["--seed", str(options.seed), *options.args.split()]
        trees = [("old", old, []), ("new", REPO, options.new_args.split())]
        if options.base is not None:
            trees.append(("base", options.base, []))
        for _, tree, _ in trees if options.compile else []:
            package = str(Path(tree).resolve() / "gradcheck")
            subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=True)
        runs: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in trees}
        seen: dict[str, dict[str, tuple[Any, ...]]] = {}
        for repeat in range(options.repeats):
            for label, tree, extra in trees:
                wall, cpu, document = timed(tree, [*common, *extra], cwd)
                runs[label].append((wall, cpu))
                found = verdicts(document)
                if seen.setdefault(label, found) != found:
                    print(f"  ({label}: repeat {repeat + 1} differs from its first run)")
                print(
                    f"  {label} run {repeat + 1}: wall {wall:6.1f} s, CPU {cpu:6.1f} s", flush=True
                )
        rows = {k: [statistics.median(x[i] for x in v) for i in (0, 1)] for k, v in runs.items()}
        print(f"{'':6s} {'wall s':>8s} {'CPU s':>8s}   (medians of {options.repeats})")
        for label, (wall, cpu) in rows.items():
            print(f"{label:6s} {wall:8.1f} {cpu:8.1f}")
        for label in [x for x in ("new", "base") if x in rows]:
            print(
                f"{label}/old: wall x{rows[label][0] / rows['old'][0]:.3f}, "
                f"CPU x{rows[label][1] / rows['old'][1]:.3f}"
            )
        if "base" in rows:
            print(
                f"new/base: wall x{rows['new'][0] / rows['base'][0]:.3f}, "
                f"CPU x{rows['new'][1] / rows['base'][1]:.3f}; same verdicts, examples, "
                f"errors and shrink steps as base: "
                f"{sum(seen['new'].get(t) == v for t, v in seen['base'].items())} of "
                f"{len(seen['base'])} targets"
            )
        old_v, new_v = seen["old"], seen["new"]
        same = [t for t in old_v if new_v.get(t) == old_v[t]]
        print(
            f"same verdict, examples, errors and shrink steps: {len(same)} of {len(old_v)} targets"
        )
        for t in sorted(set(old_v) | set(new_v)):
            if old_v.get(t) != new_v.get(t):
                print(f"  differs: {t}: old {old_v.get(t)} new {new_v.get(t)}")


if __name__ == "__main__":
    main()
