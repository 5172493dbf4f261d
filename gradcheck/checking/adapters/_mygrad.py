"""MyGrad targets: a ``mygrad.Operation`` subclass or a function of MyGrad tensors.

The op runs through MyGrad itself: ``mygrad.execute_op`` (or the function) on MyGrad
tensors that share memory with the checker's arrays, backward by MyGrad's
``Tensor.backward``; the gradients are copied out of the tensors' ``.grad``.

Integer and boolean inputs (labels, indices, masks) are passed as NumPy arrays, not
tensors, as MyGrad's own functions pass them to its ops (``op_args``); float inputs
that are constants are ``Tensor(..., constant=True)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from gradcheck.checking.adapters.bridge import bridge_target, op_name
from gradcheck.checking.signature import arrange, op_signature, parameter_drawn

# MyGrad is imported when a target is resolved, not with this module (which the
# doctest collection imports whether or not MyGrad is installed).

__all__ = ["target", "forward_of"]


def forward_of(cls: type) -> tuple[Callable[..., Any], int]:
    """A MyGrad ``Operation``'s inputs are its ``__call__``'s, after ``self``."""
    return cls.__call__, 1


def _is_plain(array: np.ndarray) -> bool:
    """Passed as an array rather than a tensor: integers and booleans."""
    return array.dtype.kind in "biu"


def target(obj: Any) -> Any:
    """The :class:`~gradcheck.checking.target.Target` of a MyGrad op class or function."""
    import mygrad

    is_op = isinstance(obj, type)
    sig = op_signature(obj)

    # The drawn inputs the op's forward left out of its self.variables (MyGrad
    # differentiates those never), by the last call: read where its backward fails.
    unkept: list[int] = []
    # The dtype each variable's gradient had as backward_var returned it, by the
    # variable's id, where it is narrower than the variable's: MyGrad casts it to the
    # variable's dtype silently, the precision lost (a float32 gradient of a float64
    # input). Handed on in that dtype, for the check's wrong_dtype.
    narrowed: dict[int, np.dtype] = {}
    arranged = _arranged(mygrad, obj, sig, unkept, narrowed) if is_op else None

    def apply(tensors: Sequence[Any], params: Mapping[str, Any]) -> Any:
        if is_op:
            return mygrad.execute_op(arranged, *tensors, op_kwargs=dict(params))
        args, kwargs = arrange(sig, tensors, params)
        return obj(*args, **kwargs)

    def run(
        arrays: Sequence[np.ndarray], constants: Sequence[bool], params: Mapping[str, Any]
    ) -> tuple[Any, Callable[[Any], list[np.ndarray | None]]]:
        tensors = [
            a if _is_plain(a) else mygrad.Tensor(a, constant=True if c else None, copy=False)
            for a, c in zip(arrays, constants)
        ]
        out = apply(tensors, params)
        several = isinstance(out, (tuple, list))
        outs = list(out) if several else [out]
        if not several and not isinstance(out, mygrad.Tensor):
            raise TypeError(f"the target returned {type(out).__name__}, not a mygrad.Tensor")

        def backward(grad: Any) -> list[np.ndarray | None]:
            narrowed.clear()
            try:
                _backprop(mygrad, outs, list(grad) if several else [grad])
            except mygrad.errors.InvalidGradient as exc:
                # (a gradient that is a Tensor: computed with an input drawn as one
                # that the op reads as a number)
                if is_op and unkept and "Tensor" in str(exc):
                    raise parameter_drawn(
                        op_name(obj), sig, unkept, exc, framework="MyGrad"
                    ) from exc
                raise
            return [
                None
                if not isinstance(t, mygrad.Tensor) or t.constant or t.grad is None
                else np.array(t.grad, copy=True, dtype=narrowed.get(id(t)))
                for t in tensors
            ]

        values = [_value(mygrad, o) for o in outs]
        return (tuple(values) if several else values[0]), backward

    def evaluate(arrays: Sequence[np.ndarray], params: Mapping[str, Any]) -> Any:
        tensors = [a if _is_plain(a) else mygrad.Tensor(a, copy=False) for a in arrays]
        args, kwargs = arrange(sig, tensors, params)
        with mygrad.no_autodiff:
            if is_op:
                return np.asarray(obj()(*args, **kwargs))
            out = obj(*args, **kwargs)
        if isinstance(out, (tuple, list)):  # (several outputs: each as an array)
            return tuple(_value(mygrad, o) for o in out)
        return np.asarray(out.data if isinstance(out, mygrad.Tensor) else out)

    return bridge_target(obj, run, evaluate, sig, framework="mygrad")


def _arranged(
    mygrad: Any, obj: type, sig: Any, unkept: list[int], narrowed: dict[int, np.dtype]
) -> type:
    """``obj`` whose ``__call__`` takes what ``mygrad.execute_op`` hands it: the labels
    back as arrays, parameters given for positional parameters in place; after each
    call, ``unkept`` holds the drawn inputs it left out of its ``self.variables``.
    Its ``backward_var`` notes in ``narrowed`` a gradient returned in a floating dtype
    narrower than its variable's (by the variable's id), which MyGrad casts up."""

    def noting_backward_var(self: Any, grad: Any, index: int, **kwargs: Any) -> Any:
        g = obj.backward_var(self, grad, index, **kwargs)  # type: ignore[attr-defined]
        dt, var = getattr(g, "dtype", None), self.variables[index]
        want = getattr(var, "dtype", None)
        if dt is not None and want is not None and dt.kind == "f" == np.dtype(want).kind:
            if np.finfo(dt).eps > np.finfo(want).eps:
                narrowed[id(var)] = np.dtype(dt)
        return g

    def arranged_call(self: Any, *tensors: Any, **params: Any) -> Any:
        plain = [t.data if _is_plain(t.data) else t for t in tensors]
        args, kwargs = arrange(sig, plain, params)
        out = obj.__call__(self, *args, **kwargs)
        kept = {id(v) for v in getattr(self, "variables", ()) or ()}
        unkept[:] = [
            i
            for i, t in enumerate(plain[: len(sig.input_names)])
            if isinstance(t, mygrad.Tensor) and not t.constant and id(t) not in kept
        ]
        return out

    return type(
        obj.__name__,
        (obj,),
        {
            "__call__": arranged_call,
            "backward_var": noting_backward_var,
            "__qualname__": obj.__qualname__,
        },
    )


def _value(mygrad: Any, out: Any) -> np.ndarray | None:
    """An output as a new array; None for one that is no array (of several)."""
    if isinstance(out, mygrad.Tensor):
        return np.array(out.data)
    return np.array(out) if isinstance(out, (np.ndarray, np.generic)) else None


def _backprop(mygrad: Any, outs: Sequence[Any], grads: Sequence[Any]) -> None:
    """Backpropagate ``grads[k]`` from each output ``outs[k]`` (None: none for it).

    One output takes its gradient itself; several take theirs in one backprop, from
    the sum of ``⟨g_k, out_k⟩`` (MyGrad clears a graph after one backward, and the
    outputs of a function share theirs), whose gradient at ``out_k`` is ``g_k``."""
    if len(outs) == 1:
        if isinstance(outs[0], mygrad.Tensor) and not outs[0].constant:
            outs[0].backward(grads[0])
        return
    terms = [
        mygrad.sum(o * np.asarray(g, dtype=o.dtype))
        for o, g in zip(outs, grads)
        if g is not None and isinstance(o, mygrad.Tensor) and not o.constant
    ]
    if terms:
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        total.backward()
