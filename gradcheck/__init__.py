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
    "no_autodiff": "gradcheck.graph",
    "mem_guard_active": "gradcheck._utils.lock_management",
    "mem_guard_off": "gradcheck._utils.lock_management",
    "mem_guard_on": "gradcheck._utils.lock_management",
    "turn_memory_guarding_off": "gradcheck._utils.lock_management",
    "turn_memory_guarding_on": "gradcheck._utils.lock_management",
    "BroadcastableOp": "gradcheck.operation",
    "Operation": "gradcheck.operation",
    "is_invalid_gradient": "gradcheck.operation",
    "any": "gradcheck.ops.nondifferentiable",
    "argmax": "gradcheck.ops.nondifferentiable",
    "argmin": "gradcheck.ops.nondifferentiable",
    "load": "gradcheck._io",
    "save": "gradcheck._io",
    "Tensor": "gradcheck.tensor_base",
    "asarray": "gradcheck.tensor_base",
    "astensor": "gradcheck.tensor_base",
    "execute_op": "gradcheck.tensor_base",
    "tensor": "gradcheck.tensor_base",
    "ufunc": "gradcheck.ufuncs",
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
        "gradcheck._dtype_mirrors",
        "bool_ double float16 float32 float64 half int8 int16 int32 int64 intp "
        "longdouble single uint8 uint16 uint32 uint64 uintp",
    ),
    ("gradcheck.constants", "e euler_gamma inf nan newaxis pi"),
    (
        "gradcheck.no_grad_funcs",
        "allclose bincount can_cast ceil copyto divmod equal floor floor_divide fmod "
        "greater greater_equal isclose isfinite isinf isnan isnat less less_equal "
        "logical_and logical_not logical_or logical_xor may_share_memory "
        "min_scalar_type mod not_equal remainder result_type rint shape "
        "shares_memory sign signbit trunc",
    ),
):
    _EXPORTS.update(dict.fromkeys(_names.split(), _module))
_SUBPACKAGES = ("linalg", "nnet", "random", "strategies")


def _ops_names() -> list[str]:
    return list(importlib.import_module("gradcheck.ops").__all__)


@functools.cache
def _is_submodule(name: str) -> bool:
    here = Path(__file__).parent
    return (here / f"{name}.py").is_file() or (here / name / "__init__.py").is_file()


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"gradcheck.{name}")
    elif name == "__all__":
        value = sorted({*_EXPORTS, *_ops_names(), *_SUBPACKAGES} - {"strategies"})
    elif _is_submodule(name):
        # `from gradcheck import graph` asks here first; the import system then loads
        # the submodule itself.
        raise AttributeError(name)
    elif not name.startswith("_") and name in _ops_names():
        value = getattr(importlib.import_module("gradcheck.ops"), name)
    else:
        raise AttributeError(f"module 'gradcheck' has no attribute {name!r}")
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS, *_SUBPACKAGES, *_ops_names()})


if TYPE_CHECKING:  # static type checkers and IDEs see the eager imports
    from gradcheck import linalg, nnet, random
    from gradcheck._io import load, save
    from gradcheck._utils.lock_management import (
        mem_guard_active,
        mem_guard_off,
        mem_guard_on,
        turn_memory_guarding_off,
        turn_memory_guarding_on,
    )
    from gradcheck.checking.checker import check, numerical_gradient
    from gradcheck.checking.resolve import resolve_target
    from gradcheck.checking.result import CheckResult, Failure
    from gradcheck.checking.target import Target
    from gradcheck.errors import GradcheckError, InvalidBackprop, InvalidGradient, SkipGradient
    from gradcheck.graph import no_autodiff
    from gradcheck.operation import BroadcastableOp, Operation, is_invalid_gradient
    from gradcheck.ops import *
    from gradcheck.ops.nondifferentiable import any, argmax, argmin
    from gradcheck.search.description import describe
    from gradcheck.search.verifier import VerifyResult, verify
    from gradcheck.tensor_base import Tensor, asarray, astensor, execute_op, tensor
    from gradcheck.ufuncs import ufunc
