"""Verdicts of ``gradcheck.check`` next to ``torch.autograd.gradcheck``'s over PyTorch's
operator database (OpInfo): a false-alarm and miss probe (issue 34).

For each op of ``op_db`` that supports autograd in float64 on the CPU (every
``--every``-th from ``--offset``, so that the database can run in chunks) and each of its
first ``--max-samples`` float64 samples, the same tensors are checked by both sides, as
``benchmarks/torch_opinfo_cost.py`` builds them (torch: its test's own gradcheck
settings, ``check_batched_grad=op.check_batched_grad`` and the rest; gradcheck:
``check(fn, *arrays, seed=0)``, default settings). Each side's call is stopped after
``--cap`` seconds of wall time (a ``SIGALRM``; the verdict is then ``timeout``).

One JSON line per sample is appended to ``--out`` as it is done (a chunk that is
stopped keeps what it did): op, sample, elements, torch's verdict (``passed``,
``failed``, or the exception's class and first line), ours (``verdict``, ``kind``, the
message's first lines). ``--summary FILE...`` reads such files and prints the agreement
table and every disagreement::

    PYTHONPATH=. python benchmarks/torch_opinfo_verdicts.py --every 3 --offset 0 \\
        --max-samples 4 --cap 30 --out /tmp/v0.jsonl
    PYTHONPATH=. python benchmarks/torch_opinfo_verdicts.py --summary /tmp/v*.jsonl
    PYTHONPATH=. python benchmarks/torch_opinfo_verdicts.py --ops sgn --max-samples 8 \\
        --out /dev/stdout
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import json
import signal
import sys
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from torch_opinfo_cost import _database, sample_function, torch_test_settings


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def _capped(cap: float, call: Any) -> Any:
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, cap)
    try:
        return call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def torch_verdict(torch_gradcheck: Any, op: Any, fn: Any, args: tuple[Any, ...], cap: float):
    def call() -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ok = torch_gradcheck(
                fn,
                args,
                **torch_test_settings(op),
            )
        return "passed" if ok else "failed"

    try:
        return _capped(cap, call), ""
    except _Timeout:
        return "timeout", ""
    except Exception as exc:
        text = str(exc).strip().splitlines()
        return f"raised {type(exc).__name__}", (text[0] if text else "")[:300]


def our_verdict(fn: Any, args: tuple[Any, ...], cap: float) -> dict[str, Any]:
    import gradcheck

    arrays = [a.detach().numpy().copy() for a in args]

    def call() -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return gradcheck.check(fn, *arrays, seed=0)

    try:
        r = _capped(cap, call)
    except _Timeout:
        return {"verdict": "timeout", "kind": "", "message": ""}
    except Exception as exc:
        return {"verdict": f"raised {type(exc).__name__}", "kind": "", "message": str(exc)[:300]}
    message = ""
    if r.failure is not None and "_Timeout" in (r.failure.exception or r.failure.message):
        return {"verdict": "timeout", "kind": "", "message": ""}  # (raised in the forward)
    if r.failure is not None:
        message = " | ".join(r.failure.message.strip().splitlines()[:4])[:400]
    elif r.note:
        message = str(r.note)[:300]
    return {"verdict": r.verdict, "kind": r.failure.kind if r.failure else "", "message": message}


def run(args: argparse.Namespace, torch: Any, op_db: Any, torch_gradcheck: Any) -> None:
    torch.set_num_threads(1)
    ops = [
        op for op in op_db if op.supports_autograd and torch.float64 in op.supported_dtypes("cpu")
    ]
    if args.ops:
        ops = [op for op in ops if op.name in args.ops or op.full_name in args.ops]
    else:
        ops = ops[args.offset :: args.every]
    with open(args.out, "a") as out:
        for op in ops:
            try:
                torch.manual_seed(0)
                samples = list(op.sample_inputs("cpu", torch.float64, requires_grad=True))
            except Exception as exc:
                row = {"op": op.full_name, "sample": -1, "torch": f"no samples {exc!r}"[:200]}
                out.write(json.dumps(row) + "\n")
                continue
            for k, sample in enumerate(samples[: args.max_samples]):
                if k < args.first_sample:
                    continue
                fn, tensors = sample_function(torch, op, sample)
                row: dict[str, Any] = {"op": op.full_name, "sample": k}
                if not tensors or any(t.layout != torch.strided for t in tensors):
                    row["torch"] = "not taken (no strided tensor requires grad)"
                    out.write(json.dumps(row) + "\n")
                    continue
                row["elements"] = sum(t.numel() for t in tensors)
                start = time.perf_counter()
                ours = our_verdict(fn, tensors, args.cap)
                row["ours_s"] = round(time.perf_counter() - start, 3)
                start = time.perf_counter()
                row["torch"], row["torch_message"] = torch_verdict(
                    torch_gradcheck, op, fn, tensors, args.cap
                )
                row["torch_s"] = round(time.perf_counter() - start, 3)
                row.update(ours)
                out.write(json.dumps(row) + "\n")
                out.flush()


def torch_expects(torch: Any, op: Any) -> str:
    """How torch's own gradient test (``TestBwdGradients.test_fn_grad``) in float64 is
    marked for ``op``: "expected failure", "skipped" or "" (run, expected to pass)."""
    import unittest

    for info in op.decorators:
        if getattr(info, "test_name", None) != "test_fn_grad":
            continue
        if getattr(info, "cls_name", None) not in (None, "TestBwdGradients"):
            continue
        if info.dtypes is not None and torch.float64 not in info.dtypes:
            continue
        for d in info.decorators:
            if d is unittest.expectedFailure:
                return "expected failure"
            if "skip" in getattr(d, "__qualname__", ""):
                return "skipped"
    return ""


def classify(row: dict[str, Any]) -> str:
    t, o = row["torch"], row["verdict"]
    if t == "timeout" or o == "timeout":
        return "timeout"
    if row.get("elements") == 0:
        return f"empty inputs: gradcheck {o} ({row['message']}), torch {t}"
    if t.startswith("raised"):
        t = "raised"
    if o.startswith("raised"):
        return f"gradcheck raised / torch {t}"
    if o == "passed":
        return "agree: both pass" if t == "passed" else f"MISS? torch {t}, gradcheck passed"
    if o == "failed":
        if t == "passed":
            return f"FALSE ALARM? gradcheck failed ({row['kind']}), torch passed"
        return f"agree: both fail ({row['kind']} / torch {t})"
    return f"gradcheck {o} / torch {t}"


def summarize(paths: list[str]) -> list[str]:
    rows = []
    for path in paths:
        with open(path) as fh:
            rows.extend(json.loads(line) for line in fh if line.strip())
    # a later row of the same sample (a rerun with a larger cap) replaces an earlier one
    rows = list({(r["op"], r["sample"]): r for r in rows}.values())
    judged = [r for r in rows if "verdict" in r]
    found = _database()
    marks: dict[str, str] = {}
    if found is not None:
        torch, op_db, _ = found
        marks = {op.full_name: torch_expects(torch, op) for op in op_db}
    untaken = [r for r in rows if "verdict" not in r]
    classes = Counter(classify(r) for r in judged)
    lines = [
        f"{len({r['op'] for r in rows})} ops, {len(judged)} samples judged "
        f"({len({r['op'] for r in judged})} ops), {len(untaken)} not taken",
        "",
        "| class | samples | ops |",
        "|---|---:|---:|",
    ]
    for name, count in classes.most_common():
        ops = {r["op"] for r in judged if classify(r) == name}
        lines.append(f"| {name} | {count} | {len(ops)} |")
    lines.append("")
    for r in judged:
        c = classify(r)
        if not c.startswith(("agree: both pass", "empty")):
            mark = marks.get(r["op"], "")
            lines.append(
                f"{c}: {r['op']}[{r['sample']}] n={r.get('elements')}: ours "
                f"{r['verdict']} {r['kind']} {r['message'][:200]!r}; torch {r['torch']} "
                f"{r.get('torch_message', '')[:120]!r}"
                + (f" (torch's own test_fn_grad: {mark})" if mark else "")
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="every k-th op (1: all)")
    parser.add_argument("--offset", type=int, default=0, help="the first op taken")
    parser.add_argument("--ops", nargs="*", help="these ops only (name or full name)")
    parser.add_argument("--max-samples", type=int, default=4, help="per op, at most")
    parser.add_argument("--first-sample", type=int, default=0, help="skip samples before")
    parser.add_argument("--cap", type=float, default=30.0, help="seconds per side per sample")
    parser.add_argument("--out", default="/dev/stdout", help="append JSON lines here")
    parser.add_argument("--summary", nargs="+", metavar="JSONL", help="only summarize these")
    args = parser.parse_args(argv)
    if args.summary:
        print("\n".join(summarize(args.summary)))
        return 0
    found = _database()
    if found is None:
        return 0
    torch, op_db, torch_gradcheck = found
    run(args, torch, op_db, torch_gradcheck)
    return 0


if __name__ == "__main__":
    sys.exit(main())
