"""Engine overhead: time per op (forward + backward) against hand-written NumPy.

Question: how much does recording the graph and backpropagating cost on top of the
NumPy arithmetic itself? Workload: a chain of 200 small elementwise ops (multiply by a
constant, add a constant, sin, tanh; repeated 50 times) on a 16-element float64 array,
forward then backward. The reference is the same math written by hand in NumPy (forward
keeping what the backward needs, then the backward), measured in the same run. MyGrad
and PyTorch (CPU) are measured too when installed, and skipped otherwise.

Run: python benchmarks/engine_overhead.py [--repeats 30]
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gradcheck as gc

N_BLOCKS = 50  # 4 ops per block
N_OPS = 4 * N_BLOCKS
SCALE, SHIFT = 1.01, 0.5


def numpy_chain(x0: np.ndarray) -> np.ndarray:
    saved = []
    y = x0
    for _ in range(N_BLOCKS):
        y = y * SCALE
        y = y + SHIFT
        saved.append(y)
        y = np.sin(y)
        y = np.tanh(y)
        saved.append(y)
    grad = np.ones_like(y)
    for _ in range(N_BLOCKS):
        t = saved.pop()
        grad = grad * (1 - t * t)  # tanh'
        s = saved.pop()
        grad = grad * np.cos(s)  # sin'
        grad = grad * SCALE  # (the add passes the gradient through)
    return grad


def engine_chain(lib) -> Callable[[np.ndarray], np.ndarray]:
    def run(x0: np.ndarray) -> np.ndarray:
        x = lib.Tensor(x0)
        y = x
        for _ in range(N_BLOCKS):
            y = lib.tanh(lib.sin(y * SCALE + SHIFT))
        y.backward()
        return x.grad

    return run


def torch_chain(torch) -> Callable[[np.ndarray], np.ndarray]:
    def run(x0: np.ndarray) -> np.ndarray:
        x = torch.tensor(x0, requires_grad=True)
        y = x
        for _ in range(N_BLOCKS):
            y = torch.tanh(torch.sin(y * SCALE + SHIFT))
        y.backward(torch.ones_like(y))
        return x.grad.numpy()

    return run


def median_seconds(func: Callable[[np.ndarray], np.ndarray], x0: np.ndarray, repeats: int) -> float:
    func(x0)  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(10):
            func(x0)
        times.append((time.perf_counter() - start) / 10)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()

    x0 = np.random.default_rng(0).standard_normal(16)
    expected = numpy_chain(x0)
    candidates: list[tuple[str, Callable[[np.ndarray], np.ndarray]]] = [
        ("numpy (hand-written)", numpy_chain),
        (f"gradcheck {gc.__version__}", engine_chain(gc)),
    ]
    for name in ("mygrad", "torch"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            print(f"{name}: not installed, skipped")
            continue
        run = torch_chain(module) if name == "torch" else engine_chain(module)
        candidates.append((f"{name} {module.__version__}", run))

    rows = []
    reference = None
    for name, func in candidates:
        np.testing.assert_allclose(func(x0), expected, rtol=1e-10)  # same math
        seconds = median_seconds(func, x0, args.repeats)
        reference = reference or seconds
        rows.append((name, seconds / N_OPS * 1e6, seconds / reference))

    print(f"chain of {N_OPS} elementwise ops on 16 float64 elements, forward + backward")
    print(f"median of {args.repeats} repeats (10 runs each)\n")
    print(f"{'engine':<24} {'us per op':>10} {'ratio to numpy':>15}")
    for name, per_op, ratio in rows:
        print(f"{name:<24} {per_op:>10.2f} {ratio:>14.2f}x")


if __name__ == "__main__":
    main()
