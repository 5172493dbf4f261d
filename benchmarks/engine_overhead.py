"""Engine overhead: forward + backward against hand-written NumPy of the same math.

Question: how much does recording the graph and backpropagating cost on top of the
NumPy arithmetic itself? Each workload is written three ways: hand-written NumPy
(forward keeping what the backward needs, then the backward: the reference), our engine,
and MyGrad / PyTorch CPU when they are installed (skipped otherwise). Every
implementation's gradient is compared with the NumPy one before it is timed.

Workloads:
  chain      200 small elementwise ops (x*1.01, +0.5, sin, tanh; 50 times), 16 elements
  mlp        one step of a 3-layer relu MLP, batch 64, 256-256-256-10, softmax
             cross-entropy loss (gradcheck.nnet, mygrad.nnet, torch.nn.functional)
  big        an elementwise expression on 1e6 elements
  bcast      a broadcast multiply and reduce: sum over j of x[i, None] * y[None, j], 1000x1000
  fanout     a 2,000-node graph where each node combines two earlier nodes (8 elements)

Two ratios are printed: of the fastest samples and of the medians. On a shared
machine the samples are bimodal: a sample either runs at full speed or, when another
tenant takes the core, at about half (measured: the NumPy chain reference's 21
samples in one run were 0.34-0.36 ms or 0.54-0.81 ms per call, nothing between). The
fastest sample of each implementation is the cost of its code; the median is that
plus whatever share of its samples was disturbed, which differs between
implementations by chance (in three runs the chain's ratio of medians was 1.37x,
1.48x, 1.51x and its ratio of minima 2.49x, 2.51x, 2.52x).

Each implementation runs in a process of its own, and the parent takes samples from
them round-robin (one sample of each per round) so that a change in the machine's load
hits all of them alike; every ratio is to the NumPy reference of the same run.
Separate processes, because in one process each library ran in the memory state the
others left: what one freed decided whether the next one's arrays came from fresh
pages, and a page fault costs ~2.5 us here (measured: the MLP reference took 2.2 ms
right after the engine had run, 1.4 ms with glibc told to keep freed memory). A sample
is as many calls as make ~25 ms of the NumPy reference (--sample-ms), the same number
for every implementation, so that it measures the steady cost of a call.

--collector-off adds the engine once more with Python's cyclic garbage collector
switched off in its process (``gc.disable()``; the engine's graphs hold no reference
cycles, so nothing is left uncollected): the difference between the two engine rows,
measured side by side, is what the collector costs the engine. Every op leaves objects
the collector tracks alive until backprop (its output tensor and the op: two for the
built-in ops of these workloads, which keep their inputs in attributes of their own;
three for an op whose inputs are a ``variables`` tuple), so a graph of thousands of ops
triggers collections that walk it while it is being built; the NumPy reference leaves
none.

--malloc keep runs every process with glibc's malloc told to keep the memory it frees.
By default glibc hands freed memory back to the kernel once enough is free at the top
of the heap, and the next call's arrays then land on fresh pages; whether a given
implementation crosses that line is an accident of its allocation pattern (the NumPy
MLP reference did, at ~390 page faults per call; the engine did not), so the default
run measures that accident along with the arithmetic. Both are reported. BLAS
and PyTorch run single-threaded (the question is the engine's overhead, and thread
pools on a shared 2-core machine add noise larger than the effect); set
GRADCHECK_BENCH_THREADS to change that.
Run: python benchmarks/engine_overhead.py [--repeats 21] [--only chain,mlp] [--sample-ms 25]
     [--malloc default|keep] [--collector-off]
"""

from __future__ import annotations

import os

_THREADS = os.environ.get("GRADCHECK_BENCH_THREADS", "1")
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, _THREADS)

import argparse
import gc
import importlib
import importlib.util
import itertools
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's gradcheck

Inputs = dict[str, np.ndarray]
Impl = Callable[[Inputs], list[np.ndarray]]  # returns the gradients of the inputs


# -- chain ---------------------------------------------------------------------------
CHAIN_BLOCKS, SCALE, SHIFT = 50, 1.01, 0.5


def chain_inputs(rng: np.random.Generator) -> Inputs:
    return {"x": rng.standard_normal(16)}


def chain_numpy(inp: Inputs) -> list[np.ndarray]:
    saved = []
    y = inp["x"]
    for _ in range(CHAIN_BLOCKS):
        y = y * SCALE + SHIFT
        saved.append(y)
        y = np.tanh(np.sin(y))
        saved.append(y)
    grad = np.ones_like(y)
    for _ in range(CHAIN_BLOCKS):
        t = saved.pop()
        grad = grad * (1 - t * t)
        grad = grad * np.cos(saved.pop())
        grad = grad * SCALE
    return [grad]


def chain_lib(lib: Any, inp: Inputs) -> list[np.ndarray]:
    (x,) = _leaves(lib, inp, "x")
    y = x
    for _ in range(CHAIN_BLOCKS):
        y = lib.tanh(lib.sin(y * SCALE + SHIFT))
    y.backward(lib.ones_like(y) if _is_torch(lib) else None)
    return [_grad(x)]


# -- mlp -----------------------------------------------------------------------------
def mlp_inputs(rng: np.random.Generator) -> Inputs:
    sizes = [256, 256, 256, 10]
    inp = {"x": rng.standard_normal((64, sizes[0])), "labels": rng.integers(0, 10, 64)}
    for i, (n, m) in enumerate(itertools.pairwise(sizes), 1):
        inp[f"W{i}"] = rng.standard_normal((n, m)) * np.sqrt(2 / n)
        inp[f"b{i}"] = rng.uniform(-0.1, 0.1, m)
    return inp


MLP_PARAMS = ["W1", "b1", "W2", "b2", "W3", "b3"]


def softmax_crossentropy_numpy(out: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The loss (mean over rows of -log(softmax(out)[row, label]), computed stably)
    and its gradient with respect to ``out``, which is returned."""
    rows = np.arange(len(labels))
    z = out - out.max(axis=1, keepdims=True)
    log_probs = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    _ = -log_probs[rows, labels].mean()
    g_out = np.exp(log_probs)
    g_out[rows, labels] -= 1
    g_out /= len(labels)
    return g_out


def mlp_numpy(inp: Inputs) -> list[np.ndarray]:
    x, labels = inp["x"], inp["labels"]
    h1 = np.maximum(x @ inp["W1"] + inp["b1"], 0)
    h2 = np.maximum(h1 @ inp["W2"] + inp["b2"], 0)
    out = h2 @ inp["W3"] + inp["b3"]
    g_out = softmax_crossentropy_numpy(out, labels)
    gW3, gb3 = h2.T @ g_out, g_out.sum(0)
    g_h2 = (g_out @ inp["W3"].T) * (h2 > 0)
    gW2, gb2 = h1.T @ g_h2, g_h2.sum(0)
    g_h1 = (g_h2 @ inp["W2"].T) * (h1 > 0)
    gW1, gb1 = x.T @ g_h1, g_h1.sum(0)
    return [gW1, gb1, gW2, gb2, gW3, gb3]


_MLP_TENSORS: dict[tuple[str, int], dict[str, Any]] = {}


def mlp_lib(lib: Any, inp: Inputs) -> list[np.ndarray]:
    """One training step's forward and backward: relu layers, softmax cross-entropy
    (each library's own fused op for it, as a user would write it). The parameters
    and the batch are tensors made once, as in a training loop (making them copies
    ~1 MB per step, which the NumPy reference does not do)."""
    key = (lib.__name__, id(inp))
    if key not in _MLP_TENSORS:
        t = {k: _leaf(lib, inp[k]) for k in MLP_PARAMS}
        if _is_torch(lib):
            t["x"], t["labels"] = lib.tensor(inp["x"]), lib.tensor(inp["labels"])
        else:
            t["x"], t["labels"] = lib.tensor(inp["x"], constant=True), inp["labels"]
        _MLP_TENSORS[key] = t
    p = _MLP_TENSORS[key]
    if _is_torch(lib):
        for k in MLP_PARAMS:
            p[k].grad = None  # torch accumulates into .grad; the others reset it
        relu, loss_of = lib.relu, lib.nn.functional.cross_entropy
    else:
        relu, loss_of = lib.nnet.relu, lib.nnet.softmax_crossentropy
    h1 = relu(p["x"] @ p["W1"] + p["b1"])
    h2 = relu(h1 @ p["W2"] + p["b2"])
    loss = loss_of(h2 @ p["W3"] + p["b3"], p["labels"])
    loss.backward()
    return [_grad(p[k]) for k in MLP_PARAMS]


# -- big -----------------------------------------------------------------------------
def big_inputs(rng: np.random.Generator) -> Inputs:
    return {"x": rng.standard_normal(1_000_000), "y": rng.standard_normal(1_000_000)}


def big_numpy(inp: Inputs) -> list[np.ndarray]:
    x, y = inp["x"], inp["y"]
    s = np.sin(x)
    e = np.exp(-(x * x))
    _ = (s * y + e).sum()  # the forward's value, which the libraries compute too
    gx = np.cos(x) * y + e * (-2 * x)
    gy = s
    return [gx, gy]


def big_lib(lib: Any, inp: Inputs) -> list[np.ndarray]:
    x, y = _leaves(lib, inp, "x", "y")
    f = (lib.sin(x) * y + lib.exp(-(x * x))).sum()
    f.backward()
    return [_grad(x), _grad(y)]


# -- bcast ---------------------------------------------------------------------------
def bcast_inputs(rng: np.random.Generator) -> Inputs:
    return {"x": rng.standard_normal((1000, 1)), "y": rng.standard_normal((1, 1000))}


def bcast_numpy(inp: Inputs) -> list[np.ndarray]:
    x, y = inp["x"], inp["y"]
    _ = (x * y).sum(axis=1)
    # the gradient of the sum of the reduced vector, ones, broadcast back over the
    # summed axis (a view, not a new 1000 x 1000 array: what a NumPy user would write)
    g = np.broadcast_to(np.ones((1000, 1)), (1000, 1000))
    return [(g * y).sum(axis=1, keepdims=True), (g * x).sum(axis=0, keepdims=True)]


def bcast_lib(lib: Any, inp: Inputs) -> list[np.ndarray]:
    x, y = _leaves(lib, inp, "x", "y")
    r = (x * y).sum(axis=1) if not _is_torch(lib) else (x * y).sum(dim=1)
    r.backward(lib.ones_like(r) if _is_torch(lib) else None)
    return [_grad(x), _grad(y)]


# -- fanout --------------------------------------------------------------------------
FANOUT_NODES = 2000


def _fanout_plan(n: int) -> list[tuple[int, int, int]]:
    rng = np.random.default_rng(1)
    plan = []
    for k in range(2, n):
        # each node reads two earlier nodes, mostly recent ones: wide reuse, deep chains
        i, j = (k - 1 - rng.geometric(0.2, size=2)).clip(0, k - 1)
        plan.append((int(rng.integers(3)), int(i), int(j)))
    return plan


FANOUT_PLAN = _fanout_plan(FANOUT_NODES)


def _fanout_node(lib: Any, kind: int, vi: Any, vj: Any) -> Any:
    """One node; every kind keeps values bounded, so deep paths neither overflow nor
    vanish."""
    if kind == 0:
        return (vi + vj) * 0.5
    if kind == 1:
        return lib.sin(vi * vj)
    return lib.sin(vi) + vj * 0.5


def fanout_inputs(rng: np.random.Generator) -> Inputs:
    return {"a": rng.uniform(0.5, 1.0, 8), "b": rng.uniform(0.5, 1.0, 8)}


def fanout_numpy(inp: Inputs) -> list[np.ndarray]:
    vals = [inp["a"], inp["b"]]
    for kind, i, j in FANOUT_PLAN:
        vals.append(_fanout_node(np, kind, vals[i], vals[j]))
    grads = [np.zeros(8) for _ in vals]
    grads[-1] = np.ones(8)
    for k in range(len(vals) - 1, 1, -1):
        kind, i, j = FANOUT_PLAN[k - 2]
        g = grads[k]
        vi, vj = vals[i], vals[j]
        if kind == 0:  # (vi + vj) * 0.5
            grads[i] = grads[i] + g * 0.5
            grads[j] = grads[j] + g * 0.5
        elif kind == 1:  # sin(vi * vj)
            c = g * np.cos(vi * vj)
            grads[i] = grads[i] + c * vj
            grads[j] = grads[j] + c * vi
        else:  # sin(vi) + vj * 0.5
            grads[i] = grads[i] + g * np.cos(vi)
            grads[j] = grads[j] + g * 0.5
    return [grads[0], grads[1]]


def fanout_lib(lib: Any, inp: Inputs) -> list[np.ndarray]:
    a, b = _leaves(lib, inp, "a", "b")
    vals = [a, b]
    for kind, i, j in FANOUT_PLAN:
        vi, vj = vals[i], vals[j]
        vals.append(_fanout_node(lib, kind, vi, vj))
    vals[-1].backward(lib.ones_like(vals[-1]) if _is_torch(lib) else None)
    return [_grad(a), _grad(b)]


# -- harness -------------------------------------------------------------------------
def _is_torch(lib: Any) -> bool:
    return lib.__name__ == "torch"


def _leaf(lib: Any, arr: np.ndarray) -> Any:
    return lib.tensor(arr, requires_grad=True) if _is_torch(lib) else lib.tensor(arr)


_LEAVES: dict[tuple[str, int, str], Any] = {}


def _leaves(lib: Any, inp: Inputs, *names: str) -> list[Any]:
    """The input tensors, made once per input set, as the parameters of a training
    loop are: what is timed is forward + backward, not copying the user's arrays
    into tensors (which the NumPy reference does not do either). Gradients start
    empty on every call: torch's are reset here; the others reset a tensor's gradient
    when it enters a new graph."""
    found = []
    for name in names:
        key = (lib.__name__, id(inp), name)
        if key not in _LEAVES:
            _LEAVES[key] = _leaf(lib, inp[name])
        leaf = _LEAVES[key]
        if _is_torch(lib):
            leaf.grad = None
        found.append(leaf)
    return found


def _grad(t: Any) -> np.ndarray:
    g = t.grad
    return g.numpy() if hasattr(g, "numpy") else np.asarray(g)


# name: (make inputs, NumPy reference, library implementation, nodes per call)
WORKLOADS = {
    "chain": (chain_inputs, chain_numpy, chain_lib, 200),
    "mlp": (mlp_inputs, mlp_numpy, mlp_lib, 1),
    "big": (big_inputs, big_numpy, big_lib, 1),
    "bcast": (bcast_inputs, bcast_numpy, bcast_lib, 1),
    "fanout": (fanout_inputs, fanout_numpy, fanout_lib, FANOUT_NODES),
}

LIBRARIES = ("gradcheck", "mygrad", "torch")
#: The suffix of an implementation run with the cyclic garbage collector off (--collector-off).
COLLECTOR_OFF = " (gc off)"


# -- one process per implementation ----------------------------------------------------
def worker(impl: str, workload: str) -> None:
    """Serve timings of one implementation of one workload over stdin/stdout.

    Prints ``ready <label>`` once the gradients have been compared with the NumPy
    reference and one warm-up call made; then answers each line ``N`` with the mean
    seconds per call of N calls, and ``once`` with the fastest of five single calls.
    """
    collector_off = impl.endswith(COLLECTOR_OFF)
    label, call = prepare(impl.removesuffix(COLLECTOR_OFF), workload)
    if collector_off:
        gc.disable()
        label += COLLECTOR_OFF
    print(f"ready {label}", flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "once":
            print(min(_seconds(call, 1) for _ in range(5)), flush=True)
        elif command:
            print(_seconds(call, int(command)), flush=True)


def prepare(impl: str, workload: str) -> tuple[str, Callable[[], Any]]:
    """The label and the call of one implementation, its gradients compared with the
    NumPy reference's, warmed up by one call."""
    make_inputs, numpy_impl, lib_impl, _ = WORKLOADS[workload]
    inp = make_inputs(np.random.default_rng(0))
    if impl == "numpy":
        label = "numpy (hand-written)"
        call = partial(numpy_impl, inp)
    else:
        lib = importlib.import_module(impl)
        if _is_torch(lib):
            lib.set_num_threads(int(_THREADS))
        label = f"{impl} {lib.__version__}"
        for got, expected in zip(lib_impl(lib, inp), numpy_impl(inp)):
            np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-10)
        call = partial(lib_impl, lib, inp)
    call()
    return label, call


class InProcess:
    """One implementation run in this process (``--in-process``), answering like a
    :class:`Worker`."""

    def __init__(self, impl: str, workload: str) -> None:
        self.label, self.call = prepare(impl, workload)

    def ask(self, command: str) -> float:
        if command == "once":
            return min(_seconds(self.call, 1) for _ in range(5))
        return _seconds(self.call, int(command))

    def close(self) -> None:
        pass


def _seconds(call: Callable[[], Any], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        call()
    return (time.perf_counter() - start) / number


#: glibc's malloc told to keep the memory it frees (no return to the kernel below 4 GiB
#: free, arrays up to 32 MiB from the heap rather than fresh mappings), so that arrays
#: are not placed on freshly zeroed pages (a page fault each 4 KiB) on every call.
KEEP_MEMORY = {"MALLOC_TRIM_THRESHOLD_": str(1 << 32), "MALLOC_MMAP_THRESHOLD_": str(1 << 25)}


class Worker:
    """A process running :func:`worker` for one implementation."""

    def __init__(self, impl: str, workload: str, malloc: str) -> None:
        env = dict(os.environ)
        if malloc == "keep":
            env.update(KEEP_MEMORY)
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", impl, "--only", workload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        ready = self._reply()
        if not ready.startswith("ready "):
            raise RuntimeError(f"the {impl} worker for {workload} failed: {ready!r}")
        self.label = ready.removeprefix("ready ")

    def _reply(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def ask(self, command: str) -> float:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return float(self._reply())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def interleaved_seconds(workers: list[Any], repeats: int, number: int) -> list[list[float]]:
    """Per-call seconds of each implementation, ``repeats`` samples of ``number`` calls
    each, taken round-robin (one sample of every implementation per round) so that a
    change in the machine's load hits all implementations alike, and the ratios
    measured in one run stay fair."""
    samples: list[list[float]] = [[] for _ in workers]
    for _ in range(repeats):
        for w, times in zip(workers, samples):
            times.append(w.ask(str(number)))
    return samples


def calls_per_sample(reference: Any, sample_seconds: float) -> int:
    """How many calls make one sample: enough that the reference's sample lasts about
    ``sample_seconds`` (every implementation then gets the same number of calls), so
    that a sample measures the steady cost of a call, which is what a checker making
    thousands of passes pays, more than the first call after a pause."""
    return max(1, round(sample_seconds / reference.ask("once")))


def installed_libraries() -> list[str]:
    found = []
    for name in LIBRARIES:
        if importlib.util.find_spec(name) is None:
            print(f"({name} not installed: skipped)")
        else:
            found.append(name)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description="Engine overhead against hand-written NumPy.")
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads")
    parser.add_argument(
        "--sample-ms",
        type=float,
        default=25.0,
        help="length of one sample of the NumPy reference; sets the calls per sample",
    )
    parser.add_argument(
        "--malloc",
        choices=["default", "keep"],
        default="default",
        help="glibc malloc as it comes, or told to keep freed memory (no page faults "
        "from memory handed back and taken again; same for every implementation)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run every implementation in this one process (they then share one heap)",
    )
    parser.add_argument(
        "--collector-off",
        action="store_true",
        help="also run the engine with Python's cyclic garbage collector off in its process",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.only)
        return
    if args.collector_off and args.in_process:
        parser.error("--collector-off needs a process of its own: drop --in-process")
    if (
        args.in_process
        and args.malloc == "keep"
        and any(os.environ.get(k) != v for k, v in KEEP_MEMORY.items())
    ):  # glibc reads these when the process starts
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **KEEP_MEMORY})
    libs = installed_libraries()
    rows = []
    for name in args.only.split(","):
        n_ops = WORKLOADS[name][3]
        impls = ["numpy", *libs]
        if args.collector_off:
            impls.insert(impls.index("gradcheck") + 1, "gradcheck" + COLLECTOR_OFF)
        if args.in_process:
            workers: list[Any] = [InProcess(impl, name) for impl in impls]
        else:
            workers = [Worker(impl, name, args.malloc) for impl in impls]
        try:
            number = calls_per_sample(workers[0], args.sample_ms / 1e3)
            samples = interleaved_seconds(workers, args.repeats, number)
        finally:
            for w in workers:
                w.close()
        ref_median, ref_min = statistics.median(samples[0]), min(samples[0])
        for w, times in zip(workers, samples):
            median, best = statistics.median(times), min(times)
            ratios = (best / ref_min, median / ref_median)
            rows.append((name, w.label, median, best, n_ops, number, *ratios))
    print(f"forward + backward; {args.repeats} interleaved samples of each implementation")
    where = "one process for all" if args.in_process else "one process per implementation"
    print(f"{where}; malloc: {args.malloc}")
    print("ratio = that statistic / the same statistic of hand-written NumPy, same run\n")
    header = f"{'workload':<8} {'implementation':<31} {'median ms':>10} {'min ms':>9}"
    print(f"{header} {'us/node':>8} {'calls':>6} {'min ratio':>10} {'median ratio':>13}")
    for name, impl, seconds, best, n_ops, number, by_min, by_median in rows:
        per_op = f"{best / n_ops * 1e6:.2f}" if n_ops > 1 else ""
        print(
            f"{name:<8} {impl:<31} {seconds * 1e3:>10.3f} {best * 1e3:>9.3f} {per_op:>8} "
            f"{number:>6} {by_min:>9.2f}x {by_median:>12.2f}x"
        )
    print(
        "\n(calls: calls per sample, set so that one NumPy sample lasts ~--sample-ms;"
        " us/node from the min)"
    )


if __name__ == "__main__":
    main()
