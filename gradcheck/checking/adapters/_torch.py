"""PyTorch targets: a ``torch.autograd.Function`` subclass or a function of torch tensors.

Inputs become CPU tensors that share memory with the checker's arrays (so a forward
that changes its input shows), float inputs that are not constants require a
gradient, and the gradient comes from ``torch.autograd.grad`` of the output with the
upstream gradient. The dtype is the arrays' (float64 unless asked otherwise).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from gradcheck.checking.adapters import bridge_target
from gradcheck.checking.signature import arrange, op_signature

# torch is imported when a target is resolved, not with this module (which the
# doctest collection imports whether or not torch is installed).

__all__ = ["target", "forward_of"]


def _callable(obj: Any) -> tuple[Callable[..., Any], Any]:
    """The function to call, and for a ``torch.autograd.Function`` subclass the
    recording subclass it runs as (else None)."""
    if isinstance(obj, type):  # a torch.autograd.Function subclass
        recording = _recording(obj)
        return recording.apply, recording
    return obj, None


def _recording(fn: type) -> Any:
    """A subclass of the Function ``fn`` whose backward records the dtypes of the
    gradients it returns: torch casts each one to its input's dtype afterwards, so a
    backward that computes float32 gradients for float64 inputs would go unseen."""
    import torch

    def backward(ctx: Any, *grads: Any) -> Any:
        out = fn.backward(ctx, *grads)
        outs = out if isinstance(out, tuple) else (out,)
        recording.returned = [g.dtype if isinstance(g, torch.Tensor) else None for g in outs]
        return out

    recording = type(fn.__name__, (fn,), {"backward": staticmethod(backward), "returned": []})
    recording.__qualname__ = fn.__qualname__
    return recording


def _output(out: Any, name: str) -> Any:
    import torch

    if not isinstance(out, torch.Tensor):
        raise TypeError(
            f"{name} returned {type(out).__name__}, not a torch.Tensor "
            f"(a target has one tensor output)"
        )
    return out


def forward_of(cls: type) -> tuple[Callable[..., Any], int]:
    """The function whose signature gives a Function subclass's inputs, and how many
    leading parameters are not inputs: new style (torch >= 2.0) is `forward(*inputs)`
    plus `setup_context(ctx, ...)`; old style `forward(ctx, *inputs)`."""
    owner = next(c for c in cls.__mro__ if "setup_context" in c.__dict__)
    new_style = (getattr(owner, "__module__", "") or "").split(".")[0] != "torch"
    return cls.forward, 0 if new_style else 1


def target(obj: Any) -> Any:
    """The :class:`~gradcheck.checking.target.Target` of a torch Function or function."""
    import torch

    call, recording = _callable(obj)
    name = getattr(obj, "__name__", repr(obj))
    sig = op_signature(obj)
    # Function.apply takes no keywords reliably: every parameter goes by position.
    by_position = isinstance(obj, type)

    def apply(tensors: Sequence[Any], params: Mapping[str, Any]) -> Any:
        args, kwargs = arrange(sig, tensors, params, by_position=by_position)
        return _output(call(*args, **kwargs), name)

    def run(
        arrays: Sequence[np.ndarray], constants: Sequence[bool], params: Mapping[str, Any]
    ) -> tuple[np.ndarray, Callable[[np.ndarray], list[np.ndarray | None]]]:
        with torch.enable_grad():
            tensors = [torch.from_numpy(a) for a in arrays]
            for t, constant in zip(tensors, constants):
                if not constant and t.is_floating_point():
                    t.requires_grad_(True)
            out = apply(tensors, params)
        value = out.detach().numpy().copy()

        def backward(grad: np.ndarray) -> list[np.ndarray | None]:
            wanted = [i for i, t in enumerate(tensors) if t.requires_grad]
            grads: list[np.ndarray | None] = [None] * len(tensors)
            if not out.requires_grad or not wanted:
                return grads
            if recording is not None:
                recording.returned = []
            found = torch.autograd.grad(
                out,
                [tensors[i] for i in wanted],
                grad_outputs=torch.from_numpy(grad),
                allow_unused=True,
            )
            returned = recording.returned if recording is not None else []
            for i, g in zip(wanted, found):
                # A copy: the buffer is torch's (it may be the upstream gradient).
                grads[i] = None if g is None else g.detach().numpy().copy()
                dtype = returned[i] if i < len(returned) else None
                if grads[i] is not None and dtype is not None and dtype != g.dtype:
                    # As the Function's backward returned it (torch cast it; the
                    # checker says wrong_dtype)
                    grads[i] = g.detach().to(dtype).numpy().copy()
            return grads

        return value, backward

    def evaluate(arrays: Sequence[np.ndarray], params: Mapping[str, Any]) -> np.ndarray:
        with torch.no_grad():
            out = apply([torch.from_numpy(a) for a in arrays], params)
        return out.numpy()

    return bridge_target(obj, run, evaluate, sig)
