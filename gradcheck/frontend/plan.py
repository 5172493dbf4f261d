"""The targets a ``gradcheck verify`` run checks, each with its own settings
(:class:`RunItem`, :func:`plan_run`, :func:`listed_plan`).

A module of its own, apart from :mod:`gradcheck.cli`: the worker that imports the
targets runs :func:`listed_plan` and sends the command its items, so that
what it imports and unpickles needs neither the command nor click.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gradcheck.errors import EmptyModule, NothingToCheck

if TYPE_CHECKING:
    from gradcheck.frontend.config import ProjectConfig, TargetConfig
    from gradcheck.frontend.jobs import ListedTarget
    from gradcheck.search.verifier import LoadedTarget

__all__ = ["BUILTIN_TARGETS", "RunItem", "listed_plan", "plan_run"]


#: What ``gradcheck verify`` checks when no target is named: the engine's own ops.
BUILTIN_TARGETS = "gradcheck.builtin_targets"


@dataclass
class RunItem:
    """One target of a run and its own settings (keyword arguments of
    :func:`gradcheck.verify`); command-line options override them."""

    target: LoadedTarget | ListedTarget
    settings: dict[str, Any] = field(default_factory=dict)
    #: Where ``settings`` come from (the configuration file), for error messages.
    source: str | None = None
    #: The module the target was found in where a whole module was named (on the
    #: command line or in the configuration): its ``kwargs`` are then the module's, each
    #: target taking those it has (:func:`module_kwargs`).
    module: str | None = None


def plan_run(
    specs: Sequence[str],
    config: ProjectConfig | None = None,
    note: Callable[[str], None] | None = None,
    skipped: list[str] | None = None,
) -> list[RunItem]:
    """The targets a ``gradcheck verify`` run checks (``skipped`` receives what the
    modules named leave out, and why: :func:`gradcheck.frontend.loading.load_targets`).

    Named targets are loaded in order (all of them before any is checked, so that a
    typo fails fast). With none named, the targets of the project configuration run
    (``[[tool.gradcheck.targets]]``, each with the defaults overlaid by its own
    settings), or, without any, the built-in default :data:`BUILTIN_TARGETS`.

    A named target also takes the configuration's defaults, and the settings of an
    entry naming it (or its module), so that the replay command printed for a target
    of the configuration checks it the same way.

    A module that offers no target adds nothing (``note`` is told, when given); a run
    left with nothing to check raises :class:`~gradcheck.errors.NothingToCheck` (exit
    status 5), as does a configuration whose ``targets`` list is empty.
    """
    items: list[RunItem] = []
    empty: list[str] = []
    if not specs and config is not None and (config.targets or config.lists_targets):
        _make_project_importable(config)
        for listed in config.targets:
            module = _module_named(listed.target)
            for t in _targets_of(listed.target, empty, skipped):
                items.append(RunItem(t, config.options_for(listed), str(config.path), module))
        if not config.targets:
            empty.append(f"{config.path}: [tool.gradcheck] targets lists no target")
    else:
        defaults = dict(config.defaults) if config is not None else {}
        for spec in specs or [BUILTIN_TARGETS]:
            module = _module_named(spec)
            for t in _targets_of(spec, empty, skipped if specs else None):
                entry = _entry_for(config, t.name) if config is not None else None
                settings = config.options_for(entry) if config and entry else dict(defaults)
                items.append(RunItem(t, settings, str(config.path) if config else None, module))
    if not items:
        raise NothingToCheck(f"nothing to check: {'; '.join(empty)}")
    for message in empty:
        if note is not None:
            note(message)
    return items


def _targets_of(spec: str, empty: list[str], skipped: list[str] | None) -> list[LoadedTarget]:
    # A module without a target adds its message to `empty` (plan_run decides).
    from gradcheck.frontend.loading import load_targets

    try:
        return load_targets(spec, skipped=skipped)
    except EmptyModule as exc:
        empty.append(str(exc))
        return []


def listed_plan(
    specs: Sequence[str], config: ProjectConfig | None = None, verbose: bool = False
) -> tuple[list[RunItem], list[str] | None, list[str]]:
    """:func:`plan_run` as the command receives it from the worker that imported the
    targets: each target as a :class:`~gradcheck.frontend.jobs.ListedTarget`; when
    ``verbose``, what the modules leave out; and the notes of modules that offer none."""
    from gradcheck.frontend.jobs import listed

    skipped: list[str] | None = [] if verbose else None
    notes: list[str] = []
    items = [
        RunItem(listed(item.target), item.settings, item.source, item.module)  # type: ignore[arg-type]
        for item in plan_run(specs, config, notes.append, skipped)
    ]
    return items, skipped, notes


def _module_named(spec: str) -> str | None:
    """``spec`` where it names a whole module (no ``:Name``), else None."""
    from gradcheck.frontend.preload import split_spec

    return spec if split_spec(spec)[1] is None else None


def module_kwargs(items: Sequence[RunItem], settings: Sequence[dict[str, Any]]) -> list[str]:
    """Give each target of a module named whole the ``kwargs`` it has, of the module's
    (``--kwargs '{"eps": 0.5}'`` on a module whose ops take ``eps`` or nothing), in
    ``settings`` in place; the keys no target of its module has, one message each (a
    typo stays an error: exit 2)."""
    taken: dict[tuple[str, str], bool] = {}
    for item, s in zip(items, settings):
        kwargs = s.get("kwargs")
        keywords = getattr(item.target, "keywords", None)
        if item.module is None or not isinstance(kwargs, dict):
            continue
        for key in kwargs:
            taken[(item.module, key)] = taken.get((item.module, key), False) or (
                keywords is None or key in keywords
            )
        if keywords is not None:
            kept = {k: v for k, v in kwargs.items() if k in keywords}
            if kept:
                s["kwargs"] = kept
            else:
                del s["kwargs"]
    return [
        f"no op of {module} has a parameter {key!r} (gradcheck list {module} shows theirs)"
        for (module, key), found in taken.items()
        if not found
    ]


def _entry_for(config: ProjectConfig, name: str) -> TargetConfig | None:
    from gradcheck.frontend.loading import split_spec

    module, _ = split_spec(name)
    exact = [e for e in config.targets if e.target == name]
    whole_module = [e for e in config.targets if e.target == module]
    found = exact or whole_module
    return found[0] if found else None


def _make_project_importable(config: ProjectConfig) -> None:
    # Targets in the file are named relative to the project (the file's folder), which
    # need not be the working directory when the run starts in a subfolder.
    root = str(config.path.parent.resolve())
    if root not in sys.path:
        sys.path.insert(0, root)
