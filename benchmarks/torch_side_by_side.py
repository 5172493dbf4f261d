"""Issue 25's figures side by side with ``torch.autograd.gradcheck``, in one run.

1. Fast mode: ``gradcheck.check(mode="fast")`` against ``torch.autograd.gradcheck(...,
   fast_mode=True)`` on tanh(x @ W), x 8×32, W 32×32, float64; the two alternate in
   blocks of ``--block`` calls (so that each runs with its own data in the caches), for
   ``--rounds`` rounds; wall time per call, median and fastest. Then both on the same
   op with W's gradient wrong by a relative 1e-3 at one of its 1,024 elements
   (``--elements`` different elements, one seed each): how many each catches. Wall
   time per call and the calling thread's CPU time (``time.thread_time``).
2. verify: ``gradcheck.verify`` of x·tanh(x) (an Operation subclass) at shape 40×50,
   100 examples, against one slow-mode (full Jacobian) ``torch.autograd.gradcheck`` of
   x * torch.tanh(x) on one 40×50 input; alternating, ``--verify-rounds`` each; the
   verify's own seconds (its ``seconds``: the search, Hypothesis and the checks) and
   a fresh ``python -m gradcheck verify`` process's wall time (start-up included)
   against the torch check in a fresh ``python -c`` process (``import torch``
   included), each with its CPU time (``time.process_time``; the fresh process's from
   ``getrusage`` of the children): on a loaded machine the wall time is mostly the
   wait for a core, and the CPU time says what each costs.
   Then the same verify of a twin whose gradient is wrong by a factor (1 + 1e-6) at
   flat element 1500: caught or not, per seed.
3. The engine bars (``benchmarks/engine_overhead.py --only chain,mlp,fanout``) and
   ``gradcheck --version`` (``benchmarks/cli_startup.py``), each run as a subprocess in
   the same run, their output printed as it is.

BLAS and torch run single-threaded. The machine and the versions are printed first.

Run from the repository root::

    PYTHONPATH=. python benchmarks/torch_side_by_side.py [--rounds 20] [--verify-rounds 3]
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent

#: The ops of part 2, as a user's module (the CLI run imports it by name).
MODULE = (Path(__file__).resolve().parent.parent / "examples" / "xtanh.py").read_text()


def machine() -> list[str]:
    import hypothesis
    import torch

    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return [
        f"machine: {os.cpu_count()} cores, {model}, {platform.system()} {platform.release()}",
        f"python {platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}"
        f" (set_num_threads(1)), hypothesis {hypothesis.__version__}",
        f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
    ]


# -- 1. fast mode on tanh(x @ W) ---------------------------------------------------------
def tanh_matmul_ops(bad: int | None) -> tuple[Any, Any]:
    """(our Operation, torch's autograd.Function) for tanh(x @ W), W's gradient wrong
    by a relative 1e-3 at flat element ``bad`` (None: right)."""
    import torch

    from gradcheck import Operation

    def grads(x: np.ndarray, w: np.ndarray, t: np.ndarray, g: np.ndarray) -> list[np.ndarray]:
        inner = g * (1 - t * t)
        gw = x.T @ inner
        if bad is not None:
            gw.reshape(-1)[bad] *= 1 + 1e-3
        return [inner @ w.T, gw]

    class Ours(Operation):
        def __call__(self, x: Any, w: Any) -> np.ndarray:
            self.variables = (x, w)
            self.t = np.tanh(x.data @ w.data)
            return self.t

        def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
            x, w = (v.data for v in self.variables)
            return grads(x, w, self.t, grad)[index]

    class Theirs(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, w: Any) -> Any:
            t = torch.tanh(x @ w)
            ctx.save_for_backward(x, w, t)
            return t

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            x, w, t = (a.detach().numpy() for a in ctx.saved_tensors)
            gx, gw = grads(x, w, t, g.detach().numpy())
            return torch.from_numpy(gx), torch.from_numpy(gw)

    return Ours, Theirs.apply


def fast_mode(rounds: int, block: int, elements: int) -> list[str]:
    import torch

    import gradcheck as mg

    rng = np.random.default_rng(0)
    xm, w = rng.standard_normal((8, 32)), rng.standard_normal((32, 32)) / np.sqrt(32)
    inputs = tuple(torch.tensor(a, requires_grad=True) for a in (xm, w))

    def ours_fn(x: Any, w: Any) -> Any:
        return mg.tanh(x @ w)

    def theirs_fn(x: Any, w: Any) -> Any:
        return torch.tanh(x @ w)

    runs = {
        "gradcheck fast": lambda: mg.check(ours_fn, xm, w, mode="fast", seed=0),
        "torch fast_mode": lambda: torch.autograd.gradcheck(theirs_fn, inputs, fast_mode=True),
    }
    calls = mg.check(ours_fn, xm, w, mode="fast", seed=0).forward_calls
    times: dict[str, list[float]] = {k: [] for k in runs}
    cpu: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            for _ in range(block):
                start, thread = time.perf_counter(), time.thread_time()
                run()
                times[name].append(time.perf_counter() - start)
                cpu[name].append(time.thread_time() - thread)
    med = {k: statistics.median(t) for k, t in times.items()}
    low = {k: min(t) for k, t in times.items()}
    cmed = {k: statistics.median(t) for k, t in cpu.items()}
    ours, theirs = "gradcheck fast", "torch fast_mode"
    lines = [
        f"tanh(x @ W), x 8x32, W 32x32, float64: {rounds} rounds of {block} calls each",
        f"{'checker':18s} {'median ms':>10s} {'min ms':>8s} {'CPU median ms':>14s}",
        *(f"{k:18s} {1e3 * med[k]:10.3f} {1e3 * low[k]:8.3f} {1e3 * cmed[k]:14.3f}" for k in runs),
        f"ratio ours / torch: median {med[ours] / med[theirs]:.2f}x, min "
        f"{low[ours] / low[theirs]:.2f}x, CPU median {cmed[ours] / cmed[theirs]:.2f}x "
        f"(our forward calls per check: {calls})",
    ]
    caught = {"ours": 0, "torch": 0}
    picks = np.random.default_rng(1).choice(w.size, size=elements, replace=False)
    for seed, bad in enumerate(picks):
        ours_op, theirs_op = tanh_matmul_ops(int(bad))
        caught["ours"] += mg.check(ours_op, xm, w, mode="fast", seed=seed).verdict == "failed"
        torch.manual_seed(seed)
        try:
            ok = torch.autograd.gradcheck(theirs_op, inputs, fast_mode=True, raise_exception=False)
        except Exception:
            ok = False
        caught["torch"] += not ok
    right_ours, right_theirs = tanh_matmul_ops(None)
    alarms = sum(
        mg.check(right_ours, xm, w, mode="fast", seed=s).verdict != "passed"
        for s in range(elements)
    )
    alarms_t = sum(
        not torch.autograd.gradcheck(right_theirs, inputs, fast_mode=True, raise_exception=False)
        for _ in range(elements)
    )
    lines.append(
        f"W's gradient wrong by 1e-3 (relative) at one of 1024 elements, {elements} elements: "
        f"caught by ours {caught['ours']}/{elements}, by torch fast_mode "
        f"{caught['torch']}/{elements}; the right op: {alarms} / {alarms_t} false alarms"
    )
    return lines


# -- 2. verify at 40x50 against one slow torch check ------------------------------------
def verify_side_by_side(rounds: int, seeds: int, folder: Path) -> list[str]:
    import torch

    from gradcheck import verify

    sys.path.insert(0, str(folder))
    import xtanh_ops  # type: ignore[import-not-found]

    x = torch.tensor(np.random.default_rng(0).uniform(-3, 3, (40, 50)), requires_grad=True)

    def torch_slow() -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.process_time()
        assert torch.autograd.gradcheck(lambda t: t * torch.tanh(t), (x,))
        return time.perf_counter() - start, time.process_time() - cpu

    def ours(seed: int) -> tuple[float, float]:
        cpu = time.process_time()
        result = verify(xtanh_ops.XTanh, shapes=["40,50"], max_examples=100, seed=seed)
        assert result.verdict == "passed", result.verdict
        return result.seconds, time.process_time() - cpu

    def cli(seed: int) -> tuple[float, float]:
        env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{folder}"}
        command = [sys.executable, "-m", "gradcheck", "verify", "xtanh_ops:XTanh"]
        command += ["--shape", "40,50", "--seed", str(seed)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, cwd=folder, env=env, capture_output=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        return time.perf_counter() - start, cpu

    def torch_process() -> tuple[float, float]:
        # the same check as a fresh process runs it: Python, `import torch` and the call
        code = (
            "import numpy as np, torch\n"
            "torch.set_num_threads(1)\n"
            "x = torch.tensor(np.random.default_rng(0).uniform(-3, 3, (40, 50)), "
            "requires_grad=True)\n"
            "assert torch.autograd.gradcheck(lambda t: t * torch.tanh(t), (x,))\n"
        )
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        return time.perf_counter() - start, cpu

    ours(100)  # imports Hypothesis and the strategies once, outside the timing
    rows: dict[str, list[tuple[float, float]]] = {
        "torch": [],
        "verify": [],
        "torch_process": [],
        "cli": [],
    }
    for r in range(rounds):
        rows["verify"].append(ours(r))
        rows["torch"].append(torch_slow())
        rows["cli"].append(cli(r))
        rows["torch_process"].append(torch_process())
    wall = {k: statistics.median(w for w, _ in v) for k, v in rows.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in rows.items()}
    names = {
        "torch": "torch.autograd.gradcheck, slow mode, one input",
        "verify": "gradcheck.verify, 100 examples (its seconds)",
        "torch_process": "the torch check in a fresh python process",
        "cli": "python -m gradcheck verify, fresh process",
    }
    lines = [
        f"x*tanh(x) at 40x50, float64, {rounds} rounds, medians (CPU: the process's own)",
        f"{'':48s} {'wall s':>7s} {'CPU s':>7s} {'/ torch (wall, CPU)':>20s}",
        *(
            f"{names[k]:48s} {wall[k]:7.2f} {cpu[k]:7.2f} "
            f"{wall[k] / wall['torch']:9.2f}x {cpu[k] / cpu['torch']:8.2f}x"
            for k in rows
        ),
        "verify / torch per round (seed r against the torch check timed after it): "
        + ", ".join(f"{v / t:.2f}x" for (v, _), (t, _) in zip(rows["verify"], rows["torch"])),
        f"fresh processes, gradcheck verify / the torch check: "
        f"{wall['cli'] / wall['torch_process']:.2f}x wall, "
        f"{cpu['cli'] / cpu['torch_process']:.2f}x CPU",
    ]
    caught = 0
    for seed in range(seeds):
        found = verify(xtanh_ops.XTanhOneOff, shapes=["40,50"], max_examples=100, seed=seed)
        caught += found.verdict == "failed"
    lines.append(
        f"gradient wrong by (1 + 1e-6) at flat element 1500 of 2000: verify caught it in "
        f"{caught}/{seeds} runs (seeds 0..{seeds - 1})"
    )
    return lines


# -- 3. the other bars, as their own scripts report them ---------------------------------
def script(args: list[str]) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True
    )
    return [f"$ python {' '.join(args)}  (exit {proc.returncode})", *proc.stdout.splitlines()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="fast-mode rounds")
    parser.add_argument("--block", type=int, default=10, help="calls per block")
    parser.add_argument("--elements", type=int, default=20, help="wrong elements tried")
    parser.add_argument("--verify-rounds", type=int, default=3)
    parser.add_argument("--verify-seeds", type=int, default=5, help="runs of the wrong op")
    parser.add_argument("--engine-repeats", type=int, default=11)
    parser.add_argument("--skip-scripts", action="store_true", help="parts 1 and 2 only")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("torch is not installed: skipped (pip install torch, the CPU build)")
        return 0
    torch.set_num_threads(1)
    for line in machine():
        print(line)
    print(f"started {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}\n")
    for line in fast_mode(args.rounds, args.block, args.elements):
        print(line)
    print()
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "xtanh_ops.py").write_text(MODULE)
        for line in verify_side_by_side(args.verify_rounds, args.verify_seeds, Path(folder)):
            print(line)
    if not args.skip_scripts:
        engine = ["benchmarks/engine_overhead.py", "--only", "chain,mlp,fanout"]
        engine += ["--repeats", str(args.engine_repeats)]
        for command in (engine, ["benchmarks/cli_startup.py"]):
            print()
            for line in script(command):
                print(line)
    print(f"\nfinished {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
