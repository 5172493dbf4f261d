"""PyTorch targets: a ``torch.autograd.Function`` subclass (or its ``apply`` under
another name), an ``nn.Module`` (an instance, or a class whose constructor takes no
argument), or a function of torch tensors.

Inputs become CPU tensors that share memory with the checker's arrays (so a forward
that changes its input shows), float inputs that are not constants require a
gradient, and the gradient comes from ``torch.autograd.grad`` of the output with the
upstream gradient. The dtype is the arrays' (float64 unless asked otherwise).

An ``nn.Module`` is a function of its forward's inputs and of its parameters: the
parameters are further inputs, after the forward's, whose values are the module's own
(not drawn) and whose gradients are checked like any input's; parameters that do not
require a gradient are constants, and buffers stay the module's state. The module
runs in the inputs' floating dtype (a float32 module checked in float64 runs as a
float64 copy of itself).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from gradcheck.checking.adapters import bridge_target, op_class_behind
from gradcheck.checking.signature import arrange, op_signature
from gradcheck.checking.target import FixedInput, qualname
from gradcheck.errors import NotATarget

# torch is imported when a target is resolved, not with this module (which the
# doctest collection imports whether or not torch is installed).

__all__ = ["target", "forward_of"]


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


def _is_module(obj: Any) -> bool:
    cls = obj if isinstance(obj, type) else type(obj)
    return any(
        c.__name__ == "Module" and c.__module__ == "torch.nn.modules.module" for c in cls.__mro__
    )


def forward_of(obj: Any) -> tuple[Callable[..., Any], int]:
    """The function whose signature gives the op's inputs, and how many leading
    parameters are not inputs: an ``nn.Module``'s ``forward`` (after ``self``); a
    Function's new style (torch >= 2.0) `forward(*inputs)` plus
    `setup_context(ctx, ...)`, or old style `forward(ctx, *inputs)`."""
    if _is_module(obj):
        return obj.forward, 1 if isinstance(obj, type) else 0
    owner = next(c for c in obj.__mro__ if "setup_context" in c.__dict__)
    new_style = (getattr(owner, "__module__", "") or "").split(".")[0] != "torch"
    return obj.forward, 0 if new_style else 1


def _output(out: Any, name: str) -> Any:
    import torch

    several = isinstance(out, (tuple, list))
    if isinstance(out, torch.Tensor) or (several and any(isinstance(o, torch.Tensor) for o in out)):
        return out
    raise TypeError(
        f"{name} returned {type(out).__name__}, not a torch.Tensor (or a tuple of them)"
    )


def _array(t: Any) -> np.ndarray | None:
    import torch

    return t.detach().numpy().copy() if isinstance(t, torch.Tensor) else None


def _instance(obj: Any) -> Any:
    """The module to check: ``obj``, or an instance of the class ``obj``."""
    if not isinstance(obj, type):
        return obj
    try:
        return obj()
    except TypeError as exc:
        raise NotATarget(
            f"the nn.Module {obj.__qualname__} cannot be made without arguments ({exc}); "
            f"make an instance in your module (layer = {obj.__name__}(...)) and name it"
        ) from None


class _Module:
    """An ``nn.Module`` as a function of (forward inputs..., parameters...)."""

    def __init__(self, module: Any) -> None:
        import torch

        self.module = module
        self.names = [name for name, _ in module.named_parameters()]
        self.constant = [not p.requires_grad for _, p in module.named_parameters()]
        self.values = [p.detach().cpu().numpy().copy() for _, p in module.named_parameters()]
        self._by_dtype: dict[Any, Any] = {}
        self._functional_call = torch.func.functional_call

    def at(self, dtype: Any) -> Any:
        """The module with its floating parameters and buffers in ``dtype``."""
        floating = [
            t for t in (*self.module.parameters(), *self.module.buffers()) if t.is_floating_point()
        ]
        if dtype is None or all(t.dtype == dtype for t in floating):
            return self.module
        if dtype not in self._by_dtype:
            self._by_dtype[dtype] = copy.deepcopy(self.module).to(dtype)
        return self._by_dtype[dtype]

    def __call__(self, *tensors: Any, **params: Any) -> Any:
        n = len(tensors) - len(self.names)
        inputs, weights = tensors[:n], tensors[n:]
        dtype = next((t.dtype for t in tensors if _is_float_tensor(t)), None)
        return self._functional_call(
            self.at(dtype), dict(zip(self.names, weights)), tuple(inputs), params
        )


def _is_float_tensor(t: Any) -> bool:
    import torch

    return isinstance(t, torch.Tensor) and t.is_floating_point()


def _label(obj: Any, function_class: type | None) -> str:
    if function_class is not None:
        return qualname(function_class)
    if isinstance(obj, type) or hasattr(obj, "__qualname__"):
        return qualname(obj)
    return f"{qualname(type(obj))} instance"


def target(obj: Any) -> Any:
    """The :class:`~gradcheck.checking.target.Target` of a torch Function (or an alias
    of its ``apply``), an ``nn.Module``, or a function of torch tensors."""
    import torch

    function_class = obj if isinstance(obj, type) and not _is_module(obj) else op_class_behind(obj)
    sig = op_signature(obj)
    name = getattr(function_class or obj, "__name__", None) or type(obj).__name__
    module = _Module(_instance(obj)) if _is_module(obj) else None
    fixed: tuple[FixedInput, ...] = ()
    recording = None
    if function_class is not None:
        recording = _recording(function_class)
        call: Callable[..., Any] = recording.apply
    elif module is not None:
        call = module
        fixed = tuple(
            FixedInput(n, v, c) for n, v, c in zip(module.names, module.values, module.constant)
        )
    else:
        call = obj
    # Function.apply takes no keywords reliably: every parameter goes by position.
    by_position = function_class is not None
    n_fixed = len(fixed)

    def apply(tensors: Sequence[Any], params: Mapping[str, Any]) -> tuple[Any, list[int]]:
        """The output, and the position of each tensor among the arguments (the
        position of its gradient among what the Function's backward returns)."""
        inputs, fixed = (
            list(tensors[: len(tensors) - n_fixed]),
            list(tensors[len(tensors) - n_fixed :]),
        )
        args, kwargs = arrange(sig, inputs, params, by_position=by_position)
        args += fixed
        slots = {id(a): k for k, a in enumerate(args)}
        return _output(call(*args, **kwargs), name), [slots.get(id(t), -1) for t in tensors]

    def run(
        arrays: Sequence[np.ndarray], constants: Sequence[bool], params: Mapping[str, Any]
    ) -> tuple[np.ndarray, Callable[[np.ndarray], list[np.ndarray | None]]]:
        with torch.enable_grad():
            tensors = [torch.from_numpy(a) for a in arrays]
            for t, constant in zip(tensors, constants):
                if not constant and t.is_floating_point():
                    t.requires_grad_(True)
            out, slots = apply(tensors, params)
        several = isinstance(out, (tuple, list))
        outs = list(out) if several else [out]
        value = tuple(_array(o) for o in outs) if several else _array(out)

        def backward(grad: Any) -> list[np.ndarray | None]:
            upstream = grad if several else [grad]
            pairs = [
                (o, torch.from_numpy(g))
                for o, g in zip(outs, upstream)
                if g is not None and isinstance(o, torch.Tensor) and o.requires_grad
            ]
            wanted = [i for i, t in enumerate(tensors) if t.requires_grad]
            grads: list[np.ndarray | None] = [None] * len(tensors)
            if not pairs or not wanted:
                return grads
            if recording is not None:
                recording.returned = []
            found = torch.autograd.grad(
                [o for o, _ in pairs],
                [tensors[i] for i in wanted],
                grad_outputs=[g for _, g in pairs],
                allow_unused=True,
                retain_graph=True,  # for a second backward on the same graph
            )
            returned = recording.returned if recording is not None else []
            for i, g in zip(wanted, found):
                # A copy: the buffer is torch's (it may be the upstream gradient).
                grads[i] = None if g is None else g.detach().numpy().copy()
                slot = slots[i]
                dtype = returned[slot] if 0 <= slot < len(returned) else None
                if grads[i] is not None and dtype is not None and dtype != g.dtype:
                    # As the Function's backward returned it (torch cast it; the
                    # checker says wrong_dtype)
                    grads[i] = g.detach().to(dtype).numpy().copy()
            return grads

        # An output marked non-differentiable (or not depending on any input) needs
        # no upstream gradient; the backward may run again on the same graph.
        backward.differentiable = [  # type: ignore[attr-defined]
            isinstance(o, torch.Tensor) and o.requires_grad for o in outs
        ]
        backward.repeatable = True  # type: ignore[attr-defined]
        return value, backward

    def evaluate(arrays: Sequence[np.ndarray], params: Mapping[str, Any]) -> np.ndarray:
        with torch.no_grad():
            out, _ = apply([torch.from_numpy(a) for a in arrays], params)
        if isinstance(out, (tuple, list)):
            return tuple(_array(o) for o in out)
        return out.numpy()

    return bridge_target(obj, run, evaluate, sig, name=_label(obj, function_class), fixed=fixed)
