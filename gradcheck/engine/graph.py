"""The computational graph: whether it is being recorded, and how backprop walks it.

Backprop visits every op of the graph once, in reverse topological order, so that the
gradient of each tensor is complete (every consumer has contributed) before its creator
passes it on. The order comes from the tensors' creation numbers: the graph is
collected breadth-first (no recursion, so a chain of 100,000 ops works) and sorted.

Threads and asyncio tasks: the one switch, :data:`no_autodiff`, is a context variable
(each thread and task has its own). What the engine shares between threads is safe
under the GIL: the creation numbers (:data:`SEQUENCE`, one C call per op), the cache of
constant tensors for Python numbers (``tensor_base._SCALAR_CACHE``: dict reads and
writes of read-only tensors), NumPy's dispatch tables (``_utils.overrides``, filled by
the op families as they are imported, under Python's import lock; a thread that finds
them incomplete imports the families itself) and ``gradcheck.random``'s generator
(NumPy's generators lock each draw; with several threads their draws interleave). What
is not shared is the graph: building and backpropagating it writes the tensors
(``_ops``, ``_seq``, ``.grad``), so a tensor that takes a gradient must not be used by
two threads at the same moment.
"""

from __future__ import annotations

import functools
import itertools
import sys
from collections.abc import Callable, Collection, Iterator
from contextvars import ContextVar
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from gradcheck.engine.operation import Operation
    from gradcheck.engine.tensor_base import Tensor

__all__ = [
    "Node",
    "no_autodiff",
    "is_tracking",
    "backpropagate",
    "BackpropGraph",
    "clear_graph",
]

_F = TypeVar("_F", bound=Callable[..., Any])


#: How many ``no_autodiff`` blocks enclose the running code, in this thread and asyncio
#: task (a context variable: each thread starts with its own, at 0, except where
#: Python makes threads inherit a copy of their creator's context, as free-threaded
#: 3.14 does by default; an asyncio task starts with a copy of its creator's and
#: changes only its own). 0: record the graph.
NO_AUTODIFF_DEPTH: ContextVar[int] = ContextVar("gradcheck_no_autodiff_depth", default=0)

#: The switch as every op reads it, ``if not no_autodiff_depth(): <record>``: one C
#: call (measured: 10-20 ns more per op than the attribute of a process-wide object).
no_autodiff_depth = NO_AUTODIFF_DEPTH.get

#: Sequence numbers for op outputs, in creation order (see :func:`_tensors_in_order`).
#: Shared by all threads: ``next`` on an ``itertools.count`` is one C call, atomic
#: under the GIL, and numbers that grow across threads still order every graph.
SEQUENCE = itertools.count(1)
_SEQ = attrgetter("_seq")


class Node:
    """A value the graph connects. :class:`~gradcheck.tensor_base.Tensor` is the one
    kind; the class is here so that this module, and the view bookkeeping below the
    tensor module (:mod:`gradcheck._utils.views`, :mod:`gradcheck._utils.overrides`),
    can tell a tensor from other values without importing the module that defines it
    (which imports them)."""

    __slots__ = ()


def is_tracking() -> bool:
    """True when ops record the graph (that is, outside :data:`no_autodiff`) in the
    calling thread and asyncio task."""
    return not no_autodiff_depth()


class _NoAutodiff:
    """Context manager and decorator that turns graph building off.

    Inside it, ops compute their outputs but record no creator, so nothing can be
    backpropagated and no graph is kept alive::

        with no_autodiff:
            y = x * 2          # y.creator is None

        @no_autodiff
        def evaluate(x): ...

    The switch belongs to the thread and the asyncio task that turns it (a
    :class:`~contextvars.ContextVar`, :data:`NO_AUTODIFF_DEPTH`): other threads keep
    recording their graphs meanwhile, a new thread starts recording, and an asyncio
    task starts with the switch as its creator had it when it created the task.
    Blocks nest; each one's exit undoes its own entry.
    """

    def __enter__(self) -> None:
        NO_AUTODIFF_DEPTH.set(no_autodiff_depth() + 1)

    def __exit__(self, *exc_info: object) -> None:
        depth = no_autodiff_depth()
        # (never below 0: an exit in another context than its entry, e.g. a
        # generator resumed elsewhere, must not turn recording off there)
        NO_AUTODIFF_DEPTH.set(depth - 1 if depth > 0 else 0)

    def __call__(self, func: _F | None = None, *, to_numpy: bool = False) -> Any:
        """Decorate ``func`` (``no_autodiff(func)``, ``@no_autodiff``); with
        ``to_numpy=True`` the tensors it returns (alone, or in a tuple or list) are
        returned as their arrays. ``no_autodiff(to_numpy=True)`` is a decorator."""
        if func is None:
            return functools.partial(self.__call__, to_numpy=to_numpy)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                out = func(*args, **kwargs)
            return _as_numpy(out) if to_numpy else out

        return wrapper


no_autodiff = _NoAutodiff()


def _as_numpy(out: Any) -> Any:
    """Tensors (alone, or in a tuple or list) as their arrays; anything else as it is."""
    if isinstance(out, Node):
        return out.data  # type: ignore[attr-defined]
    if isinstance(out, (tuple, list)):
        return type(out)(x.data if isinstance(x, Node) else x for x in out)  # type: ignore[attr-defined]
    return out


class BackpropGraph(Collection["Operation"]):
    """The ``graph`` that :func:`backpropagate` hands every ``Operation.backward``:
    the ops of this backprop whose backward has not yet started.

    It holds no op itself: an op that has run (and the arrays it saved) is released
    at once, so backprop frees memory as it goes, as forward values and gradients
    that nobody holds are no longer needed. Its type also tells ``backward`` that the
    ``grad`` it is given is the engine's own array, never a caller's, so that it
    may be shared between tensors (see ``Tensor.grad``).
    """

    __slots__ = ("_tensors",)

    def __init__(self, tensors: list[Tensor]) -> None:
        self._tensors = tensors

    def __iter__(self) -> Iterator[Operation]:
        for tensor in self._tensors:
            if tensor._creator is not None:
                yield tensor._creator

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, op: object) -> bool:
        return any(op is mine for mine in self)


def _tensors_in_order(
    root: Tensor, viewed: list[tuple[Tensor, Operation | None]]
) -> tuple[list[Tensor], list[Tensor]]:
    """The non-constant tensors with a creator that lead to ``root`` (itself
    included), each before every tensor computed from it (topological order of
    creation: backprop pops them from the end, newest first); and the other inputs
    met on the way (with repeats): the leaves that take a gradient, and constants
    computed by ops.

    Every op output gets a sequence number when it is created (``Tensor._seq``), and
    an op's inputs exist before its output does, so creation order is a topological
    order: collecting the reachable tensors and sorting them by that number
    replaces a depth-first search. (Profiled: the search's (tensor, flag)
    tuples and second visit per node cost more than the ops' own backward on small
    arrays; a C-level sort of ints does not.)

    A tensor is marked as collected by negating its sequence number (a set of ids
    cost ~1,300 instructions per op on a chain of small ops, measured with
    callgrind). Every collected tensor leaves the graph in this backprop
    (:func:`backpropagate` drops its creator), so the mark is never seen again;
    should the collection itself be interrupted, the marks are undone.

    The tensors met that are in a view relation (``_views``, rare) are added to
    ``viewed`` with their creators, and an op's inputs written in place after it ran
    are resolved to their earlier values (see :func:`resolved`).
    """
    tensors = [root]
    ends: list[Tensor] = []
    if root._views is not None:
        viewed.append((root, root._creator))
    root._seq = -root._seq
    try:
        for tensor in tensors:  # grows while it is walked: a breadth-first collection
            # every tensor the walk holds was made by an op; a built-in op of one or
            # two inputs keeps them itself (see operation.kept_inputs): read directly,
            # one and then the other, with no tuple (measured with callgrind on the
            # chain of engine_overhead.py: ~2% of its instructions against a tuple)
            op = tensor._creator
            if (var := op._in_a) is None:  # type: ignore[union-attr]
                _inputs_met(tensor, op.variables, tensors, ends, viewed)  # type: ignore[union-attr]
                continue
            b = op._in_b  # type: ignore[union-attr]
            while True:  # var, then b (when not None): no tuple per op
                if var._views is not None:  # (a view relation: rare)
                    var = _viewed(tensor, var, viewed)
                if var._creator is None:
                    if not var._constant:
                        ends.append(var)
                elif var._constant:
                    ends.append(var)
                elif var._seq > 0:
                    var._seq = -var._seq
                    tensors.append(var)
                if b is None:
                    break
                var = b
                b = None
    except BaseException:
        for tensor in tensors:
            tensor._seq = abs(tensor._seq)
        raise
    tensors.sort(key=_SEQ, reverse=True)  # (negated: oldest first, newest last)
    return tensors, ends


def _inputs_met(
    out: Tensor,
    inputs: tuple[Tensor, ...],
    tensors: list[Tensor],
    ends: list[Tensor],
    viewed: list[tuple[Tensor, Operation | None]],
) -> None:
    """The collection's step for the ``inputs`` of the op that made ``out``, for an op
    whose inputs are its ``variables`` (the loop of :func:`_tensors_in_order`, whose
    ops of one or two kept inputs run it written out)."""
    for var in inputs:
        if var._views is not None:  # (a view relation: rare)
            var = _viewed(out, var, viewed)
        if var._creator is None:
            if not var._constant:
                ends.append(var)
        elif var._constant:
            ends.append(var)
        elif var._seq > 0:
            var._seq = -var._seq
            tensors.append(var)


def _viewed(out: Tensor, var: Tensor, viewed: list[tuple[Tensor, Operation | None]]) -> Tensor:
    """``var``, an input of the op that made ``out``, met by the collection: resolved
    if it was written in place since, and noted in ``viewed`` if it is in a view
    relation (with repeats)."""
    if var._views.mutations is not None:  # type: ignore[union-attr]
        var = resolved(out, out._creator, var)  # type: ignore[arg-type]
        if var._views is None:
            return var
    viewed.append((var, var._creator))
    return var


def resolved(out: Tensor, op: Operation, var: Tensor) -> Tensor:
    """The input ``var`` of ``op``, the op that made ``out``, as that op read it: ``var`` was
    written in place (see :mod:`gradcheck._utils.views`), and an op made before a
    write reads the placeholder of the value ``var`` had then. The op's ``variables``
    are pointed at it, once and for all."""
    seq = abs(out._seq)
    for written_at, placeholder in var._views.mutations:  # type: ignore[union-attr]
        if seq < written_at:
            op.variables = tuple(placeholder if v is var else v for v in op.variables)
            return placeholder
    return var


def _refcount_of_a_lone_local() -> int:
    lone = object()
    return sys.getrefcount(lone)


#: What ``sys.getrefcount`` says of an object that one local variable alone holds
#: (measured, not assumed: it depends on the interpreter version).
_UNHELD = _refcount_of_a_lone_local()
_getrefcount = sys.getrefcount


#: What is done with the tensors in a view relation that left the graph (see
#: ``gradcheck._utils.views``), oldest first: the caller's, which knows how to build
#: a view's final gradient (``tensor_base`` passes its ``_left_graph``).
Leaving = Callable[[list[tuple["Tensor", "Operation | None"]]], None]


def backpropagate(root: Tensor, leaving: Leaving) -> None:
    """Send ``root.grad`` back through the graph that created ``root``, clearing
    the graph as it goes (see :func:`clear_graph`).

    ``root.grad`` must already hold the seed gradient. Every op in the graph runs its
    ``backward`` once, after all ops that consume its output have run; as it starts,
    the op is dropped (its output forgets its creator), and so is its output when
    nothing else holds it, so that what only they held is freed during backprop
    rather than after it (an op's output is gone before the op's own backward runs,
    when the op did not keep it). If an op raises, the rest of the graph is
    cleared as well and the exception propagates; the gradients already stored stay.
    The tensors in a view relation that left the graph are handed to ``leaving``.
    """
    viewed: list[tuple[Tensor, Operation | None]] = []  # (in a view relation)
    collected, ends = _tensors_in_order(root, viewed)
    tensors: list[Any] = collected  # (oldest first: popped from the end)
    graph = BackpropGraph(tensors)
    pop = tensors.pop
    try:
        while tensors:
            # Every consumer of this tensor has run: it leaves the graph now (and
            # releases its memory-guarding locks, see tensor_base.execute_op).
            tensor = pop()
            op = tensor._creator
            tensor._creator = None
            tensor._ops = 0
            tensor._locks = None
            grad = tensor._grad
            if grad is None:  # every path to it was skipped
                continue
            if _getrefcount(tensor) == _UNHELD:
                # Nothing but this loop holds the tensor: nobody can read it again,
                # so it (and its value, unless its op kept that) is released before
                # the op's backward, which needs the gradient, not the output.
                tensor = None
            # (op.backward's body, called positionally: see Operation._engine_backprop)
            if op._engine_backprop(grad, graph) and tensor is not None:
                # an input now holds `grad` itself (see Operation.backward): this
                # tensor's own `.grad` is copied when it is read
                tensor._shared = True
    except BaseException:
        for tensor in tensors:
            tensor._creator = None
            tensor._ops = 0
            tensor._locks = None
        raise
    finally:
        # Constants never count their consumers (`_ops`); the graph behind a
        # constant computed by ops is cleared as well.
        for var in ends:
            var._ops = 0
            var._locks = None
            if var._creator is not None:
                clear_graph(var, leaving)
        if viewed:
            _leaving_graph(viewed, leaving)


def _leaving_graph(viewed: list[tuple[Tensor, Operation | None]], leaving: Leaving) -> None:
    """The tensors in a view relation that left the graph, handed to ``leaving`` once
    each, oldest first (a view's parent before it)."""
    once = list({id(t): (t, op) for t, op in viewed}.values())
    once.sort(key=lambda pair: abs(pair[0]._seq))
    leaving(once)


def clear_graph(root: Tensor, leaving: Leaving) -> None:
    """Detach ``root`` and every tensor upstream of it from the graph.

    Creators are dropped (so the ops and intermediate arrays can be freed) and every
    tensor forgets the ops it fed: backprop through an op that still refers to one of
    them raises :class:`InvalidBackprop` ("cleared prior to backprop"). The tensors
    in a view relation that left the graph are handed to ``leaving``.
    """
    root._ops = 0
    root._locks = None
    stack = [root]
    viewed: list[tuple[Tensor, Operation | None]] = []  # (in a view relation)
    while stack:
        tensor = stack.pop()
        op = tensor._creator
        if tensor._views is not None:
            viewed.append((tensor, op))
        if op is None:
            continue
        tensor._creator = None
        for var in op.variables:
            if var._views is not None and var._views.mutations is not None:
                var = resolved(tensor, op, var)
            var._ops = 0
            var._locks = None
            if var._creator is not None:
                stack.append(var)
            elif var._views is not None:
                viewed.append((var, None))
    if viewed:
        _leaving_graph(viewed, leaving)
