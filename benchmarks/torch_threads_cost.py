"""torch's intra-op threads on a loaded machine (issue 40): what one thread saves a
search of small inputs, side by side.

1. **Per call**: ``x.unfold(-1, 3, 1).max(-1)`` on a 2x6 float64 tensor (the forward of
   ``benchmarks/bug_corpus2/torch_functions.py:FixMaxPoolOverlap``, a kernel that hands
   even a dozen elements to torch's thread pool), the median and 90th percentile of
   300 calls, with 2 threads (torch's default on 2 cores) and with 1, each in a fresh
   process, alternating.
2. **A search**: ``verify(FixMaxPoolOverlap, max_examples=100, seed=0)`` in one process
   with ``torch.set_num_threads(2)`` and ``(1)``, alternating; wall and CPU seconds.
   gradcheck's workers now start torch on one thread (unless ``OMP_NUM_THREADS`` or the
   target's module chose): this is the search before and after, without the command's
   processes around it.

Run from the repository root, without ``OMP_NUM_THREADS`` in the environment::

    env -u OMP_NUM_THREADS PYTHONPATH=. python benchmarks/torch_threads_cost.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET = "benchmarks/bug_corpus2/torch_functions.py:FixMaxPoolOverlap"

PER_CALL = """
import sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
x = torch.randn(2, 6, dtype=torch.float64)
for _ in range(20):
    x.unfold(-1, 3, 1).max(-1)
ts = []
for _ in range(300):
    s = time.perf_counter()
    x.unfold(-1, 3, 1).max(-1)
    ts.append(time.perf_counter() - s)
ts.sort()
print(f"{ts[150] * 1e6:.1f} {ts[270] * 1e6:.1f} {sum(ts):.3f}")
"""

SEARCH = """
import os, sys, time, warnings
import torch
torch.set_num_threads(int(sys.argv[1]))
from gradcheck.frontend.loading import load_targets
from gradcheck.search.verifier import verify
warnings.simplefilter("ignore")
target = load_targets(sys.argv[2])[0]
wall, cpu = time.perf_counter(), time.process_time()
result = verify(target, max_examples=100, seed=0)
print(f"{time.perf_counter() - wall:.2f} {time.process_time() - cpu:.2f} {result.verdict}")
"""


def _run(code: str, *args: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env.setdefault("PYTHONPATH", str(REPO))
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="alternating pairs of each")
    parser.add_argument("--no-search", action="store_true", help="the per-call part only")
    args = parser.parse_args()
    print(f"load at start: {os.getloadavg()[0]:.1f}")
    for r in range(args.rounds):
        for threads in ("2", "1"):
            median, p90, total = _run(PER_CALL, threads)
            print(
                f"per call, {threads} thread(s), round {r + 1}: median {median} us, "
                f"90th percentile {p90} us, 300 calls {total} s"
            )
    if args.no_search:
        return
    for r in range(args.rounds):
        for threads in ("2", "1"):
            load = os.getloadavg()[0]
            start = time.perf_counter()
            wall, cpu, verdict = _run(SEARCH, threads, TARGET)
            print(
                f"verify FixMaxPoolOverlap (100 examples, seed 0), {threads} thread(s), "
                f"round {r + 1}, load {load:.1f}: wall {wall} s, CPU {cpu} s, {verdict} "
                f"(process {time.perf_counter() - start:.1f} s)"
            )
    print(f"load at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
