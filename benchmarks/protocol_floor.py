"""The floor of the engine's per-op path: the chain workload on a minimal engine.

Question: of the engine's cost per small op beyond the NumPy calls, how much is the
protocol itself, the Python calls no engine with this API can avoid, and how much is
the bookkeeping the engine does on top? ``MinimalEngine`` below keeps the protocol
(an operator or a ufunc class calls an executor, which makes an ``Operation`` instance
and calls its ``__call__``; backprop collects the graph, sorts it by creation order and
calls each op's ``backward``, which calls ``backward_var`` per input, which calls
``derivative`` for an elementwise op) and nothing else: no validation of gradients,
dtypes, shapes or broadcasting, no no-grad switch, no memory guarding, no views, no
scalar-only graphs, no gradient sharing. It computes the chain of engine_overhead.py
(200 small ops) and is checked against the NumPy reference.

Run: python benchmarks/protocol_floor.py [--repeats 21]  (time, one process,
round-robin with the NumPy reference and gradcheck).
Instructions: run it under ``valgrind --tool=callgrind`` with ``--calls N`` for two N
and divide the difference by the difference of N (as engine_instructions.py does).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import engine_overhead as eo  # (it also puts this checkout first on sys.path)

_SEQ = itertools.count(1)
_new = object.__new__


class T:
    """A tensor: data, gradient, creator, creation number, constant flag."""

    __slots__ = ("_constant", "_creator", "_data", "_grad", "_seq")

    def __init__(self, data: np.ndarray, constant: bool = False) -> None:
        self._data, self._grad, self._creator = data, None, None
        self._seq, self._constant = 0, constant

    def __mul__(self, other: Any) -> T:
        return execute(Mul, (self, other))

    def __add__(self, other: Any) -> T:
        return execute(Add, (self, other))

    def backward(self) -> None:
        self._grad = np.ones_like(self._data)
        tensors = [self]
        self._seq = -self._seq
        for t in tensors:
            for v in t._creator.variables:
                if v._creator is not None and v._seq > 0:
                    v._seq = -v._seq
                    tensors.append(v)
        tensors.sort(key=lambda t: t._seq, reverse=True)
        while tensors:
            t = tensors.pop()
            op, t._creator = t._creator, None
            op.backward(t._grad)


_CONSTANTS: dict[float, T] = {}


def execute(Op: type, inputs: tuple[Any, ...]) -> T:
    if len(inputs) == 2 and type(inputs[1]) is float:
        c = _CONSTANTS.get(inputs[1])
        if c is None:
            c = _CONSTANTS[inputs[1]] = T(np.asarray(inputs[1]), True)
        inputs = (inputs[0], c)
    op = Op()
    out = op(*inputs)
    t = _new(T)
    t._data, t._grad, t._creator, t._seq = out, None, op, next(_SEQ)
    constant = True
    for x in inputs:
        if not x._constant:
            constant = False
    t._constant = constant
    return t


class Op:
    variables: tuple[T, ...]

    def backward(self, grad: np.ndarray) -> None:
        index = -1
        for var in self.variables:
            index += 1
            if var._constant:
                continue
            g = self.backward_var(grad, index)
            var._grad = g if var._grad is None else var._grad + g


class Mul(Op):
    def __call__(self, a: T, b: T) -> np.ndarray:
        self.variables = (a, b)
        return a._data * b._data

    def backward_var(self, grad: np.ndarray, index: int) -> np.ndarray:
        a, b = self.variables
        return grad * (b._data if index == 0 else a._data)


class Add(Op):
    def __call__(self, a: T, b: T) -> np.ndarray:
        self.variables = (a, b)
        return a._data + b._data

    def backward_var(self, grad: np.ndarray, index: int) -> np.ndarray:
        return grad


class Unary(Op):
    def __call__(self, x: T) -> np.ndarray:
        self.variables = (x,)
        out = self.out = self.func(x._data)
        return out

    def backward_var(self, grad: np.ndarray, index: int) -> np.ndarray:
        return grad * self.derivative(self.variables[0]._data, self.out)


class Sin(Unary):
    func = staticmethod(np.sin)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return np.cos(x)


class Tanh(Unary):
    func = staticmethod(np.tanh)

    def derivative(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        return 1 - out**2


class _Ufunc(type):
    op: type

    def __call__(cls, x: T) -> T:  # type: ignore[override]
        return execute(cls.op, (x,))


class sin(metaclass=_Ufunc):
    op = Sin


class tanh(metaclass=_Ufunc):
    op = Tanh


def chain_minimal(x: T) -> np.ndarray:
    y = x
    for _ in range(eo.CHAIN_BLOCKS):
        y = tanh(sin(y * eo.SCALE + eo.SHIFT))
    x._grad = None
    y.backward()
    return x._grad  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--calls", type=int, help="only run the minimal engine N times")
    args = parser.parse_args()
    inp = eo.chain_inputs(np.random.default_rng(0))
    x = T(np.array(inp["x"]))
    np.testing.assert_allclose(chain_minimal(x), eo.chain_numpy(inp)[0], rtol=1e-12)
    if args.calls is not None:
        for _ in range(args.calls):
            chain_minimal(x)
        return
    import gradcheck

    impls = {
        "numpy (hand-written)": lambda: eo.chain_numpy(inp),
        "minimal engine": lambda: chain_minimal(x),
        "gradcheck": lambda: eo.chain_lib(gradcheck, inp),
    }
    times: dict[str, list[float]] = {name: [] for name in impls}
    for _ in range(args.repeats):
        for name, f in impls.items():
            start = time.perf_counter()
            for _ in range(50):
                f()
            times[name].append((time.perf_counter() - start) / 50)
    ref = times["numpy (hand-written)"]
    print(f"chain, 200 ops; {args.repeats} round-robin samples of 50 calls, one process")
    for name, t in times.items():
        print(
            f"{name:<22} min {min(t) * 1e3:7.3f} ms  median {statistics.median(t) * 1e3:7.3f} ms"
            f"  {min(t) / min(ref):5.2f}x / {statistics.median(t) / statistics.median(ref):5.2f}x"
        )


if __name__ == "__main__":
    main()
