"""NumPy interoperability: NumPy functions called on tensors build graph ops.

``Tensor.__array_ufunc__`` and ``Tensor.__array_function__`` hand over to
:func:`array_ufunc` and :func:`array_function` here, so that ``np.sin(t)``,
``np.add(t, u)``, ``ndarray + t``, ``np.sum(t, axis=0)`` or ``np.mean(t)`` run
``gradcheck.sin``, ``gradcheck.add``... and return tensors with a graph.

The dispatch table is built once, on first use, from the names of
:mod:`gradcheck.ops`: a NumPy function and a gradcheck op of the same name are the
same operation (MyGrad's names and arguments are NumPy's), so a new op is dispatched
without further registration. :func:`register` adds a pair whose names differ
(``numpy.linalg.norm``, say).

What is not differentiable is said so, never silently dropped from the graph:

- ufuncs whose outputs are booleans (comparisons, ``isnan``, ``logical_and``...) run
  on the tensors' data and return arrays, as the comparison operators do;
- other ufuncs without a gradcheck op (``floor``, ``sign``...) run on the data of
  constant tensors, and raise ``TypeError`` for a tensor that needs a gradient;
- NumPy functions that only inspect (``np.shape``, ``np.allclose``, ``np.argmax``...)
  run on the data;
- anything else returns ``NotImplemented``, and NumPy raises a ``TypeError`` naming
  the function.

Examples
--------
>>> import numpy as np
>>> import gradcheck as mg
>>> x = mg.Tensor([0.0, 1.0])
>>> y = np.sum(np.exp(x) * np.array([2.0, 3.0]))
>>> y.backward()
>>> x.grad
array([2.        , 8.15484549])
>>> np.less(x, 0.5)
array([ True, False])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradcheck.tensor_base import Tensor
from gradcheck.ufuncs._ufunc_creators import MyGradUfunc

__all__ = ["array_function", "array_ufunc", "register"]

#: ufunc -> gradcheck function; read directly by ``Tensor.__array_ufunc__``.
UFUNCS: dict[np.ufunc, Callable[..., Any]] = {}
_FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}
_EXTRA: dict[Any, Callable[..., Any]] = {}
_built = False
#: The keyword arguments of a NumPy ufunc call that a gradcheck ufunc takes.
_UFUNC_KEYWORDS = frozenset({"out", "where", "dtype"})

# NumPy functions that only inspect their arguments: run on the data.
_INSPECTING = {
    np.shape,
    np.ndim,
    np.size,
    np.allclose,
    np.isclose,
    np.array_equal,
    np.array_equiv,
    np.argmax,
    np.argmin,
    np.argsort,
    np.argwhere,
    np.nonzero,
    np.flatnonzero,
    np.count_nonzero,
    np.any,
    np.all,
    np.unique,
    np.searchsorted,
    np.may_share_memory,
    np.shares_memory,
    np.result_type,
    np.can_cast,
    np.iscomplexobj,
    np.isrealobj,
    np.isscalar,
    np.bincount,
    np.min_scalar_type,
}

# MyGrad's registries of the NumPy functions that tensors support without a gradient
# (gradcheck.no_grad_funcs re-exports them): functions run on the tensors' data; the
# ufuncs whose every output is boolean; the ufuncs that are piecewise constant
# (derivative zero wherever it exists), which apply to constant tensors only.
_REGISTERED_NO_DIFF_NUMPY_FUNCS = {
    np.allclose,
    np.bincount,
    np.can_cast,
    np.copyto,
    np.isclose,
    np.may_share_memory,
    np.min_scalar_type,
    np.result_type,
    np.shares_memory,
    np.shape,
}
_REGISTERED_BOOL_ONLY_UFUNC = {
    np.isnan,
    np.isfinite,
    np.isinf,
    np.isnat,
    np.signbit,
    np.logical_not,
    np.logical_and,
    np.logical_or,
    np.logical_xor,
    np.greater,
    np.greater_equal,
    np.less,
    np.less_equal,
    np.equal,
    np.not_equal,
}
_REGISTERED_CONST_ONLY_UFUNC = {
    np.floor_divide,
    np.remainder,
    np.fmod,
    np.divmod,
    np.rint,
    np.sign,
    np.floor,
    np.ceil,
    np.trunc,
}


def registries() -> dict[str, Any]:
    """MyGrad's names for the dispatch tables (``tensor_base._REGISTERED_*``): the
    ufuncs and NumPy functions that run a gradcheck function on tensors, and the
    sets above."""
    if not _built:
        _build()
    return {
        "_REGISTERED_UFUNC": UFUNCS,
        "_REGISTERED_DIFFERENTIABLE_NUMPY_FUNCS": _FUNCTIONS,
        "_REGISTERED_NO_DIFF_NUMPY_FUNCS": _REGISTERED_NO_DIFF_NUMPY_FUNCS,
        "_REGISTERED_BOOL_ONLY_UFUNC": _REGISTERED_BOOL_ONLY_UFUNC,
        "_REGISTERED_CONST_ONLY_UFUNC": _REGISTERED_CONST_ONLY_UFUNC,
    }


def implements_numpy_override(
    numpy_function: Any = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: make the decorated function what ``numpy_function`` (by default
    the NumPy function of the decorated function's name; AttributeError when NumPy
    has none) runs on tensors (see :func:`register`)."""

    def decorator(function: Callable[..., Any]) -> Callable[..., Any]:
        target = numpy_function if numpy_function is not None else getattr(np, function.__name__)
        register(target, function)
        return function

    return decorator


def register(numpy_function: Any, function: Callable[..., Any]) -> None:
    """Dispatch ``numpy_function`` (a ufunc or a NumPy function) on tensors to
    ``function``, for pairs that do not share a name.

    Examples
    --------
    >>> import numpy as np
    >>> import gradcheck as mg
    >>> register(np.fabs, mg.absolute)
    >>> np.fabs(mg.Tensor([-2.0]))
    Tensor([2.])
    """
    _EXTRA[numpy_function] = function
    if _built:
        _add(numpy_function, function)


def _add(numpy_function: Any, function: Callable[..., Any]) -> None:
    if isinstance(numpy_function, np.ufunc):
        UFUNCS[numpy_function] = function
    else:
        _FUNCTIONS[numpy_function] = function


def _build() -> None:
    # Threads: `_built` turns True only after every entry is in, and a thread that
    # sees it False builds the (same) entries itself, so no thread reads a half-built
    # table as complete (a miss in Tensor.__array_ufunc__'s direct read of UFUNCS
    # ends here too).
    global _built
    from gradcheck import ops

    for name in ops.__all__:
        numpy_function = getattr(np, name, None)
        if callable(numpy_function):
            _add(numpy_function, getattr(ops, name))
    for numpy_function, function in _EXTRA.items():
        _add(numpy_function, function)
    _built = True


def _data(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, (tuple, list)):
        return type(x)(_data(v) for v in x)
    return x


def _returns_bool(ufunc: np.ufunc) -> bool:
    """True when every numeric loop of ``ufunc`` outputs booleans (``"dd->?"``); the
    object loops (``"OO->O"``) say nothing."""
    outputs = [sig.split("->")[1] for sig in ufunc.types if "O" not in sig]
    return bool(outputs) and all(set(out) == {"?"} for out in outputs)


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict) -> Any:
    """``Tensor.__array_ufunc__``: run ``ufunc`` on ``inputs``, as a graph op where
    gradcheck has one."""
    if not _built:
        _build()
    function = UFUNCS.get(ufunc)
    if (
        method == "__call__"
        and isinstance(function, MyGradUfunc)
        and _UFUNC_KEYWORDS.issuperset(kwargs)
    ):
        # NumPy's out=, where= and dtype= mean the same to a gradcheck ufunc; out= an
        # array makes that array the result's data (``array += tensor`` gives a tensor,
        # as in MyGrad), out= a tensor writes the tensor in place
        return function(*inputs, **kwargs)
    out = kwargs.get("out")
    if out is not None:
        if any(isinstance(o, Tensor) for o in out):
            raise TypeError(
                f"numpy.{ufunc.__name__}(..., out=<Tensor>): tensors cannot be written "
                f"in place; use the result (y = np.{ufunc.__name__}(...)) instead"
            )
        # Writing into a plain array (`array += tensor`) keeps no graph.
        return getattr(ufunc, method)(*_data(inputs), **kwargs)
    if function is not None:
        if method == "__call__" and not kwargs:
            return function(*inputs)
        given = ", ".join(kwargs) if method == "__call__" else f"method {method!r}"
        raise TypeError(
            f"numpy.{ufunc.__name__} on a Tensor runs gradcheck.{function.__name__}, "
            f"which does not support {given}; call it without them, or on "
            f"tensor.data for a plain array"
        )
    if _returns_bool(ufunc) or all(x._constant for x in inputs if isinstance(x, Tensor)):
        return getattr(ufunc, method)(*_data(inputs), **kwargs)
    raise TypeError(
        f"numpy.{ufunc.__name__} is not differentiable in gradcheck and a tensor "
        f"here needs a gradient; apply it to tensor.data, or make the tensor constant"
    )


def array_function(
    func: Callable[..., Any], types: tuple[type, ...], args: tuple[Any, ...], kwargs: dict
) -> Any:
    """``Tensor.__array_function__``: run the NumPy function ``func`` as a graph op
    where gradcheck has one."""
    if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
        return NotImplemented
    if not _built:
        _build()
    function = _FUNCTIONS.get(func)
    if function is not None:
        return function(*args, **kwargs)
    if func in _INSPECTING:
        return func(*_data(args), **{k: _data(v) for k, v in kwargs.items()})
    if func is np.copyto:
        return _copyto(*args, **kwargs)
    return NotImplemented


def _copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """``numpy.copyto`` into a tensor writes its array in place (no graph; a tensor's
    array that a graph needs is read-only, see memory guarding)."""
    target = dst.data if isinstance(dst, Tensor) else dst
    np.copyto(target, _data(src), casting=casting, where=_data(where))  # type: ignore[arg-type]
