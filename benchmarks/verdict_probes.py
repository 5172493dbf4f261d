"""Verdict probes (issue 34 items 7, 9, 10, 11): each probe is a correct op and its
buggy twin (``benchmarks/verdict_probe_ops.py``), judged two ways:

- ``gradcheck.check`` on the probe's fixed inputs (seed 0): the correct op must pass
  (a true kink: "not differentiable", never "failed"), the twin must fail;
- ``gradcheck verify`` (the command, one run per seed, every probe's two targets, each
  with its ``describe`` settings, default settings otherwise) on seeds 0, 1 and 2: the
  correct op must pass, the twin must fail. A C1 op (``smoothness``) is wrong also
  where a check or a search calls it "not differentiable" anywhere.

Families: ``scale`` (a 1e-3 relative error at input scales 1e-9..1e9), ``units``
(the same op with inputs and outputs rescaled by 2**±20 and 2**±40), ``smoothness``
(C1 functions whose second derivative jumps, at and near the jump), ``kink`` (|x|,
relu, max at a tie), ``singular`` (log|det|, inverse and solve near a singular
matrix, sqrt, log and 1/x near 0, atan2 near the origin), ``structural`` (torch
backwards that round in log space or by a norm, several outputs each of one input,
torch's ZeroTensor) and ``shapes`` (reductions wrong only at a 3-d input with a
size-1 middle axis). Prints the table and the count of wrong verdicts; exits 1 if
any.

    PYTHONPATH=. python benchmarks/verdict_probes.py [--seeds 0,1,2] [--family scale]
        [--only NAME] [--no-verify] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OPS_FILE = "benchmarks/verdict_probe_ops.py"
NOT_DIFFERENTIABLE = "not differentiable there"
sys.path.insert(0, str(HERE))

import verdict_probe_ops as ops


def check_verdicts(probe: ops.Probe) -> tuple[str, str, str]:
    """``check``'s verdicts on the correct op and the twin, and a note."""
    from gradcheck import check

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        right = check(getattr(ops, probe.correct), *probe.inputs, seed=0)
        twin_inputs = probe.buggy_inputs or probe.inputs
        wrong = check(getattr(ops, probe.buggy), *twin_inputs, seed=0)
    note = right.note if right.verdict != "passed" else ""
    if right.verdict == "failed" and right.failure is not None:
        note = f"{right.failure.kind}: {str(right.failure.message)[:70]}"
    return right.verdict, wrong.verdict, note


def verify_runs(names: list[str], seed: int) -> dict[str, dict[str, Any]]:
    """One ``gradcheck verify`` run of the named targets at ``seed``: name -> its JSON."""
    cmd = [sys.executable, "-m", "gradcheck", "verify", "--seed", str(seed), "--format", "json"]
    cmd += [f"{OPS_FILE}:{name}" for name in names]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent, check=False)
    if done.returncode not in (0, 1):
        sys.exit(f"gradcheck verify exited {done.returncode}: {done.stderr[-2000:]}")
    out = json.loads(done.stdout)
    return {t["target"].rsplit(":", 1)[1]: t for t in out["targets"]}


def _verify_cell(found: dict[str, Any], must: str, smooth: bool) -> tuple[bool, str]:
    verdict = found["verdict"]
    skipped = found.get("skipped") or {}
    ok = verdict == must and not (smooth and skipped.get(NOT_DIFFERENTIABLE))
    text = verdict[:4]
    if skipped:
        text += "(" + ",".join(f"{n}{k[:6]}" for k, n in skipped.items()) + ")"
    return ok, text


def _row(probe: ops.Probe, checked: tuple[str, str, str] | None, runs: dict) -> tuple:
    smooth = probe.family == "smoothness"
    cells: list[str] = []
    wrong: list[str] = []
    if checked is not None:
        right, twin, note = checked
        ok_right = right in probe.correct_ok
        cells += [right + ("" if ok_right else " !"), twin + ("" if twin == "failed" else " !")]
        wrong += [] if ok_right else [f"check {probe.correct}: {right} {note}"]
        wrong += [] if twin == "failed" else [f"check {probe.buggy}: {twin}"]
    for seed, found in runs.items():
        for name, must in ((probe.correct, "passed"), (probe.buggy, "failed")):
            ok, text = _verify_cell(found[name], must, smooth and name == probe.correct)
            cells.append(text + ("" if ok else " !"))
            if not ok:
                wrong.append(f"verify {name} seed {seed}: {text} {found[name].get('note') or ''}")
    return cells, wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--family", default=None)
    parser.add_argument("--only", default=None, help="probes whose name contains this")
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    probes = [
        p
        for p in ops.PROBES
        if (args.family is None or p.family == args.family)
        and (args.only is None or args.only in p.name)
    ]
    start = time.perf_counter()
    checked = {id(p): None if args.no_check else check_verdicts(p) for p in probes}
    names = sorted({n for p in probes for n in (p.correct, p.buggy)})
    seeds = [] if args.no_verify else [int(s) for s in args.seeds.split(",")]
    found = {seed: verify_runs(names, seed) for seed in seeds}
    header = ["family", "probe"]
    header += [] if args.no_check else ["check ok", "check bug"]
    header += [f"s{s} {w}" for s in seeds for w in ("ok", "bug")]
    rows, wrongs = [], []
    for p in probes:
        cells, wrong = _row(p, checked[id(p)], {s: found[s] for s in seeds})
        rows.append([p.family, p.name + (f" {p.tag}" if p.tag else ""), *cells])
        wrongs += wrong
    from tabulate import tabulate

    print(tabulate(rows, headers=header))
    verdicts = len(probes) * (2 * (not args.no_check) + 2 * len(seeds))
    print(f"\n{len(probes)} probes, {verdicts} verdicts, {len(wrongs)} wrong", end="")
    print(f" ({time.perf_counter() - start:.0f} s)")
    for line in wrongs:
        print("  " + line)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "wrong": wrongs}, indent=1))
    return 1 if wrongs else 0


if __name__ == "__main__":
    sys.exit(main())
