"""Per-op engine overhead: forward (and forward + backward) of small elementwise ops.

Run from the repository root: ``PYTHONPATH=. python benchmarks/op_overhead.py``.
Prints the best of several timeit repeats (process CPU time), in microseconds per call; compare two
checkouts by running it in each.
"""

from __future__ import annotations

import time
import timeit

import numpy as np

import gradcheck as mg


def main() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(16)
    x, y = mg.Tensor(a), mg.Tensor(rng.standard_normal(16))
    cases = {
        "x * y (forward)": lambda: x * y,
        "x + 1.0 (forward)": lambda: x + 1.0,
        "mg.sin(x) (forward)": lambda: mg.sin(x),
        "mg.exp(x) (forward)": lambda: mg.exp(x),
        "ndarray + x (forward)": lambda: a + x,
        "mg.sum(x) (forward)": lambda: mg.sum(x),
        "(x * y).sum() forward + backward": lambda: (x * y).sum().backward(),
    }
    number = 5_000
    for name, fn in cases.items():
        # CPU time of this process: less disturbed by other work on a shared machine.
        timer = timeit.Timer(fn, timer=time.process_time)
        best = min(timer.repeat(number=number, repeat=25)) / number
        print(f"{name:36s} {best * 1e6:7.2f} us")


if __name__ == "__main__":
    main()
