"""The cost of a passing search, against the search of another checkout (issue 18's
bar: within 1.5x of the search before it reached large inputs and magnitudes, for the
same ``max_examples``).

For each of a few built-in targets and seeds, ``gradcheck verify TARGET --max-examples N
--seed S --format json`` runs once with this checkout on ``PYTHONPATH`` and once with
the reference checkout, alternately (the machines are shared: each pair runs back to
back), and the search's own seconds (``"seconds"`` of the JSON, start-up excluded) are
compared. Reported: per target, the median of the ratios over the seeds and repeats,
and the ratio of the summed times.

    git worktree add /tmp/gc-ref <commit before the change>
    PYTHONPATH=. python benchmarks/search_cost.py --reference /tmp/gc-ref
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGETS = ["multiply", "exp", "tanh", "matmul", "sum", "maximum", "sort", "logsumexp"]


def seconds(checkout: Path, target: str, examples: int, seed: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    cmd = [
        sys.executable,
        "-m",
        "gradcheck",
        "verify",
        f"gradcheck.builtin_targets:{target}",
        "--max-examples",
        str(examples),
        "--seed",
        str(seed),
        "--format",
        "json",
    ]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd="/", check=False)
    if out.returncode not in (0, 1):
        raise SystemExit(f"{checkout}: {target} exited {out.returncode}: {out.stderr[-400:]}")
    return sum(t["seconds"] for t in json.loads(out.stdout)["targets"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True, help="the other checkout")
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--targets", nargs="+", default=TARGETS)
    args = parser.parse_args()
    total_new = total_ref = 0.0
    print("| target | reference s | this s | median ratio |\n|---|---|---|---|")
    for target in args.targets:
        ratios, new_sum, ref_sum = [], 0.0, 0.0
        for seed in args.seeds:
            ref = seconds(args.reference, target, args.examples, seed)
            new = seconds(REPO, target, args.examples, seed)
            ratios.append(new / ref)
            new_sum, ref_sum = new_sum + new, ref_sum + ref
        total_new, total_ref = total_new + new_sum, total_ref + ref_sum
        print(f"| {target} | {ref_sum:.2f} | {new_sum:.2f} | {statistics.median(ratios):.2f}x |")
    print(f"\nall targets: {total_ref:.2f} s -> {total_new:.2f} s ({total_new / total_ref:.2f}x)")


if __name__ == "__main__":
    main()
