"""Adapters: check ops written for other autodiff frameworks with the same checker.

A target written for PyTorch (a ``torch.autograd.Function`` subclass, or a function of
torch tensors), for MyGrad (a ``mygrad.Operation`` subclass, or a function of MyGrad
tensors) or for JAX (a function of jax arrays, ``jax.custom_vjp``/``custom_jvp``) is
run *through its own framework*: forward on that framework's tensors,
backward by that framework's backprop.
:func:`~gradcheck.checking.adapters.bridge.bridge_target` wraps such a run in a
gradcheck :class:`~gradcheck.Operation`, so that the checker, the search and the
reports work on it unchanged (:func:`gradcheck.checking.resolve.resolve_target`
dispatches to the framework's module).

Every framework is one row of :data:`FRAMEWORKS` (in :mod:`gradcheck.checking.frameworks`:
how its ops are recognised, the extra that installs it, the module that bridges it, the
packages whose frames a traceback skips) and one module, ``_<name>.py``, with two functions:
``target(obj)``, the :class:`~gradcheck.checking.target.Target` of one of its ops
(built with :func:`~gradcheck.checking.adapters.bridge.bridge_target`), and
``forward_of(cls)``, the function whose signature gives an op class's inputs. Nothing
else in gradcheck names a framework.

This module is what is read off the table; it sits below the checker's
:mod:`~gradcheck.checking.signature` and :mod:`~gradcheck.checking.target`, which ask
it whether an object is another framework's op. The bridge (:mod:`.bridge`) sits above
them, as it builds targets, and so does :mod:`gradcheck.checking.resolve`, which
chooses between a framework's module and gradcheck's own ops.

This module imports no framework: which framework a target belongs to is read from the
names of its classes and globals (:func:`framework_of`); the framework is imported
only when a target of it is resolved. When it is not installed, :class:`MissingExtra`
says which extra to install.

What the checker cannot see through another framework (and so does not claim):

* *aliasing*: gradients are copied out of the framework's tensors, whose buffers the
  framework owns;
* *extra gradients for constants* and the gradient's *dtype*: torch drops gradients of
  inputs that do not require one and casts gradients to the input's dtype itself.

Everything else applies: changed inputs (the framework's tensors share memory with the
checker's arrays), changes to the upstream gradient (the framework's backward is handed
the engine's own array, not a copy), missing and non-finite gradients, shapes,
determinism, reentrancy, linearity, and the numeric comparison.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import CodeType, ModuleType
from typing import Any, TypeVar

from gradcheck.checking.frameworks import (
    FRAMEWORKS,
    Framework,
    frameworks_imported,
    preloaded_modules,
)
from gradcheck.errors import MissingExtra

__all__ = [
    "EXTRAS",
    "FRAMEWORKS",
    "Framework",
    "MissingExtra",
    "framework",
    "framework_named",
    "framework_of",
    "frameworks_imported",
    "preloaded_modules",
    "framework_directories",
    "is_op_instance",
    "lacks_forward",
    "missing_extra_hint",
    "require",
]

#: Old paths: names that moved above this module (the bridge builds targets, the
#: resolution chooses between frameworks), still read here by who imported them here.
#: gradcheck's own code imports them where they are.
_MOVED = {
    "bridge_target": "gradcheck.checking.adapters.bridge",
    "resolve_foreign": "gradcheck.checking.resolve",
}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class _Index:
    by_name: dict[str, Framework]
    by_package: dict[str, Framework]
    by_base: dict[tuple[str, str], Framework]
    by_instance: dict[tuple[str, str], Framework]


@functools.lru_cache(maxsize=4)
def _index(frameworks: tuple[Framework, ...]) -> _Index:
    """The table looked up by name, by package and by op base class (computed once per
    table; a test may swap :data:`FRAMEWORKS`)."""

    def classes(attribute: str) -> dict[tuple[str, str], Framework]:
        found: dict[tuple[str, str], Framework] = {}
        for fw in frameworks:
            for spec in getattr(fw, attribute):
                module, _, name = spec.partition(":")
                found[(module, name)] = fw
        return found

    return _Index(
        {fw.name: fw for fw in frameworks},
        {pkg: fw for fw in frameworks for pkg in fw.packages},
        classes("op_bases"),
        classes("op_instances"),
    )


#: Optional dependency -> (extra of gradcheck that installs it, what it is called).
EXTRAS: dict[str, tuple[str, str]] = {
    **{pkg: (fw.extra, fw.label) for fw in FRAMEWORKS for pkg in fw.packages},
    "matplotlib": ("plot", "matplotlib"),
}

#: The attribute :func:`framework` sets on a function.
ATTRIBUTE = "__gradcheck_framework__"

F = TypeVar("F")


def require(module: str, *, needed_for: str) -> ModuleType:
    """Import an optional dependency, or raise :class:`MissingExtra` naming the extra.

    >>> require("numpy", needed_for="arrays").__name__
    'numpy'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        label = EXTRAS.get(module, (module, module))[1]
        raise MissingExtra(
            f"{needed_for} needs {label}, which is not installed: {_install_hint(module)}"
        ) from exc


def _install_hint(module: str) -> str:
    """How to install an optional dependency: the package itself (gradcheck is not on
    PyPI, so ``pip install 'gradcheck[torch]'`` would not find gradcheck), and the
    extra of a clone that pulls it in."""
    extra = EXTRAS.get(module, (module, module))[0]
    return f"pip install {module} (or, from a clone of gradcheck, pip install '.[{extra}]')"


def missing_extra_hint(exc: BaseException) -> str:
    """``" (pip install torch ...)"`` when ``exc`` is the import error of an optional
    dependency, else ``""``: appended to "cannot import module" messages.

    >>> missing_extra_hint(ModuleNotFoundError("No module named 'torch'", name="torch"))
    " (pip install torch (or, from a clone of gradcheck, pip install '.[torch]'))"
    >>> missing_extra_hint(ImportError("cannot import name 'Op' from 'torch'", name="torch"))
    ''
    """
    name = getattr(exc, "name", None) or ""
    top = name.split(".")[0]
    # Only a module that is missing: "cannot import name 'X' from 'mygrad'" is an
    # ImportError naming an installed package, which installing again does not fix.
    if isinstance(exc, ModuleNotFoundError) and top in EXTRAS:
        return f" ({_install_hint(top)})"
    return ""


def framework(name: str) -> Callable[[F], F]:
    """Mark a function as a function of ``name``'s tensors (a :data:`FRAMEWORKS`
    name: ``"torch"``, ``"mygrad"``), where :func:`framework_of` cannot tell from its
    code (for example a function that only uses tensor methods and operators).

    >>> @framework("torch")
    ... def square(x):
    ...     return x * x
    >>> framework_of(square)
    'torch'
    """
    known = _index(FRAMEWORKS).by_name
    if name not in known:
        names = " or ".join(repr(n) for n in known)
        raise ValueError(f"framework must be {names}, not {name!r}")

    def mark(func: F) -> F:
        setattr(func, ATTRIBUTE, name)
        return func

    return mark


def framework_directories() -> list[str]:
    """The directories of the frameworks that are imported: their frames are not the
    user's (:func:`gradcheck.checking.target.user_frame`)."""
    found = []
    for pkg in _index(FRAMEWORKS).by_package:
        file = getattr(sys.modules.get(pkg), "__file__", None)
        if file:
            found.append(os.path.dirname(os.path.abspath(file)))
    return found


def _top_module(obj: Any) -> str:
    module = obj.__name__ if isinstance(obj, ModuleType) else getattr(obj, "__module__", None)
    return module.split(".")[0] if isinstance(module, str) else ""


def _class_framework(cls: type) -> Framework | None:
    index = _index(FRAMEWORKS)
    home = index.by_package.get(_top_module(cls))
    if home is not None and not (home.own_ops and not inspect.isabstract(cls)):
        # A framework's own classes are not user targets (torch's Functions are its
        # internals), except where its ops are classes like a user's (MyGrad's,
        # its abstract bases left out).
        return None
    for base in cls.__mro__[1:]:
        fw = index.by_base.get((base.__module__, base.__name__))
        if fw is not None and (home is None or fw is home):
            return fw
    return None


def is_op_instance(obj: Any) -> bool:
    """True for an instance of a class a framework lists in ``op_instances`` (an
    ``nn.Module``, a ``jax.custom_vjp`` function), or a wrapper of one
    (``jax.jit`` of a ``custom_vjp``, followed through ``__wrapped__``): an op that
    brings its own derivative, as opposed to a plain function of a framework's
    tensors, whose derivative is the framework's.

    >>> is_op_instance(lambda x: x)
    False
    """
    by_instance = _index(FRAMEWORKS).by_instance
    for _ in range(8):  # wrappers of wrappers, but never a cycle
        if isinstance(obj, type) or inspect.isfunction(obj) or inspect.ismethod(obj):
            return False
        if any((c.__module__, c.__name__) in by_instance for c in type(obj).__mro__):
            return True
        try:
            obj = getattr(obj, "__wrapped__", None)
        except Exception:  # a user's __getattr__ may raise anything
            return False
        if obj is None:
            return False
    return False


def _global_names(code: CodeType) -> Iterator[str]:
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, CodeType):  # nested functions, lambdas, comprehensions
            yield from _global_names(const)


def lacks_forward(cls: type) -> bool:
    """True for a user's op class of a framework that does not define its forward (it
    still is the framework's base class's: ``nn.Module.forward``, ``Function.forward``,
    MyGrad's abstract ``__call__``): a base class of the user's ops, not an op."""
    fw = _class_framework(cls)
    if fw is None or _top_module(cls) in fw.packages:
        return False
    if inspect.isabstract(cls):
        return True
    function = fw.bridge().forward_of(cls)[0]
    return _top_module(function) in fw.packages


def _function_framework(func: Any) -> Framework | None:
    index = _index(FRAMEWORKS)
    marked = getattr(func, ATTRIBUTE, None)
    if marked is not None:
        return index.by_name.get(marked)
    code = getattr(func, "__code__", None)
    namespace = getattr(func, "__globals__", None)
    if code is None or namespace is None:
        return None
    # A function can only use a framework that was imported; this keeps the common
    # case (none imported) free of any scan.
    if not any(pkg in sys.modules for pkg in index.by_package):
        return None
    names = list(dict.fromkeys(_global_names(code)))
    values = [namespace.get(name) for name in names]
    values += [cell.cell_contents for cell in getattr(func, "__closure__", None) or ()]
    # A module of the user's (`import mylib as L`, then `L.Fn.apply(x)`): the
    # attributes the code names on it count too. (Not gradcheck's own: none of its
    # names is a framework's, and asking it for every name the code uses costs more
    # than the rest of a small fast-mode check's set-up.)
    values += [
        getattr(value, name, None)
        for value in values
        if isinstance(value, ModuleType)
        and _top_module(value) not in index.by_package
        and _top_module(value) != "gradcheck"
        for name in names
    ]
    for value in values:
        fw = index.by_package.get(_top_module(value))
        if fw is not None:
            return fw
        if isinstance(value, type) and (fw := _class_framework(value)) is not None:
            return fw  # applies the user's own torch Function or MyGrad op
        if value is not None and not isinstance(value, type) and is_op_instance(value):
            # calls the user's own op instance: a `jax.custom_vjp` made in the module
            # (whose `__module__` is the user's), an `nn.Module` instance
            fw = _instance_framework(value)
            if fw is not None:
                return fw
    return None


def op_class_behind(obj: Any) -> type | None:
    """The op class when ``obj`` is one of its class methods bound to it, as the
    alias ``linear = LinearFunction.apply`` is; else None."""
    owner = getattr(obj, "__self__", None)
    if inspect.ismethod(obj) and isinstance(owner, type) and _class_framework(owner):
        return owner
    return None


def _instance_framework(obj: Any) -> Framework | None:
    """The framework of a callable instance of one of its classes, its own or a
    user's subclass (an ``nn.Module``, a ``jax.custom_vjp`` function)."""
    index = _index(FRAMEWORKS)
    for cls in type(obj).__mro__:
        fw = index.by_base.get((cls.__module__, cls.__name__))
        if fw is None:
            fw = index.by_package.get(_top_module(cls))
        if fw is not None:
            return fw
    return None


def _framework(obj: Any) -> Framework | None:
    if isinstance(obj, type):
        return _class_framework(obj)
    behind = op_class_behind(obj)
    if behind is not None:
        return _class_framework(behind)
    if not callable(obj):
        return None
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return _function_framework(obj)
    # A builtin of a framework (torch.sin), or an instance of one of its classes.
    return _index(FRAMEWORKS).by_package.get(_top_module(obj)) or _instance_framework(obj)


def framework_named(name: str) -> Framework:
    """The row of :data:`FRAMEWORKS` named ``name`` (what :func:`framework_of` returned)."""
    return _index(FRAMEWORKS).by_name[name]


def framework_of(obj: Any) -> str | None:
    """The :data:`FRAMEWORKS` name of the framework ``obj`` is an op of (``"torch"``,
    ``"mygrad"``), or None (a gradcheck target), without importing any framework.

    A class is a framework's target when it derives from one of its ``op_bases``
    (``torch.autograd.Function``, ``torch.nn.Module``, ``mygrad.Operation``); so is
    a class method of one bound to it (the alias ``linear = LinearFunction.apply``)
    and a callable instance of a class of the framework (an ``nn.Module`` instance).
    A function is when it was marked with :func:`framework`, or when a global name
    its code uses (``torch``, ``F``, ``mg``, a function imported from the package, an
    op class of the framework, an attribute of a module of the user's that is one)
    belongs to the framework.

    >>> framework_of(lambda x: x * x) is None
    True
    """
    fw = _framework(obj)
    return None if fw is None else fw.name


def foreign_forward(obj: Any) -> tuple[Callable[..., Any], int] | None:
    """For a framework's op class, op instance or alias: the function whose signature
    gives the op's inputs, and how many leading parameters are not inputs (``self``,
    ``ctx``); None for other objects (a function's own signature is its inputs).
    Used by :func:`gradcheck.checking.signature.op_signature`."""
    behind = op_class_behind(obj)
    if behind is not None:
        obj = behind
    if isinstance(obj, type):
        fw = _class_framework(obj)
    elif inspect.isfunction(obj) or inspect.ismethod(obj) or not callable(obj):
        return None
    else:
        fw = _instance_framework(obj)
    return None if fw is None else fw.bridge().forward_of(obj)
