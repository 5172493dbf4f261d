"""Which frameworks a run's targets use, known before anything of the user's runs.

Importing a framework is most of a small run's time (``import torch``: seconds). The
command knows the targets' modules from their specs, so it reads their source text
(never runs it: the command runs no user code) for the frameworks they import
(:func:`gradcheck.checking.frameworks.frameworks_imported`). The worker that will load
the targets starts importing those frameworks at once
(:meth:`gradcheck.frontend.runner.Run.preload`), and the command says what it is
loading (``loading torch...``) instead of nothing for seconds.

A guess from the text is only a head start: a module that imports torch through a
helper module, or behind ``importlib``, is loaded all the same, without it; one that
names torch in a comment costs an import the run did not need. This module imports
nothing heavy, NumPy included (the command uses it before its first line).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gradcheck.checking.frameworks import Framework

__all__ = ["frameworks_of", "is_path", "module_source", "split_spec"]

#: A module's source text longer than this is not read (it is not a guess worth it).
MAX_SOURCE_BYTES = 4 << 20


def split_spec(spec: str) -> tuple[str, str | None]:
    """Split ``"module:Name"`` into ``("module", "Name")``; a bare module gives
    ``("module", None)``.

    Only the last ``:`` followed by a dotted identifier separates the name, so a
    Windows drive letter (``C:\\ops.py``) stays part of the path.

    >>> split_spec("pkg.mod:Ops.Mul")
    ('pkg.mod', 'Ops.Mul')
    >>> split_spec("ops/my_ops.py")
    ('ops/my_ops.py', None)
    """
    module, sep, name = spec.rpartition(":")
    if sep and module and all(part.isidentifier() for part in name.split(".")):
        return module, name
    return spec, None


def is_path(module: str) -> bool:
    """Whether a spec's module part is a file path (``ops/my_ops.py``), not a dotted name."""
    return module.endswith(".py") or "/" in module or os.sep in module


def module_source(module: str, folders: Sequence[str]) -> str | None:
    """The source text of the module a spec names, found as import would find it (in
    ``folders``, the working directory first, then on ``sys.path``) without importing
    anything; None when it is not a plain ``.py`` file there (a compiled or namespace
    module, a zip)."""
    if is_path(module):
        candidates = [Path(folder, module) for folder in folders]
    else:
        parts = module.split(".")
        if not all(part.isidentifier() for part in parts):
            return None
        candidates = []
        for folder in [*folders, *sys.path]:
            base = Path(folder or os.curdir, *parts)
            candidates += [base.with_name(base.name + ".py"), base / "__init__.py"]
    for path in candidates:
        try:
            if path.is_file() and path.stat().st_size <= MAX_SOURCE_BYTES:
                return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return None


def frameworks_of(specs: Sequence[str], folders: Sequence[str]) -> list[Framework]:
    """The frameworks the modules of ``specs`` import, as their source text says, each
    once, in the table's order (``folders``: where the modules are looked for first,
    the working directory among them)."""
    from gradcheck.checking.frameworks import FRAMEWORKS, frameworks_imported

    found: set[str] = set()
    for spec in specs:
        source = module_source(split_spec(spec)[0], folders)
        if source is not None:
            found.update(fw.name for fw in frameworks_imported(source))
    return [fw for fw in FRAMEWORKS if fw.name in found]
