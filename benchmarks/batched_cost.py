"""What ``batched`` costs a check: one example of a torch Function with a vmap rule,
checked with and without the batched run, side by side in one process (run it on an
idle machine; the ratio is what to read).

    python benchmarks/batched_cost.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gradcheck
from tests.support import torch_batched_ops as ops

ROUNDS = 15


def main() -> None:
    x = np.random.default_rng(0).standard_normal((4, 5))
    for op in (ops.SumSquaresFixed, ops.CumsumAllFixed):
        gradcheck.check(op, x)  # warm: imports, torch's first calls
        times: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(ROUNDS):
            for batched in (False, True):
                start = time.perf_counter()
                gradcheck.check(op, x, batched=batched)
                times[batched].append(time.perf_counter() - start)
        off, on = statistics.median(times[False]), statistics.median(times[True])
        print(
            f"{op.__name__}: one check {off * 1e3:.1f} ms, with batched {on * 1e3:.1f} ms "
            f"(x{on / off:.2f}, median of {ROUNDS})"
        )


if __name__ == "__main__":
    main()
