"""torch's autograd as the torch adapter calls it: where tensors live and in which
dtype (:class:`_Placement`), a backward through torch's engine directly where it can
(:func:`_grad`), and forward mode (:func:`_dual`, :func:`_jvp`); and the
non-contiguous copy of a tensor that the layout checks hand an op
(:func:`_noncontiguous`). torch is imported inside, when a target runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np


class _Placement:
    """Where and in which dtype the op runs: the CPU and the arrays' dtype, sharing
    memory with the checker's arrays (a change the op makes in place shows there); or
    a device, or bfloat16 for float32 arrays, on copies whose changes are copied back.
    The float64 reference runs on the device too, except on one without float64
    (Apple's ``mps``), where it runs on the CPU."""

    def __init__(self, device: str | None, bfloat16: bool) -> None:
        import torch

        self.device = torch.device(device) if device else None
        self.bfloat16 = bfloat16
        self.copies = self.device is not None or bfloat16
        lacks_float64 = self.device is not None and self.device.type == "mps"
        self.reference_device = None if lacks_float64 else self.device

    def tensor(self, a: np.ndarray, *, reference: bool = False) -> Any:
        import torch

        t = torch.from_numpy(a)
        if self.bfloat16 and a.dtype == np.float32:
            t = t.to(torch.bfloat16)
        device = self.reference_device if reference else self.device
        return t if device is None else t.to(device)

    def array(self, t: Any) -> np.ndarray | None:
        """A new ndarray of ``t`` (float32 for bfloat16; on the CPU)."""
        import torch

        if not isinstance(t, torch.Tensor):
            return None
        t = t.detach()
        if t._is_zerotensor():
            # torch's all-zero gradient (torch.sgn of real inputs, a ZeroTensor),
            # which has no buffer to read: zeros, as it means
            t = torch.zeros(t.shape, dtype=t.dtype, device=t.device)
        if t.dtype == torch.bfloat16:
            t = t.float()
        if t.is_complex():
            t = t.resolve_conj()
        return t.resolve_neg().cpu().numpy().copy()

    def snapshot(self, tensors: Sequence[Any]) -> list[Any] | None:
        """Copies of the tensors made from arrays, to see later whether the op changed
        them (None when they share memory with the arrays)."""
        return [t.detach().clone() for t in tensors] if self.copies else None

    def written_back(
        self, arrays: Sequence[np.ndarray], tensors: Sequence[Any], before: list[Any] | None
    ) -> None:
        """Each tensor the op changed in place (since ``before``), into its array."""
        import torch

        if before is None:
            return
        for a, t, b in zip(arrays, tensors, before):
            if a.flags.writeable and not torch.equal(t.detach(), b):
                value = self.array(t)
                if value is not None and value.shape == a.shape:
                    a[...] = value


#: Whether torch's private engine entry point runs a backward as gradcheck calls it:
#: empty until the first backward finds out (:func:`_engine_ok`), then the answer.
_ENGINE: list[bool] = []


def _engine_ok() -> bool:
    """Whether ``torch.autograd.graph._engine_run_backward`` exists and answers a small
    backward as ``torch.autograd.grad`` does (asked once per process)."""
    if not _ENGINE:
        import torch

        run = getattr(getattr(torch.autograd, "graph", None), "_engine_run_backward", None)
        ok = False
        if run is not None:
            # (in whatever grad mode the first backward is asked in)
            with torch.inference_mode(False), torch.enable_grad():
                x = torch.ones(2, dtype=torch.float64, requires_grad=True)
                w = torch.full((2,), 3.0, dtype=torch.float64)
                try:
                    got = run((x * x,), (w,), False, False, (x,), True, accumulate_grad=False)
                    ok = len(got) == 1 and bool(torch.equal(got[0], 2 * x.detach() * w))
                except Exception:  # another signature, another meaning: not this way
                    ok = False
        _ENGINE.append(ok)
    return _ENGINE[0]


def _grad(
    outputs: Sequence[Any],
    inputs: Sequence[Any],
    upstream: Sequence[Any],
    retain_graph: bool | None = None,
    create_graph: bool = False,
) -> tuple[Any, ...]:
    """``torch.autograd.grad(outputs, inputs, upstream, allow_unused=True, ...)``.

    Where nothing needs the public function's checks, torch's engine runs the
    backward directly: ``torch.autograd.grad`` checks each upstream gradient's shape
    with ``torch.fx.experimental.symbolic_shapes``, whose import (SymPy with it) costs
    about 0.3 s of CPU, more than a small target's 100 checks. The same check is made
    here for what gradcheck passes (plain tensors of the outputs' shapes); anything
    else (a tensor subclass, a nested tensor, another shape, a torch without that
    entry point) goes through the public function, which raises its own error.
    """
    import torch

    if retain_graph is None:
        retain_graph = create_graph
    plain = torch.Tensor
    direct = _engine_ok() and all(
        type(o) is plain
        and type(g) is plain
        and not o.is_nested
        and o.shape == g.shape
        and o.is_complex() == g.is_complex()
        for o, g in zip(outputs, upstream)
    )
    if direct and len(outputs) == len(upstream) and all(type(t) is plain for t in inputs):
        return torch.autograd.graph._engine_run_backward(
            tuple(outputs),
            tuple(upstream),
            retain_graph,
            create_graph,
            tuple(inputs),
            True,
            accumulate_grad=False,
        )
    return torch.autograd.grad(
        list(outputs),
        list(inputs),
        grad_outputs=list(upstream),
        allow_unused=True,
        retain_graph=retain_graph,
        create_graph=create_graph,
    )


def _dual(t: Any, tangent: Any) -> Any:
    """``t`` as a dual tensor of ``tangent`` (in the current forward-mode level)."""
    import torch.autograd.forward_ad as fwAD

    return fwAD.make_dual(t, tangent.to(t.dtype))


def _noncontiguous(t: Any) -> Any:
    """A copy of the tensor ``t`` that is not contiguous: in the transposed layout
    where two axes are longer than 1, else every other element of a buffer twice as
    long along its long axis, whose other elements are zeros (so that a replay reads
    the same values there); ``t`` itself when it has one element or none."""
    import torch

    if not isinstance(t, torch.Tensor) or t.numel() < 2:
        return t
    sizes = list(t.shape)
    long = [d for d, n in enumerate(sizes) if n > 1]
    if len(long) >= 2:
        order = list(reversed(range(t.ndim)))
        out = torch.empty(sizes[::-1], dtype=t.dtype, device=t.device).permute(order)
    else:
        sizes[long[0]] *= 2
        buffer = torch.zeros(sizes, dtype=t.dtype, device=t.device)
        out = buffer[
            tuple(slice(None, None, 2) if d == long[0] else slice(None) for d in range(t.ndim))
        ]
    return out.copy_(t)


def _jvp(apply: Callable[..., Any], place: _Placement) -> Callable[..., list[Any]]:
    """The op's forward mode (torch.autograd.forward_ad) along a tangent of one input:
    each output's tangent (for :func:`~gradcheck.checking.adapters.variants.forward_mode`)."""
    import torch
    import torch.autograd.forward_ad as fwAD

    def jvp(
        arrays: Sequence[np.ndarray], params: Mapping[str, Any], i: int, tangent: np.ndarray
    ) -> list[Any]:
        with torch.no_grad(), fwAD.dual_level():
            args = [place.tensor(a) for a in arrays]
            args[i] = fwAD.make_dual(args[i], place.tensor(tangent))
            out, _ = apply(args, params)
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            return [
                place.array(fwAD.unpack_dual(o).tangent) if isinstance(o, torch.Tensor) else None
                for o in outs
            ]

    return jvp
