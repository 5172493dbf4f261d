"""Engine overhead in executed instructions: a low-noise companion to engine_overhead.py.

Question: the same as ``engine_overhead.py`` (forward + backward against hand-written
NumPy of the same math), answered in CPU instructions instead of seconds. On a shared
machine the timings move by tens of percent between runs; the instruction count of a
call moves by a percent or two at most (single-threaded BLAS, fixed hash seed; memory
addresses still differ between processes), so it shows what a change to the engine
did. It does not show memory effects (page faults, cache misses): the large-array
workloads can cost more time than instructions.

Each implementation runs under ``valgrind --tool=callgrind`` twice, with N1 and N2 calls
after one warm-up call; the difference divided by N2 - N1 is the cost of one call
(interpreter start and imports cancel out). Needs valgrind (skipped without it).

Run: python benchmarks/engine_instructions.py [--only chain,fanout] [--calls 2,6]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The heavy workloads get fewer calls: one "big" call is ~2e8 instructions.
DEFAULT_CALLS = {"chain": (10, 30), "mlp": (2, 6), "big": (1, 3), "bcast": (1, 4), "fanout": (1, 3)}

RUNNER = """
import sys
sys.path.insert(0, {bench!r})
sys.path.insert(1, {root!r})
import numpy as np
import gradcheck
import engine_overhead as eo
make_inputs, numpy_impl, lib_impl, _ = eo.WORKLOADS[sys.argv[1]]
inp = make_inputs(np.random.default_rng(0))
if sys.argv[2] == "numpy":
    def call():
        numpy_impl(inp)
else:
    def call():
        lib_impl(gradcheck, inp)
call()
for _ in range(int(sys.argv[3])):
    call()
"""


def instructions(script: Path, workload: str, impl: str, calls: int) -> int:
    """Instructions executed by the whole process (callgrind's "Collected")."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/out",
                sys.executable,
                str(script),
                workload,
                impl,
                str(calls),
            ],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description="Engine overhead in instructions.")
    parser.add_argument("--only", default=",".join(DEFAULT_CALLS), help="comma-separated workloads")
    parser.add_argument("--calls", help="N1,N2 calls for every workload (default: per workload)")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind not installed: skipped")
        return
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "runner.py"
        script.write_text(RUNNER.format(bench=str(HERE), root=str(HERE.parent)))
        print(f"{'workload':<8} {'numpy instr/call':>17} {'gradcheck instr/call':>21} {'ratio':>7}")
        for name in args.only.split(","):
            n1, n2 = (
                tuple(int(n) for n in args.calls.split(",")) if args.calls else DEFAULT_CALLS[name]
            )
            per_call = {}
            for impl in ("numpy", "gradcheck"):
                low = instructions(script, name, impl, n1)
                high = instructions(script, name, impl, n2)
                per_call[impl] = (high - low) / (n2 - n1)
            ratio = per_call["gradcheck"] / per_call["numpy"]
            print(
                f"{name:<8} {per_call['numpy']:>17,.0f} {per_call['gradcheck']:>21,.0f} "
                f"{ratio:>6.2f}x"
            )


if __name__ == "__main__":
    main()
