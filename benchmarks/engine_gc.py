"""What Python's cyclic garbage collector costs the engine, in counts that do not move with load.

Question (issue 40 item 5): the fan-out graph (W5 of ``engine_overhead.py``) runs at about
2.0x NumPy in instructions but 2.5-2.8x in time, and with the collector off its time
ratio falls to its instruction ratio. Where do the collections happen, what do they find,
and what in the engine's per-op path sets how many there are?

Printed, for the engine of this checkout:

1. The objects the collector tracks that each op leaves alive (``gc.get_count()`` with the
   collector off, 1,000 ops kept in a list): ``sin(x)``, ``x * 1.01``, ``x + y``.
2. The collections one fan-out call triggers, by generation, split between its forward
   (recording the graph) and its backward (``gc.callbacks``), over ``--calls`` calls after
   two warm-up calls; and the unreachable objects ``gc.collect()`` finds after them
   (0: the engine's graphs hold no reference cycles, so nothing is left for the collector).
3. Time (the load's): the share of the calls' time spent inside collections, and the same
   calls with the collector off, interleaved round by round in this one process (ratio
   of medians, collector on / off).
4. What one tracked object per op more or less is worth: the fan-out call with one tuple of
   the node's two input tensors per op (what a binary op's ``variables`` is) kept alive
   until its backward (one tracked object per op more), against the same call making
   and dropping those tuples at once (the same instructions, nothing more for the
   collector), interleaved round by round. Their difference is about what one object
   fewer per op alive saves. (Since branch i40-engine4 the built-in ops of the fan-out
   keep their inputs in attributes of their own, not in a ``variables`` tuple: 2 tracked
   objects per op, 3 before.)

Run: python benchmarks/engine_gc.py [--calls 40] [--rounds 7]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's gradcheck
sys.path.insert(0, str(HERE))

import engine_overhead as eo

import gradcheck


def tracked_per_op() -> dict[str, float]:
    """Objects tracked by the collector that one op leaves alive, per op kind."""
    x = gradcheck.tensor(np.ones(8))
    y = gradcheck.tensor(np.ones(8))
    kinds = {
        "sin(x)": lambda: gradcheck.sin(x),
        "x * 1.01": lambda: x * 1.01,
        "x + y": lambda: x + y,
    }
    found = {}
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for name, op in kinds.items():
            op()  # warm-up (constant caches)
            kept: list[object] = [None] * 1000
            gc.collect()
            before = gc.get_count()[0]
            for i in range(1000):
                kept[i] = op()
            found[name] = (gc.get_count()[0] - before) / 1000
            del kept
    finally:
        if was_enabled:
            gc.enable()
    return found


def collections_by_phase(calls: int) -> tuple[dict[str, list[int]], int]:
    """Collections per generation in the fan-out's forward and backward, over ``calls``
    calls; and what ``gc.collect()`` finds unreachable afterwards."""
    inp = eo.fanout_inputs(np.random.default_rng(0))
    a, b = eo._leaves(gradcheck, inp, "a", "b")
    counts = {"forward": [0, 0, 0], "backward": [0, 0, 0]}
    phase = ["forward"]

    def note(stage: str, info: dict[str, int]) -> None:
        if stage == "start":
            counts[phase[0]][info["generation"]] += 1

    for _ in range(2):
        eo.fanout_lib(gradcheck, inp)
    gc.collect()
    gc.callbacks.append(note)
    try:
        for _ in range(calls):
            phase[0] = "forward"
            vals = [a, b]
            for kind, i, j in eo.FANOUT_PLAN:
                vals.append(eo._fanout_node(gradcheck, kind, vals[i], vals[j]))
            phase[0] = "backward"
            vals[-1].backward()
            del vals
    finally:
        gc.callbacks.remove(note)
    return counts, gc.collect()


def timed(calls: int, rounds: int) -> tuple[float, float, float]:
    """Median seconds per fan-out call with the collector on and off (interleaved
    rounds), and the share of the "on" calls' time spent inside collections."""
    inp = eo.fanout_inputs(np.random.default_rng(0))
    eo.fanout_lib(gradcheck, inp)
    inside = [0.0]
    started = [0.0]

    def note(stage: str, info: dict[str, int]) -> None:
        if stage == "start":
            started[0] = time.perf_counter()
        else:
            inside[0] += time.perf_counter() - started[0]

    on: list[float] = []
    off: list[float] = []
    total_on = 0.0
    for _ in range(rounds):
        for enabled in (True, False):
            if not enabled:
                gc.disable()
            else:
                gc.callbacks.append(note)
            start = time.perf_counter()
            try:
                for _ in range(calls):
                    eo.fanout_lib(gradcheck, inp)
            finally:
                spent = time.perf_counter() - start
                if enabled:
                    gc.callbacks.remove(note)
                    total_on += spent
                gc.enable()
            (on if enabled else off).append(spent / calls)
    return statistics.median(on), statistics.median(off), inside[0] / total_on


_OPS_PER_KIND = (2, 2, 3)  # ops per fan-out node of each kind (see eo._fanout_node)


def _fanout_with_extra(inp: eo.Inputs, keep: bool) -> None:
    """The fan-out call, with one tuple of the node's inputs per op made and kept alive
    until the backward (``keep``) or made and dropped at once."""
    a, b = eo._leaves(gradcheck, inp, "a", "b")
    vals = [a, b]
    extra: list[tuple[object, object]] = []
    for kind, i, j in eo.FANOUT_PLAN:
        vi, vj = vals[i], vals[j]
        vals.append(eo._fanout_node(gradcheck, kind, vi, vj))
        for _ in range(_OPS_PER_KIND[kind]):
            made = (vi, vj)
            if keep:
                extra.append(made)
    vals[-1].backward()


def one_object_more(calls: int, rounds: int) -> tuple[float, float]:
    """Median seconds per fan-out call with one tracked object per op more kept alive,
    and with it made and dropped (interleaved rounds)."""
    inp = eo.fanout_inputs(np.random.default_rng(0))
    kept: list[float] = []
    dropped: list[float] = []
    for _ in range(rounds):
        for keep in (True, False):
            start = time.perf_counter()
            for _ in range(calls):
                _fanout_with_extra(inp, keep)
            (kept if keep else dropped).append((time.perf_counter() - start) / calls)
    return statistics.median(kept), statistics.median(dropped)


def main() -> None:
    parser = argparse.ArgumentParser(description="The collector's cost to the engine.")
    parser.add_argument("--calls", type=int, default=40, help="fan-out calls per count/round")
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds (each on, then off)")
    args = parser.parse_args()
    print("gc thresholds", gc.get_threshold())
    for name, n in tracked_per_op().items():
        print(f"tracked objects left alive per op, {name:<9} {n:.2f}")
    counts, garbage = collections_by_phase(args.calls)
    for phase, per_gen in counts.items():
        per_call = ", ".join(f"gen{g} {n / args.calls:.2f}" for g, n in enumerate(per_gen))
        print(f"collections per fan-out call, {phase:<8}: {per_call}")
    print(f"unreachable objects found by gc.collect() after {args.calls} calls: {garbage}")
    on, off, share = timed(args.calls // 4 or 1, args.rounds)
    print(
        f"fan-out call, median of {args.rounds} rounds: collector on {on * 1e3:.2f} ms, "
        f"off {off * 1e3:.2f} ms, on/off {on / off:.3f}; time inside collections {share:.1%}"
    )
    kept, dropped = one_object_more(args.calls // 4 or 1, args.rounds)
    print(
        f"fan-out call with one more tracked object per op alive {kept * 1e3:.2f} ms, "
        f"made and dropped {dropped * 1e3:.2f} ms: {kept / dropped - 1:+.1%} per object per op"
    )


if __name__ == "__main__":
    main()
