"""Full mode's sensitivity at the bar of DESIGN.md: a relative 1e-6 error at one
element of 2,000 (``examples/xtanh.py``: XTanhOneOff at 40x50, element (30, 0)), checked
with ``gradcheck.check``'s default settings on 20 inputs ``uniform(-3, 3)`` seeded 0-19,
and the right op (XTanh) on the same inputs for false alarms.

Run from the repository root::

    PYTHONPATH=. python benchmarks/xtanh_one_off.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

import gradcheck as mg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import xtanh


def main(inputs: int = 20) -> int:
    caught = passed = 0
    start = time.thread_time()
    for seed in range(inputs):
        x = np.random.default_rng(seed).uniform(-3, 3, (40, 50))
        wrong = mg.check(xtanh.XTanhOneOff, x, seed=seed)
        right = mg.check(xtanh.XTanh, x, seed=seed)
        caught += wrong.failure is not None and wrong.failure.worst[0].index == (30, 0)
        passed += right.verdict == "passed"
    print(
        f"XTanhOneOff 40x50, default settings: caught {caught}/{inputs} at (30, 0); "
        f"XTanh passed {passed}/{inputs}; {time.thread_time() - start:.1f} s CPU"
    )
    return 0 if caught == passed == inputs else 1


if __name__ == "__main__":
    sys.exit(main())
