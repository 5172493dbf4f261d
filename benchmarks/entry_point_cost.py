"""What installing gradcheck costs processes that do not use it: ``import hypothesis``
(which runs gradcheck's Hypothesis entry point) and a pytest run of an unrelated test
(which loads gradcheck's pytest plugin).

    PYTHONPATH=. python benchmarks/entry_point_cost.py [--repeat N]

Each measurement is the fastest of N fresh interpreters, with gradcheck's entry points
and without them (``HYPOTHESIS_NO_PLUGINS=1``; ``-p no:gradcheck``), in one
environment where this checkout is installed (tests/support/installed.py), round-robin so
that the machine's load hits both alike. ``entry points`` is the time Hypothesis
spends running its entry points (``hypothesis.entry_points.run()``, timed inside the
process): the cost itself, without the noise of starting Python.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.installed import installed, run_python

RUN_HOOKS = (
    "import os, time\n"
    "os.environ['HYPOTHESIS_NO_PLUGINS'] = '1'\n"
    "import hypothesis, hypothesis.entry_points as e\n"
    "del os.environ['HYPOTHESIS_NO_PLUGINS']\n"
    "t = time.perf_counter(); e.run(); print(time.perf_counter() - t)\n"
)


def seconds(args: tuple[str, ...], env: dict[str, str], cwd: Path) -> float:
    """Wall time of ``python ARGS``, or the time it prints itself."""
    start = time.perf_counter()
    result = run_python(*args, cwd=cwd, env=env)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{result.stdout}{result.stderr}")
    return float(result.stdout) if args == ("-c", RUN_HOOKS) else elapsed


def fastest(repeat: int, *commands: tuple[tuple[str, ...], dict[str, str]], cwd: Path) -> list:
    best = [float("inf")] * len(commands)
    for _ in range(repeat):
        for i, (args, env) in enumerate(commands):
            best[i] = min(best[i], seconds(args, env, cwd))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    repeat = parser.parse_args().repeat
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        env = installed(cwd)
        off = {**env, "HYPOTHESIS_NO_PLUGINS": "1"}
        (cwd / "test_plain.py").write_text("def test_plain():\n    pass\n")
        pytest = ("-m", "pytest", "-q", "-p", "no:cacheprovider")
        rows = [
            ("entry points (in-process)", fastest(repeat, (("-c", RUN_HOOKS), env), cwd=cwd)),
            (
                "import hypothesis",
                fastest(
                    repeat,
                    (("-c", "import hypothesis"), env),
                    (("-c", "import hypothesis"), off),
                    cwd=cwd,
                ),
            ),
            (
                "pytest, one plain test",
                fastest(repeat, (pytest, env), ((*pytest, "-p", "no:gradcheck"), off), cwd=cwd),
            ),
        ]
    print(f"fastest of {repeat}, python {sys.version.split()[0]}, cpus {os.cpu_count()}")
    print(f"{'':28} {'with gradcheck':>15} {'without':>10} {'cost':>9}")
    for name, times in rows:
        if len(times) == 1:
            print(f"{name:28} {'':>15} {'':>10} {times[0] * 1000:7.1f} ms")
        else:
            with_, without = times
            print(
                f"{name:28} {with_ * 1000:12.0f} ms {without * 1000:7.0f} ms "
                f"{(with_ - without) * 1000:7.0f} ms"
            )


if __name__ == "__main__":
    main()
