"""The table of frameworks gradcheck bridges (torch, MyGrad, JAX), as data.

One row per framework: how its ops are recognised, the extra that installs it, the
module that bridges it (:mod:`gradcheck.checking.adapters`, which re-exports all of
this and does the bridging). Apart from the adapters so that the command can read it
without importing NumPy or the engine: it decides from a target module's text which
frameworks to import early (:func:`frameworks_imported`,
:mod:`gradcheck.frontend.preload`). Imports nothing heavy.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

__all__ = ["FRAMEWORKS", "Framework", "frameworks_imported", "preloaded_modules"]


@dataclass(frozen=True)
class Framework:
    """Everything gradcheck knows about one framework.

    Attributes
    ----------
    name : str
        What :func:`framework_of` returns and :func:`framework` takes (``"torch"``).
    label : str
        Its name in messages (``"PyTorch"``).
    extra : str
        The extra of gradcheck that installs it (``pip install '.[torch]'`` from a clone).
    packages : tuple of str
        Its top-level modules, the first the one to import: a function whose globals
        use one is its target; their frames are not the user's in a traceback.
    op_bases : tuple of str
        ``"module:Class"`` of the base classes whose subclasses are its op classes.
    adapter : str
        The module that bridges it to gradcheck's engine (``target``, ``forward_of``).
    op_instances : tuple of str
        ``"module:Class"`` of the classes whose instances (a user's subclasses' too)
        are ops that bring their own derivative: an ``nn.Module``, a
        ``jax.custom_vjp`` function. A module's such instances are its targets
        (:func:`gradcheck.frontend.loading.discover`).
    own_ops : bool
        Whether the framework's own subclasses of its ``op_bases`` are ops too (MyGrad's
        ``Operation`` subclasses, wherever they are defined); else only a user's are
        (torch's own Functions and modules are its internals).
    layouts : bool
        Whether its ops see how an input lies in memory (torch's strides), so that
        a check hands them non-contiguous inputs too
        (:mod:`gradcheck.checking.contiguity`); JAX's arrays have no layout.
    first_use : tuple of str
        Modules of the framework that its first backward imports (lazily, at a cost):
        a run imports them once, before it forks a process per target
        (:func:`preloaded_modules`).
    """

    name: str
    label: str
    extra: str
    packages: tuple[str, ...]
    op_bases: tuple[str, ...]
    adapter: str
    op_instances: tuple[str, ...] = ()
    own_ops: bool = False
    layouts: bool = False
    first_use: tuple[str, ...] = ()

    def bridge(self) -> ModuleType:
        """The adapter module (importing it imports no framework)."""
        return importlib.import_module(self.adapter)


#: The frameworks, one row each. Adding one: a row here and its ``_<name>.py``.
FRAMEWORKS: tuple[Framework, ...] = (
    Framework(
        name="torch",
        label="PyTorch",
        extra="torch",
        packages=("torch",),
        op_bases=("torch.autograd.function:Function", "torch.nn.modules.module:Module"),
        adapter="gradcheck.checking.adapters._torch",
        op_instances=("torch.nn.modules.module:Module",),
        layouts=True,
        # (torch.autograd.grad with a grad_outputs tensor imports symbolic_shapes and
        # SymPy, about 0.3 s of CPU: the adapter runs torch's engine without it.)
    ),
    Framework(
        name="mygrad",
        label="MyGrad",
        extra="mygrad",
        packages=("mygrad",),
        op_bases=("mygrad.operation_base:Operation",),
        adapter="gradcheck.checking.adapters._mygrad",
        # MyGrad's own ops (its FocalLoss, SoftmaxCrossEntropy) are Operation
        # subclasses like a user's: a user may import one and check it.
        own_ops=True,
    ),
    Framework(
        name="jax",
        label="JAX",
        extra="jax",
        packages=("jax", "jaxlib"),
        op_bases=(),  # functions only: jax.custom_vjp/custom_jvp objects are instances
        adapter="gradcheck.checking.adapters._jax",
        op_instances=(
            "jax._src.custom_derivatives:custom_vjp",
            "jax._src.custom_derivatives:custom_jvp",
        ),
    ),
)


#: ``import torch``, ``from jax import numpy``... at the start of a line (indented too).
_IMPORT_LINE = re.compile(r"^[ \t]*(?:import|from)[ \t]+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)


def frameworks_imported(source: str) -> list[Framework]:
    """The frameworks whose packages a module's source text imports, in table order,
    read from the text alone (nothing is run: what is a comment or a string, or an
    import that never runs, counts too; an import the text does not spell, such as
    ``importlib.import_module("torch")``, does not).

    >>> [fw.name for fw in frameworks_imported("from torch import nn")]
    ['torch']
    """
    imported = set(_IMPORT_LINE.findall(source))
    return [fw for fw in FRAMEWORKS if imported.intersection(fw.packages)]


def preloaded_modules(frameworks: Sequence[Framework]) -> tuple[str, ...]:
    """What a run imports before it forks its targets' processes, for targets of
    ``frameworks``: each one's package and its :attr:`Framework.first_use` modules.

    >>> preloaded_modules([FRAMEWORKS[0]])
    ('torch',)
    """
    return tuple(m for fw in frameworks for m in (fw.packages[0], *fw.first_use))
