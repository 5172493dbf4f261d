"""Which objects of a module are its targets: :func:`discover`.

``gradcheck verify module``, ``gradcheck list module`` and a configuration's module
entry check every target the module offers, of every kind the single ``module:Name``
form accepts: each op class defined in it (an :class:`~gradcheck.Operation` subclass
implementing ``__call__``, a ``torch.autograd.Function``, an ``nn.Module`` whose
constructor takes no argument, a MyGrad ``Operation``), each op instance created in it
(an ``nn.Module`` instance, a ``jax.custom_vjp``/``custom_jvp`` function, also
``jax.jit`` of one), and each function defined in it that is marked with
:func:`gradcheck.describe`. What it imports, private names, helpers and the like are
left out, each with its reason (``-v`` lists them).

:func:`discover` is a pure function of an imported module (it reads the module's
source, and resolves each candidate as ``module:name`` would be), so that it runs
wherever the module was imported: the command's process or a worker.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import sys
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from gradcheck.checking.adapters import (
    FRAMEWORKS,
    framework_of,
    is_op_instance,
    lacks_forward,
    op_class_behind,
)
from gradcheck.engine.operation import Operation
from gradcheck.errors import GradcheckError, ModuleLoadError
from gradcheck.search.description import is_described

__all__ = ["Found", "discover", "is_operation_class", "no_target_message", "target_kind"]


def is_operation_class(obj: Any) -> bool:
    """True for an ``Operation`` subclass that implements ``__call__``, or an op
    class of another framework (a ``torch.autograd.Function``, a MyGrad
    ``Operation``; see :mod:`gradcheck.checking.adapters`)."""
    if isinstance(obj, type) and not issubclass(obj, Operation):
        return framework_of(obj) is not None
    return (
        isinstance(obj, type)
        and issubclass(obj, Operation)
        and obj.__call__ is not Operation.__call__
    )


@dataclass(frozen=True)
class Found:
    """A module-level object :func:`discover` looked at: a target (``reason`` is
    None), or what it is and why it is left out."""

    name: str
    obj: Any = field(repr=False)
    reason: str | None = None


def discover(module: ModuleType) -> list[Found]:
    """Every module-level object of ``module`` that is, or looks like, a target, in
    definition order: the targets (``reason`` None) and, with the reason, what is
    left out. A pure function of the imported module (it reads the module's source,
    and resolves each candidate as ``module:name`` would be), so that it runs wherever
    the module was imported.

    A target is *defined in* the module: a class or function whose ``__module__`` is
    the module (as for a single ``module:Name``, whose target may come from anywhere),
    or an op instance (``nn.Module``, ``jax.custom_vjp``) that the module's code
    created rather than imported (``from .layers import layer``: imported;
    ``layer = Linear(3, 2)``: created). What a package's ``__init__`` imports from its
    own submodules is checked by naming the submodule (or ``package:Name``), so that
    no op is checked twice. Left out, with the reason: imports and modules, private
    names, functions without :func:`gradcheck.describe`, classes that are not ops or
    are base classes, classes that need constructor arguments, a second name of a
    target.

    Examples
    --------
    >>> import gradcheck.nnet.activations as activations
    >>> found = discover(activations)
    >>> [f.name for f in found if f.reason is None][:2]
    ['ReLU', 'LeakyReLU']
    >>> next(f.reason for f in found if f.name == "np")
    'the module numpy, imported'

    """
    bindings: _Bindings | None = None
    seen: dict[int, str] = {}
    found: list[Found] = []
    for name, obj in list(vars(module).items()):
        if (name.startswith("__") and name.endswith("__")) or not name.isidentifier():
            continue  # (a non-identifier: a tool's, such as pytest's `@py_builtins`)
        if isinstance(obj, ModuleType):
            found.append(Found(name, obj, f"the module {obj.__name__}, imported"))
            continue
        try:
            behind = op_class_behind(obj)  # an alias of a Function's apply
            home = _home(behind if behind is not None else obj)
            candidate = _is_candidate(obj)
            elsewhere = None if home in (None, module.__name__) else home
            if candidate and not isinstance(obj, type) and behind is None:
                # An instance (an nn.Module, a custom_vjp): where its module's code made
                # it or imported it, which its __module__ need not say
                # (`safe_log = jax.custom_jvp(jnp.log)` is jax.numpy's by __module__).
                bindings = bindings or _Bindings.of(module)
                if bindings.read:
                    elsewhere = bindings.source_of(name, obj)
            reason = f"imported from {_said(elsewhere)}" if elsewhere else _not_a_target(obj)
        except Exception as exc:  # an object whose attributes raise: not an op of ours
            candidate, reason = False, f"cannot be inspected ({type(exc).__name__}: {exc})"
        if reason is None and name.startswith("_"):
            reason = f"private (name it as {name!r} alone to check it)"
        if reason is None:
            key = id(_the_op(obj))
            if key in seen:
                reason = f"the same op as {seen[key]}"
            else:
                reason = _unresolvable(obj, f"{module.__name__}:{name}")
                if reason is None:
                    seen[key] = name
        if name.startswith("_") and not candidate:
            continue  # a private helper: not worth a line
        if not callable(obj):
            continue  # data: numbers, arrays, tensors
        found.append(Found(name, obj, reason))
    return found


#: A framework's op base classes as its users spell them (``gradcheck list``'s kind).
_SPELLED = {
    "Function": "autograd.Function",
    "Module": "nn.Module",
    "Operation": "Operation",
    "custom_vjp": "custom_vjp",
    "custom_jvp": "custom_jvp",
}


def target_kind(obj: Any) -> str:
    """What kind of target ``obj`` is (the ``kind`` column of ``gradcheck list``),
    named as its user wrote it: ``Operation``, ``function``, or a framework's kind
    (``torch autograd.Function``, ``torch nn.Module class``, ``torch nn.Module
    instance``, ``mygrad Operation``, ``jax custom_vjp function``, ``jax custom_jvp
    function``; ``jax function``, ``torch function`` for a plain function of its
    tensors).

    >>> target_kind(lambda x: x)
    'function'
    """
    if isinstance(obj, type) and issubclass(obj, Operation):
        return "Operation"
    fw = framework_of(obj)
    if fw is None:
        return "function"
    packages = next(f.packages for f in FRAMEWORKS if f.name == fw)
    if isinstance(obj, type):
        base = _spelled_base(obj, packages) or "op"
        return f"{fw} {base}" + (" class" if base in ("nn.Module", "op") else "")
    if not is_op_instance(obj):
        return f"{fw} function"
    base = _instance_base(obj, packages) or "op"
    return f"{fw} {base} " + ("function" if base.startswith("custom_") else "instance")


def _spelled_base(obj: Any, packages: tuple[str, ...]) -> str | None:
    """How users spell the framework base class ``obj`` (a class, or an instance's
    class) derives from; None where none is known."""
    cls = obj if isinstance(obj, type) else type(obj)
    for c in cls.__mro__:
        if c.__module__.partition(".")[0] in packages and c.__name__ in _SPELLED:
            return _SPELLED[c.__name__]
    return None


def _instance_base(obj: Any, packages: tuple[str, ...]) -> str | None:
    """:func:`_spelled_base` of the framework's op instance ``obj`` is or wraps
    (``jax.jit`` of a ``custom_vjp``: its ``__wrapped__``)."""
    for _ in range(8):  # wrappers of wrappers, but never a cycle
        base = _spelled_base(obj, packages)
        if base is not None:
            return base
        try:
            obj = getattr(obj, "__wrapped__", None)
        except Exception:  # a user's __getattr__ may raise anything
            return None
        if obj is None:
            return None
    return None


def _home(obj: Any) -> str | None:
    """The module an object was defined in, for objects that record it (classes,
    functions, and wrappers of functions such as ``jax.custom_vjp`` objects); None
    for an instance, whose ``__module__`` is its class's."""
    if isinstance(obj, type) or inspect.isfunction(obj) or inspect.ismethod(obj):
        return getattr(obj, "__module__", None)
    if inspect.isbuiltin(obj):
        return getattr(obj, "__module__", None) or "builtins"
    own = getattr(obj, "__dict__", None)
    if isinstance(own, dict) and isinstance(own.get("__module__"), str):
        return str(own["__module__"])  # functools.wraps copies it onto the wrapper
    try:
        wrapper = getattr(obj, "__wrapped__", None) is not None
    except Exception:  # a user's __getattr__ may raise anything
        wrapper = False
    return getattr(obj, "__module__", None) if wrapper else None


def _the_op(obj: Any) -> Any:
    """The op behind another name for it: the Function of an alias of its ``apply``,
    the ``custom_vjp`` that a ``jax.jit`` wraps."""
    behind = op_class_behind(obj)
    if behind is not None:
        return behind
    for _ in range(8):
        inner = getattr(obj, "__wrapped__", None) if is_op_instance(obj) else None
        if inner is None or not is_op_instance(inner):
            break
        obj = inner
    return obj


def _is_candidate(obj: Any) -> bool:
    """An object that is an op in itself, wherever it was defined."""
    return is_operation_class(obj) or is_op_instance(obj) or op_class_behind(obj) is not None


def _not_a_target(obj: Any) -> str | None:
    """Why an object defined in the module is not a target; None when it is one."""
    if isinstance(obj, type):
        if issubclass(obj, Operation):
            if obj.__call__ is Operation.__call__:
                return "an Operation subclass without __call__ (a base class?)"
            return None
        if framework_of(obj) is not None:
            if lacks_forward(obj):
                return "a class that defines no forward of its own (a base class?)"
            return None
        return "a class that is not an op"
    if is_op_instance(obj) or op_class_behind(obj) is not None:
        return None
    if isinstance(obj, Operation):
        return f"an instance of the Operation {type(obj).__name__} (the class is the target)"
    if callable(obj) and is_described(obj):
        return None
    if inspect.isfunction(obj):
        return "a function without @gradcheck.describe (mark it, or name it alone)"
    if callable(obj):
        return f"a {type(obj).__name__} that is not an op"
    return "not an op"


def _unresolvable(obj: Any, label: str) -> str | None:
    """Why ``resolve_target`` refuses an object that looks like a target (an
    ``nn.Module`` class whose constructor needs arguments), as the single
    ``module:name`` form would; None when it resolves.

    Raises :class:`~gradcheck.errors.ModuleLoadError` when making it raised (an
    ``nn.Module`` whose constructor fails): the module has an error, not a helper.
    """
    from gradcheck.checking.resolve import resolve_target

    try:
        resolve_target(obj)
    except GradcheckError as exc:  # NotATarget; a missing framework
        return str(exc)
    except Exception as exc:
        text = str(exc).strip().splitlines()
        why = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
        raise ModuleLoadError(f"{label} raised while it was made into a target: {why}") from exc
    return None


@dataclass(frozen=True)
class _Bindings:
    """How the module's own code binds its names, read from its source: by an import
    (the module it came from), by ``from X import *``, or as another name's value."""

    imported: dict[str, str]
    star: tuple[str, ...]
    aliases: dict[str, str]
    #: False when the module has no source to read.
    read: bool = True

    @classmethod
    def of(cls, module: ModuleType) -> _Bindings:
        try:
            tree = ast.parse(inspect.getsource(module))
        except (OSError, TypeError, SyntaxError, ValueError):
            return cls({}, (), {}, read=False)
        package = module.__package__ or ""
        imported: dict[str, str] = {}
        star: list[str] = []
        aliases: dict[str, str] = {}
        for node in _module_level(tree.body):
            if isinstance(node, ast.Import):
                for a in node.names:
                    imported[a.asname or a.name.split(".")[0]] = a.name
            elif isinstance(node, ast.ImportFrom):
                source = _absolute("." * node.level + (node.module or ""), package)
                for a in node.names:
                    if a.name == "*":
                        star.append(source)
                    else:
                        imported[a.asname or a.name] = source
            elif isinstance(node, ast.Assign) and _dotted(node.value) is not None:
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        aliases[t.id] = str(_dotted(node.value))
        return cls(imported, tuple(star), aliases)

    def source_of(self, name: str, obj: Any) -> str | None:
        """Where an instance bound to ``name`` came from; None when created here."""
        if name in self.imported:
            return self.imported[name]
        if name in self.aliases:  # layer = layers.layer, with `import pkg.layers as layers`
            parts = self.aliases[name].split(".")
            if parts[0] in self.imported:
                return ".".join([self.imported[parts[0]], *parts[1:-1]])
        for source in self.star:
            if getattr(sys.modules.get(source), name, None) is obj:
                return source
        return None


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that run at module level, also inside ``if``/``try``/``with``
    blocks (not inside functions and classes)."""
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for attr in ("body", "orelse", "finalbody"):
            inner = getattr(node, attr, None)
            if isinstance(inner, list):
                out += _module_level([n for n in inner if isinstance(n, ast.stmt)])
        for handler in getattr(node, "handlers", None) or ():
            out += _module_level(handler.body)
    return out


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names and attributes; None for anything else (a call
    makes a new object)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _absolute(name: str, package: str) -> str:
    try:
        return importlib.util.resolve_name(name, package) if name.startswith(".") else name
    except (ImportError, ValueError):
        return name


def _said(module_name: str) -> str:
    """A module's name as a user writes it: the engine's modules by MyGrad's paths
    (``gradcheck.engine.operation`` is ``gradcheck.operation``, which imports it)."""
    from gradcheck import ENGINE_MODULES

    head, _, rest = module_name.partition("gradcheck.engine.")
    if head or rest.partition(".")[0] not in ENGINE_MODULES:
        return module_name
    return f"gradcheck.{rest}"


def no_target_message(module_name: str, found: list[Found]) -> str:
    """The message for a module without a target (``found`` is :func:`discover`'s):
    what it holds instead, in short."""
    text = (
        f"module '{module_name}' offers no target: it defines no op (an Operation "
        f"subclass, a torch Function or nn.Module, a MyGrad op, a jax.custom_vjp) and "
        f"no function marked with @gradcheck.describe"
    )
    imported = sorted(
        {f.reason.removeprefix("imported from ") for f in found if f.reason and _ops_import(f)}
    )
    if imported:
        text += f"; it imports ops from {', '.join(imported)}: check that module instead"
    elif found:
        text += f" (gradcheck list {module_name} -v says why each name is left out)"
    return text


def _ops_import(found: Found) -> bool:
    return bool(found.reason and found.reason.startswith("imported from ")) and (
        _is_candidate(found.obj) or (callable(found.obj) and is_described(found.obj))
    )
