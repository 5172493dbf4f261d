"""The built-in library split into 4 shards (``verify --shard K/4``) balanced by
recorded durations, and merged (``gradcheck merge``): how close the largest shard is
to the ideal, and whether the merge is the unsharded run.

1. An unsharded run (``--seed 0``) records each target's seconds (its JSON report).
2. The 4 shards of the same run, balanced by those durations, one after the other;
   each shard's work is the sum of its targets' seconds (and its wall time, the
   command's start included); the ideal is the sum over all shards / 4.
3. ``gradcheck merge`` of the shards: its targets, verdicts, examples and seeds
   against the unsharded run's, and its exit status against the unsharded run's.
4. The same for a deep run (``--seeds S``), its seeds split over the shards by the
   same durations (each target's divided among its seeds).
5. The merge without shard 2: refused (exit 2, one line).
6. A regression in one shard (``--regression``): the merged baseline of step 2 with
   one target's error ratio lowered to the floor (0.05) in it, so that its ratio now
   (near 1) is a regression; the 4 shards compared with it, merged: exit 1, that
   target alone regressed.

The shards run one after the other, or with ``--together`` at once (as a CI matrix
runs them; here they share one machine, and so its load, which one after the other
they do not).

Every run checks one target at a time (``--jobs 1``), so that a target's seconds are
not another's wait.

    python benchmarks/library_shards.py [--seeds 3] [--out /tmp/library_shards]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def gradcheck(out: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GRADCHECK_"))}
    env["PYTHONPATH"] = str(REPO)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "gradcheck", *args], cwd=out, env=env, capture_output=True, text=True
    )
    return done, time.perf_counter() - start


def key(document: dict) -> list[tuple]:
    return [(t["target"], t["verdict"], t["examples"], t["seed"]) for t in document["targets"]]


def sharded(
    out: Path, name: str, extra: list[str], whole: dict, whole_rc: int, together: bool
) -> None:
    files = []
    commands = []
    for k in range(1, 5):
        commands.append(
            [
                "verify",
                "--seed",
                "0",
                "--jobs",
                "1",
                "--shard",
                f"{k}/4",
                "--durations",
                "recorded.json",
                "--format",
                "json",
                "--save-baseline",
                f"{name}-baseline-{k}.json",
                "--junit-xml",
                f"{name}-junit-{k}.xml",
                *extra,
            ]
        )
        files += [f"{name}-report-{k}.json", f"{name}-baseline-{k}.json", f"{name}-junit-{k}.xml"]
    if together:  # as a CI matrix runs them: at once (here on one machine, its load shared)
        with ThreadPoolExecutor(4) as pool:
            runs = list(pool.map(lambda args: gradcheck(out, *args), commands))
    else:
        runs = [gradcheck(out, *args) for args in commands]
    work, walls = [], []
    for k, (done, wall) in enumerate(runs, 1):
        assert done.returncode in (0, 1), done.stderr
        (out / f"{name}-report-{k}.json").write_text(done.stdout)
        document = json.loads(done.stdout)
        work.append(sum(t["seconds"] for t in document["targets"]))
        walls.append(wall)
    ideal = sum(work) / 4
    print(
        f"{name}: shards' target seconds {', '.join(f'{w:.1f}' for w in work)}; ideal "
        f"{ideal:.1f}; largest {max(work) / ideal:.3f}x the ideal"
    )
    print(
        f"{name}: shards' wall s {', '.join(f'{w:.1f}' for w in walls)}; largest "
        f"{max(walls) / (sum(walls) / 4):.3f}x their mean"
    )
    merged, _ = gradcheck(out, "merge", *files, "--format", "json")
    document = json.loads(merged.stdout)
    same = key(document) == key(whole)
    print(
        f"{name}: merged == unsharded (target, verdict, examples, seed): {same} "
        f"({len(document['targets'])} targets); exit {merged.returncode} vs unsharded {whole_rc}"
    )
    missing, _ = gradcheck(out, "merge", *[f for f in files if "-2." not in f])
    print(f"{name}: without shard 2: exit {missing.returncode}: {missing.stderr.strip()}")


def regression(out: Path, together: bool) -> None:
    files = [f"seed0-baseline-{k}.json" for k in range(1, 5)]
    done, _ = gradcheck(out, "merge", *files, "--save-baseline", "merged-baseline.json")
    assert done.returncode == 0, done.stderr
    baseline = json.loads((out / "merged-baseline.json").read_text())
    ratios = {
        name: entry["error_ratio"]
        for name, entry in baseline["targets"].items()
        if isinstance(entry["error_ratio"], float)
    }
    worst = max(ratios, key=ratios.__getitem__)
    baseline["targets"][worst]["error_ratio"] = 0.05
    (out / "lowered.json").write_text(json.dumps(baseline))
    common = ["verify", "--jobs", "1", "--baseline", "lowered.json", "--format", "json"]
    commands = [[*common, "--shard", f"{k}/4"] for k in range(1, 5)]
    if together:
        with ThreadPoolExecutor(4) as pool:
            runs = list(pool.map(lambda args: gradcheck(out, *args), commands))
    else:
        runs = [gradcheck(out, *args) for args in commands]
    codes = []
    for k, (done, _) in enumerate(runs, 1):
        (out / f"regression-report-{k}.json").write_text(done.stdout)
        codes.append(done.returncode)
    reports = [f"regression-report-{k}.json" for k in range(1, 5)]
    merged, _ = gradcheck(out, "merge", *reports, "--format", "json")
    found = [r["target"] for r in json.loads(merged.stdout)["baseline"]["regressions"]]
    print(
        f"regression: {worst}'s baseline ratio {ratios[worst]:.3g} lowered to 0.05; shards "
        f"exit {codes}; merged exit {merged.returncode}, regressions {found}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("/tmp/library_shards"))
    parser.add_argument(
        "--together", action="store_true", help="run the 4 shards at once, not in turn"
    )
    parser.add_argument("--regression", action="store_true", help="also step 6")
    args = parser.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    recorded, wall = gradcheck(out, "verify", "--seed", "0", "--jobs", "1", "--format", "json")
    (out / "recorded.json").write_text(recorded.stdout)
    whole = json.loads(recorded.stdout)
    print(
        f"unsharded --seed 0: {len(whole['targets'])} targets, exit {recorded.returncode}, "
        f"{sum(t['seconds'] for t in whole['targets']):.1f} s of targets, wall {wall:.1f} s"
    )
    sharded(out, "seed0", [], whole, recorded.returncode, args.together)
    if args.regression:
        regression(out, args.together)
    deep, wall = gradcheck(
        out, "verify", "--seed", "0", "--jobs", "1", "--seeds", str(args.seeds), "--format", "json"
    )
    whole_deep = json.loads(deep.stdout)
    print(
        f"unsharded --seeds {args.seeds}: exit {deep.returncode}, "
        f"{sum(t['seconds'] for t in whole_deep['targets']):.1f} s of targets, wall {wall:.1f} s"
    )
    extra = ["--seeds", str(args.seeds)]
    sharded(out, f"seeds{args.seeds}", extra, whole_deep, deep.returncode, args.together)


if __name__ == "__main__":
    main()
