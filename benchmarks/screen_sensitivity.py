"""How sensitive verify's screen of a large example is: the one direction of issue 40
(``gradcheck.search.example_check.projected_pass``) beside the groups' screen of issue 25.

1. ``--inputs`` random 40x50 inputs (uniform in +-3; a quarter with 30% zeros, a
   quarter normal with sigma 20), each checked with the check seed of its number by
   x·tanh(x) and by its twin wrong by a relative 1e-6 at one element
   (``examples/xtanh.py``): for the twin, how many the groups' screen fails (mode fast,
   ``group_size`` 128), how many the one direction does not pass tightly, and how many
   the groups fail where the one direction passes (what it would let through); for
   the correct op, the largest tight ratio (error ratio times sqrt(n), against
   ``PROJECTION_TIGHTNESS``) and how many it does not pass (each costs a groups' screen).
2. ``verify`` of the twin at 40x50, 100 examples, seeds 0 to ``--seeds - 1``, in this
   tree and in ``--old`` (a fresh process each, ``PYTHONPATH``): caught or not, and at
   which example.

    PYTHONPATH=. python benchmarks/screen_sensitivity.py --old /tmp/old [--inputs 200]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "examples"))

VERIFY = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import xtanh
from gradcheck import verify
rows = []
for seed in range(int(sys.argv[2])):
    r = verify(xtanh.XTanhOneOff, shapes=["40,50"], max_examples=100, seed=seed)
    rows.append([r.verdict, r.found])
print(json.dumps(rows))
"""


def inputs(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    out = []
    for k in range(n):
        x = rng.uniform(-3, 3, (40, 50))
        if k % 4 == 1:
            x[rng.random((40, 50)) < 0.3] = 0.0
        if k % 4 == 2:
            x = rng.normal(0, 20, (40, 50))
        out.append(x)
    return out


def screens(n: int) -> None:
    import xtanh

    from gradcheck import check
    from gradcheck.search.example_check import PROJECTION_TIGHTNESS, projected_pass

    groups_fail = not_tight = let_through = 0
    good_ratios, good_not_tight = [], 0
    for k, x in enumerate(inputs(n)):
        g = check(xtanh.XTanhOneOff, x, mode="fast", group_size=128, seed=k)
        p = check(xtanh.XTanhOneOff, x, mode="fast", directions=1, seed=k)
        groups_fail += g.verdict != "passed"
        not_tight += not projected_pass(p)
        let_through += g.verdict != "passed" and projected_pass(p)
        ok = check(xtanh.XTanh, x, mode="fast", directions=1, seed=k)
        good_ratios.append(max(e.error_ratio * math.sqrt(e.size) for e in ok.per_input))
        good_not_tight += not projected_pass(ok)
    print(f"1. {n} inputs of 40x50, the twin wrong by 1e-6 at one element:")
    print(f"   groups' screen fails {groups_fail}; one direction not a tight pass {not_tight}")
    print(f"   groups fail where one direction passes: {let_through}")
    print(
        f"   correct op: one direction not a tight pass {good_not_tight} of {n}; tight ratio "
        f"median {np.median(good_ratios):.3f}, largest {max(good_ratios):.3f} "
        f"(passes up to {PROJECTION_TIGHTNESS})"
    )


def verifies(tree: Path, seeds: int) -> list[list[object]]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(
        [sys.executable, "-c", VERIFY, str(REPO / "examples"), str(seeds)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    rows: list[list[object]] = json.loads(proc.stdout.splitlines()[-1])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="the old checkout")
    parser.add_argument("--inputs", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    screens(args.inputs)
    print(f"2. verify of the twin at 40x50, 100 examples, seeds 0-{args.seeds - 1}:")
    for name, tree in (("old", args.old.resolve()), ("new", REPO)):
        rows = verifies(tree, args.seeds)
        caught = sum(r[0] == "failed" for r in rows)
        print(f"   {name}: caught {caught} of {len(rows)}; found at {[r[1] for r in rows]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
