"""A torch target's whole run against one torch check, in fresh processes (issue 40).

Side by side, alternating, in one run (the machine's load touches both alike):

- **A**: ``python -m gradcheck verify good:Cube --max-examples 100 --seed 0`` in a
  temporary directory holding ``good.py``, a correct four-line
  ``torch.autograd.Function`` (``x**3``); its wall time, and the time to its first
  byte of output (stdout and stderr together, through a pipe: not a terminal, so the
  first line is the plain one);
- **B**: ``python script.py``, a script that imports torch and runs one
  ``torch.autograd.gradcheck`` on one 3x4 float64 input.

Reported: each one's median, and the median of the ratios A/B of the pairs (the bar:
at most 1.0x; first output within 1 s), and how long A's processes last after its last
output (nothing should linger after the summary). On Linux this script is the
subreaper of what it starts, so A's time and CPU seconds include its worker and the
process forked for the target, which end after the command (or are handed to this
script when the command ends first). ``--usage-error`` adds **C**: a JAX target
with a bad option (``--shape 3,-1``), the time until its usage error (it should come
before any framework is imported), and ``python -c "import jax"`` beside it.

``--compile`` first writes the bytecode of the gradcheck trees measured (``python -m
compileall``, as ``pip install`` does for an installed package): where the environment
sets ``PYTHONDONTWRITEBYTECODE`` (this project's shared machines do), a source tree's
modules are otherwise compiled again in every process that imports them (about 0.1 s
of CPU in the worker and the command each), while torch's come compiled from its
installation.

Run from the repository root (``PYTHONPATH`` picks the code measured)::

    PYTHONPATH=. python benchmarks/torch_target_time.py [--repeats 7] [--usage-error] [--compile]
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import selectors
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

GOOD = textwrap.dedent(
    """
    import torch


    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * g
    """
)

REFERENCE = textwrap.dedent(
    """
    import torch

    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: t**3, (x,))
    """
)

JAX_MODULE = textwrap.dedent(
    """
    import jax.numpy as jnp


    def cube(x):
        return x**3
    """
)


#: The CPU seconds of each timed command, in order.
CPU: list[float] = []


def _become_subreaper() -> bool:
    """Linux: the processes our children leave behind (a worker, the process a worker
    forked) become ours when their parent ends, so that we wait for them too: their
    CPU seconds count (``RUSAGE_CHILDREN`` counts only processes waited for), and a
    process that lingers after the command ended counts in its wall time (the time the
    command's own process ended is reported beside it)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl(36, 1) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _reap_descendants(limit: float = 30.0) -> float:
    """Wait (up to ``limit`` seconds) for the descendants handed to us; the time the
    last one ended (0.0 when there was none)."""
    last = 0.0
    deadline = time.perf_counter() + limit
    while time.perf_counter() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.005)
            continue
        last = time.perf_counter()
    return last


#: The time each timed command's own process ended (its output closed and it was
#: waited for: where a shell gives the prompt back), from its start, in order.
EXITED: list[float] = []


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float, int]:
    """Wall time (until the process and every process it left behind have ended and
    its output is closed), time to the first byte of output, time from the last byte
    of output to that end, exit status; the CPU seconds of the process and of all its
    descendants (see :func:`_become_subreaper`) go to CPU."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    first = None
    last = start
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while True:
            sel.select()
            chunk = os.read(proc.stdout.fileno(), 65536)
            if first is None:
                first = time.perf_counter() - start
            if not chunk:
                break
            last = time.perf_counter()
    code = proc.wait()
    EXITED.append(time.perf_counter() - start)
    end = max(time.perf_counter(), _reap_descendants())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return end - start, first if first is not None else math.nan, end - last, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--usage-error", action="store_true")
    parser.add_argument(
        "--old", metavar="PATH", help="also run A with PYTHONPATH=PATH (the code before a change)"
    )
    parser.add_argument(
        "--compile",
        action="store_true",
        help="write the bytecode of the gradcheck trees measured first (as an install does)",
    )
    args = parser.parse_args()
    subreaper = _become_subreaper()
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO))}
    if args.compile:
        for tree in {env["PYTHONPATH"].split(os.pathsep)[0], *([args.old] if args.old else [])}:
            package = Path(tree).resolve() / "gradcheck"
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)
            print(f"compiled {package}")
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        (where / "good.py").write_text(GOOD)
        (where / "script.py").write_text(REFERENCE)
        (where / "jaxop.py").write_text(JAX_MODULE)
        a_cmd = [sys.executable, "-m", "gradcheck", "verify", "good:Cube"]
        a_cmd += ["--max-examples", "100", "--seed", "0"]
        b_cmd = [sys.executable, "script.py"]
        c_cmd = [sys.executable, "-m", "gradcheck", "verify", "jaxop:cube", "--shape", "3,-1"]
        d_cmd = [sys.executable, "-c", "import jax"]
        keys = (
            "A",
            "A first",
            "A after",
            "B",
            "A/B",
            "C",
            "D",
            "old",
            "old first",
            "old after",
            "old/B",
            "A cpu",
            "A exit",
            "old exit",
            "B cpu",
            "old cpu",
        )
        rows: dict[str, list[float]] = {k: [] for k in keys}
        for i in range(args.repeats):
            a, a_first, a_after, a_code = timed(a_cmd, where, env)
            rows["A cpu"].append(CPU[-1])
            rows["A exit"].append(EXITED[-1])
            b, _, _, b_code = timed(b_cmd, where, env)
            rows["B cpu"].append(CPU[-1])
            if a_code != 0 or b_code != 0:
                sys.exit(f"a run failed: verify exit {a_code}, script exit {b_code}")
            rows["A"].append(a)
            rows["A first"].append(a_first)
            rows["A after"].append(a_after)
            rows["B"].append(b)
            rows["A/B"].append(a / b)
            line = f"run {i + 1}: A {a:.2f} s (first output {a_first:.2f} s, "
            line += f"ended {a_after:.2f} s after its last; CPU {rows['A cpu'][-1]:.2f} s), "
            line += f"B {b:.2f} s (CPU {rows['B cpu'][-1]:.2f} s)"
            if args.old:
                old_env = {**env, "PYTHONPATH": args.old}
                o, o_first, o_after, o_code = timed(a_cmd, where, old_env)
                if o_code != 0:
                    sys.exit(f"the old verify exited {o_code}")
                rows["old cpu"].append(CPU[-1])
                rows["old exit"].append(EXITED[-1])
                for key, value in zip(("old", "old first", "old after"), (o, o_first, o_after)):
                    rows[key].append(value)
                rows["old/B"].append(o / b)
                line += f", old A {o:.2f} s (first output {o_first:.2f} s, ended "
                line += f"{o_after:.2f} s after; CPU {CPU[-1]:.2f} s)"
            if args.usage_error:
                c, _, _, c_code = timed(c_cmd, where, env)
                d, _, _, _ = timed(d_cmd, where, env)
                if c_code != 2:
                    sys.exit(f"the bad option gave exit {c_code}, not 2")
                rows["C"].append(c)
                rows["D"].append(d)
                line += f", C {c:.2f} s, import jax {d:.2f} s"
            print(line, flush=True)
    med = {k: statistics.median(v) for k, v in rows.items() if v}
    print(
        f"\nmedians over {args.repeats} alternating runs (load average {os.getloadavg()[0]:.1f}):"
    )
    print(f"  A  gradcheck verify good:Cube (100 examples): {med['A']:.2f} s")
    print(f"     its first output:                          {med['A first']:.2f} s")
    print(f"     from its last output to its end:           {med['A after']:.2f} s")
    print(f"     its own process ended (the prompt back):   {med['A exit']:.2f} s")
    print(f"  B  import torch + one torch.autograd.gradcheck: {med['B']:.2f} s")
    print(f"  A/B (median of the pairs' ratios): {med['A/B']:.2f}x (bar: at most 1.0x)")
    counted = "all its descendants" if subreaper else "those it waited for"
    print(f"  CPU seconds (the process and {counted}): A {med['A cpu']:.2f} s,", end=" ")
    print(f"B {med['B cpu']:.2f} s")
    if args.old:
        print(f"  old A ({args.old}): {med['old']:.2f} s, first output {med['old first']:.2f} s,")
        print(f"     ended {med['old after']:.2f} s after its last output;", end=" ")
        print(f"old A/B {med['old/B']:.2f}x; CPU {med['old cpu']:.2f} s;", end=" ")
        print(f"its own process ended at {med['old exit']:.2f} s")
    if args.usage_error:
        print(f"  C  a JAX target's usage error (--shape 3,-1): {med['C']:.2f} s")
        print(f"     python -c 'import jax':                    {med['D']:.2f} s")


if __name__ == "__main__":
    main()
