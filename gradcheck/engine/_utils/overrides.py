"""NumPy's functions on tensors: the dispatch tables, which the op families fill.

``Tensor.__array_ufunc__`` and ``Tensor.__array_function__`` look a NumPy function up
here: ``np.sin(t)``, ``np.add(t, u)``, ``ndarray + t``, ``np.sum(t, axis=0)`` run
``gradcheck.sin``, ``gradcheck.add``, ``gradcheck.sum`` and return tensors with a graph
(:mod:`gradcheck.interop` is the public face, with the examples).

The op families register their functions as they are defined: each one ends with
:func:`register_family`, which pairs a NumPy function with the family's function of the
same name (MyGrad's names and arguments are NumPy's); :func:`register` and
:func:`implements_numpy_override` add a pair whose names differ. This module imports
nothing above :mod:`gradcheck.graph`: the tables hold what the families put in them.

The one reach upward is by name, on the first NumPy call on a tensor
(:func:`_load_families`): the families that no one has imported yet are imported then,
so that ``np.exp(t)`` works in a program that imported ``gradcheck.tensor_base`` alone.
It is named in tests/package/test_architecture.py (``LATE_LOADS``), which reads it as an import.

What is not differentiable is said so, never silently dropped from the graph:

- ufuncs whose outputs are booleans (comparisons, ``isnan``, ``logical_and``...) run
  on the tensors' data and return arrays, as the comparison operators do;
- other ufuncs without a gradcheck op (``floor``, ``sign``...) run on the data of
  constant tensors, and raise ``TypeError`` for a tensor that needs a gradient;
- NumPy functions that only inspect (``np.shape``, ``np.allclose``, ``np.argmax``...)
  run on the data;
- anything else returns ``NotImplemented``, and NumPy raises a ``TypeError`` naming
  the function.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.engine.graph import Node

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor
else:
    Tensor = Node  # what a tensor is to this module, below tensor_base (graph.Node)

__all__ = [
    "array_function",
    "array_ufunc",
    "implements_numpy_override",
    "register",
    "register_family",
    "registries",
]

#: The package whose modules register the engine's functions (see _load_families).
FAMILIES_PACKAGE = "gradcheck.engine.ops"

#: ufunc -> gradcheck function; read directly by ``Tensor.__array_ufunc__``.
UFUNCS: dict[np.ufunc, Callable[..., Any]] = {}
FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}
#: The pairs given to :func:`register`: a family's own pair never replaces one.
_EXTRA: dict[Any, Callable[..., Any]] = {}
_loaded = False
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
    """MyGrad's names for the dispatch tables (``tensor_base._REGISTERED_*``), every
    family registered: the
    ufuncs and NumPy functions that run a gradcheck function on tensors, and the
    sets above."""
    if not _loaded:
        _load_families()
    return {
        "_REGISTERED_UFUNC": UFUNCS,
        "_REGISTERED_DIFFERENTIABLE_NUMPY_FUNCS": FUNCTIONS,
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
    _add(numpy_function, function)


def _add(numpy_function: Any, function: Callable[..., Any]) -> None:
    if isinstance(numpy_function, np.ufunc):
        UFUNCS[numpy_function] = function
    else:
        FUNCTIONS[numpy_function] = function


def register_family(namespace: dict[str, Any]) -> None:
    """Dispatch, on tensors, each NumPy function that has the name of one of the
    functions a family exports (its ``__all__``) to that function; an op family calls
    it with its ``globals()`` once its functions are defined."""
    for name in namespace["__all__"]:
        numpy_function = getattr(np, name, None)
        if callable(numpy_function) and numpy_function not in _EXTRA:
            _add(numpy_function, namespace[name])


def _load_families() -> None:
    # Threads: `_loaded` turns True only after every family has registered, and a
    # thread that sees it False imports them too (Python's import lock makes it wait
    # for a family another thread is importing), so no thread reads a half-filled
    # table as complete (a miss in Tensor.__array_ufunc__'s direct read of UFUNCS
    # ends here too). The families import the tensor module, which imports this one:
    # they are named, not imported, here (see the module docstring).
    global _loaded
    importlib.import_module(FAMILIES_PACKAGE).load_families()
    _loaded = True


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
    if not _loaded:
        _load_families()
    function = UFUNCS.get(ufunc)
    if (
        method == "__call__"
        and function is not None
        and getattr(type(function), "takes_numpy_keywords", False)
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
    if not _loaded:
        _load_families()
    function = FUNCTIONS.get(func)
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
