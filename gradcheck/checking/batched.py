"""Batched: does the op give under ``torch.func.vmap`` what it gives on each element?

A ``torch.autograd.Function`` that declares a vmap rule (a ``vmap`` staticmethod, or
``generate_vmap_rule = True``) runs under ``torch.func.vmap`` through that rule, and
its backward (and jvp) through the rules of whatever they call, which the gradient
check of one example never runs: a rule that returns the wrong ``out_dims``, that
forgets to move the batch dimension, or that reduces over it (``.sum()``,
``.view(-1)``) is right on one example and wrong in every batched training step
(pytorch/pytorch#49120, #51144, #130768). ``check(batched=True)`` builds a batch of a
few elements (the example, and copies of it moved a little, each with its own
upstream gradient and tangent), runs the op, its vjp and, with forward mode, its jvp
under vmap, and compares each batch element with the op called plainly on that
element, in a loop (torch's ``check_batched_grad`` and ``check_batched_forward_grad``,
with the inputs batched too: torch runs a Function's own vmap rule only then).

A disagreement is its own failure kind: ``batched_forward`` for the output,
``batched_grad`` for a gradient (the backward's or the jvp's), naming the batch
element, the computation, and the rule that batched the op. What runs under vmap is
the torch adapter's (:mod:`gradcheck.checking.adapters._torch_vmap`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gradcheck.checking.reference import disagreement
from gradcheck.checking.result import Failure
from gradcheck.checking.target import Target
from gradcheck.checking.tolerance import Tolerance
from gradcheck.checking.vocabulary import Kind
from gradcheck.errors import CheckUsageError

__all__ = ["BATCH_SIZE", "batched_on", "batched_disagreement"]

#: Batch elements: the example and copies of it moved a little.
BATCH_SIZE = 3
#: The copies' elements are the example's scaled by a factor in [1 - MOVE, 1]: the
#: same signs, never further from 0, so that most domains hold (an element whose
#: forward raises or is not finite there is the example itself instead).
MOVE = 0.1

#: What a failure says of each rule (the adapter's names).
RULES = {
    "vmap": "its vmap staticmethod",
    "generated": "the rule generate_vmap_rule = True makes",
    "none": "torch's batching rules of the ops it calls",
}


def batched_on(tgt: Target, batched: Any) -> bool:
    """Whether a check of ``tgt`` also runs it batched: ``batched`` True or False as
    given, None (the default) where the op is a torch Function declaring a vmap rule.
    A usage error for True where there is no vmap (not a torch op, or a Function
    that declares no vmap rule)."""
    if batched is not None and not isinstance(batched, bool):
        raise CheckUsageError(f"batched must be True, False or None, not {batched!r}")
    rule = getattr(tgt.batcher, "rule", None)
    if batched is None:
        return rule in ("vmap", "generated")
    if not batched:
        return False
    if tgt.batcher is None:
        raise CheckUsageError(
            f"{tgt.name}: batched checks run torch ops under torch.func.vmap; this op is "
            f"not a torch op (or is checked complex, compiled or beyond first order): "
            f"leave batched off"
        )
    if rule == "declares none":
        raise CheckUsageError(
            f"{tgt.name} declares no vmap rule, so torch.func.vmap refuses it: set "
            f"generate_vmap_rule = True or write a vmap staticmethod (both need "
            f"setup_context), or leave batched off"
        )
    return True


def batched_disagreement(
    tgt: Target,
    xs: Sequence[np.ndarray],
    params: Mapping[str, Any],
    constants: Sequence[int],
    seed: int,
    forward_mode: bool,
    tolerances: Callable[[np.dtype], Tolerance],
) -> Failure | None:
    """A ``batched_forward`` or ``batched_grad`` failure when the op under
    ``torch.func.vmap`` (its output, its vjp, with ``forward_mode`` its jvp) differs
    on some batch element from the op called on that element alone; None when they
    agree (or when a plain call raises: the gradient check says so)."""
    assert tgt.batcher is not None
    rng = np.random.default_rng([seed, 5])
    differentiable = [i not in constants and x.dtype.kind == "f" for i, x in enumerate(xs)]
    batch = [[np.array(x) for x in xs]]
    for _ in range(BATCH_SIZE - 1):
        batch.append(_moved(tgt, xs, params, differentiable, rng))
    try:
        cases = tgt.batcher(batch, differentiable, params, rng, forward_mode)
    except Exception:
        return None  # a plain call raised: the gradient check's to say
    rule = RULES.get(getattr(tgt.batcher, "rule", "none"), "its vmap rule")
    for case in cases:
        kind = Kind.BATCHED_FORWARD if case.ad_mode is None else Kind.BATCHED_GRAD
        ad_mode = case.ad_mode or "rev"
        where = f"{case.what} under torch.func.vmap (batched by {rule})"
        if case.raised is not None:
            exc = case.raised
            return Failure(
                kind,
                f"{where} raised where a loop over the batch did not: {type(exc).__name__}: {exc}",
                exception=f"{type(exc).__name__}: {exc}",
                ad_mode=ad_mode,
            )
        one = len(case.labels) == 1 and case.inputs == [None]
        for b, (got, expected) in enumerate(zip(case.vmapped, case.looped)):
            element = f"batch element {b} of {len(batch)}"
            if len(got) != len(expected):
                return Failure(
                    kind,
                    f"{where}: {element} has {len(got)} outputs, a plain call {len(expected)}",
                    ad_mode=ad_mode,
                )
            for label, i, g, e in zip(case.labels, case.inputs, got, expected):
                label = label.replace("output 0", "the output") if one else label
                if g.shape != e.shape:
                    return Failure(
                        kind,
                        f"{where}: {element}: {label} has shape {list(g.shape)}, a plain "
                        f"call on the element gives {list(e.shape)}",
                        input=i,
                        ad_mode=ad_mode,
                    )
                failure = disagreement(
                    g,
                    e,
                    None,
                    f"{where}: {element}: {label} differs from a plain call on the element",
                    tolerances(e.dtype),
                    kind,
                    ("vmap", "the loop"),
                    at_input=i,
                )
                if failure is not None:
                    return replace(failure, ad_mode=ad_mode)
    return None


def _moved(
    tgt: Target,
    xs: Sequence[np.ndarray],
    params: Mapping[str, Any],
    differentiable: Sequence[bool],
    rng: np.random.Generator,
) -> list[np.ndarray]:
    """A batch element: the example with each differentiable input scaled element by
    element by a factor in [1 - MOVE, 1]; the example itself where the op raises or
    is not finite there."""
    moved = [
        (x * (1.0 - MOVE * rng.random(x.shape))).astype(x.dtype) if d else np.array(x)
        for x, d in zip(xs, differentiable)
    ]
    try:
        with np.errstate(all="ignore"):
            out = np.asarray(tgt.forward([m.copy() for m in moved], params))
        if np.all(np.isfinite(out)):
            return moved
    except Exception:
        pass
    return [np.array(x) for x in xs]
