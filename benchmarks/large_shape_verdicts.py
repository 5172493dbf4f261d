"""Verdicts of ``gradcheck.verify`` at a large given shape, for the built-in targets and
their mutants: what drawing large arrays in bulk (more than 128 elements, see
``gradcheck.strategies.inputs.SPARSE_LIMIT``) must keep.

For the first ``--rows`` rows of ``gradcheck.builtin_targets.TABLE`` whose shapes are
drawn (no ``shapes`` setting, a fixed number of tensor inputs), every input gets
``--shape`` (12x12 by default: 144 elements); each row is verified with its own
settings, ``--examples`` examples, seeds 0 and 1, unmutated (every verdict should be
"passed") and under the mutations sign_flip, scale_1e-6, zero_element and reverse
(every verdict should be "failed", but for mutants equivalent at that dtype). Prints
the counts, the cases that went the wrong way, and the run's seconds; ``--json``
writes every verdict, to compare two checkouts (run each with ``PYTHONPATH`` set to
it).

    PYTHONPATH=. python benchmarks/large_shape_verdicts.py [--rows 60] [--shape 12,12]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
import warnings
from typing import Any

MUTANTS = ("sign_flip", "scale_1e-6", "zero_element", "reverse")


def verdicts(rows: int, shape: str, examples: int, progress: bool) -> dict[str, list[str]]:
    from gradcheck import builtin_targets
    from gradcheck.checking.signature import op_signature
    from gradcheck.operation import Operation
    from gradcheck.search.verifier import verify
    from gradcheck.testing import MUTATIONS, applicable, mutated

    out: dict[str, list[str]] = {}
    for row in builtin_targets.TABLE[:rows]:
        if row.call is not None or "shapes" in row.settings:
            continue
        sig = op_signature(row.op)
        if sig.variadic or sig.arity < 1:
            continue
        settings = {k: v for k, v in row.settings.items() if k not in ("max_examples", "broadcast")}

        def run(
            seed: int,
            op: Any = row.op,
            n: int = sig.arity,
            kw: Any = settings,
            name: str = row.name,
        ) -> str:
            start = time.perf_counter()
            found = verify(op, shapes=[shape] * n, max_examples=examples, seed=seed, **kw)
            if progress:
                print(
                    f"{name} seed {seed}: {found.verdict} in {time.perf_counter() - start:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
            return str(found.verdict)

        out[row.name] = [run(0), run(1)]
        op_class = row.op if isinstance(row.op, type) and issubclass(row.op, Operation) else None
        op_class = op_class or getattr(row.op, "_wrapped_op", None)
        if op_class is None:
            continue
        for name in MUTANTS:
            mutation = MUTATIONS[name]
            if applicable(mutation, op_class):
                with mutated(op_class, mutation):
                    out[f"{row.name}[{name}]"] = [run(0), run(1)]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=60)
    parser.add_argument("--shape", default="12,12")
    parser.add_argument("--examples", type=int, default=20)
    parser.add_argument("--json", help="write every verdict to this file")
    parser.add_argument("--progress", action="store_true", help="each run's verdict, as it ends")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    start = time.perf_counter()
    found = verdicts(args.rows, args.shape, args.examples, args.progress)
    seconds = time.perf_counter() - start
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    wrong = []
    for case, seen in found.items():
        kind = "mutant" if "[" in case else "correct"
        for verdict in seen:
            counts[(kind, verdict)] += 1
        if (kind == "correct" and set(seen) != {"passed"}) or (
            kind == "mutant" and "passed" in seen
        ):
            wrong.append(f"  {case}: {', '.join(seen)}")
    for (kind, verdict), n in sorted(counts.items()):
        print(f"{kind:8s} {verdict:18s} {n}")
    print("the other way (a correct op not passed, a mutant passed):")
    print("\n".join(wrong) or "  none")
    print(
        f"{len(found)} cases, 2 seeds each, shape {args.shape}, {args.examples} examples: "
        f"{seconds:.0f} s"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(found, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
