"""Auto mode's screen against full mode: one element of a gradient wrong by a relative
``r`` (x·sin(x), inputs uniform(-3, 3), the element and the input random per trial),
checked in mode "auto" (two directional derivatives that stand for full mode where they
agree within what one wrong element would exceed, :mod:`gradcheck.checking.screen`) and
in mode "full" on the same input and seed: how many of each fail, and their forward
calls. ``r = 0`` is the right gradient (no false alarm, and the screen's saving).

Run from the repository root::

    PYTHONPATH=. python benchmarks/auto_screen_sensitivity.py [--trials 10]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import gradcheck as mg
from gradcheck import Operation


class _OneWrong(Operation):
    """x·sin(x) whose gradient is wrong by a relative ``r`` at flat element ``j``."""

    j = 0
    r = 0.0

    def __call__(self, x):
        self.variables = (x,)
        return np.sin(x.data) * x.data

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        g = np.array(grad * (np.cos(x) * x + np.sin(x)), dtype=np.float64)
        g.reshape(-1)[_OneWrong.j] *= 1 + _OneWrong.r
        return g


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=10, help="inputs per size and error")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    differ = 0
    for n in (8, 20, 64, 300, 2000):
        for r in (0.0, 2e-7, 1e-6, 1e-4):
            trials = args.trials if n < 1000 else max(1, args.trials // 3)
            failed = {"auto": 0, "full": 0}
            calls = {"auto": 0, "full": 0}
            for t in range(trials):
                x = rng.uniform(-3, 3, n)
                _OneWrong.j, _OneWrong.r = int(rng.integers(n)), r
                verdicts = []
                for mode in ("auto", "full"):
                    result = mg.check(_OneWrong, x, seed=t, mode=mode)
                    failed[mode] += result.verdict == "failed"
                    calls[mode] += result.forward_calls
                    verdicts.append(result.verdict)
                differ += verdicts[0] != verdicts[1]
            print(
                f"n={n:5d} r={r:g}: failed auto {failed['auto']}/{trials}, full "
                f"{failed['full']}/{trials}; forward calls per check auto "
                f"{calls['auto'] / trials:.0f}, full {calls['full'] / trials:.0f}",
                flush=True,
            )
    print(f"checks whose verdict differs between auto and full: {differ}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
