"""`Operation`: the protocol every differentiable op follows, built-in or the user's.

An op is a forward (``__call__``) and a backward (``backward_var``) side by side::

    class Multiply(Operation):
        def __call__(self, a, b):
            self.variables = (a, b)
            return a.data * b.data

        def backward_var(self, grad, index, **kwargs):
            a, b = self.variables
            return grad * (b.data if index == 0 else a.data)

``Operation.backward`` hands the upstream gradient to ``backward_var`` once per input
and stores each result on its input, in the engine's one storage step (validate, undo
broadcasting, cast to the input's dtype, store or add), following the reference
semantics in ``shared/seed/backward-semantics.txt``. Every op, built-in or the
user's, runs this one path: what makes a built-in op fast is said in class
attributes that it reads, never in an override. (One exception, the engine's own: a
built-in elementwise rule runs its ``backward_var`` and this storage step written out
for its one input, ``UnaryOp._elementwise_backprop``, with the same results.) The graph
traversal that calls ``backward`` lives in :mod:`gradcheck.graph`.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Collection
from numbers import Real
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from gradcheck.engine.graph import BackpropGraph
from gradcheck.errors import InvalidBackprop, InvalidGradient, SkipGradient

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor

__all__ = [
    "Operation",
    "BroadcastableOp",
    "is_invalid_gradient",
    "reduce_broadcast",
    "accumulate",
    "in_dtype_of",
    "spent",
]


class _NoValueType:
    """The type of :data:`_NoValue`, the default of a parameter for which ``None``
    means something: "not given" (MyGrad's name; NumPy has its own, private, one)."""

    __slots__ = ()
    _instance: _NoValueType | None = None

    def __new__(cls) -> _NoValueType:  # one instance: compare with `is`
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<no value>"

    def __reduce__(self) -> str:
        return "_NoValue"  # pickles as the module attribute: stays the one instance


#: "Not given", where ``None`` is a value (see :class:`_NoValueType`).
_NoValue = _NoValueType()

# The modules whose op classes never write to the gradient they are given.
_BUILT_IN_MODULES = ("gradcheck.engine.ops.", "gradcheck.engine.nnet.")

_CLEARED_MESSAGE = (
    "Part of the computational graph containing this tensor was 'cleared' prior to backprop."
)

#: True while no tensor's array can have changed shape behind the graph (see
#: :func:`shapes_rewritten`): the gradient of a built-in elementwise rule then has its
#: input's shape by construction, and its storage step does not test it.
SHAPES_KEPT = True


def shapes_rewritten() -> None:
    """Note that a tensor's array, or a gradient, may no longer have the shape the
    graph's ops saw: ``x.data =`` an array of another shape, ``x.shape =`` under
    ``no_autodiff``, ``x.grad =`` an array not of ``x``'s shape. From then on, in this
    process, every gradient's shape is tested, the built-in elementwise rules' too
    (see ``UnaryOp._elementwise_backprop``), so that a mismatch is reported as before
    rather than stored."""
    global SHAPES_KEPT
    SHAPES_KEPT = False


def is_invalid_gradient(grad: Any) -> bool:
    """Return True when ``grad`` cannot be a gradient.

    A valid gradient is a real number (``int``/``float``, NumPy real scalars; not
    ``bool``) or a NumPy array of an integer or floating dtype. Everything else is
    invalid: ``None``, lists and other containers, strings, object, boolean and complex
    arrays, and arbitrary objects.

    Examples
    --------
    >>> import numpy as np
    >>> is_invalid_gradient(np.ones(3)), is_invalid_gradient(2.0)
    (False, False)
    >>> is_invalid_gradient([1.0, 2.0]), is_invalid_gradient(None)
    (True, True)
    """
    if isinstance(grad, np.ndarray):
        kind = grad.dtype.kind
    elif isinstance(grad, Real):
        kind = np.asarray(grad).dtype.kind
    else:
        return True
    # 'b' bool, 'c' complex, 'O' object, 'U'/'S' strings... are all rejected.
    return kind not in "iuf"


def reduce_broadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``grad`` over the axes along which an input of ``shape`` was broadcast.

    This is the one place broadcasting is undone, so that no op repeats it: leading
    axes that the input did not have are summed away, and axes where the input had
    size 1 are summed with ``keepdims``. A gradient that cannot be reduced to ``shape``
    is returned unchanged; :meth:`Operation.backward` then reports the mismatch.
    """
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    if extra < 0:
        return grad
    if extra:
        # np.asarray: summing down to 0-d gives a NumPy scalar, not an array
        grad = np.asarray(grad.sum(axis=0 if extra == 1 else tuple(range(extra))))
        if grad.shape == shape:  # (a bias: no size-1 axes left to sum)
            return grad
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return grad


_FLOAT64 = np.dtype(np.float64)
#: ``np.ndarray`` for the per-op paths: an attribute of the numpy module is never a
#: specialized (cheap) lookup, as numpy defines a module ``__getattr__`` (measured
#: with callgrind: ~370 instructions against ~50 for a global of ours).
_ndarray = np.ndarray

#: Arrays of at least this many elements are worth the checks that let the engine
#: write into an array of its own instead of allocating (see :func:`owned`).
IN_PLACE_MIN_SIZE = 1 << 14


def _refcount_in_callee(array: np.ndarray) -> int:
    return sys.getrefcount(array)


def _refcount_of_one_local() -> int:
    array = np.empty(0)
    return _refcount_in_callee(array)


#: What ``sys.getrefcount`` says, inside a function, of the array passed to it when the
#: caller's one local variable is all that holds it: measured the way :func:`owned`
#: uses it, not assumed (it depends on the interpreter version).
_ONE_LOCAL = _refcount_of_one_local()


def owned(array: Any, refs: int = 0) -> bool:
    """True when ``array`` is a large array that nothing but the caller holds: it
    owns its memory (not a view), is writeable, and its reference count is that of
    one local variable plus ``refs`` further references the caller knows of. The
    engine may then write into it instead of allocating a new array, as NumPy
    itself does with its temporaries. (Call it with the array in one local.)"""
    return (
        type(array) is _ndarray
        and array.size >= IN_PLACE_MIN_SIZE
        and array.base is None
        and array.flags.writeable
        and sys.getrefcount(array) == _ONE_LOCAL + refs
    )


def spent(grad: Any, graph: Any) -> bool:
    """True when ``grad``, the gradient an op's ``backward`` was given, may be
    overwritten with the gradient it hands on: a large array of the engine's own that
    only :func:`~gradcheck.graph.backpropagate` still holds, because the tensor whose
    gradient it was has left the graph and nobody else holds that tensor (nor the
    array, nor a view of it). NumPy reuses its dead temporaries the same way; on a
    chain of ops over large arrays it saves one new array per op (measured: -(x * x)'s
    two steps in place took the big workload's op-by-op NumPy from 1.18x the
    hand-written reference to 1.08x). Ask it in a ``backward_var`` that
    :meth:`Operation.backward` called, with ``grad`` and ``graph`` as that
    ``backward_var`` received them (see ``Operation.returns_new_arrays``): it counts
    the references of exactly that path."""
    # refs=3: backpropagate's local `grad`, backward's parameter and backward_var's
    return type(graph) is BackpropGraph and owned(grad, refs=3)


def in_dtype_of(var: Tensor, grad: np.ndarray) -> np.ndarray:
    """``grad`` as a gradient of ``var``: in ``var``'s dtype.

    A tensor's gradient has the tensor's dtype, as in MyGrad 2.x and torch: a float32
    tensor that met a float64 array in an op gets a float32 gradient, a float16 tensor
    a float16 one (and an integer gradient a float one). This is the engine's one
    cast: the storage step calls it only when ``grad.dtype is not var.data.dtype``, an
    identity test that costs nothing on the common path (NumPy's built-in dtypes are
    singletons); an equal dtype that is not the same object is returned as it is.
    The cast makes a new array of its own, so it never aliases the ``grad`` it was
    computed from.
    """
    dtype = var._data.dtype
    if grad.dtype == dtype:
        return grad
    return grad.astype(dtype)


def _as_gradient(op: Operation, index: int, grad: Any) -> np.ndarray:
    """``grad`` as an array, or :class:`InvalidGradient` when it cannot be a gradient."""
    if is_invalid_gradient(grad):
        raise InvalidGradient(
            f"An invalid gradient-value was passed to:"
            f"\n\t`{type(op).__name__}.backward_var(<gradient>, index={index})`"
            f"\nGradients are expected to be real-valued scalars or "
            f"numpy arrays, got a gradient of type: {type(grad)}"
        )
    return np.asarray(grad)


def _reduced(
    op: Operation,
    index: int,
    grad: np.ndarray,
    shape: tuple[int, ...],
    reduction: Callable[[np.ndarray, tuple[int, ...]], np.ndarray] | None,
) -> np.ndarray:
    """``grad`` summed down to ``shape`` (the caller's ``reduction``, or broadcasting
    undone for a broadcastable op), or :class:`InvalidGradient` when its shape is
    still not ``shape``."""
    if reduction is not None:
        grad = reduction(grad, shape)
    elif op.broadcastable:
        grad = reduce_broadcast(grad, shape)
    if grad.shape != shape:
        exc = InvalidGradient(
            f"`{type(op).__name__}.backward_var(<gradient>, index={index})` "
            f"returned a gradient of shape {grad.shape} for an input of "
            f"shape {shape}; a gradient must have its input's shape"
        )
        # (which tensor and shapes: a checker names the input of a function whose
        # inner op this is, where that tensor is one of the function's inputs)
        variables = getattr(op, "variables", ())
        variable = variables[index] if 0 <= index < len(variables) else None
        exc.variable = variable  # type: ignore[attr-defined]
        exc.shapes = (grad.shape, shape)  # type: ignore[attr-defined]
        raise exc
    return grad


def accumulate(var: Tensor, grad: np.ndarray) -> None:
    """Add ``grad`` to the gradient ``var`` already holds.

    In place only when the stored gradient is a large array that nothing else holds
    (an intermediate sum of this backprop): otherwise the stored array may be another
    tensor's data, a view the user holds or a gradient shared with another tensor,
    and a float32 gradient may meet a float64 one.
    """
    total: np.ndarray = var._grad  # type: ignore[assignment]  # (it holds one: callers check)
    if (
        total.size >= IN_PLACE_MIN_SIZE  # (small: not worth the checks)
        and not var._shared
        and owned(total, refs=1)
        and total.dtype == grad.dtype
    ):
        # refs=1: the `_grad` slot
        np.add(total, grad, out=total)
        return
    total = total + grad
    # 0-d + 0-d gives a NumPy scalar; a gradient is an array
    var._grad = total if type(total) is _ndarray else np.asarray(total)
    var._shared = False


def store_new(op: Operation, var: Tensor, backed: Any, index: int) -> None:
    """The storage step of :meth:`Operation._engine_backprop` for an op whose class
    says ``returns_new_arrays``, as a function: ``backed``, the gradient of ``op``'s
    input ``var`` (its ``index``-th) that its rule returned, becomes or is added to
    ``var``'s gradient (a real array, of ``var``'s shape and dtype). For the rules whose
    backprop is written out (``Multiply``): keep it alike with the loop's step."""
    if type(backed) is not _ndarray or (
        (dtype := backed.dtype) is not _FLOAT64 and dtype.kind not in "iuf"
    ):
        backed = _as_gradient(op, index, backed)
        dtype = backed.dtype
    data = var._data
    if backed.shape != data.shape:
        backed = _reduced(op, index, backed, data.shape, None)
        dtype = backed.dtype
    if dtype is not data.dtype:
        backed = in_dtype_of(var, backed)
    total = var._grad
    if total is None:
        var._grad = backed  # (a new array: never shared with grad)
    elif var._shared or total.size < IN_PLACE_MIN_SIZE:
        total = total + backed
        var._grad = total if type(total) is _ndarray else np.asarray(total)
    else:
        accumulate(var, backed)
        return
    var._shared = False


def store_given(
    op: Operation, var: Tensor, backed: Any, grad: np.ndarray, graph: Any, index: int
) -> bool:
    """The storage step of :meth:`Operation._engine_backprop` for an op whose class
    does not say ``returns_new_arrays``, as a function: ``backed`` (``grad`` itself
    for ``Add``) becomes or is added to the gradient of ``op``'s ``index``-th input
    ``var``, shared with ``grad`` where the loop's step would share it. Returns True
    when it was (the loop's ``handed_on``). For the rules whose backprop is written
    out (``Add``): keep it alike with the loop's step."""
    if type(backed) is not _ndarray or (
        (dtype := backed.dtype) is not _FLOAT64 and dtype.kind not in "iuf"
    ):
        backed = _as_gradient(op, index, backed)
        dtype = backed.dtype
    data = var._data
    if backed.shape != data.shape:
        backed = _reduced(op, index, backed, data.shape, None)
        dtype = backed.dtype
    if dtype is not data.dtype:
        backed = in_dtype_of(var, backed)
    total = var._grad
    if total is not None:
        if var._shared or total.size < IN_PLACE_MIN_SIZE:
            total = total + backed
            var._grad = total if type(total) is _ndarray else np.asarray(total)
            var._shared = False
        else:
            accumulate(var, backed)
        return False
    shared = False
    if backed is grad or (
        (backed.base is not None or getattr(grad, "base", None) is not None)
        and (np.may_share_memory(backed, grad) or not backed.flags.writeable)
    ):
        if (
            op._pure_grad
            and type(graph) is BackpropGraph
            and (var._creator is None or var._creator._pure_grad)
        ):
            shared = True
        else:
            backed = backed.copy()
    var._grad = backed
    var._shared = shared
    return shared


def _own_copy(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with a code object of its own: the same code, its own inline caches.

    CPython (3.11 and later) specializes an attribute read in place, for the one
    type it last saw there: ``self.variables`` in the storage step's loop, shared
    by every op class, met a different class at almost every op of a backprop and
    ran the generic lookup (measured: ~170 instructions more per read than a read
    that keeps its type). Each op class gets its own copy of
    :meth:`Operation._engine_backprop`, whose reads then see one class each (and
    each built-in elementwise rule its own copies of ``UnaryOp``'s methods).
    """
    copy = types.FunctionType(
        function.__code__.replace(),
        function.__globals__,
        function.__name__,
        function.__defaults__,
        function.__closure__,
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__qualname__ = function.__qualname__
    copy.__doc__ = function.__doc__
    return copy


def _kept_inputs(op: Operation) -> tuple[Tensor, ...]:
    """``op.variables`` of an op that keeps its inputs itself (see :data:`kept_inputs`)."""
    a = op._in_a
    if a is None:
        return op._in_more
    b = op._in_b
    return (a,) if b is None else (a, b)


def _keep_inputs(op: Operation, value: Collection[Tensor]) -> None:
    """``op.variables = value`` for an op that keeps its inputs itself."""
    value = tuple(value)
    if 1 <= len(value) <= 2:
        op._in_a = value[0]
        op._in_b = value[1] if len(value) == 2 else None  # type: ignore[assignment]
        op._in_more = ()
    else:  # (a subclass's own __call__ with another number of inputs)
        op._in_a = op._in_b = None  # type: ignore[assignment]
        op._in_more = value


#: ``variables`` of the built-in ops of one or two inputs on the per-op path (``Add``,
#: ``Multiply``, ``UnaryOp``...): their ``__call__`` keeps the inputs in two attributes,
#: ``_in_a`` and ``_in_b`` (None for one input), and ``variables`` builds the tuple when
#: it is read or stores its items when it is set, so that ``op.variables`` means what it
#: means for every op. Why: every op leaves the objects the cyclic garbage collector
#: tracks alive until backprop, and the tuple was one of three (the output tensor, the
#: op, the tuple); a graph of thousands of small ops is walked by the collections its
#: forward triggers, in proportion to that number. The engine's own per-op paths (the
#: graph walk, the storage step, the rules) read the two attributes, never this property.
kept_inputs = property(_kept_inputs, _keep_inputs)


class Operation:
    """Base class of a differentiable operation.

    Subclasses implement:

    ``__call__(self, *tensors, **params) -> numpy.ndarray``
        The forward pass. It must set ``self.variables`` to the tuple of input tensors
        and return the output as an array. Keyword arguments are the op's parameters
        (``axis=``, ``keepdims=``...).
    ``backward_var(self, grad, index, **kwargs) -> numpy.ndarray``
        The gradient of the output with respect to ``self.variables[index]``,
        contracted with ``grad`` (the gradient of the final result with respect to this
        op's output). Raise :class:`SkipGradient` to send that input no gradient.

    Ops are applied with :func:`gradcheck.execute_op`, which wraps the output in a
    :class:`Tensor` that records the op as its ``creator``. Backprop runs
    :meth:`backward`, which asks ``backward_var`` for each input's gradient and
    stores it; no op overrides ``backward``. What makes an op fast is said in class
    attributes that backward reads (``broadcastable``, ``returns_new_arrays``).
    """

    #: The input tensors, set by ``__call__``.
    variables: tuple[Tensor, ...] = ()
    #: The first and second input of an op whose ``variables`` is :data:`kept_inputs`
    #: (the engine's own: None in every other op, whose inputs are its ``variables``);
    #: ``_in_more``: such an op's inputs when they are not one or two.
    # (typed as tensors: the rules that read them are those that set them)
    _in_a: Tensor = None  # type: ignore[assignment]
    _in_b: Tensor = None  # type: ignore[assignment]
    _in_more: tuple[Tensor, ...] = ()
    #: When True, backprop through a graph containing this op must start from a
    #: scalar (0-d) tensor unless an explicit gradient is given.
    scalar_only: ClassVar[bool] = False
    #: True for an op whose output may be a view of its (first) input's data, as
    #: NumPy's basic indexing, ``reshape`` and ``transpose`` return (see
    #: ``Tensor.base``).
    can_return_view: ClassVar[bool] = False
    #: When True, ``backward`` sums each gradient down to its input's shape with
    #: :func:`reduce_broadcast` (see :class:`BroadcastableOp`).
    broadcastable: ClassVar[bool] = False
    #: The promise "``backward_var`` returns a new array: never ``grad`` nor a view of
    #: it, except ``grad`` itself, written in place, when it is spent". ``backward``
    #: then stores the result without its shared-memory test, and passes the rule
    #: ``graph=``, so that it can ask :func:`spent` ``(grad, graph)`` (nothing but this
    #: backprop holds ``grad``) where a new array would cost (a large one) and write
    #: its result there instead. Only a rule that reads ``grad`` for no other input
    #: afterwards may write it (one input; ``x * x``). The promise is about the class's
    #: own ``backward_var``: a subclass that defines its own does not inherit it.
    returns_new_arrays: ClassVar[bool] = False

    #: True for the built-in ops, which never write to the ``grad`` they are given
    #: (unless it is spent); only between such ops may a gradient be shared
    #: instead of copied (see ``backward``). Set per class by ``__init_subclass__``,
    #: never inherited, so a user's subclass of a built-in op is not trusted with
    #: shared gradients (and a mutant of gradcheck.testing turns it off).
    _pure_grad: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_pure_grad" not in cls.__dict__:
            cls._pure_grad = cls.__module__.startswith(_BUILT_IN_MODULES)
        if "backward_var" in cls.__dict__ and "returns_new_arrays" not in cls.__dict__:
            cls.returns_new_arrays = False
        if "backward" in cls.__dict__:  # (an override: backprop must run it)
            cls._engine_backprop = Operation._through_backward  # type: ignore[method-assign, assignment]
        elif "_engine_backprop" not in cls.__dict__:
            cls._engine_backprop = _own_copy(Operation._engine_backprop)  # type: ignore[method-assign]

    def _through_backward(self, grad: np.ndarray, graph: Collection[Operation] | None) -> Any:
        """``_engine_backprop`` of a class that overrides :meth:`backward`: runs the override,
        as backprop always called ``op.backward(grad, graph=graph)``."""
        return self.backward(grad, graph=graph)

    # Any: each op declares its own inputs and parameters (``(self, a, b)``...)
    def __call__(self, *input_vars: Any, **kwargs: Any) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must implement __call__")

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must implement backward_var")

    def backward(
        self,
        grad: np.ndarray,
        *,
        graph: Collection[Operation] | None = None,
        _reduction: Callable[[np.ndarray, tuple[int, ...]], np.ndarray] | None = None,
        **kwargs: Any,
    ) -> bool:
        """Back-propagate ``grad`` (d(final)/d(this op's output)) to every input.

        For each non-constant input, ``backward_var`` is asked for its gradient, which
        is validated, reduced to the input's shape (``_reduction``, or
        :func:`reduce_broadcast` by default for a ``broadcastable`` op), cast to the
        input's dtype (:func:`in_dtype_of`) and stored in the input's ``.grad`` (copied
        when it shares memory with ``grad``) or added to the gradient already there.
        Constants receive nothing. ``graph`` is the collection of ops taking part in
        this backprop; the traversal that visits them in order is
        :func:`gradcheck.graph.backpropagate`, so this method does not recurse.
        Keyword arguments go to ``backward_var``; without any, an op whose class says
        ``returns_new_arrays`` is given ``graph=graph``.

        Raises
        ------
        InvalidBackprop
            An input's part of the graph was cleared before this backprop.
        InvalidGradient
            ``backward_var`` returned something that is not a gradient, or a gradient
            whose shape is not the input's.

        Returns
        -------
        bool
            True when an input now holds ``grad`` itself (or a view of it) rather than
            a copy; the caller then marks the tensor that owns ``grad`` the same way.
            Only within a backprop (``graph`` a :class:`~gradcheck.graph.BackpropGraph`)
            and between built-in ops (this one and the input's creator) is a gradient
            shared: a caller's own ``grad`` array is always copied, and so is one that
            reaches a user's op, which might write it in place.
        """
        return Operation._engine_backprop(self, grad, graph, _reduction, kwargs)

    def _engine_backprop(
        self,
        grad: np.ndarray,
        graph: Collection[Operation] | None,
        _reduction: Callable[[np.ndarray, tuple[int, ...]], np.ndarray] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> bool:
        """:meth:`backward` with positional parameters: what
        :func:`~gradcheck.graph.backpropagate` calls for every op (a call with a
        keyword and a ``**kwargs`` dict costs ~350 instructions more per op). A class
        that overrides :meth:`backward` gets :meth:`_through_backward` here instead
        (see ``__init_subclass__``), so that backprop runs its override."""
        new_arrays = self.returns_new_arrays  # (read once: a class attribute costs)
        handed_on = False
        index = -1
        inputs = self.variables if (a := self._in_a) is None else (a, self._in_b)
        for var in inputs:
            if var is None:  # (one input kept: _in_b is None)
                break
            index += 1
            if var._constant:
                continue
            if not var._ops:
                raise InvalidBackprop(_CLEARED_MESSAGE)
            try:
                if kwargs:
                    backed = self.backward_var(grad, index, **kwargs)
                elif new_arrays:  # the rule may ask whether grad is spent(grad, graph)
                    backed = self.backward_var(grad, index, graph=graph)
                else:  # no empty **kwargs dict built per call
                    backed = self.backward_var(grad, index)
            except SkipGradient:
                continue
            # -- the storage step (written out once more, for one input, in
            # UnaryOp._elementwise_backprop: keep the two alike): `backed` becomes var's
            # gradient. It runs once per input of every op, so it is written out here
            # rather than called (a call costs ~7% of a small op's backward) and the
            # common case, a float64 array of var's shape and dtype, is tested inline.
            # 1. a gradient: a real number or array
            if type(backed) is not _ndarray or (
                (dtype := backed.dtype) is not _FLOAT64 and dtype.kind not in "iuf"
            ):
                backed = _as_gradient(self, index, backed)
                dtype = backed.dtype
            # 2. of var's shape: broadcasting undone
            data = var._data
            if _reduction is not None or backed.shape != data.shape:
                backed = _reduced(self, index, backed, data.shape, _reduction)
                dtype = backed.dtype
            # 3. in var's dtype
            if dtype is not data.dtype:
                backed = in_dtype_of(var, backed)
            # 4. added to the gradient var has, or stored as var's own: an array that
            # shares memory with `grad` (add hands it on as it is) or cannot be written
            # (a broadcast view) is copied, or, inside a backprop between built-in ops,
            # marked shared and copied when `Tensor.grad` first reads it (the engine
            # never writes a gradient in place, nor do the built-in ops that will see
            # this one, unless it is spent: then nothing else holds it).
            total = var._grad
            if total is not None:
                # accumulate(var, backed), its out-of-place case written out: a shared
                # gradient is never written in place, and a small one is not worth
                # accumulate's checks (the test of `_shared` first: it costs nothing,
                # `.size` is an ndarray attribute; measured with callgrind, a call and
                # that read cost ~1,000 instructions per sum on the fan-out graph)
                if var._shared or total.size < IN_PLACE_MIN_SIZE:
                    total = total + backed
                    var._grad = total if type(total) is _ndarray else np.asarray(total)
                    var._shared = False
                else:
                    accumulate(var, backed)
                continue
            shared = False
            if not new_arrays and (
                backed is grad
                # (two arrays that own their memory cannot overlap: only views need
                # the slower memory-bounds test)
                or (
                    (backed.base is not None or getattr(grad, "base", None) is not None)
                    and (np.may_share_memory(backed, grad) or not backed.flags.writeable)
                )
            ):
                if (
                    self._pure_grad
                    and type(graph) is BackpropGraph
                    and (var._creator is None or var._creator._pure_grad)
                ):
                    shared = handed_on = True
                else:
                    backed = backed.copy()
            var._grad = backed
            var._shared = shared
        return handed_on


class BroadcastableOp(Operation):
    """An op whose inputs broadcast against each other, NumPy style.

    ``backward_var`` may return gradients of the output's shape; ``backward`` sums
    them down to each input's shape with :func:`reduce_broadcast`.
    """

    broadcastable = True
