"""PyTorch targets: a ``torch.autograd.Function`` subclass (or its ``apply`` under
another name), an ``nn.Module`` (an instance, or a class whose constructor takes no
argument), or a function of torch tensors.

Inputs become CPU tensors that share memory with the checker's arrays (so a forward
that changes its input shows), float inputs that are not constants require a
gradient, and the gradient is ``torch.autograd.grad``'s of the output with the
upstream gradient (run through torch's engine directly where it can be: :func:`_grad`).
The dtype is the arrays' (float64 unless asked otherwise).

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

from gradcheck.checking.adapters import op_class_behind
from gradcheck.checking.adapters._torch_autograd import (
    _dual,
    _grad,
    _jvp,
    _noncontiguous,
    _Placement,
)
from gradcheck.checking.adapters.bridge import bridge_target
from gradcheck.checking.adapters.variants import Variant, forward_mode
from gradcheck.checking.layout import INPUT_LAYOUTS, STRIDED
from gradcheck.checking.signature import arrange, op_signature
from gradcheck.checking.target import FixedInput, instance_name, qualname
from gradcheck.checking.trees import rebuild
from gradcheck.errors import NotATarget, printable

# torch is imported when a target is resolved, not with this module (which the
# doctest collection imports whether or not torch is installed).

__all__ = ["target", "forward_of"]


def _recording(fn: type[Any]) -> Any:
    """A subclass of the Function ``fn`` whose backward records the dtypes of the
    gradients it returns: torch casts each one to its input's dtype afterwards, so a
    backward that computes float32 gradients for float64 inputs would go unseen."""
    import torch

    def backward(ctx: Any, *grads: Any) -> Any:
        out = fn.backward(ctx, *grads)
        outs = out if isinstance(out, tuple) else (out,)
        recording.returned = [g.dtype if isinstance(g, torch.Tensor) else None for g in outs]
        return out

    recording: Any = type(fn.__name__, (fn,), {"backward": staticmethod(backward), "returned": []})
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
        # parameter names are any string a module registered: printable for reports
        self.names = [printable(name) for name, _ in module.named_parameters()]
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


class _HigherOrder:
    """``run`` and ``evaluate`` of the order ``k`` target (``k >= 2``): order 2 is
    ``(x..., v) -> backward(x, v)``, order ``k`` the backward of order ``k - 1``'s
    target ``(x..., v_2, ..., v_k) -> backward_(k-1)(x, v_2..v_(k-1); v_k)``. Its
    outputs are the gradients of the inputs differentiated at the order below (each a
    tensor with the graph of the backward: ``create_graph=True``): the op's inputs
    ``differentiated``, then each upstream gradient below; its last input ``v_k`` is
    the upstream gradient of the order below's differentiable outputs, raveled and
    joined (as the checker joins them). Its gradient is torch's backward of that
    backward; its evaluation the order below's backward, whose finite differences are
    the reference."""

    def __init__(self, op: _TorchOp, order: int, differentiated: Sequence[int]) -> None:
        self.op, self.place, self.differentiated = op, op.place, differentiated
        self.order = order

    def upstream(self, vt: Any, outs: Sequence[Any], differentiable: Sequence[Any]) -> list[Any]:
        """``v`` cut into the upstream gradient of each differentiable output. An op
        with one output has ``v`` of its shape whether or not it is differentiable
        (one that depends on no input: its gradient is undefined, which means zero).
        A complex output takes two pieces of ``v``, its real and imaginary parts' (as
        the checker joins them), given to torch as one complex upstream gradient."""
        import torch

        if len(outs) == 1 and not (differentiable and outs[0].is_complex()):
            return [vt.reshape(outs[0].shape) if differentiable else None]
        flat, start = vt.reshape(-1), 0
        upstream: list[Any] = []
        for o in outs:
            if not any(o is d for d in differentiable):
                upstream.append(None)
            elif o.is_complex():
                # (the checker sees a complex output as its real and imaginary parts,
                # each raveled: torch's upstream gradient of it is re + i·im)
                n = o.numel()
                re, im = flat[start : start + n], flat[start + n : start + 2 * n]
                upstream.append(torch.complex(re, im).reshape(o.shape))
                start += 2 * n
            else:
                upstream.append(flat[start : start + o.numel()].reshape(o.shape))
                start += o.numel()
        if start != flat.numel():
            raise ValueError(
                f"the upstream gradient has {flat.numel()} elements, the op's "
                f"differentiable outputs {start}"
            )
        return upstream

    def level(
        self,
        k: int,
        arrays: Sequence[np.ndarray],
        constants: Sequence[bool],
        params: Mapping[str, Any],
        create_graph: bool,
        tangent: tuple[int, np.ndarray] | None = None,
    ) -> tuple[list[Any], list[Any]]:
        """The order ``k`` target on ``arrays``: a tensor per array (None for the
        constants at order ``k >= 2``), and its outputs. ``tangent`` ``(i, t)``: array
        ``i`` enters as a dual tensor of tangent ``t`` (inside a forward-mode level),
        so that the outputs carry the jvp of this order's backward (fwd-over-rev)."""
        import torch

        if k == 1:
            tensors, outs, _, _ = self.op.graph(arrays, constants, params, tangent)
            return tensors, outs
        xs, v = list(arrays[:-1]), arrays[-1]
        below_tangent = tangent if tangent is not None and tangent[0] < len(xs) else None
        # The inputs differentiated at the order below require a gradient whatever
        # this order makes a constant: they are what the outputs are of.
        wanted = [*self.differentiated, *range(len(xs) - (k - 2), len(xs))]
        below = [i not in wanted for i in range(len(xs))]
        if k == 2:
            tensors, outs, slots, _ = self.op.graph(xs, below, params, below_tangent)
        else:
            tensors, outs = self.level(k - 1, xs, below, params, True, below_tangent)
        differentiable = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad]
        with torch.enable_grad():
            vt = self.place.tensor(v)
            if create_graph and not constants[-1]:
                vt.requires_grad_(True)
            if tangent is not None and below_tangent is None:  # the tangent of v_k
                vt = _dual(vt, self.place.tensor(tangent[1]))
            upstream = self.upstream(vt, outs, differentiable)
            if k == 2:  # the op's own backward, its gradients' dtypes recorded
                found = self.op.gradients(
                    outs, tensors, slots, upstream, create_graph=create_graph, retain_graph=True
                )
            else:
                found = self.gradients(outs, upstream, tensors, wanted, create_graph)
        grads = [torch.zeros_like(tensors[i]) if found[i] is None else found[i] for i in wanted]
        # This order's own backward: only the inputs that are not constants here.
        tensors = [*tensors, vt]
        for i, t in enumerate(tensors):
            if t is not None and constants[i] and t.requires_grad:
                tensors[i] = None
        return tensors, grads

    @staticmethod
    def gradients(
        outs: Sequence[Any],
        upstream: Sequence[Any],
        tensors: Sequence[Any],
        wanted: Sequence[int],
        create_graph: bool,
    ) -> list[Any]:
        """torch.autograd.grad of ``outs`` (a backward's outputs) with ``upstream``, for
        the inputs ``wanted``: a tensor or None per input."""

        pairs = [(o, g) for o, g in zip(outs, upstream) if g is not None and o.requires_grad]
        found: list[Any] = [None] * len(tensors)
        if not pairs:
            return found
        got = _grad(
            [o for o, _ in pairs],
            [tensors[i] for i in wanted],
            [g for _, g in pairs],
            retain_graph=True,
            create_graph=create_graph,
        )
        for i, g in zip(wanted, got):
            found[i] = g
        return found

    def value_of(self, grads: Sequence[Any]) -> Any:
        if len(grads) == 1:
            return self.place.array(grads[0])
        return tuple(self.place.array(g) for g in grads)

    def run(
        self, arrays: Sequence[np.ndarray], constants: Sequence[bool], params: Mapping[str, Any]
    ) -> tuple[Any, Callable[[Any], list[np.ndarray | None]]]:
        import torch

        place = self.place
        tensors, grads = self.level(self.order, arrays, constants, params, True)
        leaves = [t for t in tensors if t is not None and t.requires_grad]

        def backward(w: Any) -> list[np.ndarray | None]:
            ws = [w] if len(grads) == 1 else list(w)
            pairs = [
                (g, place.tensor(wk))
                for g, wk in zip(grads, ws)
                if wk is not None and g.requires_grad
            ]
            out: list[np.ndarray | None] = [None] * len(arrays)
            if not pairs or not leaves:
                return out  # the backward has no graph: no higher derivative (zeros)
            found = _grad([g for g, _ in pairs], leaves, [wk for _, wk in pairs], True)
            by_leaf = {id(leaf): g for leaf, g in zip(leaves, found)}
            for i, t in enumerate(tensors):
                if t is not None and id(t) in by_leaf:
                    g = by_leaf[id(t)]
                    out[i] = place.array(torch.zeros_like(t) if g is None else g)
            return out

        # Every gradient is an output to check, whether or not the backward built a
        # graph for it (one it did not build has a derivative of zero).
        backward.differentiable = [True] * len(grads)  # type: ignore[attr-defined]
        backward.repeatable = True  # type: ignore[attr-defined]
        return self.value_of(grads), backward

    def evaluate(self, arrays: Sequence[np.ndarray], params: Mapping[str, Any]) -> Any:
        _, grads = self.level(self.order, arrays, [False] * len(arrays), params, False)
        return self.value_of(grads)

    def jvp(
        self, arrays: Sequence[np.ndarray], params: Mapping[str, Any], i: int, tangent: np.ndarray
    ) -> list[Any]:
        """The forward mode of this order's backward (torch's ``check_fwd_over_rev``):
        the backward computed with input ``i`` a dual tensor of tangent ``tangent``
        (torch.autograd.forward_ad), each of its outputs' tangent (for
        :func:`~gradcheck.checking.adapters.variants.forward_mode`). A Function in the
        backward's path (a custom double backward) runs its own ``jvp`` here."""
        import torch.autograd.forward_ad as fwAD

        n = len(arrays)
        with fwAD.dual_level():
            _, grads = self.level(self.order, arrays, [False] * n, params, True, (i, tangent))
            tangents = [fwAD.unpack_dual(g).tangent for g in grads]
            return [None if t is None else self.place.array(t) for t in tangents]


def _joined(tensors: Sequence[Any], complex_inputs: Sequence[bool]) -> list[Any]:
    """The op's inputs from the checker's real ones: a complex input from its parts."""
    import torch

    joined: list[Any] = []
    k = 0
    while k < len(tensors):
        if len(joined) < len(complex_inputs) and complex_inputs[len(joined)]:
            joined.append(torch.complex(tensors[k], tensors[k + 1]))
            k += 2
        else:
            joined.append(tensors[k])
            k += 1
    return joined


def _split(out: Any) -> Any:
    """The op's output with each complex tensor as two real ones (real, imaginary)."""
    import torch

    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if not any(isinstance(o, torch.Tensor) and o.is_complex() for o in outs):
        return out
    parts: list[Any] = []
    for o in outs:
        complex_tensor = isinstance(o, torch.Tensor) and o.is_complex()
        parts.extend([torch.real(o), torch.imag(o)] if complex_tensor else [o])
    return tuple(parts)


def _marks_dirty(fn: type[Any]) -> bool:
    """Whether the Function ``fn``'s forward (or setup_context) calls
    ``ctx.mark_dirty``: read from the source of the classes that define them (an op
    whose source cannot be read is taken as one that does not)."""
    import inspect

    for cls in fn.__mro__:
        if (getattr(cls, "__module__", "") or "").split(".")[0] == "torch":
            break
        for name in ("forward", "setup_context"):
            method = cls.__dict__.get(name)
            method = getattr(method, "__func__", method)
            if method is None:
                continue
            try:
                text = inspect.getsource(method)
            except (OSError, TypeError):
                continue
            if "mark_dirty" in text:
                return True
    return False


def _copy(t: Any) -> Any:
    """A copy of the tensor ``t`` in the graph (``t`` itself if not a tensor)."""
    import torch

    return t.clone() if isinstance(t, torch.Tensor) else t


def _is_float_tensor(t: Any) -> bool:
    import torch

    return isinstance(t, torch.Tensor) and t.is_floating_point()


def _label(obj: Any, function_class: type | None) -> str:
    if function_class is not None:
        return qualname(function_class)
    if isinstance(obj, type) or hasattr(obj, "__qualname__"):
        return qualname(obj)
    named = instance_name(obj)
    if named is not None:  # (layer = MyLayer() in mymod: mymod:layer, as verify takes it)
        return printable(named[1] if named[0] == "__main__" else ":".join(named))
    return f"{qualname(type(obj))} instance"


class _TorchOp:
    """A torch op as the checker runs it: a forward with or without the graph, and the
    gradients of its outputs (what :func:`target`'s ``run`` and ``evaluate`` are made of)."""

    def __init__(self, obj: Any, variant: Variant, real_parts: Sequence[bool] = ()) -> None:
        #: The inputs given as their real and imaginary parts, joined here into the
        #: complex tensors the op takes (its complex outputs split into two): the op
        #: as a real function of real tensors, differentiated by torch through
        #: torch.complex, .real and .imag at any order and in forward mode.
        self.real_parts = tuple(real_parts)
        #: The inputs that are trees of tensors (a dict of them), given as leaves.
        self.trees = variant.trees if any(t is not None for t in variant.trees) else ()
        self.function_class = (
            obj if isinstance(obj, type) and not _is_module(obj) else op_class_behind(obj)
        )
        self.sig = op_signature(obj)
        self.name = getattr(self.function_class or obj, "__name__", None) or type(obj).__name__
        module = _Module(_instance(obj)) if _is_module(obj) else None
        self.fixed: tuple[FixedInput, ...] = ()
        self.recording = None
        if self.function_class is not None:
            self.recording = _recording(self.function_class)
            self.call: Callable[..., Any] = self.recording.apply
        elif module is not None:
            self.call = module
            self.fixed = tuple(
                FixedInput(n, v, c) for n, v, c in zip(module.names, module.values, module.constant)
            )
        else:
            self.call = obj
        # Function.apply takes no keywords reliably: every parameter goes by position.
        self.by_position = self.function_class is not None
        #: A Function that changes its input in place and says so (ctx.mark_dirty):
        #: it runs on copies of its inputs (see :meth:`apply`).
        self.in_place = self.function_class is not None and _marks_dirty(self.function_class)
        self.place = _Placement(variant.device, variant.bfloat16)
        if variant.compiled:
            import torch

            # The Function itself (the recording subclass's side effect would break
            # the graph); its dtypes were checked eagerly.
            fc: Any = self.function_class
            plain = fc.apply if fc is not None else self.call
            self.recording = None
            self.call = torch.compile(plain, backend=variant.compiled)

    def arguments(
        self, tensors: Sequence[Any], params: Mapping[str, Any]
    ) -> tuple[list[Any], dict[str, Any]]:
        """The op's positional and keyword arguments for ``tensors`` and ``params``."""
        n_inputs = len(tensors) - len(self.fixed)
        inputs, fixed = list(tensors[:n_inputs]), list(tensors[n_inputs:])
        if self.real_parts:
            inputs = _joined(inputs, self.real_parts)
        if self.trees:
            inputs = rebuild(inputs, self.trees)
        args, kwargs = arrange(self.sig, inputs, params, by_position=self.by_position)
        args += fixed
        return args, kwargs

    def apply(
        self, tensors: Sequence[Any], params: Mapping[str, Any], call: Any = None
    ) -> tuple[Any, list[int]]:
        """The output, and the position of each tensor among the arguments (the
        position of its gradient among what the Function's backward returns);
        ``call``: what to call instead of the op as checked (the Function itself).

        A Function that marks its input dirty gets a copy of each input tensor: torch
        refuses an in-place change of a leaf that requires a gradient (its own
        gradcheck fails there), while a copy is a function of the leaf whose
        gradient is the identity, so the gradient with respect to the leaf is the
        Function's; and the checker's arrays, which the leaves share, stay as drawn."""
        if self.in_place:
            tensors = [_copy(t) for t in tensors]
        args, kwargs = self.arguments(tensors, params)
        slots = {id(a): k for k, a in enumerate(args)}
        out = _output((call or self.call)(*args, **kwargs), self.name)
        if self.real_parts:
            out = _split(out)
        return out, [slots.get(id(t), -1) for t in tensors]

    def graph(
        self,
        arrays: Sequence[np.ndarray],
        constants: Sequence[bool],
        params: Mapping[str, Any],
        tangent: tuple[int, np.ndarray] | None = None,
    ) -> tuple[list[Any], list[Any], list[int], bool]:
        """A forward with the graph: the input tensors, the outputs, the slots, and
        whether the op returned several outputs. ``tangent`` ``(i, t)``: input ``i``
        is a dual tensor of tangent ``t`` (inside a forward-mode level)."""
        import torch

        place = self.place
        with torch.enable_grad():
            tensors = [place.tensor(a) for a in arrays]
            layouts = INPUT_LAYOUTS.get()
            if layouts is not None:  # (a share of checks: gradcheck.checking.layout)
                for i in layouts.chosen & set(range(len(tensors))):
                    tensors[i] = _noncontiguous(tensors[i])
                    layouts.record(i, tuple(tensors[i].shape), tuple(tensors[i].stride()))
            for t, constant in zip(tensors, constants):
                if not constant and (t.is_floating_point() or t.is_complex()):
                    t.requires_grad_(True)
            if tangent is not None:
                i, t = tangent
                tensors[i] = _dual(tensors[i], place.tensor(t))
            before = place.snapshot(tensors)
            out, slots = self.apply(tensors, params)
        place.written_back(arrays, tensors, before)
        several = isinstance(out, (tuple, list))
        return tensors, list(out) if several else [out], slots, several

    def gradients(
        self,
        outs: Sequence[Any],
        tensors: Sequence[Any],
        slots: Sequence[int],
        upstream: Sequence[Any],
        **how: Any,
    ) -> list[Any]:
        """torch.autograd.grad of the outputs, each with its upstream gradient (arrays
        or tensors; None for an output that gets none), for each input that requires
        one: a tensor per input (None for the others)."""
        import torch

        place, recording = self.place, self.recording
        triples = [
            (o, place.tensor(g) if isinstance(g, np.ndarray) else g, g)
            for o, g in zip(outs, upstream)
            if g is not None and isinstance(o, torch.Tensor) and o.requires_grad
        ]
        if STRIDED.get():  # (a share of checks: gradcheck.checking.layout)
            triples = [(o, _noncontiguous(g), given) for o, g, given in triples]
        pairs = [(o, g) for o, g, _ in triples]
        before = place.snapshot([g for _, g, _ in triples])
        if before is None and STRIDED.get():
            before = [g.detach().clone() for _, g, _ in triples]
        wanted = [i for i, t in enumerate(tensors) if t.requires_grad]
        grads: list[Any] = [None] * len(tensors)
        if not pairs or not wanted:
            return grads
        if recording is not None:
            recording.returned = []
        found = _grad(
            [o for o, _ in pairs], [tensors[i] for i in wanted], [g for _, g in pairs], **how
        )
        # The upstream gradients a backward changed in place, back in the engine's
        # arrays (copies on a device or in bfloat16), where the checker looks.
        arrays = [given for _, _, given in triples if isinstance(given, np.ndarray)]
        if before is not None and len(arrays) == len(triples):
            place.written_back(arrays, [g for _, g, _ in triples], before)
        returned = recording.returned if recording is not None else []
        for i, g in zip(wanted, found):
            slot = slots[i]
            dtype = returned[slot] if 0 <= slot < len(returned) else None
            if g is not None and dtype is not None and dtype != g.dtype:
                # As the Function's backward returned it (torch cast it; the checker
                # says wrong_dtype)
                g = g.to(dtype)
            grads[i] = g
        return grads

    def run(
        self, arrays: Sequence[np.ndarray], constants: Sequence[bool], params: Mapping[str, Any]
    ) -> tuple[Any, Callable[[Any], list[np.ndarray | None]]]:
        import torch

        place = self.place
        tensors, outs, slots, several = self.graph(arrays, constants, params)
        value = tuple(place.array(o) for o in outs) if several else place.array(outs[0])

        def backward(grad: Any) -> list[np.ndarray | None]:
            upstream = grad if several else [grad]
            before = place.snapshot(tensors)
            found = self.gradients(outs, tensors, slots, upstream, retain_graph=True)
            place.written_back(arrays, tensors, before)
            # A copy: the buffer is torch's (it may be the upstream gradient).
            return [None if g is None else place.array(g) for g in found]

        # An output marked non-differentiable (or not depending on any input) needs
        # no upstream gradient; the backward may run again on the same graph.
        backward.differentiable = [  # type: ignore[attr-defined]
            isinstance(o, torch.Tensor) and o.requires_grad for o in outs
        ]
        backward.repeatable = True  # type: ignore[attr-defined]
        # A None upstream gradient leaves its output out of torch.autograd.grad: torch
        # then hands the op's backward an undefined gradient (zeros for a Function,
        # unless it called ctx.set_materialize_grads(False): then None).
        backward.undefined = several  # type: ignore[attr-defined]
        return value, backward

    def bind(
        self,
        arrays: Sequence[np.ndarray],
        params: Mapping[str, Any],
        rest: Callable[[Any], np.ndarray],
    ) -> Any:
        """:meth:`evaluate` on ``arrays`` as they are at call time, as a no-argument
        function (the inner loop of the finite differences, which changes the arrays in
        place between calls): the tensors are made once and share memory with the
        arrays, grad mode is switched off without a context manager, and a real output
        comes back as a view of its tensor (the loop copies what it keeps). None where
        the tensors cannot share the arrays' memory (a device, bfloat16, complex inputs
        joined from their parts): :meth:`evaluate` per call then. What is not one real
        output (several, or a complex one) goes through ``rest`` (the bridge's
        handling, :func:`~gradcheck.checking.adapters.bridge.bridge_target`).

        Per call this is the op's own call and a few attribute reads: the generic path
        (a tensor per array, ``torch.no_grad()``, a copy of the output) profiled at
        several times a small op's forward."""
        import torch

        if self.place.copies or self.real_parts or self.in_place:
            return None
        # The same tensors every call: the arguments are arranged once too.
        args, kwargs = self.arguments([torch.from_numpy(a) for a in arrays], params)
        call, name, array = self.call, self.name, self.place.array
        grad_enabled, set_grad_enabled = torch.is_grad_enabled, torch._C._set_grad_enabled
        plain = torch.Tensor

        def bound() -> Any:
            was = grad_enabled()
            set_grad_enabled(False)
            try:
                out = call(*args, **kwargs)
            finally:
                set_grad_enabled(was)
            if type(out) is not plain:  # (a plain tensor needs no look of _output's)
                out = _output(out, name)
            elif not out.is_complex():
                try:
                    return out.numpy()
                except (RuntimeError, TypeError):
                    pass  # (a ZeroTensor, a negative view, bfloat16: copied below)
            if isinstance(out, (tuple, list)):
                return rest(tuple(array(o) for o in out))
            value = array(out)
            if type(value) is np.ndarray and value.dtype.kind != "c":
                return value
            return rest(value)

        return bound

    def evaluate(self, arrays: Sequence[np.ndarray], params: Mapping[str, Any]) -> Any:
        import torch

        place = self.place
        with torch.no_grad():
            out, _ = self.apply([place.tensor(a, reference=True) for a in arrays], params)
        if isinstance(out, (tuple, list)):
            return tuple(place.array(o) for o in out)
        return place.array(out)


def target(obj: Any, variant: Variant | None = None) -> Any:
    """The :class:`~gradcheck.checking.target.Target` of a torch Function (or an alias
    of its ``apply``), an ``nn.Module``, or a function of torch tensors; checked as
    ``variant`` (order 2, forward mode, a device, bfloat16, complex inputs)."""
    variant = Variant() if variant is None else variant
    complex_inputs: tuple[bool, ...] | None = None
    real_parts: tuple[bool, ...] = ()
    if any(variant.complex_inputs) and (variant.order > 1 or variant.forward):
        # Beyond the first derivative, the op as a real function (see _TorchOp).
        real_parts, complex_inputs = variant.complex_inputs, ()
    op = _TorchOp(obj, variant, real_parts)
    run, evaluate = op.run, op.evaluate
    bind: Callable[..., Any] | None = op.bind
    if variant.order >= 2:
        bind = None  # (the target is the backward)
        higher = _HigherOrder(op, variant.order, variant.differentiated)
        run, evaluate = higher.run, higher.evaluate
        if variant.forward:  # fwd-over-rev: the jvp of the backward
            run = forward_mode(run, higher.jvp)
    elif variant.forward:
        run = forward_mode(run, _jvp(op.apply, op.place))

    batcher = None
    if variant.order == 1 and not real_parts and not variant.compiled:
        from gradcheck.checking.adapters._torch_vmap import vmap_runner

        fc: Any = op.function_class
        # The Function itself: its vmap rule calls it, not the recording subclass.
        plain = fc.apply if fc is not None else None
        batcher = vmap_runner(
            lambda ts, ps: op.apply(ts, ps, plain), fc, op.place.tensor, op.place.array
        )
    return bridge_target(
        obj,
        run,
        evaluate,
        op.sig,
        name=_label(obj, op.function_class),
        fixed=op.fixed,
        variant=variant,
        derive=lambda other: target(obj, other),
        complex_inputs=complex_inputs,
        bind=bind,
        batcher=batcher,
        framework="torch",
    )
