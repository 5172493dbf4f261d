"""A corpus of gradient bugs of the kinds reported against public projects, with their
fixes, and hard correct ops: what ``gradcheck verify`` catches and where it false-alarms,
beside ``torch.autograd.gradcheck`` on the torch ones.

The corpus is ``benchmarks/bug_corpus/``: torch ``autograd.Function``s, ``nn.Module``s,
JAX ``custom_vjp``/``custom_jvp`` functions and MyGrad ``Operation``s, written as such
ops are written. A target named ``Bug...``/``bug_...`` has a bug, its twin
``Fix...``/``fix_...`` is the fix; ``Ok...``/``ok_...`` are hard correct ops (singular
matrices, saturation, cancellation, several outputs, complex numbers). Each file is
checked with ``gradcheck verify FILE --seed S --format json`` at default settings (an
op's own ``describe`` says what its author knew: shapes, dtype, integer inputs), one
command per file and seed.

torch's verdict: ``torch.autograd.gradcheck`` (and ``gradgradcheck`` for an op
described with ``order=2``) at its default settings, on one input per seed drawn with
``torch.manual_seed(seed)``: float64 (complex128 for complex ops), shape 3x4 unless the
op's ``describe`` gives shapes (named sizes 3), values uniform in the op's domain
(within +-2 otherwise). A raise counts as a failure.

    PYTHONPATH=. python benchmarks/bug_corpus.py [--seeds 0 1 2] [--files torch_functions]
        [--json out.json] [--no-torch] [--tree /path/to/another/checkout]
        [--dir benchmarks/bug_corpus2] [--jobs 2] [--raw kept/]

``--dir`` runs another corpus written the same way (every ``*.py`` in it is a file;
``benchmarks/bug_corpus2`` is a held-out one).

Exit status 1 when a bug was missed on some seed or a correct op did not pass.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).resolve().parent / "bug_corpus"
DEFAULT_CORPUS = CORPUS
FILES = ("torch_functions", "torch_modules", "jax_functions", "mygrad_ops", "correct_ops")


def is_bug(name: str) -> bool:
    return name.lower().startswith("bug")


def corpus_files(corpus: Path) -> tuple[str, ...]:
    """The files of a corpus directory: the default one's in their usual order."""
    if corpus.resolve() == DEFAULT_CORPUS:
        return FILES
    return tuple(sorted(p.stem for p in corpus.glob("*.py") if not p.stem.startswith("_")))


def verify_file(
    stem: str, seed: int, tree: Path = ROOT, raw: Path | None = None
) -> dict[str, dict[str, Any]]:
    """``gradcheck verify`` on one corpus file, with the gradcheck of ``tree`` (a
    checkout: this one, or the code before a change): each target's JSON entry by name.
    With ``raw``, the command's JSON is kept there as it finishes, and read back instead
    of running the command again (a long run that was stopped goes on)."""
    kept = raw / f"{stem}_seed{seed}.json" if raw else None
    if kept is not None and kept.exists():
        doc = json.loads(kept.read_text())
        return {t["target"].rsplit(":", 1)[1]: t for t in doc["targets"]}
    path = CORPUS / f"{stem}.py"
    cmd = [sys.executable, "-m", "gradcheck", "verify", str(path), "--seed", str(seed)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [*cmd, "--format", "json"], cwd=tree, env=env, capture_output=True, text=True
    )
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        print(f"{stem} seed {seed}: exit {done.returncode}: {' / '.join(tail)}", file=sys.stderr)
        return {}
    if kept is not None:
        kept.write_text(done.stdout)
    return {t["target"].rsplit(":", 1)[1]: t for t in doc["targets"]}


def gradcheck_cell(entry: dict[str, Any] | None) -> str:
    """One run's verdict, with the failure kind where it failed."""
    if entry is None:
        return "missing"
    verdict = entry["verdict"]
    failure = entry.get("failure") or {}
    return f"{verdict}:{failure['kind']}" if failure.get("kind") else verdict


def _torch_inputs(torch: Any, obj: Any, seed: int) -> list[Any]:
    from gradcheck.search.description import description_of

    desc = description_of(obj)
    params = _torch_arity(obj)
    shapes = list(desc.shapes) if desc and desc.shapes else ["3,4"] * params
    complex_ = bool(desc and desc.dtype and desc.dtype.startswith("complex"))
    lo, hi = desc.domain if desc and desc.domain else (-2.0, 2.0)
    integers = dict(desc.integers) if desc and desc.integers else {}
    booleans = set(desc.booleans) if desc and desc.booleans else set()
    gen = torch.Generator().manual_seed(seed)
    inputs = []
    for i, spec in enumerate(shapes):
        shape = tuple(int(s) if s.isdigit() else 3 for s in str(spec).split(",") if s)
        if i in integers:
            inputs.append(torch.randint(*integers[i], shape, generator=gen))
        elif i in booleans:
            inputs.append(torch.rand(shape, generator=gen, dtype=torch.float64) > 0.5)
        else:
            dtype = torch.complex128 if complex_ else torch.float64
            x = lo + (hi - lo) * torch.rand(shape, generator=gen, dtype=dtype)
            inputs.append(x.requires_grad_())
    return inputs


def _torch_arity(obj: Any) -> int:
    import inspect

    fn = obj.forward if isinstance(obj, type) else obj
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.default is inspect.Parameter.empty and p.name != "ctx"
    ]
    return len(params)


def torch_verdict(obj: Any, seed: int) -> str:
    """``torch.autograd.gradcheck``'s verdict on a torch Function or function."""
    import torch

    from gradcheck.search.description import description_of

    fn = obj.apply if isinstance(obj, type) else obj
    desc = description_of(obj)
    try:
        inputs = _torch_inputs(torch, obj, seed)
        ok = torch.autograd.gradcheck(fn, inputs, raise_exception=False)
        if ok and desc is not None and desc.order == 2:
            ok = torch.autograd.gradgradcheck(fn, inputs, raise_exception=False)
    except Exception as exc:  # a raise is a failure, as torch's own tests count it
        return f"raised:{type(exc).__name__}"
    return "passed" if ok else "failed"


def torch_targets(stem: str) -> dict[str, Any]:
    """The torch Functions and functions of a corpus file, by name."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location(f"_corpus_{stem}", CORPUS / f"{stem}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = {}
    for name, obj in vars(module).items():
        if name.startswith("_"):
            continue
        if isinstance(obj, type) and issubclass(obj, torch.autograd.Function):
            found[name] = obj
        elif callable(obj) and getattr(obj, "__module__", None) == module.__name__:
            if not isinstance(obj, type) and stem.startswith(("torch", "correct")):
                if "jax" not in name and hasattr(obj, "__code__"):
                    found[name] = obj
    return found


def run(
    stems: list[str],
    seeds: list[int],
    with_torch: bool,
    tree: Path,
    jobs: int = 1,
    raw: Path | None = None,
) -> list[dict[str, Any]]:
    """One row per target: its verdicts on every seed, gradcheck's and torch's (``jobs``
    commands at a time)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(stem: str, seed: int) -> dict[str, dict[str, Any]]:
        start = time.perf_counter()
        entries = verify_file(stem, seed, tree, raw)
        took = time.perf_counter() - start
        print(f"{stem} seed {seed}: {len(entries)} targets, {took:.0f} s", file=sys.stderr)
        return entries

    pairs = [(stem, seed) for seed in seeds for stem in stems]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        done = list(pool.map(lambda pair: one(*pair), pairs))
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for (stem, seed), entries in zip(pairs, done):
        for name, entry in entries.items():
            row = rows.setdefault((stem, name), {"file": stem, "target": name, "seeds": {}})
            row["seeds"][seed] = gradcheck_cell(entry)
            row.setdefault("failures", {})[seed] = entry.get("failure")
    if with_torch:
        for stem in stems:
            for name, obj in torch_targets(stem).items():
                row = rows.setdefault((stem, name), {"file": stem, "target": name, "seeds": {}})
                row["torch"] = {seed: torch_verdict(obj, seed) for seed in seeds}
    return list(rows.values())


def judged(row: dict[str, Any], seeds: list[int]) -> tuple[int, int]:
    """(good runs, bad runs) of gradcheck on a row: a bug failed / a correct op passed."""
    bug = is_bug(row["target"])
    good = sum(
        row["seeds"].get(s, "missing").startswith("failed" if bug else "passed") for s in seeds
    )
    return good, len(seeds) - good


def torch_judged(row: dict[str, Any]) -> tuple[int, int] | None:
    if "torch" not in row:
        return None
    bug = is_bug(row["target"])
    good = sum((v != "passed") == bug for v in row["torch"].values())
    return good, len(row["torch"]) - good


def summary(rows: list[dict[str, Any]], seeds: list[int]) -> list[list[Any]]:
    out = []
    for label, pick in (("bugs", True), ("correct ops", False)):
        mine = [r for r in rows if is_bug(r["target"]) == pick]
        every = sum(judged(r, seeds)[1] == 0 for r in mine)
        bad_runs = sum(judged(r, seeds)[1] for r in mine)
        torched = [r for r in mine if "torch" in r]
        t_every = sum(torch_judged(r)[1] == 0 for r in torched)  # type: ignore[index]
        what = "caught on every seed" if pick else "passed on every seed"
        out.append(
            [
                label,
                len(mine),
                f"{every} {what}",
                f"{bad_runs} of {len(mine) * len(seeds)} runs "
                + ("missed" if pick else "false alarms"),
                f"torch: {t_every} of {len(torched)}",
            ]
        )
    return out


def main(argv: list[str] | None = None) -> int:
    global CORPUS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--jobs", type=int, default=1, help="verify commands run at once")
    parser.add_argument("--raw", type=Path, help="keep each command's JSON here; reuse it")
    parser.add_argument("--dir", type=Path, default=CORPUS, help="the corpus directory")
    parser.add_argument("--files", nargs="+", help="some of its files (stems)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--no-torch", action="store_true", help="leave torch's gradcheck out")
    parser.add_argument(
        "--tree",
        type=Path,
        default=ROOT,
        help="run the gradcheck of this checkout (e.g. main's, to compare before and after)",
    )
    args = parser.parse_args(argv)
    CORPUS = args.dir.resolve()
    known = corpus_files(CORPUS)
    files = args.files or list(known)
    unknown = sorted(set(files) - set(known))
    if unknown:
        parser.error(f"no such corpus file(s) in {CORPUS}: {', '.join(unknown)}")
    rows = run(
        files,
        args.seeds,
        with_torch=not args.no_torch,
        tree=args.tree.resolve(),
        jobs=args.jobs,
        raw=args.raw,
    )
    table = []
    for r in rows:
        _, bad = judged(r, args.seeds)
        torch_cells = " ".join(r["torch"][s] for s in args.seeds) if "torch" in r else "n/a"
        cells = " ".join(r["seeds"].get(s, "missing") for s in args.seeds)
        mark = "" if bad == 0 else ("MISSED" if is_bug(r["target"]) else "FALSE ALARM")
        table.append([r["file"], r["target"], cells, mark, torch_cells])
    print(tabulate(table, headers=["file", "target", "gradcheck by seed", "", "torch by seed"]))
    print()
    print(tabulate(summary(rows, args.seeds), headers=["", "ops", "gradcheck", "runs", "torch"]))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    return 0 if all(judged(r, args.seeds)[1] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
