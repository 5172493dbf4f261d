"""Backward through ``stack`` and ``concatenate`` of many inputs: linear in their number?

Question: does backprop through a join of n inputs take time proportional to n? Each
workload joins n small tensors, sums the result and backpropagates, for n and 4n
inputs; the ratio of the two times is ~4 for linear work and ~16 for quadratic
(before issue 22 item 9: stack of 80,000 scalars took 13 s, concatenate of 20,000
one-element tensors 158 s). The reference is the same run's hand-written NumPy of the
same math (join, then one slice of the gradient per input), so that the per-input cost
is also shown against NumPy's own.

Run: PYTHONPATH=. python benchmarks/joining_backward.py [--n 20000] [--repeats 5]
Times are process CPU time, the best of the repeats (the machine is shared).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's gradcheck

import gradcheck as mg


def _engine(join: Callable[..., Any], shape: tuple[int, ...], **kwargs: Any) -> Callable:
    def run(n: int) -> float:
        xs = [mg.Tensor(np.ones(shape)) for _ in range(n)]
        total = join(xs, **kwargs).sum()
        start = time.process_time()
        total.backward()
        return time.process_time() - start

    return run


def _numpy(stacked: bool, shape: tuple[int, ...]) -> Callable:
    def run(n: int) -> float:
        arrays = [np.ones(shape) for _ in range(n)]
        start = time.process_time()
        out = np.stack(arrays) if stacked else np.concatenate(arrays)
        grad = np.broadcast_to(1.0, out.shape)
        step = shape[0] if shape else 1
        if stacked:
            parts = [grad[i] for i in range(n)]
        else:
            parts = [grad[i * step : (i + 1) * step] for i in range(n)]
        del parts
        return time.process_time() - start

    return run


WORKLOADS: list[tuple[str, Callable[[int], float]]] = [
    ("stack of scalars", _engine(mg.stack, ())),
    ("  numpy reference", _numpy(True, ())),
    ("concatenate of (1,)", _engine(mg.concatenate, (1,))),
    ("  numpy reference", _numpy(False, (1,))),
    ("concatenate, axis=None", _engine(mg.concatenate, (1,), axis=None)),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="inputs of the smaller join")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n = args.n
    header = ("workload", "n", "ms", "4n", "ms", "4n/n", "us/input")
    print("{:26s} {:>8s} {:>9s} {:>8s} {:>9s} {:>6s} {:>9s}".format(*header))
    for name, run in WORKLOADS:
        small = min(run(n) for _ in range(args.repeats))
        large = min(run(4 * n) for _ in range(args.repeats))
        print(
            f"{name:26s} {n:8d} {small * 1e3:9.2f} {4 * n:8d} {large * 1e3:9.2f} "
            f"{large / small:5.1f}x {large / (4 * n) * 1e6:9.2f}"
        )


if __name__ == "__main__":
    main()
