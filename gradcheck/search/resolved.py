"""A target resolved once, at the edge, into the object the search, the checker and
the reports use (:class:`ResolvedTarget`).

What the user names (an op class, a function, another framework's op, or a
:class:`~gradcheck.search.results.LoadedTarget` the command loaded) is read once: its
``@gradcheck.describe`` description, its framework, its signature and its name, and
the checker's :class:`~gradcheck.checking.target.Target` (arrays in, arrays out:
:func:`~gradcheck.checking.resolve.resolve_target`). :func:`gradcheck.verify` makes it
where it is given the target, and hands it down: the settings are checked against its
signature, the search draws its inputs by it, each example's check runs its
``target``, and the result is named by its ``name``. Nothing downstream reads the raw
object again (``tests/test_resolve_once.py`` counts the readings of one search).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gradcheck.checking.resolve import resolve_target
from gradcheck.checking.signature import OpSignature
from gradcheck.checking.target import Target, instance_name
from gradcheck.search.description import Description, description_of
from gradcheck.search.results import LoadedTarget, target_label

__all__ = ["ResolvedTarget", "resolve", "description_and_name"]


@dataclass(frozen=True, eq=False)
class ResolvedTarget:
    """An op as the search, the checker and the reports see it, read once.

    Attributes
    ----------
    obj : object
        What the user named: the op class, the function, the framework's op.
    name : str
        How the reports name it (``module:Name``, as the command line does).
    target : Target
        What the checker runs (arrays in, arrays out), with the op's signature.
    description : Description or None
        What its ``@gradcheck.describe`` says (None: not described).
    """

    obj: Any
    name: str
    target: Target
    description: Description | None

    @property
    def signature(self) -> OpSignature:
        """The op's inputs and parameters (read when it was resolved)."""
        return self.target.signature

    @property
    def input_names(self) -> tuple[str, ...]:
        return self.target.signature.input_names

    @property
    def framework(self) -> str | None:
        """``"torch"``, ``"mygrad"``, ``"jax"``, or None for gradcheck's own ops."""
        return self.target.framework

    @property
    def qualname(self) -> str:
        """``module:QualName`` (or the name it was loaded under), the checker's name of
        the op."""
        return self.target.name


def description_and_name(target: Any) -> tuple[Any, Description | None, str]:
    """The first reading of what the user named, which cannot fail: (the object, its
    description, its name). The settings are checked against the description before
    the op is resolved (:func:`resolve`), so that a bad setting is reported first."""
    if isinstance(target, ResolvedTarget):
        return target.obj, target.description, target.name
    if isinstance(target, LoadedTarget):
        return target.obj, description_of(target.obj), target.name
    return target, description_of(target), target_label(target)


def resolve(
    target: Any, first: tuple[Any, Description | None, str] | None = None
) -> ResolvedTarget:
    """``target`` (an op, or a :class:`LoadedTarget`) resolved; ``first``: what
    :func:`description_and_name` read of it already. A :class:`ResolvedTarget` is
    returned as it is.

    Raises :class:`~gradcheck.errors.NotATarget` when it is not an op.
    """
    if isinstance(target, ResolvedTarget):
        return target
    obj, description, name = description_and_name(target) if first is None else first
    resolved = resolve_target(obj)
    if isinstance(target, LoadedTarget) or (_is_instance(obj) and instance_name(obj)):
        # (every op loaded by name is named as it was loaded, `mymod:layer`,
        # `ops/my_ops.py:Square`, `mymod:huber_bug` for `_make.<locals>.huber`: the
        # name that finds it again; an instance given in Python, whose class is no name
        # a user can replay with, by the name its module gives it)
        resolved = resolved.named(name)
    return ResolvedTarget(obj, name, resolved, description)


def _is_instance(obj: Any) -> bool:
    """An object that is neither a class nor a function (an ``nn.Module`` instance,
    a callable object), named by its class when nothing else names it."""
    return not isinstance(obj, type) and getattr(obj, "__qualname__", None) is None
