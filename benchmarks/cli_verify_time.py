"""Wall time of ``gradcheck verify mymodule:MyOp`` with no other flag, as a user runs it.

A temporary directory holds ``mymodule.py`` with a small elementwise op (correct, and a
wrong twin); the command runs there in a fresh process (``python -m gradcheck``, the
package found through PYTHONPATH), with the default settings (100 examples, a fresh
seed). Reported: the median and the worst wall time over the repeats, start-up
included, and the time of ``python -c "import gradcheck.cli"`` alone. The acceptance
bar (issue 5): a verdict in under 5 s.

Run from the repository root::

    PYTHONPATH=. python benchmarks/cli_verify_time.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

MODULE = textwrap.dedent(
    """
    import numpy as np
    from gradcheck import Operation


    class MyOp(Operation):
        '''x * sin(x), elementwise.'''

        def __call__(self, x):
            self.variables = (x,)
            return x.data * np.sin(x.data)

        def backward_var(self, grad, index, **kwargs):
            x = self.variables[0].data
            return grad * (np.sin(x) + x * np.cos(x))


    class MyWrongOp(MyOp):
        def backward_var(self, grad, index, **kwargs):
            x = self.variables[0].data
            return grad * (np.sin(x) - x * np.cos(x))
    """
)


def timed(cmd: list[str], cwd: Path) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    return time.perf_counter() - start, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "mymodule.py").write_text(MODULE)
        python = sys.executable
        rows = [
            ("import gradcheck.cli", [python, "-c", "import gradcheck.cli"]),
            ("verify mymodule:MyOp", [python, "-m", "gradcheck", "verify", "mymodule:MyOp"]),
            (
                "verify mymodule:MyWrongOp",
                [python, "-m", "gradcheck", "verify", "mymodule:MyWrongOp"],
            ),
        ]
        print(f"{'command':28s} {'exit':>4s} {'median s':>9s} {'worst s':>8s}")
        for label, cmd in rows:
            times, codes = [], set()
            for _ in range(args.repeats):
                seconds, code = timed(cmd, cwd)
                times.append(seconds)
                codes.add(code)
            exits = ",".join(map(str, sorted(codes)))
            print(f"{label:28s} {exits:>4s} {statistics.median(times):9.2f} {max(times):8.2f}")


if __name__ == "__main__":
    main()
