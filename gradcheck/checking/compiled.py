"""Compiled against eager: does ``torch.compile`` (or ``jax.jit``) give the op's own
output and gradient?

Compilers rewrite an op (fusions, decompositions, a Function's backward traced, code
that asks ``torch.compiler.is_compiling()``), and a compiled model trains on what the
compiled forward and backward give, which the gradient check of the eager op says
nothing about. ``check(compiled=backend)`` runs the op compiled and eagerly on the
same example with the same upstream gradient, and compares the outputs and each
input's gradient within the dtype's tolerances; a disagreement is its own failure
kind, ``compiled_mismatch``, saying which side (forward or backward) differs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gradcheck.checking.adapters.variants import Variant
from gradcheck.checking.reference import disagreement
from gradcheck.checking.result import Failure
from gradcheck.checking.target import Target
from gradcheck.checking.tolerance import Tolerance
from gradcheck.checking.vocabulary import Kind
from gradcheck.errors import TargetRaised

__all__ = ["BACKENDS", "compiled_target", "compiled_disagreement"]

#: torch.compile's backends gradcheck takes (``True`` means the first but one:
#: ``aot_eager`` traces the backward as ``inductor`` does, without compiling C++).
BACKENDS: tuple[str, ...] = ("eager", "aot_eager", "inductor")


def compiled_target(tgt: Target, backend: str) -> Target:
    """The target running ``tgt``'s op compiled with ``backend`` (a usage error for an
    op of gradcheck's own engine, which has no compiler)."""
    return tgt.derive(replace(tgt.variant or Variant(), compiled=backend))


def compiled_disagreement(
    eager: Target,
    compiled: Target,
    xs: Sequence[np.ndarray],
    params: Mapping[str, Any],
    constants: Sequence[int],
    v_seed: Sequence[int],
    tolerances: Callable[[np.dtype], Tolerance],
) -> Failure | None:
    """A ``compiled_mismatch`` failure when the compiled op's output, or an input's
    gradient for the same upstream gradient, differs from the eager op's; None when
    they agree (or when the eager op raises: the gradient check says so)."""
    try:
        graph = eager.apply([x.copy() for x in xs], params, constants=constants)
        out = np.asarray(graph.output.data)
        v = np.random.default_rng(list(v_seed)).standard_normal(out.shape).astype(out.dtype)
        eager_grads = eager.backward(graph, v.copy())
    except TargetRaised:
        return None
    backend = (compiled.variant.compiled if compiled.variant else None) or "?"
    what = f"the compiled op (torch.compile, backend {backend})"
    if backend not in BACKENDS:
        what = f"the compiled op ({backend})"
    try:
        cgraph = compiled.apply([x.copy() for x in xs], params, constants=constants)
    except TargetRaised as exc:
        return Failure(
            Kind.COMPILED_MISMATCH,
            f"forward: {what} raised where the eager op did not: "
            f"{type(exc.exception).__name__}: {exc.exception}",
        )
    cout = np.asarray(cgraph.output.data)
    names = ("compiled", "eager")
    if cout.shape != out.shape:
        return Failure(
            Kind.COMPILED_MISMATCH,
            f"forward: {what} gives an output of shape {list(cout.shape)}, the eager op "
            f"{list(out.shape)}",
        )
    failure = disagreement(
        cout,
        out,
        graph.outputs,
        f"forward: the output of {what} differs from the eager one",
        tolerances(out.dtype),
        Kind.COMPILED_MISMATCH,
        names,
    )
    if failure is not None:
        return failure
    try:
        grads = compiled.backward(cgraph, v.copy())
    except TargetRaised as exc:
        return Failure(
            Kind.COMPILED_MISMATCH,
            f"backward: {what} raised where the eager op did not: "
            f"{type(exc.exception).__name__}: {exc.exception}",
        )
    return _gradients_differ(grads, eager_grads, xs, what, tolerances)


def _gradients_differ(
    grads: Sequence[Any],
    eager_grads: Sequence[Any],
    xs: Sequence[np.ndarray],
    what: str,
    tolerances: Callable[[np.dtype], Tolerance],
) -> Failure | None:
    """The first input whose gradient from the compiled op (``what``) differs from the
    eager op's, for the same upstream gradient, as a ``compiled_mismatch``."""
    names = ("compiled", "eager")
    for i, (g, e) in enumerate(zip(grads, eager_grads)):
        if g is None and e is None:
            continue
        x = xs[i]
        g64 = np.zeros(x.shape) if g is None else np.asarray(g)
        e64 = np.zeros(x.shape) if e is None else np.asarray(e)
        if g64.shape != e64.shape:
            return Failure(
                Kind.COMPILED_MISMATCH,
                f"backward: input {i}'s gradient from {what} has shape "
                f"{list(g64.shape)}, the eager one {list(e64.shape)}",
                input=i,
            )
        failure = disagreement(
            g64,
            e64,
            None,
            f"backward: input {i}'s gradient from {what} differs from the eager one "
            f"(the same upstream gradient)",
            tolerances(e64.dtype),
            Kind.COMPILED_MISMATCH,
            names,
            at_input=i,
        )
        if failure is not None:
            return failure
    return None
