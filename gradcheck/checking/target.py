"""`Target`: what the checker checks, resolved once into one small object.

A target is something that maps tensors to a tensor and has a ``backward``: an
:class:`Operation` subclass, or a plain function of Tensors built from gradcheck ops;
or the same written for another framework (a ``torch.autograd.Function``, a function
of torch tensors, a MyGrad ``Operation``), run through that framework by
:mod:`gradcheck.checking.adapters`.
:func:`gradcheck.checking.resolve.resolve_target` turns either into a :class:`Target`
that runs forward (with or without the graph) and backward on plain arrays. Everything
downstream (the numerics, the checker, the front ends) works on a ``Target`` only, so a
new kind of target (a MyGrad op, a ``torch.autograd.Function``) is one more branch in
``resolve_target``, and a new framework one row of
:data:`gradcheck.checking.adapters.FRAMEWORKS`. This module is below both: it knows
nothing of how a target is chosen.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any

import numpy as np

import gradcheck
from gradcheck.checking.adapters import framework_directories
from gradcheck.checking.layout import INPUT_LAYOUTS, STRIDED, noncontiguous
from gradcheck.checking.outputs import Outputs
from gradcheck.checking.signature import OpSignature, arrange, parameter_drawn
from gradcheck.engine.graph import no_autodiff
from gradcheck.engine.operation import BroadcastableOp, Operation, reduce_broadcast
from gradcheck.engine.ops.joining import concatenate
from gradcheck.engine.ops.shape import ravel
from gradcheck.engine.tensor_base import Tensor
from gradcheck.errors import (
    CheckUsageError,
    InvalidGradient,
    NotATarget,
    SkipGradient,
    TargetRaised,
    printable,
)

__all__ = [
    "OPS_ERROR_STATE",
    "FixedInput",
    "Target",
    "NotATarget",
    "TargetRaised",
    "user_frame",
]

#: Old path: ``resolve_target`` moved above this module, to
#: :mod:`gradcheck.checking.resolve` (it chooses between this module and the
#: frameworks'); still read here by who imported it here. gradcheck's own code
#: imports it where it is.
_MOVED = {"resolve_target": "gradcheck.checking.resolve"}


#: NumPy's own error state (``np.geterr()`` in a fresh process): gradcheck's numerics
#: run under it, whatever the caller set.
NUMPY_ERRORS: dict[str, Any] = {
    "divide": "warn",
    "over": "warn",
    "under": "ignore",
    "invalid": "warn",
}
#: The NumPy error state the op's own calls run under where the caller's is not
#: NumPy's (``np.seterr(all="raise")`` in a conftest, or at a module's import, which
#: the command line keeps for that module's targets); None: NumPy's own.
OPS_ERROR_STATE: ContextVar[dict[str, Any] | None] = ContextVar("ops_error_state", default=None)


def own_error_state(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a check, a search) under NumPy's own error state, the op's calls in it
    (:class:`Target`'s) under the caller's: a caller's ``np.seterr(all="raise")`` is
    the op's to meet, not the finite differences'. Nothing changes, and nothing is
    paid, where the caller's state is NumPy's (or an outer call set it already)."""

    @functools.wraps(fn)
    def under_own_state(*args: Any, **kwargs: Any) -> Any:
        state: dict[str, Any] = dict(np.geterr())
        if state == NUMPY_ERRORS:
            return fn(*args, **kwargs)
        call = np.geterrcall() if "call" in state.values() else None
        token = OPS_ERROR_STATE.set({**state, "call": call} if call is not None else state)
        try:
            with np.errstate(**NUMPY_ERRORS):
                return fn(*args, **kwargs)
        finally:
            OPS_ERROR_STATE.reset(token)

    return under_own_state


def ops_errors() -> contextlib.AbstractContextManager[Any]:
    """The op's error state (:data:`OPS_ERROR_STATE`) for one call into the op."""
    state = OPS_ERROR_STATE.get()
    return contextlib.nullcontext() if state is None else np.errstate(**state)


def _in_ops_state(
    state: dict[str, Any], call: Callable[[], np.ndarray]
) -> Callable[[], np.ndarray]:
    def called() -> np.ndarray:
        with np.errstate(**state):
            return call()

    return called


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class Graph:
    """One forward pass with the graph: the input tensors and the output tensor; for
    an op with several outputs, ``output`` joins the differentiable ones and
    ``outputs`` says how (:class:`~gradcheck.checking.outputs.Outputs`)."""

    tensors: tuple[Tensor, ...]
    output: Tensor
    outputs: Outputs | None = None


@dataclass(frozen=True)
class Joined:
    """What a target's build returns for an op with several outputs: the output tensor
    the checker sees (the differentiable outputs, raveled and joined), and the layout."""

    tensor: Tensor
    outputs: Outputs


def join_tensors(values: Sequence[Any]) -> Joined:
    """Several outputs of a function of gradcheck's tensors, joined by the engine's own
    ``ravel`` and ``concatenate`` (so that backward flows into each)."""

    outputs = Outputs.of(values)
    chosen = [values[k] for k in outputs.indices]
    parts = [ravel(v if isinstance(v, Tensor) else Tensor(v, constant=True)) for v in chosen]
    flat = concatenate(parts) if parts else Tensor(np.zeros(0))
    return Joined(flat, outputs)


def joined_array(values: Sequence[Any]) -> np.ndarray:
    arrays = [v.data if isinstance(v, Tensor) else v for v in values]
    return Outputs.of(arrays).flatten(arrays)


@dataclass(frozen=True, eq=False)
class FixedInput:
    """An input an op brings along, after the ones it is called with: a module's
    parameter (its name, its value, and whether it is a constant)."""

    name: str
    value: np.ndarray
    constant: bool = False


@dataclass(frozen=True, eq=False)
class Target:
    """A differentiable operation the checker can run on arrays.

    Attributes
    ----------
    name : str
        A readable name (``module.Qualname``).
    signature : OpSignature
        Its inputs and parameters, from :func:`gradcheck.checking.signature.op_signature`.
    obj : object
        What was resolved (the class or the function).
    fixed : tuple of FixedInput
        Inputs the op brings along (an ``nn.Module``'s parameters): they follow the
        inputs of its signature, and :func:`gradcheck.check` appends them when it is
        given those only.
    """

    name: str
    signature: OpSignature
    obj: Any
    _build: Callable[..., Tensor]
    _evaluate: Callable[..., np.ndarray]
    #: Another framework's op (torch, MyGrad), run through the engine by a bridge.
    foreign: bool = False
    fixed: tuple[FixedInput, ...] = ()
    #: What this target checks of its op
    #: (:class:`~gradcheck.checking.adapters.variants.Variant`; None: the gradient),
    #: and the function that makes the target of another variant (None: the op's
    #: framework has none).
    variant: Any = None
    deriver: Callable[[Any], Target] | None = None
    #: The op under ``torch.func.vmap`` against a loop over the batch (see
    #: :mod:`gradcheck.checking.batched`); None: the op's framework has no vmap here.
    batcher: Callable[..., Any] | None = None
    #: ``binder(arrays, params)``: :meth:`bind` made by the op's framework (the
    #: framework's tensors made once over the arrays), or None where it makes none.
    binder: Callable[..., Callable[[], np.ndarray] | None] | None = None
    #: ``array_forward(arrays, params)``: :meth:`forward` on the arrays themselves,
    #: made by the op's framework (one call of its :attr:`binder`'s function: no
    #: engine tensors, no generic wrapping between), or None: through ``_evaluate``.
    array_forward: Callable[..., np.ndarray] | None = None
    #: The framework of a foreign op (``"torch"``, ``"mygrad"``, ``"jax"``: a name of
    #: :data:`~gradcheck.checking.frameworks.FRAMEWORKS`), read once when the op was
    #: resolved; None for gradcheck's own ops.
    framework: str | None = None

    def named(self, name: str) -> Target:
        """This target under ``name``, and so are the targets it derives (order 2,
        forward mode...): an ``nn.Module`` instance is named by the name it was loaded
        under (``mymod:layer``), not by its class."""
        deriver = self.deriver
        if deriver is None:
            return replace(self, name=name)
        return replace(self, name=name, deriver=lambda variant: deriver(variant).named(name))

    def derive(self, variant: Any) -> Target:
        """The target that checks ``variant`` of this target's op (the gradient of its
        backward, its forward mode, on a device, complex or bfloat16 inputs).

        Raises :class:`~gradcheck.errors.CheckUsageError` when the op cannot be
        checked so (gradcheck's engine and MyGrad have no double backward, no forward
        mode, no device).
        """

        if variant.plain:
            return self
        if self.deriver is None:
            what = "another framework's" if self.foreign else "gradcheck's own"
            taken = ""
            if not self.foreign and not isinstance(self.obj, type):
                # (a function whose code names no framework's name: `x.unbind(-1)`)
                taken = (
                    "; it was taken for a function of gradcheck's tensors, its code naming "
                    "no torch or JAX name: mark a function of torch tensors with "
                    '@gradcheck.checking.adapters.framework("torch") ("jax" for JAX)'
                )
            raise CheckUsageError(
                f"{self.name} is {what} op: checking its {variant.describe()} needs a "
                f"torch or JAX target (their backward is differentiable, they have a "
                f"forward mode, devices, complex tensors and compilers); check it at "
                f"first order, eagerly{taken}"
            )
        return self.deriver(variant)

    def forward(
        self, arrays: Sequence[np.ndarray], params: Mapping[str, Any] | None = None
    ) -> np.ndarray:
        """The output for ``arrays`` as an ndarray, without building a graph.

        This is the hot path of the finite differences: the arrays are wrapped without
        copying, so they must not be changed while the call runs.
        """
        state = OPS_ERROR_STATE.get()
        if state is not None:
            with np.errstate(**state):
                return self._forward(arrays, params)
        return self._forward(arrays, params)

    def _forward(
        self, arrays: Sequence[np.ndarray], params: Mapping[str, Any] | None
    ) -> np.ndarray:
        with no_autodiff:
            # (the arrays as they are where a Tensor would hold them as they are: plain
            # numeric ndarrays; a NumPy scalar, a list... go through the Tensor)
            if self.array_forward is not None and all(
                type(a) is np.ndarray and a.dtype.kind in "biufc" for a in arrays
            ):
                return self.array_forward(arrays, params or {})
            return self._evaluate([Tensor(a, copy=False) for a in arrays], params or {})

    def bind(
        self, arrays: Sequence[np.ndarray], params: Mapping[str, Any] | None = None
    ) -> Callable[[], np.ndarray]:
        """A no-argument forward on ``arrays`` *as they are at call time*, for loops
        that change the arrays in place between calls (finite differences).

        The tensors are made once and share memory with ``arrays``; call the result
        inside :data:`~gradcheck.graph.no_autodiff`. This saves the per-call wrapping
        of :meth:`forward`, which matters when a forward call takes microseconds.
        """
        state = OPS_ERROR_STATE.get()
        if self.binder is not None:
            with ops_errors():
                bound = self.binder(arrays, dict(params or {}))
            if bound is not None:
                return bound if state is None else _in_ops_state(state, bound)
        tensors = [Tensor(a, copy=False) for a in arrays]
        kwargs = dict(params or {})
        evaluate = self._evaluate
        if state is not None:
            return _in_ops_state(state, lambda: evaluate(tensors, kwargs))
        return lambda: evaluate(tensors, kwargs)

    def apply(
        self,
        arrays: Sequence[np.ndarray],
        params: Mapping[str, Any] | None = None,
        *,
        constants: Sequence[int] = (),
    ) -> Graph:
        """Forward with the graph on copies of ``arrays``; inputs whose index is in
        ``constants`` (and every non-float input) are constant tensors.

        Raises :class:`TargetRaised` (phase "forward") when the target raises.
        """
        layouts = INPUT_LAYOUTS.get()
        if layouts is not None and not self.foreign:
            # (gradcheck.checking.layout: a share of checks) in Fortran order, which
            # the engine's tensors keep; a framework's adapter lays out its own
            arrays = [noncontiguous(a) if i in layouts.chosen else a for i, a in enumerate(arrays)]
        tensors = tuple(
            Tensor(a, constant=True if i in constants else None) for i, a in enumerate(arrays)
        )
        if layouts is not None and not self.foreign:
            for i in layouts.chosen & set(range(len(tensors))):
                data = tensors[i].data
                layouts.record(i, data.shape, tuple(st // data.itemsize for st in data.strides))
        try:
            with ops_errors():
                out = self._build(tensors, params or {})
        except Exception as exc:
            raise TargetRaised("forward", exc) from exc
        if isinstance(out, Joined):
            return Graph(tensors, out.tensor, out.outputs)
        return Graph(tensors, out)

    def backward(self, graph: Graph, v: np.ndarray) -> list[Any]:
        """Backpropagate ``v`` from the graph's output; the gradient of each input
        (None for constants and inputs that received none).

        The engine stores a copy of ``v`` as the output's ``.grad`` and hands that to
        the ops, so a backward that changes its ``grad`` in place shows in
        ``graph.output.grad``. Raises :class:`TargetRaised` (phase
        "backward"); the engine's own :class:`~gradcheck.errors.InvalidGradient` is
        wrapped the same way.
        """
        out = graph.output
        if STRIDED.get():
            v = noncontiguous(v)  # (gradcheck.checking.layout: a share of checks)
        if isinstance(out, Tensor) and not out.constant:
            unkept = self._unkept(graph)  # (read before the backward clears the graph)
            try:
                with ops_errors():
                    out.backward(v)
            except CheckUsageError:
                raise  # (the op's inputs misread, as its framework's adapter found)
            except Exception as exc:
                if unkept and isinstance(exc, InvalidGradient) and "Tensor" in str(exc):
                    raise parameter_drawn(
                        self.name, self.signature, unkept, exc, framework="gradcheck"
                    ) from exc
                raise TargetRaised("backward", exc) from exc
        return [t.grad for t in graph.tensors]

    def _unkept(self, graph: Graph) -> list[int]:
        """The drawn inputs of an ``Operation`` of gradcheck's that its forward left
        out of its ``self.variables`` (the engine differentiates them never)."""
        creator = getattr(graph.output, "creator", None)
        if self.foreign or not isinstance(creator, Operation) or self.obj is not type(creator):
            return []
        kept = {id(t) for t in getattr(creator, "variables", ()) or ()}
        return [
            i
            for i, t in enumerate(graph.tensors[: len(self.signature.input_names)])
            if not t.constant and t.dtype.kind == "f" and id(t) not in kept
        ]

    def backward_again(self, creator: Any, v: np.ndarray) -> list[Any] | None:
        """Each input's gradient from a second backward of ``v`` on the graph whose
        output's creator is ``creator``, for an op of a framework that keeps its
        graph (torch's ``retain_graph``; a JAX vjp); None where the graph is gone
        after one backward (gradcheck's engine, MyGrad). Raises
        :class:`TargetRaised` (phase "second backward")."""
        again = getattr(creator, "backward_again", None) if self.foreign else None
        if again is None:
            return None
        v = np.array(v)
        if STRIDED.get():  # (the layout the first backward got: another layout takes
            v = noncontiguous(v)  # other kernels, which round otherwise)
        try:
            with ops_errors():
                grads: list[Any] | None = again(v)
            return grads
        except Exception as exc:
            raise TargetRaised("second backward on the same graph", exc) from exc

    def backward_undefined(
        self, creator: Any, v: np.ndarray, undefined: Sequence[int]
    ) -> list[Any] | None:
        """Each input's gradient from a backward of ``v`` on the graph whose output's
        creator is ``creator``, with no upstream gradient at all for the outputs
        ``undefined`` of an op with several (torch's undefined gradients, ``None`` in
        its backward); None where the framework has no such thing. Raises
        :class:`TargetRaised` (phase "backward")."""
        undefined_backward = getattr(creator, "backward_undefined", None) if self.foreign else None
        if undefined_backward is None:
            return None
        try:
            with ops_errors():
                grads: list[Any] | None = undefined_backward(np.array(v), undefined)
            return grads
        except Exception as exc:
            raise TargetRaised("backward", exc) from exc

    def run(
        self,
        arrays: Sequence[np.ndarray],
        params: Mapping[str, Any] | None,
        v: np.ndarray,
        *,
        constants: Sequence[int] = (),
        outputs: Outputs | None = None,
    ) -> tuple[np.ndarray, list[Any]]:
        """Forward with the graph and backward of ``v``: (output, gradient per input,
        None for constants and inputs that got none). ``outputs``: the layout of the
        outputs ``v`` was made for (several outputs), when this run's may join others
        (with other ``constants``): ``v`` is refitted to this run's outputs
        (:meth:`~gradcheck.checking.outputs.Outputs.refit`).

        Examples
        --------
        >>> import numpy as np
        >>> import gradcheck as mg
        >>> t = mg.resolve_target(lambda x: x * x)
        >>> out, (g,) = t.run([np.array([3.0])], None, np.ones(1))
        >>> out, g
        (array([9.]), array([6.]))
        """
        graph = self.apply(arrays, params, constants=constants)
        if outputs is not None and graph.outputs is not None:
            v = outputs.refit(v, graph.outputs)
        grads = self.backward(graph, v)
        out = graph.output
        return (out.data if isinstance(out, Tensor) else np.asarray(out)), grads

    def raw_gradients(
        self,
        arrays: Sequence[np.ndarray],
        params: Mapping[str, Any] | None,
        v: np.ndarray,
        *,
        constants: Sequence[int] = (),
    ) -> list[Any] | None:
        """What an ``Operation`` target's ``backward_var`` returns for each input,
        before the engine validates it (None for constants and skipped inputs);
        None for other kinds of target. Used to say precisely what was wrong when
        the engine rejected a gradient."""
        op_type = self.obj
        if not (isinstance(op_type, type) and issubclass(op_type, Operation)):
            return None
        tensors = [
            Tensor(a, constant=True if i in constants else None) for i, a in enumerate(arrays)
        ]
        op = op_type()
        try:
            args, kwargs = arrange(self.signature, tensors, params or {})
            with ops_errors():
                op(*args, **kwargs)
            grads: list[Any] = []
            for i, t in enumerate(tensors):
                if t.constant:
                    grads.append(None)
                    continue
                try:
                    with ops_errors():
                        g = op.backward_var(np.array(v), i)
                except SkipGradient:
                    grads.append(None)
                    continue
                if isinstance(op, BroadcastableOp) and isinstance(g, np.ndarray):
                    g = reduce_broadcast(g, t.shape)
                grads.append(g)
        except Exception:
            return None
        return grads

    def returned_dtypes(
        self,
        creator: Any,
        arrays: Sequence[np.ndarray],
        params: Mapping[str, Any] | None,
        v: np.ndarray,
        *,
        constants: Sequence[int] = (),
    ) -> list[np.dtype | None] | None:
        """The dtype of each input's gradient as the op's own code returned it, before
        the engine (or a framework) cast it to the input's dtype; None where not known.

        For an ``Operation`` target, what its ``backward_var`` returns
        (:meth:`raw_gradients`); for a framework's op, what the framework's backward
        returned (the bridge op ``creator``, the output's creator before the backward
        freed the graph, records it: torch casts every gradient silently). A function
        of gradcheck's ops gets None: the engine's casts are its semantics.
        """
        recorded = getattr(creator, "returned_dtypes", None) if self.foreign else None
        if recorded is not None:
            return list(recorded)
        raw = self.raw_gradients(arrays, params, v, constants=constants)
        if raw is None:
            return None
        return [None if g is None else np.asarray(g).dtype for g in raw]


def qualname(obj: Any) -> str:
    """``module:QualName`` of a target, as ``gradcheck verify`` takes it (the name
    every report gives a target), printable: the name comes from the user's code,
    which may have set it to anything (a newline, a terminal escape, a CI command)."""
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    name = bound_name(obj, module, name)
    return printable(f"{module}:{name}" if module and module != "__main__" else str(name))


def bound_name(obj: Any, module: str, name: str) -> str:
    """``name``, or, for an object that is neither a class nor a function but carries
    the ``__qualname__`` of the function it wraps (a JAX ``custom_jvp``/``custom_vjp``,
    a ``functools.partial``...), the name its module binds to it where ``name`` does
    not: ``bad_log_cosh = jax.custom_jvp(_log_cosh_value)`` is ``bad_log_cosh``, the
    name that finds it again (``_log_cosh_value`` is the plain function)."""
    if isinstance(obj, type) or inspect.isroutine(obj):
        return name
    names = getattr(sys.modules.get(module), "__dict__", None)
    if not isinstance(names, dict) or names.get(name) is obj:
        return name
    bound = [k for k, v in list(names.items()) if v is obj and isinstance(k, str)]
    public = [k for k in bound if not k.startswith("_")]
    return (public or bound or [name])[0]


def instance_name(obj: Any) -> tuple[str, str] | None:
    """``(module, name)``: a module-level name bound to ``obj``, an op that is an
    instance (an ``nn.Module`` made at a module's top level, ``layer = MyLayer()``),
    looked for in its class's module, then ``__main__``, then every loaded module (a
    public name first); None for a class or a function, or where no module names it.
    Its class names no instance a user can find again (``mymod.MyLayer instance``)."""
    if isinstance(obj, type) or getattr(obj, "__qualname__", None) is not None:
        return None
    home = getattr(type(obj), "__module__", "") or ""
    first = [sys.modules.get(home), sys.modules.get("__main__")]
    found: tuple[str, str] | None = None
    for module in [*first, *list(sys.modules.values())]:
        names = getattr(module, "__dict__", None)
        if module is None or not isinstance(names, dict):
            continue
        for key, value in list(names.items()):
            if value is obj and isinstance(key, str):
                if not key.startswith("_"):
                    return module.__name__, key
                found = found or (module.__name__, key)
    return found


#: gradcheck's own code, all of it: where the package is, not a list of its modules.
_GRADCHECK_DIR = os.path.dirname(os.path.abspath(gradcheck.__file__))
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))


def own_tensor_hint(exc: BaseException) -> str:
    """For an op that asked gradcheck's own Tensor for an attribute it lacks
    (``x.unbind(-1)``: a function of torch tensors whose code names no torch name,
    taken for gradcheck's): what to do about it; "" for any other exception."""
    if not isinstance(exc, AttributeError) or not isinstance(getattr(exc, "obj", None), Tensor):
        return ""
    return (
        "\nThe op ran on gradcheck's own Tensors: its code names no torch, JAX or MyGrad "
        "name gradcheck could see. If it is a function of torch (JAX, MyGrad) tensors, mark "
        'it with @gradcheck.checking.adapters.framework("torch") ("jax", "mygrad")'
    )


def user_frame(tb: TracebackType | None) -> str | None:
    """The innermost frame of a traceback that belongs to the op, as ``"path:line in
    function: source"``: outside gradcheck, NumPy and the frameworks an adapter runs the
    op through, so that a user's op that raised is shown at the user's line (not at the
    gradcheck op or NumPy function it called). When the op is gradcheck's own (no frame
    outside), the innermost frame outside NumPy and the frameworks."""
    others = [_NUMPY_DIR, *framework_directories()]
    frames = [
        frame
        for frame in traceback.extract_tb(tb)
        if not _inside(os.path.abspath(frame.filename), others)
    ]
    users = [f for f in frames if not _inside(os.path.abspath(f.filename), [_GRADCHECK_DIR])]
    found = users[-1] if users else frames[-1] if frames else None
    if found is None:
        return None
    return f"{found.filename}:{found.lineno} in {found.name}: {(found.line or '').strip()}"


def _inside(path: str, directories: Sequence[str]) -> bool:
    return any(path.startswith(os.path.join(d, "")) for d in directories)
