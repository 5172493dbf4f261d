"""The engine's differentiable operations, one module per family as in NumPy's
documentation. Every public function of a family (its ``__all__``) is exported here and
from ``gradcheck``; ``gradcheck.linalg`` and ``gradcheck.nnet`` hold the rest.

Each family module holds the documented functions; their derivative rules (the
Operation subclasses) are in :mod:`gradcheck.ops._rules`, which the family re-exports.
The rules sit below :mod:`gradcheck.tensor_base` (its operators and methods apply
them) and the families above it (they call ``execute_op``), so this package must not
import the families when the rules are imported: they load on first use of a name
here (PEP 562), as ``gradcheck``'s own names do.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: The family modules, in the order of the documentation.
FAMILY_NAMES = (
    "arithmetic",
    "exp_log",
    "trigonometric",
    "hyperbolic",
    "misc",
    "reductions",
    "linalg",
    "shape",
    "joining",
    "tiling",
    "indexing",
    "sorting",
    "special",
    "creation",
)


def _load() -> dict[str, Any]:
    """Import every family and make its public functions, ``FAMILIES`` and
    ``__all__`` names of this package."""
    families = tuple(importlib.import_module(f"{__name__}.{name}") for name in FAMILY_NAMES)
    names: dict[str, Any] = {"FAMILIES": families}
    for family in families:
        names.update((name, getattr(family, name)) for name in family.__all__)
    names["__all__"] = sorted({name for family in families for name in family.__all__})
    globals().update(names)
    return names


def load_families() -> tuple[Any, ...]:
    """Import every family (each registers its NumPy overrides as it is imported, see
    :mod:`gradcheck._utils.overrides`) and return them, in the documentation's order."""
    families: tuple[Any, ...] = _load()["FAMILIES"]
    return families


def __getattr__(name: str) -> Any:
    if name in FAMILY_NAMES:
        return importlib.import_module(f"{__name__}.{name}")
    if name.startswith("__") and name != "__all__":
        raise AttributeError(name)  # (what the import system probes for)
    found = _load()
    if name in found:
        return found[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_load()})


if TYPE_CHECKING:  # static type checkers see the eager imports
    from gradcheck.engine.ops.arithmetic import *
    from gradcheck.engine.ops.creation import *
    from gradcheck.engine.ops.exp_log import *
    from gradcheck.engine.ops.hyperbolic import *
    from gradcheck.engine.ops.indexing import *
    from gradcheck.engine.ops.joining import *
    from gradcheck.engine.ops.linalg import *
    from gradcheck.engine.ops.misc import *
    from gradcheck.engine.ops.reductions import *
    from gradcheck.engine.ops.shape import *
    from gradcheck.engine.ops.sorting import *
    from gradcheck.engine.ops.special import *
    from gradcheck.engine.ops.tiling import *
    from gradcheck.engine.ops.trigonometric import *
