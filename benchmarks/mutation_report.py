"""The mutation suite's report: what the checker catches, and its false alarms.

Every built-in target's op classes get every applicable mutant of their backward
(:mod:`gradcheck.testing.mutants`); each mutant runs through ``gradcheck.check`` in full
mode on the target's own inputs (see :mod:`gradcheck.testing.suite`); the unmutated
targets are checked on the same inputs for false alarms.

Run from the repository root::

    PYTHONPATH=. python benchmarks/mutation_report.py                 # tables
    PYTHONPATH=. python benchmarks/mutation_report.py --json out.json # and JSON
    PYTHONPATH=. python benchmarks/mutation_report.py --targets add sin --seeds 0
    PYTHONPATH=. python benchmarks/mutation_report.py --dtype float32  # every target

The exit status is 1 when a mutant survived or was never reached, or a false alarm was
raised.
"""

from __future__ import annotations

import argparse
import json
import sys

from tabulate import tabulate

from gradcheck.testing.mutants import MUTATIONS
from gradcheck.testing.suite import (
    CAUGHT,
    EQUIVALENT,
    SURVIVED,
    UNREACHED,
    MutationReport,
    run_suite,
)


def _cell(counts: dict[str, int] | None) -> str:
    if counts is None:
        return "n/a"
    live = counts[CAUGHT] + counts[SURVIVED]
    text = f"{counts[CAUGHT]}/{live}"
    text += f" ({counts[EQUIVALENT]} eq)" if counts[EQUIVALENT] else ""
    return text + (f" ({counts[UNREACHED]} UNREACHED)" if counts[UNREACHED] else "")


def by_mutation_table(report: MutationReport) -> str:
    rows = []
    for name, counts in report.tally(lambda r: r.mutation).items():
        live = counts[CAUGHT] + counts[SURVIVED]
        first = [r for r in report.mutants if r.mutation == name and r.status == CAUGHT]
        on_first = sum(r.checks == 1 for r in first)
        kinds = sorted({r.failure_kind for r in first if r.failure_kind})
        rows.append(
            [
                name,
                f"{counts[CAUGHT]}/{live}",
                counts[EQUIVALENT],
                counts[SURVIVED],
                f"{on_first}/{len(first)}",
                ", ".join(kinds),
            ]
        )
    headers = ["mutation", "caught", "equivalent", "survived", "by 1st check", "caught as"]
    return tabulate(rows, headers=headers)


def by_op_table(report: MutationReport) -> str:
    cells = report.tally(lambda r: (r.target, r.op, r.mutation))
    ops = report.tally(lambda r: (r.target, r.op))
    names = list(MUTATIONS)
    rows = []
    for (target, op), counts in ops.items():
        row = [target, op, _cell(counts)]
        row += [_cell(cells.get((target, op, m))) for m in names]
        rows.append(row)
    return tabulate(rows, headers=["target", "op class", "all", *names])


def false_alarm_table(report: MutationReport) -> str:
    rows = []
    for seed in report.seeds:
        runs = [f for f in report.false_alarms if f.seed == seed]
        rows.append(
            [
                seed,
                len(runs),
                sum(f.examples for f in runs),
                sum(f.failed for f in runs),
                sum(f.not_differentiable for f in runs),
                sum(f.forward_calls for f in runs),
            ]
        )
    headers = ["seed", "targets", "checks", "false alarms", "not differentiable", "forward calls"]
    return tabulate(rows, headers=headers)


def summary(report: MutationReport) -> str:
    pct = 100.0 * report.caught / report.total if report.total else 100.0
    return (
        f"mutants caught: {report.caught}/{report.total} ({pct:.1f}%), "
        f"{report.equivalent} equivalent excluded, {len(report.survivors)} survived, "
        f"{len(report.unreached)} unreached; "
        f"false alarms: {report.false_alarm_count} in "
        f"{sum(f.examples for f in report.false_alarms)} checks of unmutated targets "
        f"over seeds {', '.join(map(str, report.seeds))}; "
        f"{report.forward_calls} forward calls; {report.seconds:.1f} s"
        + (
            f"; not run (the engine cannot compute them in this dtype): "
            f"{', '.join(report.unsupported)}"
            if report.unsupported
            else ""
        )
    )


def render(report: MutationReport) -> str:
    parts = [
        "By mutation (each target's op classes x seeds):",
        by_mutation_table(report),
        "",
        "By target and op class (caught/live per mutation; eq = equivalent, excluded):",
        by_op_table(report),
        "",
        "False alarms on the unmutated targets:",
        false_alarm_table(report),
    ]
    for s in report.unreached:
        parts += ["", f"UNREACHED {s.target} / {s.op} / {s.mutation} (seed {s.seed})"]
    for s in report.survivors:
        parts += ["", f"SURVIVED {s.target} / {s.op} / {s.mutation} (seed {s.seed}): {s.detail}"]
    for f in report.false_alarms:
        for text in f.failures:
            parts += ["", f"FALSE ALARM {f.target} (seed {f.seed}) {text}"]
    parts += ["", summary(report)]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", default="gradcheck.builtin_targets")
    parser.add_argument("--targets", nargs="*", help="only these targets (names in the module)")
    parser.add_argument("--mutations", nargs="*", choices=list(MUTATIONS))
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    parser.add_argument("--examples", type=int, default=5, help="inputs per target and seed")
    parser.add_argument(
        "--dtype",
        choices=["float64", "float32", "float16"],
        help="every target's inputs in this dtype (default: each target's own)",
    )
    parser.add_argument(
        "--mode",
        choices=["full", "auto"],
        default="full",
        help="the checks' mode (auto: through its screen, which must find what full finds)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the full report as JSON")
    parser.add_argument("--quiet", action="store_true", help="print the summary line only")
    args = parser.parse_args(argv)
    report = run_suite(
        args.module,
        targets=args.targets,
        mutations=args.mutations,
        seeds=args.seeds,
        examples=args.examples,
        dtype=args.dtype,
        mode=args.mode,
        progress=None if args.quiet else lambda name: print(f"  {name}", file=sys.stderr),
    )
    print(summary(report) if args.quiet else render(report))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report.to_dict(), fh, indent=1)
    perfect = not report.survivors and not report.unreached and report.false_alarm_count == 0
    return 0 if perfect else 1


if __name__ == "__main__":
    sys.exit(main())
