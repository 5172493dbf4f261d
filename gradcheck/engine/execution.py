"""Applying an op: :func:`execute_op`, the engine's per-op forward path, and the op
inputs that are not tensors as constant tensors (Python numbers as cached constants).

Below :mod:`gradcheck.engine.tensor_base`, whose operators and methods call
:func:`_execute`. The class of the tensors built here is defined there, above: that
module hands it over with :func:`builds` as it defines it (it imports this module,
which cannot import it back), before any tensor exists. Every path to a tensor goes
through that module, so nothing here runs before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine import graph as _graph
from gradcheck.engine._utils import lock_management as _lm
from gradcheck.engine._utils import views as _views
from gradcheck.engine.operation import Operation

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor
else:
    Tensor = None  # gradcheck.engine.tensor_base.Tensor, once builds() has run

__all__ = ["builds", "execute_op"]

_no_autodiff_depth = _graph.no_autodiff_depth
_SEQUENCE = _graph.SEQUENCE


def builds(tensor_class: type[Tensor]) -> None:
    """Make ``tensor_class`` (:class:`~gradcheck.engine.tensor_base.Tensor`, as its
    module defines it) the class of the tensors this module builds."""
    global Tensor
    Tensor = tensor_class  # type: ignore[misc]


def blank() -> Tensor:
    """A tensor object with no state yet (its builder sets every slot)."""
    return _new_tensor(Tensor)


def _constant(data: np.ndarray, exposed: bool = False) -> Tensor:
    """A constant leaf tensor around ``data`` (no copy, no checks); ``exposed``: the
    caller's code holds ``data`` (memory guarding locks it in a graph)."""
    t = _new_tensor(Tensor)
    t._data = data
    t._exposed = exposed
    t._locks = None
    t._grad = None
    t._shared = False
    t._creator = None
    t._constant = True
    t._ops = 0
    t._scalar_only = False
    t._seq = 0
    t._views = None
    return t


def _as_input(x: Any) -> Tensor:
    """An op input that is not a tensor, as a constant tensor."""
    if isinstance(x, Tensor):  # a subclass
        return x
    data = np.asarray(x)
    if data.dtype.kind not in "biufc":
        raise TypeError(
            f"cannot use {type(x).__name__} of dtype {data.dtype} as an op input; "
            f"pass numbers, arrays or tensors"
        )
    return _constant(data, exposed=isinstance(x, np.ndarray))


# Constant leaf tensors around read-only 0-d arrays, for the Python numbers ops meet
# again and again (the 2 in `x * 2`), keyed by (type, value, dtype). Sharing one
# tensor between ops is safe: a constant leaf is never written by the engine (no
# gradient, no creator; clear_graph only zeroes its `_ops`, which stays 0), and its
# data cannot be written. Bounded: cleared when full. Safe under threads: each dict
# read or write is atomic under the GIL, and a tensor found in either dict, or made
# again after another thread cleared them, is an equal read-only constant.
_SCALAR_CACHE: dict[tuple[type, Any, np.dtype], Tensor] = {}
_SCALAR_CACHE_SIZE = 4096
# The float64 part of the cache keyed by the number alone, for the common case of a
# number meeting one float64 tensor (an int and a float that compare equal make the
# same float64 value): filled and cleared with _SCALAR_CACHE.
_FLOAT64_SCALARS: dict[int | float, Tensor] = {}


def _scalar_inputs(input_vars: Sequence[Any], tensors: list[Any]) -> None:
    """Replace the Python ``int``/``float`` inputs (``None`` in ``tensors``) by
    constant tensors of the dtype NumPy would give them (NEP 50: a Python number does
    not promote an array), so that ``float32_tensor * 2.0`` stays float32."""
    common = None
    arrays = [t._data for t in tensors if t is not None]
    if len(arrays) == 1 and arrays[0].dtype.kind == "f":
        common = arrays[0].dtype
    for i, x in enumerate(input_vars):
        if tensors[i] is not None:
            continue
        dtype = common if common is not None else np.result_type(*arrays, x)
        key = (type(x), x, dtype)
        cached = _SCALAR_CACHE.get(key)
        if cached is None:
            data = np.asarray(x, dtype=dtype)
            data.flags.writeable = False
            cached = _constant(data)
            if x != 0:  # 0.0 and -0.0 are equal keys but different values
                if len(_SCALAR_CACHE) >= _SCALAR_CACHE_SIZE:
                    _SCALAR_CACHE.clear()
                    _FLOAT64_SCALARS.clear()
                _SCALAR_CACHE[key] = cached
                if dtype is _FLOAT64:
                    _FLOAT64_SCALARS[x] = cached
        tensors[i] = cached


def _op_inputs(input_vars: Sequence[Any]) -> list[Tensor]:
    """``input_vars`` as tensors: Python numbers become cached constant tensors of
    the dtype NumPy would give them (see :func:`_scalar_inputs`), other non-tensors
    constant tensors around their array."""
    if len(input_vars) == 2:
        # `x * 2.0`, `1 - x`: a float tensor and a Python number, the common case
        a, b = input_vars
        tensor, number = (a, b) if type(a) is Tensor else (b, a)
        if type(tensor) is Tensor and (type(number) is float or type(number) is int):
            # (float64 was looked up already, in execute_op; here it would only miss)
            dtype = tensor._data.dtype
            if dtype is not _FLOAT64 and dtype.kind == "f":
                cached = _SCALAR_CACHE.get((type(number), number, dtype))
                if cached is not None:
                    return [a, cached] if tensor is a else [cached, b]
    tensors: list[Any] = []
    numbers = False
    for x in input_vars:
        if type(x) is Tensor:
            tensors.append(x)
        elif type(x) is float or type(x) is int:
            tensors.append(None)
            numbers = True
        else:
            tensors.append(_as_input(x))
    if numbers:
        _scalar_inputs(input_vars, tensors)
    return tensors


_new_tensor = object.__new__
_FLOAT64 = np.dtype(np.float64)
_ndarray = np.ndarray  # (a global: see gradcheck.operation._ndarray)


def execute_op(
    Op: type[Operation],
    *input_vars: Any,
    op_args: Sequence[Any] = (),
    op_kwargs: dict[str, Any] | None = None,
    constant: bool | None = None,
) -> Tensor:
    """Apply the operation ``Op`` to ``input_vars`` and return its output tensor.

    Inputs that are not tensors become constant tensors. The output is constant when
    ``constant=True``, when every input is constant (unless ``constant=False``), and
    always when its dtype is not floating-point. Outside :data:`no_autodiff`, the
    output records the op as its ``creator``, and using a tensor in a new op resets
    its ``.grad`` to None (gradients belong to one graph, as in MyGrad).

    Parameters
    ----------
    Op : type[Operation]
        The op's class; a fresh instance is made for this call.
    *input_vars : array_like
        The tensors (or arrays, numbers) the op's ``__call__`` takes.
    op_args, op_kwargs
        Further positional and keyword arguments for ``__call__``.
    constant : bool, optional
        Force the output to be (or not be) constant.

    Examples
    --------
    >>> import gradcheck as mg
    >>> from gradcheck.ops.arithmetic import Multiply
    >>> z = mg.execute_op(Multiply, mg.Tensor(2.0), 3.0)
    >>> z, z.constant
    (Tensor(6.), False)
    """
    return _execute(Op, input_vars, op_args, op_kwargs, constant)


def _pair(Op: type[Operation], a: Any, b: Any) -> Tensor:
    """``_execute(Op, (a, b), (), None, None)`` for the arithmetic operators
    (``Tensor.__add__``...), whose ops are neither ``scalar_only`` nor view ops: the
    same tensor, its common case written out for two inputs. Everything else (inputs
    that are not tensors nor float64 constants, views, arrays memory guarding locks,
    :data:`~gradcheck.engine.graph.no_autodiff`) goes to :func:`_execute`. Measured
    with callgrind on the chain of ``engine_overhead.py``: no tuple of inputs, no loop
    over them, no class attributes read.
    """
    if type(b) is not Tensor:
        # `x * 2.0` on a float64 tensor (the cached constant _execute would use)
        if (
            (type(b) is float or type(b) is int)
            and type(a) is Tensor
            and (cached := _FLOAT64_SCALARS.get(b)) is not None
            and a._data.dtype is _FLOAT64
        ):
            b = cached
        else:
            return _execute(Op, (a, b), (), None, None)
    elif type(a) is not Tensor:  # `1.0 - x`
        if (
            (type(a) is float or type(a) is int)
            and (cached := _FLOAT64_SCALARS.get(a)) is not None
            and b._data.dtype is _FLOAT64
        ):
            a = cached
        else:
            return _execute(Op, (a, b), (), None, None)
    if a._exposed or b._exposed or _no_autodiff_depth():  # (memory guarding, no graph)
        return _execute(Op, (a, b), (), None, None)
    if a._views is not None or b._views is not None:  # (a view relation)
        return _execute(Op, (a, b), (), None, None)
    op = Op()
    out = op(a, b)
    if type(out) is not _ndarray:
        out = np.asarray(out)
    result = _new_tensor(Tensor)
    result._data = out
    result._grad = None
    result._shared = False
    result._ops = 0
    result._views = None
    result._creator = op
    result._seq = next(_SEQUENCE)
    result._locks = None
    result._exposed = not _lm.MEM_GUARD  # (see _execute)
    constant = True
    scalar_only = False  # (Op.scalar_only is False: the caller's promise)
    if not a._constant:
        constant = False
        a._ops += 1
        a._grad = None
        if a._scalar_only:
            scalar_only = True
    elif a._grad is not None:
        a._grad = None
    if not b._constant:
        constant = False
        b._ops += 1
        b._grad = None
        if b._scalar_only:
            scalar_only = True
    elif b._grad is not None:
        b._grad = None
    result._scalar_only = scalar_only
    dtype = out.dtype
    result._constant = constant if dtype is _FLOAT64 or dtype.kind == "f" else True
    return result


def _single(Op: type[Operation], x: Any) -> Tensor:
    """``_execute(Op, (x,), (), None, None)`` for an op of one input that is neither
    ``scalar_only`` nor a view op (the caller's promise: the built-in unary ufuncs,
    ``-x``): :func:`_pair`'s common case for one input."""
    if type(x) is not Tensor or x._exposed or x._views is not None or _no_autodiff_depth():
        return _execute(Op, (x,), (), None, None)
    op = Op()
    out = op(x)
    if type(out) is not _ndarray:
        out = np.asarray(out)
    result = _new_tensor(Tensor)
    result._data = out
    result._grad = None
    result._shared = False
    result._ops = 0
    result._views = None
    result._creator = op
    result._seq = next(_SEQUENCE)
    result._locks = None
    result._exposed = not _lm.MEM_GUARD  # (see _execute)
    if x._constant:
        if x._grad is not None:
            x._grad = None
        result._scalar_only = False
        result._constant = True
        return result
    x._ops += 1
    x._grad = None
    result._scalar_only = x._scalar_only
    dtype = out.dtype
    result._constant = False if dtype is _FLOAT64 or dtype.kind == "f" else True
    return result


def _execute(
    Op: type[Operation],
    input_vars: tuple[Any, ...],
    op_args: Sequence[Any],
    op_kwargs: dict[str, Any] | None,
    constant: bool | None,
) -> Tensor:
    """:func:`execute_op` with the inputs as a tuple and every parameter positional:
    what the operators, the methods and the ufuncs call. (A function with ``*args``
    or keyword-only parameters is never a specialized call in CPython, and fills its
    keyword defaults from a dict: measured with callgrind, ``execute_op``'s signature
    costs ~700 instructions per call more than this one's.)"""
    # This function is the engine's per-op forward path: keep it lean (over 60 code
    # lines, with its reason in tests/test_function_length.py: each helper it called
    # would cost a Python call per op on the path the engine benchmarks measure).
    # The common case, every input already a Tensor, uses `input_vars` as it is.
    tensors: Sequence[Any] = input_vars
    for x in input_vars:
        if type(x) is not Tensor:
            # `x * 2.0` and `1 - x` on a float64 tensor, the commonest case of all,
            # without a call (measured: ~1,300 instructions less per such op)
            if (
                (type(x) is float or type(x) is int)
                and len(input_vars) == 2
                and (cached := _FLOAT64_SCALARS.get(x)) is not None
            ):
                a, b = input_vars
                if x is b:
                    if type(a) is Tensor and a._data.dtype is _FLOAT64:
                        tensors = (a, cached)
                        break
                elif type(b) is Tensor and b._data.dtype is _FLOAT64:
                    tensors = (cached, b)
                    break
            tensors = _op_inputs(input_vars)
            break
    op = Op()
    if op_kwargs:
        out = op(*tensors, *op_args, **op_kwargs)
    elif op_args:
        out = op(*tensors, *op_args)
    else:
        out = op(*tensors)
    if type(out) is not _ndarray:
        out = np.asarray(out)

    result = _new_tensor(Tensor)
    result._data = out
    result._grad = None
    result._shared = False
    result._ops = 0
    result._views = None
    all_constant = True
    if not _no_autodiff_depth():
        result._creator = op
        result._seq = next(_SEQUENCE)
        scalar_only = Op.scalar_only
        exposed = False
        # a view op, and inputs in a view relation: bookkeeping off the common path
        viewed = Op.can_return_view and out.base is not None
        if viewed:
            _views.keep_grads(tensors)
        for t in tensors:
            if t._exposed:
                exposed = True
            if t._views is not None:
                viewed = True
            if not t._constant:
                all_constant = False
                t._ops += 1
                t._grad = None
                if t._scalar_only:
                    scalar_only = True
            elif t._grad is not None:  # (a constant given a .grad by hand: MyGrad nulls it)
                t._grad = None
        result._scalar_only = scalar_only
        if viewed:
            _views.after_op(op, result, tensors, input_vars, op_args, op_kwargs, constant)
        # Memory guarding: lock the inputs' arrays that are out of the engine's hands
        # (see gradcheck._utils.lock_management); an output made while guarding is
        # off counts as handed out, so that it is never locked later on being read.
        if _lm.MEM_GUARD:
            result._exposed = False
            if exposed:
                result._locks = _lm._Locks([t._data for t in tensors if t._exposed])
                if Op.can_return_view and out.base is not None:
                    _lm.note_view(out)  # (read-only as a view of a locked array)
            else:
                result._locks = None
        else:
            result._exposed = True
            result._locks = None
    else:
        result._creator = None
        result._scalar_only = False
        result._seq = 0
        result._exposed = False
        result._locks = None
        for t in tensors:
            if not t._constant:
                all_constant = False
                break
    if constant is None:
        constant = all_constant
    dtype = out.dtype
    # (float64 by identity first: a dtype's `kind` is a new lookup and string)
    result._constant = constant if dtype is _FLOAT64 or dtype.kind == "f" else True
    return result
