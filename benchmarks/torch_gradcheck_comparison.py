"""The same mutants through ``torch.autograd.gradcheck``, side by side with gradcheck.

Each mutant of the mutation suite (:mod:`gradcheck.testing`) is wrapped in a
``torch.autograd.Function``: its forward runs the built-in target with NumPy on the
detached float64 inputs, its backward runs the target's backward with the mutated op
class (:func:`gradcheck.testing.mutated`) on NumPy arrays. Then
``torch.autograd.gradcheck`` runs with its default settings on one random float64
input per mutant and seed (``torch.rand`` scaled to the target's domain, seeded with
``torch.manual_seed``), shaped like the first input on which the mutant changes the
target's behaviour (mutants equivalent on every input are left out, as in the suite).
A mutant counts as caught by torch when ``gradcheck`` returns False or raises (a list
or complex gradient makes the wrapper raise). The unmutated targets go through the
same wrapper to count torch's false alarms.

gradcheck's own figures come from :func:`gradcheck.testing.run_suite` with the same
seeds, in the same run.

Needs the CPU build of torch (``pip install torch``), which is not a dependency of the
project; without it the script says so and exits 0.

    PYTHONPATH=. python benchmarks/torch_gradcheck_comparison.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from typing import Any

import numpy as np


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch


def _domain(options: dict[str, Any], i: int) -> tuple[float, float]:
    domain = options.get("domain")
    if domain is None:
        lo, hi = -np.inf, np.inf
    elif isinstance(domain[0], tuple):
        lo, hi = domain[i]
    else:
        lo, hi = domain
    # op_inputs keeps values within +-10 where the domain is unbounded.
    return (max(lo, -10.0), min(hi, 10.0))


def torch_inputs(torch: Any, options: dict[str, Any], shapes: list[tuple[int, ...]], seed: int):
    torch.manual_seed(seed)
    inputs = []
    for i, shape in enumerate(shapes):
        lo, hi = _domain(options, i)
        x = torch.rand(shape, dtype=torch.float64) * (hi - lo) + lo
        inputs.append(x.requires_grad_(True))
    return tuple(inputs)


def wrap(torch: Any, subject: Any, op_class: Any = None, mutation: Any = None) -> Any:
    """A torch.autograd.Function running the target forward and (mutated) backward."""
    from contextlib import nullcontext

    from gradcheck.testing import mutated

    params = subject.options.get("kwargs")
    tgt = subject.target

    class Wrapped(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, *inputs: Any) -> Any:
            arrays = [t.detach().numpy().copy() for t in inputs]
            ctx.arrays = arrays
            out = np.array(tgt.forward(arrays, params), dtype=np.float64)
            return torch.from_numpy(out)

        @staticmethod
        def backward(ctx: Any, grad_out: Any) -> Any:
            context = nullcontext() if mutation is None else mutated(op_class, mutation)
            with context:
                graph = tgt.apply(ctx.arrays, params)
                grads = tgt.backward(graph, grad_out.detach().numpy())
            return tuple(
                None if g is None else torch.from_numpy(np.array(g, dtype=np.float64))
                for g in grads
            )

    return Wrapped.apply


def torch_catches(torch: Any, fn: Any, inputs: tuple[Any, ...]) -> tuple[bool, str]:
    """(caught, how): torch's gradcheck, default settings."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ok = torch.autograd.gradcheck(fn, inputs)
    except Exception as exc:  # GradcheckError, or the wrapper raising
        return True, type(exc).__name__
    return (not ok), "returned False" if not ok else "passed"


def run(seeds: list[int], examples: int, targets: list[str] | None) -> dict[str, Any]:
    import gradcheck.builtin_targets as builtin
    from gradcheck.frontend.loading import module_targets
    from gradcheck.testing import MUTATIONS, applicable, mutated, run_suite
    from gradcheck.testing.suite import _behaviour, _check_seed, _prepare, distinguishable

    torch = _torch()
    start = time.perf_counter()
    ours = run_suite(targets=targets, seeds=seeds, examples=examples)
    ours_seconds = time.perf_counter() - start

    per_kind: dict[str, dict[str, int]] = {m: {"caught": 0, "total": 0} for m in MUTATIONS}
    missed: list[str] = []
    false_alarms = unmutated = 0
    start = time.perf_counter()
    for name, obj in module_targets(builtin):
        if targets is not None and name not in targets:
            continue
        subject = _prepare(name, obj, seeds, examples)
        for seed in seeds:
            shapes = [a.shape for a in subject.examples[seed][0]]
            unmutated += 1
            caught, how = torch_catches(
                torch, wrap(torch, subject), torch_inputs(torch, subject.options, shapes, seed)
            )
            if caught:
                false_alarms += 1
                missed.append(f"FALSE ALARM {name} seed {seed}: {how}")
        for op_class in subject.op_classes:
            for mutation in MUTATIONS.values():
                if not applicable(mutation, op_class):
                    continue
                for seed in seeds:
                    live = None
                    for i, arrays in enumerate(subject.examples[seed]):
                        cs = _check_seed(seed, i)
                        original = _behaviour(subject, arrays, cs)
                        with mutated(op_class, mutation):
                            if distinguishable(original, _behaviour(subject, arrays, cs)):
                                live = arrays
                                break
                    if live is None:
                        continue  # equivalent: excluded, as in the suite
                    inputs = torch_inputs(torch, subject.options, [a.shape for a in live], seed)
                    caught, how = torch_catches(
                        torch, wrap(torch, subject, op_class, mutation), inputs
                    )
                    per_kind[mutation.name]["total"] += 1
                    per_kind[mutation.name]["caught"] += caught
                    if not caught:
                        missed.append(f"missed {name}/{op_class.__name__}/{mutation.name} s{seed}")
    torch_seconds = time.perf_counter() - start
    ours_kind = ours.tally(lambda r: r.mutation)
    return {
        "torch_version": torch.__version__,
        "seeds": seeds,
        "by_mutation": {
            m: {
                "gradcheck_caught": ours_kind.get(m, {}).get("caught", 0),
                "gradcheck_total": ours_kind.get(m, {}).get("caught", 0)
                + ours_kind.get(m, {}).get("survived", 0),
                "torch_caught": per_kind[m]["caught"],
                "torch_total": per_kind[m]["total"],
            }
            for m in MUTATIONS
        },
        "gradcheck": {
            "caught": ours.caught,
            "total": ours.total,
            "false_alarms": ours.false_alarm_count,
            "unmutated_checks": sum(f.examples for f in ours.false_alarms),
            "seconds": ours_seconds,
        },
        "torch": {
            "caught": sum(k["caught"] for k in per_kind.values()),
            "total": sum(k["total"] for k in per_kind.values()),
            "false_alarms": false_alarms,
            "unmutated_checks": unmutated,
            "seconds": torch_seconds,
        },
        "missed_by_torch": missed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    parser.add_argument("--examples", type=int, default=5)
    parser.add_argument("--targets", nargs="*")
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--verbose", action="store_true", help="list what torch missed")
    args = parser.parse_args(argv)
    if _torch() is None:
        print("torch is not installed: skipped (pip install torch, the CPU build)")
        return 0
    from tabulate import tabulate

    data = run(args.seeds, args.examples, args.targets)
    rows = [
        [
            m,
            f"{k['gradcheck_caught']}/{k['gradcheck_total']}",
            f"{k['torch_caught']}/{k['torch_total']}",
        ]
        for m, k in data["by_mutation"].items()
    ]
    ours, theirs = data["gradcheck"], data["torch"]
    rows.append(
        [
            "all",
            f"{ours['caught']}/{ours['total']}",
            f"{theirs['caught']}/{theirs['total']}",
        ]
    )
    rows.append(
        [
            "false alarms (unmutated)",
            f"{ours['false_alarms']}/{ours['unmutated_checks']}",
            f"{theirs['false_alarms']}/{theirs['unmutated_checks']}",
        ]
    )
    print(
        tabulate(rows, headers=["mutation", "gradcheck (full)", f"torch {data['torch_version']}"])
    )
    print(
        f"\ngradcheck: {ours['seconds']:.1f} s; torch.autograd.gradcheck: {theirs['seconds']:.1f} s"
    )
    if args.verbose:
        print("\n".join(data["missed_by_torch"]))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(data, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
