"""The entry points that pytest and Hypothesis load from the gradcheck distribution.

pytest loads its ``pytest11`` plugins at the start of every run, and Hypothesis runs
its ``hypothesis`` entry points whenever it is imported: in every process of every
environment where gradcheck is installed, also in projects that never use gradcheck
and in projects with a module of their own named ``gradcheck``. So this module is not
inside the ``gradcheck`` package (importing it would import whatever ``gradcheck``
means there), it imports nothing of gradcheck's by itself, and it costs next to
nothing.

pytest: this module is the plugin named ``gradcheck`` (``-p no:gradcheck`` turns it
off). It registers the real plugin, :mod:`gradcheck.pytest_plugin`, unless the run
already has it (``-p gradcheck.pytest_plugin``, ``pytest_plugins``) or the project has a
``gradcheck`` of its own: in the folder pytest runs in, or first on ``sys.path``. Then
gradcheck's fixtures and options are simply absent, and the project's ``import
gradcheck`` still gives its own module.

Hypothesis: ``_hypothesis_setup_hook`` makes ``st.from_type(gradcheck.Tensor)`` draw
from :func:`gradcheck.strategies.tensors`. Registration is lazy twice over: the
strategy is registered as a function, so ``gradcheck.strategies`` is imported when the
type is first resolved (never while Hypothesis or the strategies are half-imported),
and the type is registered when ``gradcheck.engine.tensor_base`` (also read as
``gradcheck.tensor_base``) has been imported, now or later (imported for it, NumPy and
the engine would cost every ``import hypothesis``).
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import PathFinder
from importlib.util import find_spec
from pathlib import Path
from types import ModuleType
from typing import Any

PYTEST_PLUGIN = "gradcheck.pytest_plugin"
TENSOR_MODULE = "gradcheck.engine.tensor_base"  # (gradcheck.tensor_base: an alias of it)


# -- pytest ----------------------------------------------------------------------------
def pytest_addoption(parser: Any, pluginmanager: Any) -> None:
    # The first hook pytest calls on a plugin, before it parses the command line: the
    # real plugin registered now adds its options in time.
    if pluginmanager.has_plugin(PYTEST_PLUGIN) or pluginmanager.is_blocked(PYTEST_PLUGIN):
        return
    if not _gradcheck_here_has("pytest_plugin.py"):
        return
    import importlib

    pluginmanager.register(importlib.import_module(PYTEST_PLUGIN), PYTEST_PLUGIN)


def _gradcheck_here_has(filename: str) -> bool:
    """Is ``import gradcheck`` in this process, now and once the folder it runs in is
    on ``sys.path`` (pytest puts it there for the project's tests), a gradcheck package
    with that file, not a project's own ``gradcheck.py`` or ``gradcheck/``?"""
    module = sys.modules.get("gradcheck")
    if module is not None:
        return _has(getattr(module, "__path__", None), filename)
    try:
        local = PathFinder.find_spec("gradcheck", [os.getcwd()])
    except OSError:  # the folder is gone
        local = None
    if local is not None and local.origin is not None:  # not a namespace portion
        return _has(local.submodule_search_locations, filename)
    spec = find_spec("gradcheck")
    return spec is not None and _has(spec.submodule_search_locations, filename)


def _has(locations: Any, filename: str) -> bool:
    return any((Path(folder) / filename).is_file() for folder in locations or ())


# -- Hypothesis ------------------------------------------------------------------------


def _hypothesis_setup_hook() -> None:
    """Register the strategy for ``gradcheck.Tensor`` (Hypothesis calls this while it
    is being imported)."""
    module = sys.modules.get(TENSOR_MODULE)
    if module is not None and hasattr(module, "Tensor"):
        _register_tensor(module)
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(TENSOR_MODULE, _register_tensor))


def _register_tensor(module: ModuleType) -> None:
    # Only gradcheck's engine: a project's own gradcheck package may have a
    # tensor_base of its own, which our strategies know nothing about.
    package = Path(module.__file__ or "").parent.parent  # gradcheck/engine/tensor_base.py
    tensors = package / "strategies" / "tensors.py"
    if not tensors.is_file():
        return
    from hypothesis import strategies as st

    st.register_type_strategy(module.Tensor, _tensor_strategy)


def _tensor_strategy(_type: type) -> Any:
    from gradcheck.strategies.tensors import tensors

    return tensors()


class _AfterImport:
    """A finder on ``sys.meta_path`` that finds nothing itself: when module ``name`` is
    imported it wraps the loader that the other finders return, so that
    ``callback(module)`` runs once the module has been executed."""

    def __init__(self, name: str, callback: Any) -> None:
        self.name = name
        self.callback = callback

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        for finder in [f for f in sys.meta_path if f is not self]:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _NotifyingLoader(spec.loader, self)
        return spec

    def done(self, module: ModuleType) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        self.callback(module)


class _NotifyingLoader:
    """The module's own loader, which tells the finder when the module has run."""

    def __init__(self, loader: Any, finder: _AfterImport) -> None:
        self._loader = loader
        self._finder = finder

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename, is_package...
        return getattr(self._loader, name)

    def create_module(self, spec: Any) -> Any:
        create = getattr(self._loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        self._finder.done(module)
