"""What a check costs, against the forward calls it needs.

For each case: the full-mode (and fast-mode) check time and its forward-call count,
and the time of the same number of bare forward calls (``Target.forward`` on the same
arrays, no graph), measured in the same run; medians over repeats. The acceptance bar
(issue 4): tanh(x) * x on a 40×50 float64 input checks in under 0.5 s, within 1.5× of
its bare forward calls. Issue 10: full mode within 1.5x of its bare forward calls, fast
mode under 10 ms on tanh(x @ W), and at least 5x faster than torch.autograd.gradcheck's
slow (full Jacobian) mode there: when torch is installed, both checkers are timed
round-robin on it in the same run (skipped otherwise). See benchmarks/RESULTS.md.

Run from the repository root::

    PYTHONPATH=. python benchmarks/checker_cost.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # single-threaded, as torch below

import statistics
import time

import numpy as np

import gradcheck as mg
from gradcheck.checking.resolve import resolve_target


def tanh_times_x(x: mg.Tensor) -> mg.Tensor:
    return mg.tanh(x) * x


def tanh_matmul(x: mg.Tensor, w: mg.Tensor) -> mg.Tensor:
    return mg.tanh(x @ w)


def bare_forward_seconds(f, arrays: list[np.ndarray], calls: int) -> float:
    """``calls`` forward calls at their cheapest: tensors made once, one no_autodiff
    block, nothing else in the loop (the same path the finite differences use)."""
    forward = resolve_target(f).bind(arrays)
    start = time.perf_counter()
    with mg.no_autodiff:
        for _ in range(calls):
            forward()
    return time.perf_counter() - start


def measure(name: str, f, arrays: list[np.ndarray], mode: str, repeats: int) -> dict:
    check_s, bare_s = [], []
    result = None
    for _ in range(repeats):
        result = mg.check(f, *arrays, mode=mode, seed=0)
        check_s.append(result.seconds)
        bare_s.append(bare_forward_seconds(f, arrays, result.forward_calls))
    assert result is not None and result.verdict == "passed", result
    check_med, bare_med = statistics.median(check_s), statistics.median(bare_s)
    return {
        "case": name,
        "mode": mode,
        "elements": sum(a.size for a in arrays),
        "forward calls": result.forward_calls,
        "check s": check_med,
        "bare forward s": bare_med,
        "ratio": check_med / bare_med,
    }


def against_torch(xm: np.ndarray, w: np.ndarray, repeats: int) -> list[tuple]:
    """tanh(x @ W) checked by torch.autograd.gradcheck (slow = full Jacobian, and fast
    mode) and by ours (full, fast), round-robin, single-threaded; rows of (checker,
    mode, median s, min s). Empty when torch is not installed."""
    try:
        import torch
    except ImportError:
        print("(torch not installed: its gradcheck skipped)")
        return []
    torch.set_num_threads(1)
    inputs = (
        torch.tensor(xm, dtype=torch.float64, requires_grad=True),
        torch.tensor(w, dtype=torch.float64, requires_grad=True),
    )

    def f(x, w):
        return torch.tanh(x @ w)

    runs = {
        ("gradcheck (ours)", "full"): lambda: mg.check(tanh_matmul, xm, w, mode="full", seed=0),
        ("gradcheck (ours)", "fast"): lambda: mg.check(tanh_matmul, xm, w, mode="fast", seed=0),
        (f"torch {torch.__version__}", "slow"): lambda: torch.autograd.gradcheck(f, inputs),
        (f"torch {torch.__version__}", "fast"): lambda: torch.autograd.gradcheck(
            f, inputs, fast_mode=True
        ),
    }
    times: dict[tuple[str, str], list[float]] = {key: [] for key in runs}
    for _ in range(repeats):
        for key, run in runs.items():
            start = time.perf_counter()
            run()
            times[key].append(time.perf_counter() - start)
    return [(*key, statistics.median(t), min(t)) for key, t in times.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 50))
    xm, w = rng.standard_normal((8, 32)), rng.standard_normal((32, 32)) / np.sqrt(32)
    rows = [
        measure("tanh(x) * x, x 40x50", tanh_times_x, [x], "full", args.repeats),
        measure("tanh(x) * x, x 40x50", tanh_times_x, [x], "fast", args.repeats),
        measure("tanh(x @ W), x 8x32, W 32x32", tanh_matmul, [xm, w], "full", args.repeats),
        measure("tanh(x @ W), x 8x32, W 32x32", tanh_matmul, [xm, w], "fast", args.repeats),
    ]
    header = list(rows[0])
    cells = [
        [
            f"{r[k]:.4f}"
            if isinstance(r[k], float) and k != "ratio"
            else (f"{r[k]:.2f}x" if k == "ratio" else str(r[k]))
            for k in header
        ]
        for r in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(header)]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    print("-+-".join("-" * w for w in widths))
    for c in cells:
        print(" | ".join(v.ljust(w) for v, w in zip(c, widths)).rstrip())
    print(
        f"(medians over {args.repeats} repeats; bare forward = the same number of "
        f"forward calls on the same arrays: tensors made once, no graph)"
    )
    torch_rows = against_torch(xm, w, args.repeats)
    if torch_rows:
        ours_full = torch_rows[0][2]
        print("\ntanh(x @ W), x 8x32, W 32x32, whole check (wall, round-robin, same run)")
        print(f"{'checker':22s} {'mode':5s} {'median s':>9s} {'min s':>8s} {'/ ours full':>12s}")
        for name, mode, median, best in torch_rows:
            print(f"{name:22s} {mode:5s} {median:9.4f} {best:8.4f} {median / ours_full:11.2f}x")


if __name__ == "__main__":
    main()
