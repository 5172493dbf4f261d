"""A torch op under ``torch.func.vmap``, against a loop calling it on each batch element.

What :mod:`gradcheck.checking.batched` compares, computed here because it is torch's
own: each case runs the op (or its vjp, or its jvp) once under ``torch.func.vmap``
over a batch and once per element in a Python loop, plainly (``Function.apply``,
``torch.autograd.grad``, ``torch.autograd.forward_ad``), and hands both back as arrays.

torch runs a Function's ``vmap`` staticmethod (or the rule ``generate_vmap_rule = True``
makes) only where one of its inputs is batched: batching the upstream gradients alone,
as ``torch.autograd.grad(..., is_grads_batched=True)`` does, runs only the vmap rules
of the Functions its backward calls. So the cases batch the inputs too:

- ``forward``: the output, the inputs batched (at dimension 0); again with the batch
  dimension last, and, for an op of several differentiable inputs, with the first
  alone batched (a rule that ignores where ``in_dims`` puts the batch, or that an
  input is not batched);
- ``backward``: the vjp, the inputs and the upstream gradients batched;
- ``backward (upstream gradients alone batched)``: the vjp at the first element's inputs,
  only the upstream gradients batched (torch's ``check_batched_grad``);
- ``forward mode``: the jvp, the inputs and the tangents batched (torch's
  ``check_batched_forward_grad``), where the op has a forward mode.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["BatchedCase", "vmap_rule", "batched_cases", "vmap_runner"]


@dataclass
class BatchedCase:
    """One computation under vmap and in a loop: ``what`` (``"forward"``,
    ``"backward"``...), the ``labels`` of the arrays of an element (``"output 0"``,
    ``"input 1's gradient"``) and which input each is the gradient of (``inputs``,
    None for an output), then per batch element the arrays from vmap and from the
    loop; ``raised``: the exception vmap raised (then ``vmapped`` is empty)."""

    what: str
    labels: list[str]
    inputs: list[int | None]
    looped: list[list[np.ndarray]]
    vmapped: list[list[np.ndarray]] = field(default_factory=list)
    raised: BaseException | None = None
    #: None: the output is compared; "rev": the vjp's gradients; "fwd": the jvp's.
    ad_mode: str | None = None


def vmap_rule(function_class: type | None) -> str:
    """``"vmap"`` for a Function with a ``vmap`` staticmethod of its own, ``"generated"``
    for one with ``generate_vmap_rule = True``, ``"declares none"`` for a Function with
    neither (vmap refuses it), ``"none"`` for an op that is not a Function."""
    if function_class is None:
        return "none"
    import torch

    if getattr(function_class, "generate_vmap_rule", False):
        return "generated"
    if getattr(function_class, "vmap", None) is not torch.autograd.Function.vmap:
        return "vmap"
    return "declares none"


def _has_jvp(function_class: type | None) -> bool:
    """Whether the op has a forward mode: a Function with a ``jvp`` of its own, or any
    other torch op (whose ops have theirs)."""
    if function_class is None:
        return True
    import torch

    return getattr(function_class, "jvp", None) is not torch.autograd.Function.jvp


def batched_cases(
    call: Callable[[list[Any]], tuple[Any, ...]],
    to_tensor: Callable[[np.ndarray], Any],
    to_array: Callable[[Any], np.ndarray | None],
    function_class: type | None,
    batch: Sequence[Sequence[np.ndarray]],
    differentiable: Sequence[bool],
    rng: np.random.Generator,
    forward: bool,
) -> list[BatchedCase]:
    """The cases (module docstring) for the op ``call`` (tensors in, a tuple of
    outputs out) on ``batch`` (per element, the inputs; those not ``differentiable``
    the same in every element, and not batched), with upstream gradients and
    tangents drawn from ``rng``; ``forward``: the forward-mode case too, where the op
    has one."""
    import torch

    n = len(batch[0])
    diff = [i for i in range(n) if differentiable[i]]
    size = len(batch)
    in_dims = tuple(0 if i in diff else None for i in range(n))

    def at(element: Sequence[np.ndarray], grad: bool = False) -> list[Any]:
        tensors = [to_tensor(np.array(a)) for a in element]
        for i in diff:
            tensors[i].requires_grad_(grad)
        return tensors

    def stacked(dims: Sequence[int | None] = in_dims) -> list[Any]:
        return [
            to_tensor(np.array(batch[0][i]))
            if dims[i] is None
            else torch.stack([to_tensor(np.array(e[i])) for e in batch], dim=dims[i])
            for i in range(n)
        ]

    def arrays(ts: Sequence[Any]) -> list[np.ndarray]:
        return [np.asarray(to_array(t)) for t in ts]

    def elements(ts: Sequence[Any]) -> list[list[np.ndarray]]:
        """Each batch element's arrays of what vmap stacked (an array without the
        batch dimension in front, whole, for each: its shape then says so)."""
        stacked = arrays(ts)
        return [
            [a[b] if a.ndim and a.shape[0] == size else a for a in stacked] for b in range(size)
        ]

    def floats(outs: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(o for o in outs if o.is_floating_point())

    # the loop first: what the op gives on each element, called plainly
    with torch.no_grad():
        looped_out = [arrays(call(at(e))) for e in batch]
    labels = [f"output {k}" for k in range(len(looped_out[0]))]

    def forward_case(what: str, dims: tuple[int | None, ...], looped: Any) -> BatchedCase:
        case = BatchedCase(what, labels, [None] * len(labels), looped)
        try:
            with torch.no_grad():
                out = torch.func.vmap(lambda *ts: call(list(ts)), in_dims=dims)(*stacked(dims))
            case.vmapped = elements(out)
        except Exception as exc:
            case.raised = exc
        return case

    cases = [forward_case("forward", in_dims, looped_out)]
    # a rule that takes the batch dimension to be the first whatever in_dims says
    last = tuple(None if d is None else batch[0][i].ndim for i, d in enumerate(in_dims))
    if any(last):
        cases.append(forward_case("forward (batch dimension last)", last, looped_out))
    # a rule that takes every input to be batched (an unbatched one's in_dims is None)
    if len(diff) >= 2:
        alone = tuple(0 if i == diff[0] else None for i in range(n))
        with torch.no_grad():
            looped = [
                arrays(call(at([e[i] if i == diff[0] else batch[0][i] for i in range(n)])))
                for e in batch
            ]
        what = f"forward (only input {diff[0]} batched)"
        cases.append(forward_case(what, alone, looped))

    shapes = [o.shape for o in looped_out[0] if o.dtype.kind == "f"]
    dtypes = [o.dtype for o in looped_out[0] if o.dtype.kind == "f"]
    upstream = [
        [rng.standard_normal(s).astype(d) for s, d in zip(shapes, dtypes)] for _ in range(size)
    ]
    grad_labels = [f"input {i}'s gradient" for i in diff]

    def looped_grads(element: Sequence[np.ndarray], vs: Sequence[np.ndarray]) -> list[np.ndarray]:
        with torch.enable_grad():
            tensors = at(element, grad=True)
            outs = floats(call(tensors))
            found = torch.autograd.grad(
                outs,
                [tensors[i] for i in diff],
                grad_outputs=[to_tensor(v.copy()) for v in vs],
                allow_unused=True,
            )
        return [
            np.zeros(element[i].shape) if g is None else np.asarray(to_array(g))
            for i, g in zip(diff, found)
        ]

    def vjp_at(tensors: Sequence[Any]) -> Callable[..., Any]:
        def f(*moving: Any) -> tuple[Any, ...]:
            full = list(tensors)
            for k, i in enumerate(diff):
                full[i] = moving[k]
            return floats(call(full))

        return torch.func.vjp(f, *[tensors[i] for i in diff])[1]

    if shapes and diff:
        try:
            looped = [looped_grads(e, vs) for e, vs in zip(batch, upstream)]
            at_first = [looped_grads(batch[0], vs) for vs in upstream]
        except Exception:
            return cases  # a plain backward raised: the gradient check's to say
        # the inputs and the upstream gradients batched
        case = BatchedCase("backward", grad_labels, list(diff), looped, ad_mode="rev")
        cases.append(case)

        def one(*args: Any) -> tuple[Any, ...]:
            return tuple(vjp_at(args[:n])(tuple(args[n:])))

        vs_stacked = [
            torch.stack([to_tensor(v[k].copy()) for v in upstream]) for k in range(len(shapes))
        ]
        try:
            grads = torch.func.vmap(one, in_dims=(*in_dims, *[0] * len(shapes)))(
                *stacked(), *vs_stacked
            )
            case.vmapped = elements(grads)
        except Exception as exc:
            case.raised = exc

        # the upstream gradients alone batched, at the first element
        what = "backward (upstream gradients alone batched)"
        case = BatchedCase(what, grad_labels, list(diff), at_first, ad_mode="rev")
        cases.append(case)
        try:
            fn = vjp_at(at(batch[0]))
            grads = torch.func.vmap(lambda *vs: tuple(fn(tuple(vs))))(*vs_stacked)
            case.vmapped = elements(grads)
        except Exception as exc:
            case.raised = exc

    if forward and diff and _has_jvp(function_class):
        # (a plain jvp that raises is the gradient check's to say)
        with contextlib.suppress(Exception):
            cases.append(
                _forward_mode(call, to_tensor, arrays, elements, batch, diff, in_dims, stacked, rng)
            )
    return cases


def _forward_mode(
    call: Callable[[list[Any]], tuple[Any, ...]],
    to_tensor: Callable[[np.ndarray], Any],
    arrays: Callable[[Sequence[Any]], list[np.ndarray]],
    elements: Callable[[Sequence[Any]], list[list[np.ndarray]]],
    batch: Sequence[Sequence[np.ndarray]],
    diff: Sequence[int],
    in_dims: tuple[int | None, ...],
    stacked: Callable[[], list[Any]],
    rng: np.random.Generator,
) -> BatchedCase:
    """The jvp under vmap over the inputs and the tangents, against
    ``torch.autograd.forward_ad`` on each element."""
    import torch
    import torch.autograd.forward_ad as fwAD

    n = len(batch[0])
    tangents = [
        {i: rng.standard_normal(e[i].shape).astype(e[i].dtype) for i in diff} for e in batch
    ]
    looped: list[list[np.ndarray]] = []
    for e, t in zip(batch, tangents):
        with torch.no_grad(), fwAD.dual_level():
            args = [to_tensor(np.array(a)) for a in e]
            for i in diff:
                args[i] = fwAD.make_dual(args[i], to_tensor(t[i].copy()))
            outs = [o for o in call(args) if o.is_floating_point()]
            tans = [fwAD.unpack_dual(o).tangent for o in outs]
            looped.append(
                [
                    np.zeros(tuple(o.shape)) if t is None else arrays([t])[0]
                    for o, t in zip(outs, tans)
                ]
            )
    labels = [f"output {k}'s tangent" for k in range(len(looped[0]))]
    case = BatchedCase("forward mode", labels, [None] * len(labels), looped, ad_mode="fwd")

    def one(*args: Any) -> tuple[Any, ...]:
        xs, ts = list(args[:n]), args[n:]

        def f(*moving: Any) -> tuple[Any, ...]:
            full = list(xs)
            for k, i in enumerate(diff):
                full[i] = moving[k]
            return tuple(o for o in call(full) if o.is_floating_point())

        _, out = torch.func.jvp(f, tuple(xs[i] for i in diff), tuple(ts))
        return tuple(out)

    ts_stacked = [torch.stack([to_tensor(t[i].copy()) for t in tangents]) for i in diff]
    try:
        with torch.no_grad():
            out = torch.func.vmap(one, in_dims=(*in_dims, *[0] * len(diff)))(
                *stacked(), *ts_stacked
            )
        case.vmapped = elements(out)
    except Exception as exc:
        case.raised = exc
    return case


def vmap_runner(
    apply: Callable[[Sequence[Any], Mapping[str, Any]], tuple[Any, list[int]]],
    plain_class: type | None,
    to_tensor: Callable[[np.ndarray], Any],
    to_array: Callable[[Any], np.ndarray | None],
) -> Callable[..., list[BatchedCase]]:
    """The function :class:`~gradcheck.checking.target.Target`'s ``batcher`` is:
    ``(batch, differentiable, params, rng, forward) -> cases``, with the op called
    through ``apply`` (tensors and parameters in)."""
    import torch

    def batcher(
        batch: Sequence[Sequence[np.ndarray]],
        differentiable: Sequence[bool],
        params: Mapping[str, Any],
        rng: np.random.Generator,
        forward: bool,
    ) -> list[BatchedCase]:
        def call(tensors: list[Any]) -> tuple[Any, ...]:
            out, _ = apply(tensors, params)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            return tuple(o for o in outs if isinstance(o, torch.Tensor))

        return batched_cases(
            call, to_tensor, to_array, plain_class, batch, differentiable, rng, forward
        )

    batcher.rule = vmap_rule(plain_class)  # type: ignore[attr-defined]
    return batcher
