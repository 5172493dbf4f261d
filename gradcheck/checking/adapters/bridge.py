"""The bridge into gradcheck's engine: another framework's forward and backward as a
gradcheck :class:`~gradcheck.Operation`, and the :class:`~gradcheck.checking.target.Target`
that runs it (:func:`bridge_target`), which every framework's module (``_<name>.py``)
builds for its ops (see :mod:`gradcheck.checking.adapters`, the table of frameworks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from gradcheck.checking.adapters.variants import Variant, real_view
from gradcheck.checking.outputs import Outputs
from gradcheck.checking.signature import op_signature
from gradcheck.checking.target import Joined, Target, qualname
from gradcheck.engine.operation import Operation
from gradcheck.engine.tensor_base import execute_op
from gradcheck.errors import SkipGradient, printable

__all__ = ["Evaluate", "Run", "bridge_target", "op_name"]


def op_name(obj: Any) -> str:
    """How messages name an op: its qualified name, else its name, else its repr,
    printable (the name comes from the user's code)."""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)
    return printable(str(name))


#: ``run(arrays, constants, params) -> (output, backward)``: a forward with the
#: framework's graph on ``arrays`` (``constants[i]`` True for inputs that need no
#: gradient), returning the output as a new ndarray (or, for an op with several
#: outputs, a tuple of them, None for an output that is not an array) and a function
#: that backpropagates an upstream gradient (one per output, None for those not
#: differentiable, for several outputs) and returns each input's gradient (an ndarray
#: of its own, or None), in the dtype the framework's own backward returned it. The
#: function's attribute ``differentiable`` (optional) says which outputs are, where
#: the framework knows better than their dtypes; ``repeatable`` (optional, True) that
#: it may be called again on the same graph (the reentrancy check).
Run = Callable[
    [Sequence[np.ndarray], Sequence[bool], Mapping[str, Any]],
    tuple[Any, Callable[[Any], list[np.ndarray | None]]],
]
#: ``evaluate(arrays, params) -> ndarray``: the forward without a graph (the hot path
#: of the finite differences); a tuple for several outputs, as ``run``'s.
Evaluate = Callable[[Sequence[np.ndarray], Mapping[str, Any]], Any]


class _Bridge(Operation):
    """A gradcheck op whose forward and backward are another framework's."""

    run: Run
    #: The layout of the outputs of the last forward (several outputs), for the
    #: evaluations without a graph that follow it.
    last: Outputs | None = None

    def __call__(self, *tensors: Any, **params: Any) -> np.ndarray:
        self.variables = tensors
        out, self._backprop = type(self).run(
            [t.data for t in tensors], [t.constant for t in tensors], params
        )
        self.outputs: Outputs | None = None
        if isinstance(out, (tuple, list)):
            self.outputs = Outputs.of(
                out,
                getattr(self._backprop, "differentiable", None),
                getattr(self._backprop, "complex_outputs", None),
            )
            out = self.outputs.flatten(out)
        type(self).last = self.outputs
        self._grads: list[np.ndarray | None] | None = None
        #: The dtype of each gradient the framework's backward returned (read by
        #: Target.returned_dtypes: the engine may cast what it stores).
        self.returned_dtypes: list[np.dtype | None] | None = None
        return out

    def _upstream(self, grad: np.ndarray) -> Any:
        # Not a copy: the framework's backward gets the engine's own upstream gradient
        # (the output's `.grad`), so that a change it makes in place shows there and is
        # a `mutated_upstream` failure, as for gradcheck's own ops.
        if self.outputs is None:
            return np.asarray(grad)
        return self.outputs.split(grad, copy=False)

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        # The framework computes every input's gradient in one backprop; the engine
        # asks for them one input at a time, with the same `grad`.
        if self._grads is None:
            self._grads = self._backprop(self._upstream(grad))
            self.returned_dtypes = [None if g is None else g.dtype for g in self._grads]
        g = self._grads[index]
        if g is None:
            raise SkipGradient
        return g

    def backward_again(self, grad: np.ndarray) -> list[np.ndarray | None] | None:
        """Each input's gradient from a second backprop of ``grad`` on the same graph,
        where the framework keeps its graph (torch's ``retain_graph``); else None."""
        if not getattr(self._backprop, "repeatable", False):
            return None
        return self._backprop(self._upstream(grad))

    def backward_undefined(
        self, grad: np.ndarray, undefined: Sequence[int]
    ) -> list[np.ndarray | None] | None:
        """Each input's gradient from a backprop of ``grad`` on the same graph where the
        outputs ``undefined`` get no upstream gradient at all (torch's undefined grad,
        ``None`` in a Function's backward), where the framework has such a thing;
        else None."""
        if not getattr(self._backprop, "undefined", False) or self.outputs is None:
            return None
        pieces = self.outputs.split(np.array(grad))
        return self._backprop([None if k in undefined else g for k, g in enumerate(pieces)])


def bridge_target(
    obj: Any,
    run: Run,
    evaluate: Evaluate,
    signature: Any = None,
    *,
    name: str | None = None,
    fixed: Sequence[Any] = (),
    variant: Any = None,
    derive: Callable[[Any], Any] | None = None,
    conjugate: bool = False,
    complex_inputs: Sequence[bool] | None = None,
    batcher: Callable[..., Any] | None = None,
    bind: Callable[[Sequence[np.ndarray], Mapping[str, Any], Callable[[Any], Any]], Any]
    | None = None,
    framework: str | None = None,
) -> Any:
    """A :class:`~gradcheck.checking.target.Target` for ``obj`` that runs forward and backward
    with ``run`` (through the engine, so that every check applies) and evaluates
    with ``evaluate``; its signature is ``obj``'s and its name ``obj``'s qualified
    name unless given; ``fixed`` are inputs the op brings along (a module's
    parameters: :class:`~gradcheck.checking.target.FixedInput`).

    Complex outputs are checked as their real and imaginary parts, and so are the
    inputs ``variant.complex_inputs`` marks
    (:func:`~gradcheck.checking.adapters.variants.real_view`; ``conjugate``: JAX's
    convention, not torch's). ``derive(variant)`` is the target of ``obj`` checked
    as another :class:`~gradcheck.checking.adapters.variants.Variant` (order 2,
    forward mode, a device...): :meth:`Target.derive`; None when the framework has
    no variant. ``complex_inputs`` (default ``variant.complex_inputs``): the inputs
    ``run`` and ``evaluate`` take as complex arrays (``()``: they take real parts
    already). ``batcher``: the op under vmap against a loop
    (:attr:`~gradcheck.checking.target.Target.batcher`), where the framework has vmap.
    ``bind(arrays, params, rest)``, optionally, is ``evaluate`` on ``arrays`` as they
    are at call time, as a no-argument function (or None where it cannot be made):
    :meth:`Target.bind`, the finite differences' inner loop; the function returns a
    real output that is one ndarray as it is, and anything else through ``rest(value)``
    (several outputs flattened; a complex output takes ``evaluate``'s path)."""
    variant = Variant() if variant is None else variant
    if complex_inputs is None:
        complex_inputs = variant.complex_inputs
    run, evaluate = real_view(run, evaluate, complex_inputs, conjugate=conjugate)

    bridge: type[_Bridge] = type(f"{name or op_name(obj)}", (_Bridge,), {"run": staticmethod(run)})

    def build(tensors: Sequence[Any], params: Mapping[str, Any]) -> Any:
        out = execute_op(bridge, *tensors, op_kwargs=dict(params))
        return out if bridge.last is None else Joined(out, bridge.last)

    def forward(tensors: Sequence[Any], params: Mapping[str, Any]) -> np.ndarray:
        return flat(evaluate([t.data for t in tensors], params))

    def bound(arrays: Sequence[np.ndarray], params: Mapping[str, Any]) -> Any:
        if bind is None or any(complex_inputs):
            return None

        def rest(value: Any) -> np.ndarray:
            # What the framework's bound forward does not hand back as it is (a real
            # ndarray): several outputs, flattened; a complex one, split into parts.
            several = isinstance(value, (tuple, list))
            if any(np.iscomplexobj(x) for x in (value if several else (value,))):
                return flat(evaluate(arrays, params))  # (split into parts there)
            return flat(value)

        # The framework's own function is the inner loop's call (no frame of ours
        # around it: a tenth of a small torch op's call).
        return bind(arrays, params, rest)

    def array_forward(arrays: Sequence[np.ndarray], params: Mapping[str, Any]) -> np.ndarray:
        # Target.forward of a framework that binds: its bound function called once
        # (a small torch op's forward called so took 40% less than through the
        # engine's tensors and the generic evaluate, where the checker makes
        # thousands of calls on new arrays: the rounding probes), as a new array, as
        # ``forward`` gives (the bound function may hand out the output's buffer).
        once = bound(arrays, params)
        if once is None:
            return flat(evaluate(arrays, params))
        return np.array(once())

    def flat(value: Any) -> np.ndarray:
        if not isinstance(value, (tuple, list)):
            return value
        layout = bridge.last
        if layout is None or len(layout.shapes) != len(value):
            layout = Outputs.of(value)
        elif any(getattr(v, "dtype", None) != dt for v, dt in zip(value, layout.dtypes)):
            # (the last run's outputs, in these values' own dtypes: the float64
            # reference of a float32 run, a complex64 op's parts given float64, is
            # float64, not cast back to the run's float32)
            layout = Outputs.of(value, layout.differentiable)
        return layout.flatten(value)

    sig = op_signature(obj) if signature is None else signature
    label = qualname(obj) if name is None else name
    return Target(
        label,
        sig,
        obj,
        build,
        forward,
        foreign=True,
        fixed=tuple(fixed),
        variant=variant,
        deriver=derive,
        batcher=batcher,
        binder=bound,
        array_forward=None if bind is None else array_forward,
        framework=framework,
    )
