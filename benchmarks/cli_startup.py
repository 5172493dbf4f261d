"""Start-up time of the ``gradcheck`` command for the commands that check nothing:
``gradcheck --version``, ``gradcheck --help`` and ``gradcheck verify --help``, against
``python -c pass`` (the interpreter alone) and ``python -c "import click"`` measured in
the same run, on the same machine, at the same moment.

Each command is a fresh process (``python -m gradcheck``, the package found through
PYTHONPATH); the minimum over the repeats is reported (the least disturbed run), with
the command's cost over the interpreter alone. The bar (issue 25): ``gradcheck
--version`` within 0.15 s of ``python -c pass``, which is only possible without NumPy
(``import numpy`` alone costs about 0.1 s): the CLI imports it for the commands that
check something.

Run from the repository root::

    PYTHONPATH=. python benchmarks/cli_startup.py [--repeats 10]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BAR = 0.15

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import click'": [sys.executable, "-c", "import click"],
    "gradcheck --version": [sys.executable, "-m", "gradcheck", "--version"],
    "gradcheck --help": [sys.executable, "-m", "gradcheck", "--help"],
    "gradcheck verify --help": [sys.executable, "-m", "gradcheck", "verify", "--help"],
}


def best_time(command: list[str], repeats: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    # Compiled modules cached (as in an installed package), in a folder of their own.
    cache = tempfile.mkdtemp(prefix="gradcheck-startup-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(REPO), PYTHONPYCACHEPREFIX=cache)
    # Interleaved rounds, so that a busy moment of the machine weighs on every command;
    # the first round (which compiles) is not counted.
    best = {name: float("inf") for name in COMMANDS}
    for command in COMMANDS.values():
        best_time(command, 1, env)
    for _ in range(args.repeats):
        for name, command in COMMANDS.items():
            best[name] = min(best[name], best_time(command, 1, env))
    base = best["python -c pass"]
    print(f"{'command':<28} {'min (s)':>8} {'over python -c pass':>20}")
    for name, seconds in best.items():
        print(f"{name:<28} {seconds:>8.3f} {seconds - base:>+20.3f}")
    over = best["gradcheck --version"] - base
    verdict = "within" if over < BAR else "OVER"
    print(f"\ngradcheck --version: {over:.3f} s over python -c pass ({verdict} the {BAR} s bar)")
    return 0 if over < BAR else 1


if __name__ == "__main__":
    sys.exit(main())
