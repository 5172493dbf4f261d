"""Turn what a user names on the command line into the ops to check.

A *target spec* is one of

``package.module:Name``
    an attribute of an importable module (``Name`` may be dotted: ``module:Ops.Mul``);
``path/to/file.py:Name``
    an attribute of a Python file, loaded from its path;
``package.module`` or ``path/to/file.py``
    every target the module offers, of every kind ``module:Name`` accepts, defined
    (or, for an instance such as an ``nn.Module``, created) in it: see
    :func:`gradcheck.frontend.discovery.discover`. What it leaves out, and why, is
    listed by ``gradcheck list -v`` and ``gradcheck verify -v``.

The current working directory is importable, as with ``python -m``, and a file's own
directory is importable while it is loaded, as with ``python path/to/file.py``.

Everything that can go wrong is a :class:`~gradcheck.errors.LoadError` with a one-line
message saying which target and why (exit status 2 in the CLI); the underlying exception
is kept as ``__cause__`` for ``--verbose``.

What comes out is a :class:`LoadedTarget`: the object and the name to report it by.
Turning the object into something that runs forward and backward on arrays is
:func:`gradcheck.checking.resolve.resolve_target`'s job, the one place that knows the kinds of
target.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from gradcheck.checking.adapters import missing_extra_hint
from gradcheck.engine.operation import Operation
from gradcheck.errors import EmptyModule, ModuleLoadError, NotATarget, TargetNotFound
from gradcheck.frontend.discovery import discover, is_operation_class, no_target_message
from gradcheck.frontend.preload import is_path, split_spec
from gradcheck.search.verifier import LoadedTarget, is_ctrl_c

__all__ = [
    "LoadedTarget",
    "enter_module_state",
    "load_targets",
    "load_module",
    "module_targets",
    "split_spec",
]


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _ensure_cwd_importable() -> None:
    # `python -m` puts the working directory first on sys.path; a console script does
    # not, so a user's `mymodule.py` next to them would not be found without this.
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)


#: The NumPy error state (``np.seterr``, ``np.seterrcall``) that a module's import left,
#: where it changed it, by the module as a spec names it. The state before the import is
#: restored at once: another module's targets loaded in the same process (the worker
#: that imports every module of a run) start from the state they have alone; the
#: module's own targets start from its state again (:func:`enter_module_state`).
_IMPORT_STATE: dict[str, tuple[Any, Any]] = {}


def _numpy_error_state() -> tuple[Any, Any]:
    import numpy as np

    return np.geterr(), np.geterrcall()


def _set_numpy_error_state(state: tuple[Any, Any]) -> None:
    import numpy as np

    np.seterr(**state[0])
    np.seterrcall(state[1])


def enter_module_state(spec: str) -> None:
    """Set the NumPy error state that importing the module of ``spec`` left, where it
    changed it: what its targets see when checked alone, whatever else was loaded."""
    state = _IMPORT_STATE.get(split_spec(spec)[0])
    if state is not None:
        _set_numpy_error_state(state)


def load_module(module: str) -> ModuleType:
    """Import a module by dotted name or by file path (the NumPy error state its import
    sets is kept for its targets alone: :func:`enter_module_state`).

    Raises
    ------
    ModuleLoadError
        The module does not exist or raised while it was imported.
    """
    before = _numpy_error_state()
    try:
        return _import_module(module)
    finally:
        after = _numpy_error_state()
        if after != before:
            _IMPORT_STATE[module] = after
            _set_numpy_error_state(before)


def _import_module(module: str) -> ModuleType:
    if is_path(module):
        return _load_file(Path(module))
    _ensure_cwd_importable()
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module == exc.name or module.startswith(exc.name + ".")):
            raise ModuleLoadError(
                f"no module named '{module}' (searched the working directory "
                f"{os.getcwd()} and sys.path; give a path like path/to/{module}.py "
                f"if it lives elsewhere)"
            ) from exc
        raise ModuleLoadError(
            f"cannot import module '{module}': {_one_line(exc)}{missing_extra_hint(exc)}"
        ) from exc
    except (Exception, SystemExit, KeyboardInterrupt) as exc:
        if is_ctrl_c(exc):
            raise
        raise ModuleLoadError(f"cannot import module '{module}': {_one_line(exc)}") from exc


def _load_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise ModuleLoadError(f"no file '{path}' (relative to {os.getcwd()})")
    if path.suffix != ".py":
        raise ModuleLoadError(f"'{path}' is not a Python file (expected a .py file)")
    resolved = path.resolve()
    for mod in list(sys.modules.values()):
        file = getattr(mod, "__file__", None)
        if file and Path(file).resolve() == resolved:
            return mod
    name = path.stem if path.stem.isidentifier() else "_gradcheck_target"
    if name in sys.modules:
        name = f"_gradcheck_file_{abs(hash(str(resolved)))}"
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:  # pragma: no cover - .py files always load
        raise ModuleLoadError(f"cannot load '{path}' as a Python module")
    module = importlib.util.module_from_spec(spec)
    # Registered before running it, as import does: dataclasses and pickling look the
    # module up by name while it executes.
    sys.modules[name] = module
    # As `python path/to/file.py` does: the file's siblings are importable (also from
    # inside its functions later, so the directory stays on the path).
    if str(resolved.parent) not in sys.path:
        sys.path.insert(0, str(resolved.parent))
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit, KeyboardInterrupt) as exc:
        del sys.modules[name]
        if is_ctrl_c(exc):
            raise
        raise ModuleLoadError(
            f"cannot import '{path}': {_one_line(exc)}{missing_extra_hint(exc)}"
        ) from exc
    return module


def _kind(obj: Any) -> str:
    if isinstance(obj, Operation):
        return f"an instance of the Operation {type(obj).__name__} (name the class instead)"
    if isinstance(obj, type) and issubclass(obj, Operation):
        return "an Operation subclass without a __call__ (a base class?)"
    if isinstance(obj, type):
        return f"a class that is not an Operation subclass ({obj.__name__})"
    if isinstance(obj, ModuleType):
        return "a module (name it without ':' to check every target in it)"
    return f"a {type(obj).__name__}"


def module_targets(module: ModuleType) -> list[tuple[str, Any]]:
    """The targets a module offers, in definition order, as ``(name, object)``
    (:func:`~gradcheck.frontend.discovery.discover`, without what it leaves out)."""
    return [(f.name, f.obj) for f in discover(module) if f.reason is None]


def _lookup(module: ModuleType, module_label: str, name: str) -> Any:
    obj: Any = module
    for i, part in enumerate(name.split(".")):
        if not hasattr(obj, part):
            where = module_label if i == 0 else ".".join(name.split(".")[:i])
            hint = ""
            if i == 0:
                offered = [n for n, _ in module_targets(module)]
                close = difflib.get_close_matches(part, offered, n=1)
                if close:
                    hint = f"; did you mean '{close[0]}'?"
                elif offered:
                    hint = f"; it offers: {', '.join(offered)}"
            raise TargetNotFound(f"'{where}' has no attribute '{part}'{hint}")
        obj = getattr(obj, part)
    return obj


def load_targets(spec: str, *, skipped: list[str] | None = None) -> list[LoadedTarget]:
    """Load every op a target spec names (see the module docstring).

    ``skipped``, when given, receives a line ``"module:name: why"`` for each object
    of a whole module that is left out
    (:func:`~gradcheck.frontend.discovery.discover`), for ``-v``.

    Raises
    ------
    ModuleLoadError, TargetNotFound, gradcheck.errors.NotATarget
        One line each, naming the spec (exit status 2).

    Examples
    --------
    >>> [t.name for t in load_targets("gradcheck.nnet.activations")][:2]
    ['gradcheck.nnet.activations:ReLU', 'gradcheck.nnet.activations:LeakyReLU']
    """
    module_name, name = split_spec(spec)
    if not module_name:
        raise TargetNotFound(f"'{spec}' names no module; use module:Name or path/to/file.py:Name")
    module = load_module(module_name)
    if name is None:
        found = discover(module)
        if skipped is not None:
            skipped += [f"{module_name}:{f.name}: {f.reason}" for f in found if f.reason]
        targets = [f for f in found if f.reason is None]
        if not targets:
            raise EmptyModule(no_target_message(module_name, found))
        return [LoadedTarget(f"{module_name}:{f.name}", f.obj) for f in targets]
    from gradcheck.checking.resolve import resolve_target

    obj = _lookup(module, module_name, name)
    if not (is_operation_class(obj) or _is_function_target(obj)):
        raise NotATarget(
            f"'{spec}' is {_kind(obj)}, not an Operation subclass or a function of tensors"
        )
    try:
        resolve_target(obj)  # the one place that knows the kinds of target
    except NotATarget as exc:
        raise NotATarget(f"'{spec}': {exc}") from exc
    return [LoadedTarget(spec, obj)]


def _is_function_target(obj: Any) -> bool:
    # An Operation instance is callable, but running it is not applying the op.
    return callable(obj) and not isinstance(obj, (type, Operation))
