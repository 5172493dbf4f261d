"""The built-in library's ``gradcheck verify`` in one process: every target of
``plan_run([])`` through ``gradcheck.verify(target, seed=0, **its settings)``, the
forward calls summed from each check's ``CheckResult.forward_calls`` (deterministic:
the figure to compare under load), each target's verdict and its per-check calls.

Usage: ``cd /tmp && OMP_NUM_THREADS=1 PYTHONPATH=<abs tree> python -W ignore
<tree>/benchmarks/library_forward_calls.py OUT.json [target ...]``; prints the total
and the process's CPU seconds, and writes {target: [passed, calls, [per check]]}.
"""

from __future__ import annotations

import json
import sys
import time

import gradcheck
import gradcheck.checking.checker as checker
from gradcheck.frontend.config import RUN_LIMITS
from gradcheck.frontend.plan import plan_run


def main(out_path: str, only: set[str]) -> None:
    per: dict[str, list[int]] = {}
    current = [""]
    original = checker.check

    def counted(*args, **kwargs):
        result = original(*args, **kwargs)
        per.setdefault(current[0], []).append(getattr(result, "forward_calls", 0))
        return result

    checker.check = counted  # (the search imports it from the module at each check)
    out = {}
    start = time.process_time()
    for item in plan_run([]):
        name = item.target.name
        if only and name not in only:
            continue
        current[0] = name
        settings = {k: v for k, v in item.settings.items() if k not in RUN_LIMITS}
        result = gradcheck.verify(item.target, **{**settings, "seed": 0})
        calls = per.get(name, [])
        out[name] = [str(getattr(result, "passed", None)), sum(calls), calls]
    cpu = time.process_time() - start
    total = sum(v[1] for v in out.values())
    print(f"targets {len(out)} calls {total} cpu {cpu:.1f}")
    with open(out_path, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1], set(sys.argv[2:]))
