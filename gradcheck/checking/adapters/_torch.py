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

# torch is imported when a target is resolved, not with this module (which the
# doctest collection imports whether or not torch is installed).

__all__ = ["torch_target"]


def _callable(obj: Any) -> Callable[..., Any]:
    if isinstance(obj, type):  # a torch.autograd.Function subclass
        return obj.apply
    return obj


def _output(out: Any, name: str) -> Any:
    import torch

    if not isinstance(out, torch.Tensor):
        raise TypeError(
            f"{name} returned {type(out).__name__}, not a torch.Tensor "
            f"(a target has one tensor output)"
        )
    return out


def torch_target(obj: Any) -> Any:
    """The :class:`~gradcheck.checking.target.Target` of a torch Function or function."""
    import torch

    call = _callable(obj)
    name = getattr(obj, "__name__", repr(obj))

    def run(
        arrays: Sequence[np.ndarray], constants: Sequence[bool], params: Mapping[str, Any]
    ) -> tuple[np.ndarray, Callable[[np.ndarray], list[np.ndarray | None]]]:
        with torch.enable_grad():
            tensors = [torch.from_numpy(a) for a in arrays]
            for t, constant in zip(tensors, constants):
                if not constant and t.is_floating_point():
                    t.requires_grad_(True)
            out = _output(call(*tensors, **params), name)
        value = out.detach().numpy().copy()

        def backward(grad: np.ndarray) -> list[np.ndarray | None]:
            wanted = [i for i, t in enumerate(tensors) if t.requires_grad]
            grads: list[np.ndarray | None] = [None] * len(tensors)
            if not out.requires_grad or not wanted:
                return grads
            found = torch.autograd.grad(
                out,
                [tensors[i] for i in wanted],
                grad_outputs=torch.from_numpy(grad),
                allow_unused=True,
            )
            for i, g in zip(wanted, found):
                # A copy: the buffer is torch's (it may be the upstream gradient).
                grads[i] = None if g is None else g.detach().numpy().copy()
            return grads

        return value, backward

    def evaluate(arrays: Sequence[np.ndarray], params: Mapping[str, Any]) -> np.ndarray:
        with torch.no_grad():
            out = _output(call(*[torch.from_numpy(a) for a in arrays], **params), name)
        return out.numpy()

    return bridge_target(obj, run, evaluate)
