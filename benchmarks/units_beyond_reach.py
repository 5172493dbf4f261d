"""Issue 34 item 7 at units beyond the levels' reach: the engine ops of
``tests/checking/test_scale_invariance.py`` (seven smooth or kinked ops, the cube, and
each kinked op's and the cube's twin whose backward is off by 1e-3), checked as
``x -> 2**b · f(2**-a · x)`` at ``2**a · x`` (``f`` at ``x`` in other units: exact in
float64) for a in (-150, -200) and b in (0, 100): 19 ops x 4 = 76 checks (seed 0).
Prints each check whose verdict differs from the op's at scale 1, and their count.

    PYTHONPATH=. python benchmarks/units_beyond_reach.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time

from gradcheck import check
from tests.checking.test_scale_invariance import CASES, _rescaled

UNITS = [(-150, 0), (-150, 100), (-200, 0), (-200, 100)]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows, differ, calls = [], 0, 0
    start = time.perf_counter()
    for name in sorted(CASES):
        f, xs, expected = CASES[name]
        for a, b in UNITS:
            scaled = tuple(x * 2.0**a for x in xs)
            result = check(_rescaled(f, a, b), *scaled, seed=0)
            calls += result.forward_calls
            rows.append({"op": name, "a": a, "b": b, "verdict": result.verdict})
            if result.verdict != expected:
                differ += 1
                print(f"{name:16s} a={a:5d} b={b:4d}: {result.verdict} (at scale 1: {expected})")
    print(
        f"{differ} of {len(rows)} checks differ from scale 1; {calls} forward calls, "
        f"{time.perf_counter() - start:.1f} s"
    )
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
