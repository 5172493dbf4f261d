"""Mutations of an op's backward: the ways real gradient bugs look.

A mutation is a function ``(op, backward_var, grad, index, kwargs) -> gradient`` that
calls the op's own ``backward_var`` and spoils what goes in or comes out: a flipped
sign, a scale of ``1 + 1e-6``, an upstream gradient ignored, an element zeroed, the
gradients of two inputs swapped, the incoming gradient changed in place, a list or a
complex array returned...

How a mutant is applied
-----------------------
:func:`mutated` is a context manager that replaces ``backward_var`` *on the op class*
for the duration of a ``with`` block and puts the original back in ``finally``. It is
the one mechanism for every kind of target: an ``Operation`` subclass checked directly,
and a function of tensors that uses the class somewhere inside (``gc.add`` calls
``execute_op(Add, ...)``, so patching ``Add`` reaches it without touching the function
or the op's source). The op source is never edited; nothing outlives the block. Not
thread-safe (it changes a class), which a test run does not need.

Examples
--------
>>> import numpy as np
>>> import gradcheck as gc
>>> from gradcheck.ops.trigonometric import Sin
>>> x = gc.Tensor([0.0, 1.0])
>>> with mutated(Sin, MUTATIONS["sign_flip"]):
...     gc.sin(x).backward()
>>> x.grad  # -cos(x)
array([-1.        , -0.54030231])
>>> y = gc.Tensor([0.0, 1.0])
>>> gc.sin(y).backward()  # restored after the block
>>> y.grad
array([1.        , 0.54030231])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.checking.signature import op_signature
from gradcheck.engine.operation import Operation, reduce_broadcast

__all__ = ["MUTATIONS", "Calls", "Mutation", "applicable", "mutated"]

#: The op's own (unmutated) ``backward_var``, as a plain function of ``(op, grad, index)``.
Backward = Callable[..., Any]
Apply = Callable[[Operation, Backward, np.ndarray, int, dict[str, Any]], Any]


@dataclass(frozen=True)
class Mutation:
    """One kind of backward bug.

    Attributes
    ----------
    name : str
        A short stable id (``"sign_flip"``), used in reports.
    description : str
        What the mutant does, in a few words.
    apply : callable
        ``apply(op, backward_var, grad, index, kwargs)``: the mutated gradient.
    needs : str
        ``""`` for every op; ``"inputs"`` for ops with two or more tensor inputs;
        ``"broadcast"`` for ops whose inputs broadcast (see :func:`applicable`).
    relative : float or None
        For a mutation that only rescales the gradient, the relative error it makes.
        The suite leaves it out for a target whose dtype's default relative tolerance
        is larger (1e-6 in a float32 op is a few ulps: below what the checker
        promises to resolve there, which is 1e-4).
    own_reduction : bool
        The mutant undoes broadcasting itself (wrongly): the engine's reduction of a
        ``broadcastable`` op's gradient is off within :func:`mutated`, so that the op
        behaves as a user's op that reduces its own gradients.
    """

    name: str
    description: str
    apply: Apply
    needs: str = ""
    relative: float | None = None
    own_reduction: bool = False


def _scaled(factor: float) -> Apply:
    def apply(op, backward, grad, index, kwargs):
        return np.asarray(backward(op, grad, index, **kwargs)) * factor

    return apply


def _sign_flip(op, backward, grad, index, kwargs):
    return -np.asarray(backward(op, grad, index, **kwargs))


def _drop_upstream(op, backward, grad, index, kwargs):
    # The local derivative alone: what `return cos(x)` instead of `grad * cos(x)` gives.
    return backward(op, np.ones_like(grad), index, **kwargs)


def _transpose(op, backward, grad, index, kwargs):
    return np.transpose(np.asarray(backward(op, grad, index, **kwargs)))


def _reverse(op, backward, grad, index, kwargs):
    return np.flip(np.asarray(backward(op, grad, index, **kwargs)))


def _zero_element(op, backward, grad, index, kwargs):
    # The last element: the off-by-one of a loop that stops one short.
    g = np.array(backward(op, grad, index, **kwargs), copy=True)
    if g.size:
        g.flat[-1] = 0
    return g


def _wrong_reduction(op, backward, grad, index, kwargs):
    """Undo broadcasting over the mirrored axes (``sum(axis=-1)`` where ``axis=0`` was
    meant), then force the input's shape when the sizes allow it."""
    g = np.asarray(backward(op, grad, index, **kwargs))
    shape = op.variables[index].shape
    if g.shape == shape:
        return g  # this input was not broadcast: nothing to get wrong
    padded = (1,) * (g.ndim - len(shape)) + shape
    if len(padded) != g.ndim:
        return g
    right = [a for a in range(g.ndim) if padded[a] == 1 and g.shape[a] != 1]
    wrong = tuple(g.ndim - 1 - a for a in right)
    out = g.sum(axis=wrong, keepdims=True)
    return out.reshape(shape) if out.size == int(np.prod(shape)) else out


#: The op classes whose engine reduction a mutant has switched off (within
#: :func:`mutated`): their inputs broadcast elementwise.
_ELEMENTWISE: set[type] = set()


def _broadcast_axes(op: Operation, shape: tuple[int, ...], out: tuple[int, ...]) -> tuple:
    """The axes of ``out`` along which an input of ``shape`` was broadcast (its
    missing leading axes, and its size-1 axes where ``out`` is larger); none when
    ``shape`` does not broadcast to ``out``. For an op that is not elementwise (it
    reduces its own gradients: ``matmul``, ``einsum``, ``solve``), the last two axes
    are core dimensions, as in NumPy's generalized ufuncs, never broadcast ones: a
    contracted axis of size 1 is no broadcast axis."""
    lead = len(out) - len(shape)
    if lead < 0:
        return ()
    core = 0 if type(op) in _ELEMENTWISE else 2
    axes = list(range(lead))
    for i, (n, m) in enumerate(zip(shape, out[lead:])):
        if n == 1 and m != 1:
            if lead + i < len(out) - core:
                axes.append(lead + i)
        elif n != m:
            return ()
    return tuple(a for a in axes if out[a] != 1)


def _reduced(op, backward, grad, index, kwargs):
    """The input's right gradient (reduced to its shape), its shape, and the axes of
    the upstream gradient it was broadcast along."""
    g = np.asarray(backward(op, grad, index, **kwargs))
    shape = op.variables[index].shape
    return reduce_broadcast(g, shape), shape, _broadcast_axes(op, shape, np.shape(grad))


def _unreduced(op, backward, grad, index, kwargs):
    # What `return grad * s` gives for a bias or a scale: the gradient left at the
    # broadcast shape (spread evenly where the op summed it itself).
    g = np.asarray(backward(op, grad, index, **kwargs))
    shape = op.variables[index].shape
    if g.shape != shape or not _broadcast_axes(op, shape, np.shape(grad)):
        return g  # (the engine's reduction is off: returned as the op computed it)
    out = np.broadcast_to(g, np.shape(grad))
    return out * (g.size / out.size)


def _keepdims_lost(op, backward, grad, index, kwargs):
    # `grad.sum(axis=0)` where `grad.sum(axis=0, keepdims=True)` was meant.
    g, shape, axes = _reduced(op, backward, grad, index, kwargs)
    lead = np.ndim(grad) - len(shape)
    inner = tuple(a - lead for a in axes if a >= lead)
    return np.squeeze(g, axis=inner) if inner else g


def _averaged(op, backward, grad, index, kwargs):
    # `grad.mean(axis=0)` where the sum was meant.
    g, _, axes = _reduced(op, backward, grad, index, kwargs)
    count = int(np.prod([np.shape(grad)[a] for a in axes]))
    return g / count if count > 1 else g


def _swap_inputs(op, backward, grad, index, kwargs):
    other = (index + 1) % len(op.variables)
    return backward(op, grad, other, **kwargs)


def _mutate_upstream(op, backward, grad, index, kwargs):
    # The right value, computed in place into the caller's array (`grad *= ...`).
    out = np.array(backward(op, grad, index, **kwargs), copy=True)
    grad *= 2
    return out


def _return_list(op, backward, grad, index, kwargs):
    return np.atleast_1d(np.asarray(backward(op, grad, index, **kwargs))).tolist()


def _return_complex(op, backward, grad, index, kwargs):
    return np.asarray(backward(op, grad, index, **kwargs)) + 0j


#: Every mutation, by name, in report order.
MUTATIONS: dict[str, Mutation] = {
    m.name: m
    for m in (
        Mutation("sign_flip", "the gradient negated", _sign_flip),
        Mutation("scale_1e-3", "the gradient times 1 + 1e-3", _scaled(1 + 1e-3), relative=1e-3),
        Mutation("scale_1e-6", "the gradient times 1 + 1e-6", _scaled(1 + 1e-6), relative=1e-6),
        Mutation("drop_upstream", "the upstream gradient ignored (ones)", _drop_upstream),
        Mutation("transpose", "the gradient transposed (axes reversed)", _transpose),
        Mutation("reverse", "the gradient reversed along every axis", _reverse),
        Mutation("zero_element", "the last element of the gradient zeroed", _zero_element),
        Mutation(
            "wrong_reduction",
            "broadcasting undone over the mirrored axes",
            _wrong_reduction,
            needs="broadcast",
        ),
        Mutation(
            "unreduced",
            "a broadcast input's gradient not summed back to its shape",
            _unreduced,
            needs="inputs",
            own_reduction=True,
        ),
        Mutation(
            "keepdims_lost",
            "a broadcast input's gradient summed without keepdims",
            _keepdims_lost,
            needs="inputs",
            own_reduction=True,
        ),
        Mutation(
            "averaged",
            "a broadcast input's gradient averaged, not summed, over the broadcast axes",
            _averaged,
            needs="inputs",
            own_reduction=True,
        ),
        Mutation("swap_inputs", "the gradient of the next input returned", _swap_inputs, "inputs"),
        Mutation("mutate_upstream", "the incoming gradient doubled in place", _mutate_upstream),
        Mutation("return_list", "a list returned instead of an array", _return_list),
        Mutation("return_complex", "a complex array returned", _return_complex),
    )
}


def applicable(mutation: Mutation, op_class: type[Operation]) -> bool:
    """Whether ``mutation`` can make sense for ``op_class`` at all: swapping needs two
    tensor inputs, a wrong broadcast reduction needs an op whose inputs broadcast.
    (Whether it changes anything on a given input is decided on that input: see
    :mod:`gradcheck.testing.suite`.)

    >>> from gradcheck.ops.arithmetic import Add, Negative
    >>> applicable(MUTATIONS["swap_inputs"], Negative), applicable(MUTATIONS["swap_inputs"], Add)
    (False, True)
    """
    if mutation.needs == "inputs":
        sig = op_signature(op_class)
        return sig.arity >= 2 or sig.variadic
    if mutation.needs == "broadcast":
        return bool(op_class.broadcastable)
    return True


_MISSING = object()


class Calls:
    """How many times a mutated ``backward_var`` ran (0: the mutant was never reached,
    so it cannot be told from the original however wrong it is)."""

    count: int = 0


@contextmanager
def mutated(op_class: type[Operation], mutation: Mutation) -> Iterator[Calls]:
    """Within the block, every instance of ``op_class`` (and of its subclasses) runs the
    mutated ``backward_var``; the class is restored on exit, also on error. The block
    receives a :class:`Calls` counting the mutated calls."""
    own = op_class.__dict__.get("backward_var", _MISSING)
    backward = op_class.backward_var  # the function found through the MRO
    apply = mutation.apply
    calls = Calls()

    def backward_var(self: Operation, grad: np.ndarray, index: int, **kwargs: Any) -> Any:
        calls.count += 1
        return apply(self, backward, grad, index, kwargs)

    backward_var.__qualname__ = f"{op_class.__qualname__}.backward_var[{mutation.name}]"
    # A mutant may write the `grad` it is given: the engine must not share gradients
    # with these classes while they are mutated (see Operation._pure_grad).
    classes = [op_class]
    for cls in classes:
        classes.extend(cls.__subclasses__())
    trusted = {cls: cls.__dict__["_pure_grad"] for cls in classes if "_pure_grad" in cls.__dict__}
    # A mutant that reduces broadcast gradients itself: the engine must not do it.
    reducing = {
        cls: cls.__dict__.get("broadcastable", _MISSING)
        for cls in classes
        if mutation.own_reduction and cls.broadcastable
    }
    op_class.backward_var = backward_var  # type: ignore[method-assign]
    for cls in classes:
        cls._pure_grad = False
    for cls in reducing:
        cls.broadcastable = False
    _ELEMENTWISE.update(reducing)
    try:
        yield calls
    finally:
        _ELEMENTWISE.difference_update(reducing)
        for cls, own_flag in reducing.items():
            if own_flag is _MISSING:
                del cls.broadcastable
            else:
                cls.broadcastable = own_flag
        if own is _MISSING:
            del op_class.backward_var
        else:
            op_class.backward_var = own  # type: ignore[method-assign]
        for cls in classes:
            if cls in trusted:
                cls._pure_grad = trusted[cls]
            else:
                del cls._pure_grad
