"""gradcheck: is the gradient of your differentiable operation right?

A reverse-mode autodiff engine on NumPy with MyGrad's API (``import gradcheck as mg``),
and tools that check the gradients an op's ``backward`` produces.

Names are loaded on first use (PEP 562): ``import gradcheck`` costs next to nothing,
which matters because pytest imports our plugin, and with it this package, in every
test run of everyone who installed gradcheck. ``gradcheck.Tensor`` imports the engine
(and NumPy) the first time it is touched.
"""

from __future__ import annotations

import functools
import importlib
import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Public name -> the module that defines it. The ops (``gradcheck.add``...) are every
# name in ``gradcheck.ops.__all__``; the subpackages mirror MyGrad's.
_EXPORTS: dict[str, str] = {
    "GradcheckError": "gradcheck.errors",
    "InvalidBackprop": "gradcheck.errors",
    "InvalidGradient": "gradcheck.errors",
    "SkipGradient": "gradcheck.errors",
    "no_autodiff": "gradcheck.engine.graph",
    "mem_guard_active": "gradcheck.engine._utils.lock_management",
    "mem_guard_off": "gradcheck.engine._utils.lock_management",
    "mem_guard_on": "gradcheck.engine._utils.lock_management",
    "turn_memory_guarding_off": "gradcheck.engine._utils.lock_management",
    "turn_memory_guarding_on": "gradcheck.engine._utils.lock_management",
    "BroadcastableOp": "gradcheck.engine.operation",
    "Operation": "gradcheck.engine.operation",
    "is_invalid_gradient": "gradcheck.engine.operation",
    "any": "gradcheck.engine.ops.nondifferentiable",
    "argmax": "gradcheck.engine.ops.nondifferentiable",
    "argmin": "gradcheck.engine.ops.nondifferentiable",
    "load": "gradcheck.engine._io",
    "save": "gradcheck.engine._io",
    "Tensor": "gradcheck.engine.tensor_base",
    "asarray": "gradcheck.engine.tensor_base",
    "astensor": "gradcheck.engine.tensor_base",
    "execute_op": "gradcheck.engine.tensor_base",
    "tensor": "gradcheck.engine.tensor_base",
    "ufunc": "gradcheck.engine.ufuncs",
    "check": "gradcheck.checking.checker",
    "CheckResult": "gradcheck.checking.result",
    "Failure": "gradcheck.checking.result",
    "Target": "gradcheck.checking.target",
    "resolve_target": "gradcheck.checking.resolve",
    "numerical_gradient": "gradcheck.checking.checker",
    "describe": "gradcheck.search.description",
    "verify": "gradcheck.search.verifier",
    "VerifyResult": "gradcheck.search.verifier",
    "report": "gradcheck.frontend.report",
}
# NumPy's own names that MyGrad re-exports (``mg.float32``, ``mg.pi``, ``mg.isnan``...).
for _module, _names in (
    (
        "gradcheck.engine._dtype_mirrors",
        "bool_ double float16 float32 float64 half int8 int16 int32 int64 intp "
        "longdouble single uint8 uint16 uint32 uint64 uintp",
    ),
    ("gradcheck.engine.constants", "e euler_gamma inf nan newaxis pi"),
    (
        "gradcheck.engine.no_grad_funcs",
        "allclose bincount can_cast ceil copyto divmod equal floor floor_divide fmod "
        "greater greater_equal isclose isfinite isinf isnan isnat less less_equal "
        "logical_and logical_not logical_or logical_xor may_share_memory "
        "min_scalar_type mod not_equal remainder result_type rint shape "
        "shares_memory sign signbit trunc",
    ),
):
    _EXPORTS.update(dict.fromkeys(_names.split(), _module))
_SUBPACKAGES = ("linalg", "nnet", "random", "strategies")

# The engine lives in gradcheck/engine/; MyGrad's paths (``gradcheck.tensor_base``,
# ``gradcheck.ops.arithmetic``, ``gradcheck.nnet.layers.conv``...) name its modules too.
_ENGINE = "gradcheck.engine"
ENGINE_MODULES = frozenset(
    "_dtype_mirrors _io _utils constants graph interop linalg no_grad_funcs nnet "
    "operation ops random tensor_base typing ufuncs".split()
)


def engine_path(name: str) -> str | None:
    """The engine's module that the old path ``name`` names (``gradcheck.ops.shape`` ->
    ``gradcheck.engine.ops.shape``), or None for a name that is not an old path."""
    package, _, rest = name.partition(".")
    top = rest.partition(".")[0]
    if package != __name__ or top not in ENGINE_MODULES:
        return None
    return f"{_ENGINE}.{rest}"


class _EngineAliases:
    """Imports an old path as the very module object of its new one.

    A module file at the old path that replaced itself in ``sys.modules`` (as
    ``gradcheck/adapters.py`` does) would not do for the engine's packages: the import
    system looks for ``gradcheck.ops.shape`` in the ``__path__`` of what
    ``sys.modules["gradcheck.ops"]`` holds and would load ``shape.py`` a second time,
    under the old name, with classes of its own (``isinstance`` false across the two).
    This finder comes first, so every old path, at any depth, is the new module:
    ``isinstance`` holds, classes pickle under their new path and old pickles load,
    ``python -m`` of an old path runs the new module's code. (A finder and a loader by
    their methods: ``importlib.abc`` would import ``tempfile`` and more with
    ``import gradcheck``, which every pytest run of an installation does.)
    """

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        new = engine_path(fullname)
        real = None if new is None else importlib.util.find_spec(new)
        if real is None:
            return None
        return importlib.machinery.ModuleSpec(
            fullname,
            self,  # type: ignore[arg-type]  # (a loader by its methods, not importlib.abc's)
            loader_state=new,
            is_package=real.submodule_search_locations is not None,
        )

    def create_module(self, spec: Any) -> Any:
        module = importlib.import_module(spec.loader_state)
        spec.loader_state = module.__spec__  # the import system writes spec over it
        parent_name, _, child = module.__name__.rpartition(".")
        parent = sys.modules.get(parent_name)
        if parent is not None and getattr(parent, child, module) is not module:
            # The import system sets the module as its parent's attribute once it is
            # imported under the old path: `gradcheck.nnet.layers.batchnorm`, the
            # function, would become the module of that name.
            parent.__class__ = _KeepsItsNames
        return module

    def exec_module(self, module: Any) -> None:
        module.__spec__ = module.__spec__.loader_state  # the module's own spec, back

    def get_code(self, fullname: str) -> Any:  # `python -m gradcheck.<old path>`
        new = engine_path(fullname)
        real = None if new is None else importlib.util.find_spec(new)
        return None if real is None else real.loader.get_code(new)  # type: ignore[union-attr]


class _KeepsItsNames(types.ModuleType):
    """An engine package whose name for a function is also a submodule's name (``nnet.layers``:
    ``batchnorm``): importing the submodule by its old path leaves the function."""

    def __setattr__(self, name: str, value: Any) -> None:
        old = self.__dict__.get(name)
        if isinstance(value, types.ModuleType) and old is not None and old is not value:
            if not isinstance(old, types.ModuleType):
                return
        super().__setattr__(name, value)


if not any(isinstance(finder, _EngineAliases) for finder in sys.meta_path):
    sys.meta_path.insert(0, _EngineAliases())


def _ops_names() -> list[str]:
    return list(importlib.import_module("gradcheck.engine.ops").__all__)


@functools.cache
def _is_submodule(name: str) -> bool:
    here = Path(__file__).parent
    return (here / f"{name}.py").is_file() or (here / name / "__init__.py").is_file()


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    elif name in ENGINE_MODULES:
        value = importlib.import_module(f"{_ENGINE}.{name}")
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"gradcheck.{name}")
    elif name == "__all__":
        value = sorted({*_EXPORTS, *_ops_names(), *_SUBPACKAGES} - {"strategies"})
    elif _is_submodule(name):
        # `from gradcheck import graph` asks here first; the import system then loads
        # the submodule itself.
        raise AttributeError(name)
    elif not name.startswith("_") and name in _ops_names():
        value = getattr(importlib.import_module("gradcheck.engine.ops"), name)
    else:
        raise AttributeError(f"module 'gradcheck' has no attribute {name!r}")
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS, *_SUBPACKAGES, *_ops_names()})


if TYPE_CHECKING:  # static type checkers and IDEs see the eager imports
    from gradcheck.checking.checker import check, numerical_gradient
    from gradcheck.checking.resolve import resolve_target
    from gradcheck.checking.result import CheckResult, Failure
    from gradcheck.checking.target import Target
    from gradcheck.engine import linalg, nnet, random
    from gradcheck.engine._io import load, save
    from gradcheck.engine._utils.lock_management import (
        mem_guard_active,
        mem_guard_off,
        mem_guard_on,
        turn_memory_guarding_off,
        turn_memory_guarding_on,
    )
    from gradcheck.engine.graph import no_autodiff
    from gradcheck.engine.operation import BroadcastableOp, Operation, is_invalid_gradient
    from gradcheck.engine.ops import *
    from gradcheck.engine.ops.nondifferentiable import any, argmax, argmin
    from gradcheck.engine.tensor_base import Tensor, asarray, astensor, execute_op, tensor
    from gradcheck.engine.ufuncs import ufunc
    from gradcheck.errors import GradcheckError, InvalidBackprop, InvalidGradient, SkipGradient
    from gradcheck.search.description import describe
    from gradcheck.search.verifier import VerifyResult, verify
