"""Issue 40's 40x50 figure, old checkout against new, side by side in one run.

``gradcheck.verify`` of x·tanh(x) (``examples/xtanh.py:XTanh``) at shape 40×50, 100
examples, seeds 0 to ``--seeds - 1``, against one slow-mode (full Jacobian)
``torch.autograd.gradcheck`` of the same function on one 40×50 input, each measured in
the same process right after the other: a fresh process per checkout and round, the two
checkouts alternating (``PYTHONPATH`` names each), ``--rounds`` rounds. Reported per
checkout: the medians of the verify's own seconds (its ``seconds``), of its CPU time
(``time.process_time``), of how much of that the checks took (``_check`` of the search,
timed around each call), and the ratio of each to the torch check measured beside it
(CPU over CPU: on a loaded machine the wall time is mostly the wait for a core). Then
new over old. BLAS and torch run single-threaded.

    PYTHONPATH=. python benchmarks/xtanh_search_cost.py --old /tmp/old [--rounds 3]

``--base /tmp/base`` measures a third checkout in the same rounds (the branch's base:
before and after a change, side by side with the old tree and torch).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: What each fresh process runs (the checkout it imports is the one on PYTHONPATH).
ROUND = r"""
import json, sys, time
import numpy as np
import torch
torch.set_num_threads(1)
sys.path.insert(0, sys.argv[1])
import xtanh
from gradcheck import verify
try:  # where the search's example checks are (the module split of issue 39)
    import gradcheck.search.example_check as searching
except ImportError:
    import gradcheck.search.verifier as searching

spent = [0.0]
checked = searching._check
def timed(*args, **kwargs):
    start = time.process_time()
    try:
        return checked(*args, **kwargs)
    finally:
        spent[0] += time.process_time() - start
searching._check = timed

x = torch.tensor(np.random.default_rng(0).uniform(-3, 3, (40, 50)), requires_grad=True)
def torch_check():
    cpu = time.process_time()
    assert torch.autograd.gradcheck(lambda t: t * torch.tanh(t), (x,))
    return time.process_time() - cpu

verify(xtanh.XTanh, shapes=["40,50"], max_examples=100, seed=1000)  # imports, warm caches
torch_check()
rows = []
for seed in range(int(sys.argv[2])):
    spent[0] = 0.0
    cpu = time.process_time()
    result = verify(xtanh.XTanh, shapes=["40,50"], max_examples=100, seed=seed)
    cpu = time.process_time() - cpu
    assert result.verdict == "passed", result.verdict
    rows.append({"seconds": result.seconds, "cpu": cpu, "checks": spent[0],
                 "torch": torch_check()})
print(json.dumps(rows))
"""


def one_round(tree: Path, seeds: int) -> list[dict[str, float]]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", ROUND, str(REPO / "examples"), str(seeds)],
        env=env,
        cwd=tree,  # (python -c puts the working directory first on sys.path)
        capture_output=True,
        text=True,
        check=True,
    )
    rows: list[dict[str, float]] = json.loads(proc.stdout.splitlines()[-1])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", type=Path, required=True, help="the old checkout")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=5, help="verify seeds per round")
    parser.add_argument("--base", type=Path, help="a third checkout, measured alike")
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    trees = {"old": args.old.resolve(), "new": REPO}
    if args.base is not None:
        trees["base"] = args.base.resolve()
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for r in range(args.rounds):
        for name in list(trees) if r % 2 == 0 else list(trees)[::-1]:
            rows[name] += one_round(trees[name], args.seeds)
    med: dict[str, dict[str, float]] = {}
    for name, got in rows.items():
        med[name] = {k: statistics.median(row[k] for row in got) for k in got[0]}
        med[name]["ratio"] = statistics.median(row["cpu"] / row["torch"] for row in got)
        m = med[name]
        print(
            f"{name}: verify {m['seconds']:.3f} s (its seconds), CPU {m['cpu']:.3f} s, of it "
            f"checks {m['checks']:.3f} s; torch slow-mode check CPU {m['torch']:.3f} s; "
            f"verify / torch (CPU) {m['ratio']:.2f}x  [{len(got)} verifies]"
        )
    for name in [n for n in ("new", "base") if n in med]:
        new, old = med[name], med["old"]
        print(
            f"{name} / old: verify CPU x{new['cpu'] / old['cpu']:.3f}, seconds "
            f"x{new['seconds'] / old['seconds']:.3f}, outside the checks "
            f"x{(new['cpu'] - new['checks']) / (old['cpu'] - old['checks']):.3f}"
        )
    if "base" in med:
        new, base = med["new"], med["base"]
        print(
            f"new / base: verify CPU x{new['cpu'] / base['cpu']:.3f}, checks "
            f"x{new['checks'] / base['checks']:.3f}, outside the checks "
            f"x{(new['cpu'] - new['checks']) / (base['cpu'] - base['checks']):.3f}"
        )
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"finished {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
