"""Engine overhead of two checkouts side by side: NumPy, the engine before, the engine after.

Question: did a change to the engine make it faster, on a machine whose load moves the
timings of separate runs by tens of percent? The three implementations run in
processes of their own (engine_overhead.py's workers, each from its own checkout) and
are sampled round-robin in one run, so that a change of load hits all of them alike.

Run: python benchmarks/engine_before_after.py BEFORE_CHECKOUT [--only chain,fanout,mlp]
     [--repeats 11]   (e.g. a checkout of main made with `git archive main | tar -x`)
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import engine_overhead as eo


class CheckoutWorker(eo.Worker):
    """engine_overhead.py's worker for one implementation, run from ``checkout``."""

    def __init__(self, checkout: Path, impl: str, workload: str) -> None:
        script = checkout / "benchmarks" / "engine_overhead.py"
        self.process = subprocess.Popen(
            [sys.executable, str(script), "--worker", impl, "--only", workload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        ready = self._reply()
        if not ready.startswith("ready "):
            raise RuntimeError(f"the {impl} worker of {checkout} failed: {ready!r}")
        self.label = ready.removeprefix("ready ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="the checkout to compare with")
    parser.add_argument("--only", default="chain,fanout,mlp")
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args()
    print("ratio = statistic / the same statistic of hand-written NumPy, same run")
    for name in args.only.split(","):
        workers = [
            CheckoutWorker(HERE.parent, "numpy", name),
            CheckoutWorker(args.before, "gradcheck", name),
            CheckoutWorker(HERE.parent, "gradcheck", name),
        ]
        try:
            number = eo.calls_per_sample(workers[0], 0.025)
            samples = eo.interleaved_seconds(workers, args.repeats, number)
        finally:
            for w in workers:
                w.close()
        ref = samples[0]
        for label, t in zip(["numpy", "before", "after"], samples):
            print(
                f"{name:<7} {label:<7} min {min(t) * 1e3:8.3f} ms  median "
                f"{statistics.median(t) * 1e3:8.3f} ms  {min(t) / min(ref):5.2f}x / "
                f"{statistics.median(t) / statistics.median(ref):5.2f}x"
            )


if __name__ == "__main__":
    main()
