"""The computational graph: whether it is being recorded, and how backprop walks it.

Backprop visits every op of the graph once, in reverse topological order, so that the
gradient of each tensor is complete (every consumer has contributed) before its creator
passes it on. The order comes from an iterative depth-first search: no recursion, so a
chain of 100,000 ops works, and the work is linear in the size of the graph.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from gradcheck.operation import Operation
    from gradcheck.tensor_base import Tensor

__all__ = [
    "no_autodiff",
    "is_tracking",
    "backpropagate",
    "BackpropGraph",
    "clear_graph",
    "clear_tensors",
]

_F = TypeVar("_F", bound=Callable[..., Any])


class _Tracking:
    """Holds the global "record the graph" switch (one attribute lookup per op)."""

    __slots__ = ("on",)

    def __init__(self) -> None:
        self.on = True


TRACK = _Tracking()

#: Sequence numbers for op outputs, in creation order (see :func:`_tensors_in_order`).
SEQUENCE = itertools.count(1)
_SEQ = attrgetter("_seq")


def is_tracking() -> bool:
    """True when ops record the graph (that is, outside :data:`no_autodiff`)."""
    return TRACK.on


class _NoAutodiff:
    """Context manager and decorator that turns graph building off.

    Inside it, ops compute their outputs but record no creator, so nothing can be
    backpropagated and no graph is kept alive::

        with no_autodiff:
            y = x * 2          # y.creator is None

        @no_autodiff
        def evaluate(x): ...
    """

    def __init__(self) -> None:
        self._previous: list[bool] = []

    def __enter__(self) -> None:
        self._previous.append(TRACK.on)
        TRACK.on = False

    def __exit__(self, *exc_info: object) -> None:
        TRACK.on = self._previous.pop()

    def __call__(self, func: _F) -> _F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


no_autodiff = _NoAutodiff()


def _tensors_in_order(root: Tensor) -> list[Tensor]:
    """The non-constant tensors with a creator that lead to ``root`` (itself
    included), each after every tensor computed from it (reverse topological order
    of creation).

    Every op output gets a sequence number when it is created (``Tensor._seq``), and
    an op's inputs exist before its output does, so creation order is a topological
    order: collecting the reachable tensors and sorting them by that number, newest
    first, replaces a depth-first search. (Profiled: the search's (tensor, flag)
    tuples and second visit per node cost more than the ops' own backward on small
    arrays; a C-level sort of ints does not.)
    """
    tensors = [root]
    seen = {id(root)}
    for tensor in tensors:  # grows while it is walked: a breadth-first collection
        for var in tensor._creator.variables:
            if var._creator is not None and not var._constant and id(var) not in seen:
                seen.add(id(var))
                tensors.append(var)
    tensors.sort(key=_SEQ, reverse=True)
    return tensors


class BackpropGraph(list["Operation"]):
    """The ops of one backprop, in the order they run (the ``graph`` that
    :func:`backpropagate` hands every ``Operation.backward``). Its type tells
    ``backward`` that the ``grad`` it is given is the engine's own array, never
    the caller's, so it may be shared between tensors (see ``Tensor.grad``)."""

    __slots__ = ()


def backpropagate(root: Tensor) -> list[Tensor]:
    """Send ``root.grad`` back through the graph that created ``root``.

    ``root.grad`` must already hold the seed gradient. Every op in the graph runs its
    ``backward`` once, after all ops that consume its output have run. Returns the
    tensors visited (for :func:`clear_tensors`).
    """
    tensors = _tensors_in_order(root)
    graph = BackpropGraph([t._creator for t in tensors])
    for tensor, op in zip(tensors, graph):
        grad = tensor._grad
        if grad is not None:  # None: every path to it was skipped
            if op.backward(grad, graph=graph):
                # an input now holds `grad` itself (see Operation.backward): this
                # tensor's own `.grad` is copied when it is read
                tensor._shared = True
    return tensors


def clear_tensors(tensors: list[Tensor]) -> None:
    """:func:`clear_graph` for a graph whose non-constant tensors with a creator
    were already collected (by :func:`backpropagate`): one pass over that list instead
    of a second traversal. Constant tensors with a creator (the output of an op called
    with ``constant=True``) were not collected; the graph behind them is cleared by
    :func:`clear_graph`."""
    for tensor in tensors:
        if tensor._creator is None:  # cleared below, through a constant
            continue
        for var in tensor._creator.variables:
            var._ops = 0
            if var._constant and var._creator is not None:
                clear_graph(var)
        tensor._creator = None
    if tensors:
        tensors[0]._ops = 0


def clear_graph(root: Tensor) -> None:
    """Detach ``root`` and every tensor upstream of it from the graph.

    Creators are dropped (so the ops and intermediate arrays can be freed) and every
    tensor forgets the ops it fed: backprop through an op that still refers to one of
    them raises :class:`InvalidBackprop` ("cleared prior to backprop").
    """
    root._ops = 0
    stack = [root]
    while stack:
        tensor = stack.pop()
        op = tensor._creator
        if op is None:
            continue
        tensor._creator = None
        for var in op.variables:
            var._ops = 0
            if var._creator is not None:
                stack.append(var)
