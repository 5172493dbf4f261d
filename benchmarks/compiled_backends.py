"""What ``check(compiled=backend)`` costs per torch.compile backend, side by side in one
process: the first check of a 5-element torch Function (which compiles) and a second
at the same shape (which reuses the compiled graph), each against the eager check;
and whether each backend catches a backward that differs when compiled.

Why ``--compiled`` alone means ``aot_eager``: it traces the backward as ``inductor``
does (AOTAutograd), which is where compiled and eager gradients part, without
compiling C++ (``inductor``'s first check costs tens of seconds on a small machine).

Run from the repository root::

    PYTHONPATH=. python benchmarks/compiled_backends.py
"""

from __future__ import annotations

import time

import numpy as np

import gradcheck
from tests.support import torch_compiled_ops as ops


def main() -> None:
    x = np.linspace(-1, 1, 5)
    gradcheck.check(ops.Sin, x)  # torch imported and warm before the first timing
    eager = None
    for backend in (None, "eager", "aot_eager", "inductor"):
        start = time.perf_counter()
        first = gradcheck.check(ops.Sin, x, compiled=backend)
        first_s = time.perf_counter() - start
        start = time.perf_counter()
        gradcheck.check(ops.Sin, x + 0.1, compiled=backend)
        again_s = time.perf_counter() - start
        eager = eager or again_s
        bug = gradcheck.check(ops.SinBackwardOffWhenCompiled, x, compiled=backend)
        print(
            f"{backend or 'not compiled':13} first {first_s:7.2f} s  again {again_s:6.3f} s "
            f"({again_s / eager:5.1f}x eager)  twin {first.verdict}  bug {bug.verdict}"
        )


if __name__ == "__main__":
    main()
