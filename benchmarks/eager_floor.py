"""What an eager engine cannot avoid on the big and MLP workloads of engine_overhead.py.

Question: of the engine's time on ``sum(sin(x) * y + exp(-(x * x)))`` beyond the
hand-written NumPy reference, how much is the engine's own work, and how much is
arithmetic that the reference skips because its author sees the whole expression?
The reference knows the seed gradient is 1 (so ``d/dy = sin(x)`` costs nothing and
``cos(x) * y`` needs no product with it) and folds ``-(x * x)``'s two constants into one
product, ``-2 * x``. An engine runs one op at a time: each op's rule multiplies the
gradient it receives, and every intermediate tensor gets a gradient of its own.

Three implementations, timed round-robin in one process with glibc told to keep
freed memory (no page faults from memory handed back between calls):
  hand-written  the reference of engine_overhead.py
  op-wise       NumPy, the backward one op at a time in the engine's order, with the
                rule each op applies (no algebra across ops, upstream gradient
                multiplied in), every intermediate kept as the graph keeps it, and
                a gradient that nothing holds any more overwritten by the next op's
                rule, as the engine does
  gradcheck     the engine
The MLP step is compared the same way: its reference has no algebra to fold, but it
lets x @ W + b and the pre-ReLU values die as temporaries, where an engine's graph
keeps each as a tensor until the backward is done (MyGrad's API: any of them may be
read, with its gradient, afterwards).
Run: python benchmarks/eager_floor.py [--repeats 31] [--only big,mlp]
"""

from __future__ import annotations

import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # as in engine_overhead.py (before NumPy loads BLAS)
_KEEP = {"MALLOC_TRIM_THRESHOLD_": str(1 << 32), "MALLOC_MMAP_THRESHOLD_": str(1 << 25)}
if any(os.environ.get(k) != v for k, v in _KEEP.items()):  # glibc reads these at start
    os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **_KEEP})

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import engine_overhead as eo  # (it also puts this checkout first on sys.path)

import gradcheck


def opwise(inp: eo.Inputs) -> list[np.ndarray]:
    """Forward keeping every intermediate, then each op's backward rule in turn."""
    x, y = inp["x"], inp["y"]
    s = np.sin(x)
    p = s * y
    q = x * x
    r = -q
    e = np.exp(r)
    t = p + e
    _ = t.sum()
    g_t = np.broadcast_to(np.ones(()), t.shape)  # sum: the seed, broadcast
    g_p = g_e = g_t  # add: handed on
    g_r = g_e * e  # exp (a new array: the seed is a broadcast view)
    g_q = np.negative(g_r, out=g_r)  # negative, into the spent gradient
    g_x = np.multiply(g_q, x, out=g_q)
    g_x *= 2  # x * x, one product doubled, likewise in place
    g_s = g_p * y  # multiply
    g_y = g_p * s
    g_x_sin = np.cos(x)
    g_x_sin *= g_s  # sin
    g_x += g_x_sin  # x's two uses summed
    return [g_x, g_y]


def mlp_opwise(inp: eo.Inputs) -> list[np.ndarray]:
    """The reference's arithmetic, but every intermediate kept until the backward is
    done, as an engine keeps the tensors of its graph (x @ W + b and the pre-ReLU
    values are separate arrays that live on)."""
    x = inp["x"]
    a1 = x @ inp["W1"]
    z1 = a1 + inp["b1"]
    h1 = np.maximum(z1, 0)
    a2 = h1 @ inp["W2"]
    z2 = a2 + inp["b2"]
    h2 = np.maximum(z2, 0)
    a3 = h2 @ inp["W3"]
    out = a3 + inp["b3"]
    g_out = eo.softmax_crossentropy_numpy(out, inp["labels"])
    gW3, gb3 = h2.T @ g_out, g_out.sum(0)
    g_h2 = g_out @ inp["W3"].T
    g_z2 = g_h2 * (z2 > 0)
    gW2, gb2 = h1.T @ g_z2, g_z2.sum(0)
    g_h1 = g_z2 @ inp["W2"].T
    g_z1 = g_h1 * (z1 > 0)
    gW1, gb1 = x.T @ g_z1, g_z1.sum(0)
    _kept = (a1, a2, a3, g_h2, g_h1)  # alive until here, as in the engine's graph
    return [gW1, gb1, gW2, gb2, gW3, gb3]


CASES = {
    "big": (
        "sum(sin(x) * y + exp(-(x * x))), 1e6 elements",
        eo.big_inputs,
        eo.big_numpy,
        opwise,
        eo.big_lib,
    ),
    "mlp": (
        "MLP step, batch 64, 256-256-256-10",
        eo.mlp_inputs,
        eo.mlp_numpy,
        mlp_opwise,
        eo.mlp_lib,
    ),
}


def compare(case: str, repeats: int) -> None:
    title, make_inputs, folded_impl, opwise_impl, lib_impl = CASES[case]
    inp = make_inputs(np.random.default_rng(0))
    expected = folded_impl(inp)
    impls = {
        "hand-written": lambda: folded_impl(inp),
        "op-wise NumPy": lambda: opwise_impl(inp),
        f"gradcheck {gradcheck.__version__}": lambda: lib_impl(gradcheck, inp),
    }
    for f in impls.values():
        for got, want in zip(f(), expected):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    number = max(1, round(0.025 / min(_seconds(impls["hand-written"]) for _ in range(5))))
    times: dict[str, list[float]] = {name: [] for name in impls}
    for _ in range(repeats):
        for name, f in impls.items():
            times[name].append(min(_seconds(f) for _ in range(number)))
    ref = times["hand-written"]
    print(f"{title}; {repeats} samples each (fastest of {number} calls)")
    header = f"{'implementation':<22} {'min ms':>8} {'median ms':>10}"
    print(f"{header} {'min ratio':>10} {'median ratio':>13}")
    for name, t in times.items():
        by_min, by_median = min(t) / min(ref), statistics.median(t) / statistics.median(ref)
        print(
            f"{name:<22} {min(t) * 1e3:>8.3f} {statistics.median(t) * 1e3:>10.3f} "
            f"{by_min:>9.2f}x {by_median:>12.2f}x"
        )
    print()


def _seconds(f) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--only", default="big,mlp")
    args = parser.parse_args()
    print("one process, round-robin; glibc keeps freed memory; ratios to the hand-written")
    print("reference in the same run\n")
    for case in args.only.split(","):
        compare(case, args.repeats)


if __name__ == "__main__":
    main()
