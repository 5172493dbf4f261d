"""What a process of its own costs a built-in target: the same searches in a process
forked per target (from a zygote-like parent: the library loaded, one warm-up search,
the heap frozen) and one after another in one forked process, alternating.

Reported per target: user and system CPU milliseconds, and minor page faults (each a
page of the parent copied on its first write, or a new page), medians over the
rounds. The checks are the same in both (``--max-examples``, seed 0)::

    PYTHONPATH=. python benchmarks/job_process_cost.py --targets 40 --rounds 3
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import warnings
from typing import Any

from gradcheck.frontend.loading import load_targets
from gradcheck.frontend.worker import _warm_up
from gradcheck.search.verifier import verify


def search(target: Any, examples: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        verify(target, max_examples=examples, seed=0)


def in_child(work: Any) -> tuple[float, float, int]:
    """``work()`` in a forked child: its user s, system s, minor faults."""
    gc.freeze()
    pid = os.fork()
    if pid == 0:
        try:
            work()
        finally:
            os._exit(0)
    _, _, usage = os.wait4(pid, 0)
    return usage.ru_utime, usage.ru_stime, usage.ru_minflt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-examples", type=int, default=20)
    options = parser.parse_args()
    targets = load_targets("gradcheck.builtin_targets")[: options.targets]
    _warm_up()
    n, examples = len(targets), options.max_examples
    rows: dict[str, list[tuple[float, float, float]]] = {"fork per target": [], "shared": []}
    for _ in range(options.rounds):
        each = [in_child(lambda t=t: search(t, examples)) for t in targets]
        rows["fork per target"].append(
            (sum(e[0] for e in each) / n, sum(e[1] for e in each) / n, sum(e[2] for e in each) / n)
        )
        user, system, faults = in_child(lambda: [search(t, examples) for t in targets])
        rows["shared"].append((user / n, system / n, faults / n))
    load = os.getloadavg()[0]
    print(f"{n} built-in targets, {examples} examples, {options.rounds} rounds, load {load:.1f}")
    print(f"{'':16s} {'user ms':>8s} {'sys ms':>8s} {'faults':>8s}   per target, medians")
    for label, got in rows.items():
        user, system, faults = (statistics.median(g[i] for g in got) for i in range(3))
        print(f"{label:16s} {user * 1e3:8.1f} {system * 1e3:8.1f} {faults:8.0f}")
    fork, shared = (sum(statistics.median(g[i] for g in rows[k]) for i in (0, 1)) for k in rows)
    print(f"fork per target / shared, CPU: x{fork / shared:.3f}")
    print(f"({resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB parent)")


if __name__ == "__main__":
    main()
