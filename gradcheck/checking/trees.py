"""Inputs that are trees of arrays (JAX's pytrees): a dict, a list or tuple, a
dataclass, nested, whose leaves are arrays.

A JAX function of a parameter dict (``loss(params, x)`` with
``params = {"dense": {"w": w, "b": b}}``), or a torch function of a dict of tensors,
is checked leaf by leaf: :func:`flatten` makes each leaf an input of its own (the
checker's inputs are arrays), :meth:`Tree.rebuild` puts the op's tensors back in the
tree's shape before the op is called, and :func:`paths` names each leaf as the user
wrote it (``params['dense']['w']``), so that a failure at a leaf says which one.

Only the containers Python has are looked into (mappings, lists, tuples, named tuples,
dataclass instances): this module imports no framework. A list or tuple of numbers
is one array, as NumPy reads it, not a tree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.errors import printable

__all__ = ["Tree", "flatten", "is_tree", "of_specs", "paths", "rebuild"]


@dataclass(frozen=True, eq=False)
class Tree:
    """The shape of one tree input: its container and each child's (a child that is
    None is a leaf).

    Attributes
    ----------
    kind : {"mapping", "sequence", "dataclass"}
    cls : type
        The container's class (rebuilt as it was: a ``tuple``, a named tuple, a
        user's dataclass).
    keys : tuple
        The mapping's keys, the sequence's positions or the dataclass's field names.
    children : tuple of Tree or None
    """

    kind: str
    cls: type
    keys: tuple[Any, ...]
    children: tuple[Tree | None, ...]

    @property
    def size(self) -> int:
        """How many leaves the tree has."""
        return sum(1 if c is None else c.size for c in self.children)

    def rebuild(self, leaves: Iterator[Any]) -> Any:
        """The tree with its leaves taken in order from ``leaves``."""
        values = [next(leaves) if c is None else c.rebuild(leaves) for c in self.children]
        if self.kind == "mapping":
            try:
                return self.cls(zip(self.keys, values))
            except TypeError:  # a mapping class made otherwise: a dict will do
                return dict(zip(self.keys, values))
        if self.kind == "dataclass":
            return self.cls(**dict(zip(self.keys, values)))
        if hasattr(self.cls, "_fields"):  # a named tuple
            return self.cls(*values)
        return self.cls(values)

    def paths(self, prefix: str) -> list[str]:
        """Each leaf's path, ``prefix['key'][0].field``."""
        out: list[str] = []
        for key, child in zip(self.keys, self.children):
            # a key is any object the user chose: its repr, printable
            key_text = str(key) if self.kind == "dataclass" else f"[{printable(repr(key))}]"
            here = f"{prefix}.{key_text}" if self.kind == "dataclass" else prefix + key_text
            out.extend([here] if child is None else child.paths(here))
        return out


def _is_leaf_array(value: Any) -> bool:
    return hasattr(value, "shape") and not isinstance(value, np.generic)


def is_tree(value: Any) -> bool:
    """True for an input that is a tree of arrays, not one array: a mapping, a dataclass
    instance, or a list or tuple with an array or a tree in it."""
    if type(value) is np.ndarray:  # (the usual input: no ABC's isinstance to ask)
        return False
    if isinstance(value, Mapping):
        return True
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return True
    if isinstance(value, (list, tuple)):
        return any(_is_leaf_array(v) or is_tree(v) for v in value)
    return False


def _structure(value: Any, leaves: list[Any]) -> Tree | None:
    if not is_tree(value):
        leaves.append(value)
        return None
    if isinstance(value, Mapping):
        kind, keys, items = "mapping", tuple(value), list(value.values())
    elif isinstance(value, (list, tuple)):
        kind, keys, items = "sequence", tuple(range(len(value))), list(value)
    else:
        names = tuple(f.name for f in dataclasses.fields(value) if f.init)
        kind, keys, items = "dataclass", names, [getattr(value, n) for n in names]
    children = tuple(_structure(item, leaves) for item in items)
    return Tree(kind, type(value), keys, children)


def flatten(values: Sequence[Any]) -> tuple[list[Any], tuple[Tree | None, ...]]:
    """The leaves of ``values`` (one op input each, trees or arrays), in order, and
    each input's :class:`Tree` (None for an input that is an array)."""
    leaves: list[Any] = []
    trees = tuple(_structure(v, leaves) for v in values)
    return leaves, trees


def rebuild(leaves: Sequence[Any], trees: Sequence[Tree | None]) -> list[Any]:
    """The op's inputs from their leaves (:func:`flatten` undone); leaves past the
    trees' (an op's own parameters) follow as they are."""
    it = iter(leaves)
    out = [next(it) if t is None else t.rebuild(it) for t in trees]
    out.extend(it)
    return out


def paths(names: Sequence[str], trees: Sequence[Tree | None]) -> list[str]:
    """Each leaf's name: the input's name (``names``, from the op's signature; ``input
    k`` past them), then its path in the tree."""
    out: list[str] = []
    for k, tree in enumerate(trees):
        name = names[k] if k < len(names) else f"input {k}"
        out.extend([name] if tree is None else tree.paths(name))
    return out


def _spec_structure(spec: Any, leaves: list[Any], top: bool) -> Tree | None:
    if isinstance(spec, Mapping):
        keys = tuple(spec)
        children = tuple(_spec_structure(spec[k], leaves, False) for k in keys)
        return Tree("mapping", dict, keys, children)
    if isinstance(spec, list) and not top:
        children = tuple(_spec_structure(s, leaves, False) for s in spec)
        return Tree("sequence", list, tuple(range(len(spec))), children)
    leaves.append(spec)
    return None


def of_specs(specs: Sequence[Any]) -> tuple[list[Any], tuple[Tree | None, ...]]:
    """The leaves' shape specs of ``specs`` (one per op input: a shape spec, or a tree
    of them: a dict whose values are specs, dicts, or lists of them), in order, and
    each input's :class:`Tree` (None for a shape spec). A tuple is a shape
    (``(3, "k")``); a list is a list of leaves only inside a dict.

    >>> leaves, trees = of_specs([{"dense": {"w": "n,k", "b": "k"}}, "m,n"])
    >>> leaves, paths(["params", "x"], trees)
    (['n,k', 'k', 'm,n'], ["params['dense']['w']", "params['dense']['b']", 'x'])
    """
    leaves: list[Any] = []
    trees = tuple(_spec_structure(s, leaves, True) for s in specs)
    return leaves, trees
