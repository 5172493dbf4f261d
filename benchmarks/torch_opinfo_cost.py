"""One check of one given input, against ``torch.autograd.gradcheck``, over PyTorch's
operator database (OpInfo), side by side in one run (issue 40 item 4).

For each op of ``op_db`` that supports autograd in float64 on the CPU (every
``--every``-th of them, from ``--offset``: the whole database takes hours on a shared
machine), each float64 sample its ``sample_inputs`` gives is checked on the same tensors
twice, one right after the other:

- torch: ``torch.testing._internal.common_utils.gradcheck`` with the arguments torch's
  own ``test_fn_grad`` passes (``check_batched_grad=op.check_batched_grad``,
  ``check_grad_dtypes=True``, ``nondet_tol=op.gradcheck_nondet_tol``,
  ``fast_mode=op.gradcheck_fast_mode`` (fast unless the op says otherwise),
  ``check_undefined_grad=True``), on the function of the tensors that require grad
  that the test builds;
- gradcheck: ``gradcheck.check(fn, *arrays, seed=0, mode=...)``, default settings
  (``--mode``: ``auto``, the default, is full mode, every element, up to 4096 elements;
  ``fast`` is random directions, as torch's fast mode), on the same function (marked
  as a torch function) and the same values as NumPy arrays.

Per sample the wall time of each (``time.perf_counter``) and the calling thread's CPU
time (``time.thread_time``: on a loaded machine the wall time is mostly the wait for a
core), our forward and backward calls
and verdict; then the median and 90th percentile of each side and of the ratios, and
the slowest samples (with ``--repeat N``, each sample N times, alternating which side
goes first, and each side's least time kept). BLAS and torch run single-threaded. Needs
torch and its test helpers (``pip install expecttest``); without them the script says so
and exits 0.

Run from the repository root::

    PYTHONPATH=. python benchmarks/torch_opinfo_cost.py --every 10 [--offset 0]
        [--ops NAME ...] [--mode auto|full|fast] [--repeat 3] [--json out.json]
        [--slowest 10]
    PYTHONPATH=. python benchmarks/torch_opinfo_cost.py --per-call add sin mul
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import json
import statistics
import sys
import time
import warnings
from typing import Any


def _database() -> tuple[Any, Any, Any] | None:
    try:
        import torch
        from torch.testing._internal.common_methods_invocations import op_db
        from torch.testing._internal.common_utils import gradcheck as torch_gradcheck
    except ImportError as exc:
        print(f"torch's operator database is not importable ({exc}): skipped")
        return None
    return torch, op_db, torch_gradcheck


def _recompose(torch: Any, inputs: tuple[Any, ...], template: Any, at: int) -> tuple[Any, int]:
    """``template`` with its tensors that require grad taken from ``inputs`` in order
    (as torch's test does); (the value, the next index)."""
    if isinstance(template, torch.Tensor) and template.requires_grad:
        return inputs[at], at + 1
    if isinstance(template, (list, tuple)) and all(isinstance(t, torch.Tensor) for t in template):
        out = []
        for t in template:
            value, at = _recompose(torch, inputs, t, at)
            out.append(value)
        return type(template)(out), at
    return template, at


def torch_test_settings(op: Any) -> dict[str, Any]:
    """The settings torch's own gradient test (test_fn_grad) checks an op of op_db with."""
    return {
        "check_batched_grad": op.check_batched_grad,
        "check_grad_dtypes": True,
        "nondet_tol": op.gradcheck_nondet_tol,
        "fast_mode": op.gradcheck_fast_mode,
        "check_forward_ad": False,
        "check_backward_ad": True,
        "check_undefined_grad": True,
        "check_batched_forward_grad": False,
    }


def sample_function(torch: Any, op: Any, sample: Any) -> tuple[Any, tuple[Any, ...]]:
    """(fn, the tensors that require grad): the function torch's gradient test checks."""
    from gradcheck.checking.adapters import framework

    whole = sample.input
    if isinstance(whole, (list, tuple)):
        every = [*whole, *sample.args, *sample.kwargs.values()]
    else:
        every = [whole, *sample.args, *sample.kwargs.values()]
    flat: list[Any] = []
    for x in every:
        if isinstance(x, (list, tuple)):
            flat.extend(x)
        else:
            flat.append(x)
    args = tuple(x for x in flat if isinstance(x, torch.Tensor) and x.requires_grad)
    variant = op.get_op()

    @framework("torch")
    def fn(*inputs: Any) -> Any:
        first, at = _recompose(torch, inputs, sample.input, 0)
        positional = [first]
        for a in sample.args:
            value, at = _recompose(torch, inputs, a, at)
            positional.append(value)
        kwargs = {}
        for k, a in sample.kwargs.items():
            kwargs[k], at = _recompose(torch, inputs, a, at)
        out = op.gradcheck_wrapper(variant, *positional, **kwargs)
        if sample.output_process_fn_grad is not None:
            return sample.output_process_fn_grad(out)
        return out

    return fn, args


def torch_side(
    torch_gradcheck: Any, op: Any, fn: Any, args: tuple[Any, ...]
) -> tuple[float, float, str]:
    start, cpu = time.perf_counter(), time.thread_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ok = torch_gradcheck(
                fn,
                args,
                **torch_test_settings(op),
            )
        how = "passed" if ok else "failed"
    except Exception as exc:
        how = type(exc).__name__
    return time.perf_counter() - start, time.thread_time() - cpu, how


def our_side(fn: Any, args: tuple[Any, ...], mode: str = "auto") -> tuple[float, dict[str, Any]]:
    import gradcheck

    arrays = [a.detach().numpy().copy() for a in args]
    start, cpu = time.perf_counter(), time.thread_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = gradcheck.check(fn, *arrays, seed=0, mode=mode)
        info = {
            "verdict": r.verdict,
            "kind": r.failure.kind if r.failure is not None else "",
            "forward_calls": r.forward_calls,
            "backward_calls": r.backward_calls,
            "mode": r.settings.get("mode", ""),
        }
    except Exception as exc:
        info = {"verdict": f"raised {type(exc).__name__}", "kind": "", "forward_calls": 0}
        info["backward_calls"], info["mode"] = 0, ""
    return time.perf_counter() - start, time.thread_time() - cpu, info


def run(args: argparse.Namespace, torch: Any, op_db: Any, torch_gradcheck: Any) -> list[dict]:
    torch.set_num_threads(1)
    ops = [
        op for op in op_db if op.supports_autograd and torch.float64 in op.supported_dtypes("cpu")
    ]
    if args.ops:
        ops = [op for op in ops if op.name in args.ops or op.full_name in args.ops]
    else:
        ops = ops[args.offset :: args.every]
    # Warm-up (the first check imports the checker's modules, torch its own): not timed.
    warm = next(iter(op_db[0].sample_inputs("cpu", torch.float64, requires_grad=True)))
    fn, tensors = sample_function(torch, op_db[0], warm)
    our_side(fn, tensors, args.mode)
    torch_side(torch_gradcheck, op_db[0], fn, tensors)
    rows: list[dict] = []
    for op in ops:
        try:
            samples = list(op.sample_inputs("cpu", torch.float64, requires_grad=True))
        except Exception as exc:
            print(f"{op.full_name}: no samples ({type(exc).__name__})", file=sys.stderr)
            continue
        for k, sample in enumerate(samples[: args.max_samples]):
            fn, tensors = sample_function(torch, op, sample)
            if not tensors or any(t.layout != torch.strided for t in tensors):
                continue  # (sparse tensors: gradcheck takes arrays)
            elements = sum(t.numel() for t in tensors)
            # alternate which goes first, so that neither always meets warm caches
            if elements > args.max_elements:
                continue
            best = [float("inf")] * 4  # each side's least wall and CPU time over repeats
            for rep in range(args.repeat):
                if (k + rep) % 2:
                    ours_s, ours_cpu, info = our_side(fn, tensors, args.mode)
                    torch_s, torch_cpu, how = torch_side(torch_gradcheck, op, fn, tensors)
                else:
                    torch_s, torch_cpu, how = torch_side(torch_gradcheck, op, fn, tensors)
                    ours_s, ours_cpu, info = our_side(fn, tensors, args.mode)
                best = [min(b, t) for b, t in zip(best, (ours_s, ours_cpu, torch_s, torch_cpu))]
            ours_s, ours_cpu, torch_s, torch_cpu = best
            row = {"op": op.full_name, "sample": k, "elements": elements}
            row.update(ours_s=ours_s, torch_s=torch_s, ours_cpu=ours_cpu, torch_cpu=torch_cpu)
            row.update(torch=how, **info)
            rows.append(row)
            if args.verbose:
                print(
                    f"{op.full_name}[{k}] n={elements} ours {ours_s * 1e3:.1f} ms "
                    f"({info['verdict']} {info['kind']}, {info['forward_calls']}f/"
                    f"{info['backward_calls']}b) torch {torch_s * 1e3:.1f} ms ({how})",
                    flush=True,
                )
    return rows


def per_call(torch: Any, op_db: Any, names: list[str], calls: int = 2000) -> list[str]:
    """The finite differences' inner loop on a few ops' first samples: microseconds per
    call of the torch target's bound forward (``Target.bind``: tensors made once) and of
    the generic path it replaced (``Target.forward`` per call: a tensor per array,
    ``torch.no_grad()``, a copy of the output), alternating in blocks, medians of 5."""
    from dataclasses import replace

    from gradcheck.checking.target import resolve_target
    from gradcheck.graph import no_autodiff

    lines = ["per forward call in the finite differences (us, median of 5 blocks):"]
    for name in names:
        op = next(o for o in op_db if o.full_name == name)
        sample = next(iter(op.sample_inputs("cpu", torch.float64, requires_grad=True)))
        fn, tensors = sample_function(torch, op, sample)
        arrays = [t.detach().numpy().copy() for t in tensors]
        tgt = resolve_target(fn)
        generic = replace(tgt, binder=None)
        tgt.forward(arrays)
        times: dict[str, list[float]] = {"bound": [], "generic": []}
        for _ in range(5):
            for label, t in (("bound", tgt), ("generic", generic)):
                call = t.bind(arrays)
                start = time.perf_counter()
                with no_autodiff:
                    for _ in range(calls):
                        call()
                times[label].append((time.perf_counter() - start) / calls * 1e6)
        b, g = statistics.median(times["bound"]), statistics.median(times["generic"])
        size = sum(a.size for a in arrays)
        lines.append(f"  {name} ({size} elements): bound {b:.1f}, generic {g:.1f} ({g / b:.2f}x)")
    return lines


def summary(rows: list[dict], slowest: int) -> list[str]:
    def pct(xs: list[float], q: float) -> float:
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(q * len(xs)))]

    ours = [r["ours_s"] for r in rows]
    theirs = [r["torch_s"] for r in rows]
    ratios = [r["ours_s"] / r["torch_s"] for r in rows if r["torch_s"] > 0]
    cpu_ratios = [r["ours_cpu"] / r["torch_cpu"] for r in rows if r["torch_cpu"] > 0]
    ops = len({r["op"] for r in rows})
    lines = [
        f"{len(rows)} samples of {ops} ops",
        f"gradcheck.check: median {statistics.median(ours) * 1e3:.1f} ms, 90th percentile "
        f"{pct(ours, 0.9) * 1e3:.1f} ms, slowest {max(ours):.2f} s, total {sum(ours):.1f} s",
        f"torch gradcheck: median {statistics.median(theirs) * 1e3:.1f} ms, 90th percentile "
        f"{pct(theirs, 0.9) * 1e3:.1f} ms, slowest {max(theirs):.2f} s, total {sum(theirs):.1f} s",
        f"ratio of medians {statistics.median(ours) / statistics.median(theirs):.2f}x; "
        f"median of per-sample ratios {statistics.median(ratios):.2f}x; "
        f"ratio of totals {sum(ours) / sum(theirs):.2f}x",
        f"samples over 5 s: {sum(1 for x in ours if x > 5)}",
        "CPU seconds of the calling thread (less sensitive to a loaded machine): median "
        f"{statistics.median(r['ours_cpu'] for r in rows) * 1e3:.2f} ms against "
        f"{statistics.median(r['torch_cpu'] for r in rows) * 1e3:.2f} ms; median of "
        f"per-sample ratios {statistics.median(cpu_ratios):.2f}x; ratio of totals "
        f"{sum(r['ours_cpu'] for r in rows) / sum(r['torch_cpu'] for r in rows):.2f}x",
        "slowest (ours):",
    ]
    for r in sorted(rows, key=lambda r: -r["ours_s"])[:slowest]:
        lines.append(
            f"  {r['op']}[{r['sample']}] {r['elements']} elements: {r['ours_s']:.3f} s "
            f"({r['mode']}, {r['forward_calls']} forward, {r['backward_calls']} backward, "
            f"{r['verdict']}) against torch {r['torch_s']:.3f} s"
        )
    verdicts: dict[str, int] = {}
    for r in rows:
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    lines.append(f"verdicts: {verdicts}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=10, help="every k-th op (1: all)")
    parser.add_argument("--offset", type=int, default=0, help="the first op taken")
    parser.add_argument("--ops", nargs="*", help="these ops only (name or full name)")
    parser.add_argument("--max-samples", type=int, default=10**9, help="per op, at most")
    parser.add_argument("--slowest", type=int, default=10)
    parser.add_argument(
        "--max-elements", type=int, default=10**12, help="skip larger samples (elements)"
    )
    parser.add_argument(
        "--mode",
        default="auto",
        choices=["auto", "full", "fast"],
        help="gradcheck.check's mode (torch's test settings are its fast mode)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="each sample this many times, alternating the sides; the least time of each "
        "side kept (on a loaded machine the least is the one least disturbed)",
    )
    parser.add_argument("--json", metavar="PATH", help="every sample's row")
    parser.add_argument("--verbose", action="store_true", help="a line per sample")
    parser.add_argument(
        "--per-call",
        nargs="*",
        metavar="OP",
        help="only the cost per forward call of the finite differences on these ops' "
        "first samples (bound against generic path, alternating)",
    )
    args = parser.parse_args(argv)
    found = _database()
    if found is None:
        return 0
    torch, op_db, torch_gradcheck = found
    print(
        f"torch {torch.__version__}; gradcheck.check mode {args.mode}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    if args.per_call is not None:
        torch.set_num_threads(1)
        print("\n".join(per_call(torch, op_db, args.per_call or ["add", "sin", "mul"])))
        return 0
    rows = run(args, torch, op_db, torch_gradcheck)
    if not rows:
        print("no samples")
        return 0
    print("\n".join(summary(rows, args.slowest)))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
