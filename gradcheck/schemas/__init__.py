"""JSON Schemas (draft 2020-12) of what gradcheck writes and reads, shipped in the package.

``verify``
    The document ``gradcheck verify --format json`` writes (its version 1:
    :mod:`gradcheck.frontend.render`).
``baseline``
    The file ``--save-baseline FILE`` writes and ``--baseline FILE`` reads
    (:mod:`gradcheck.frontend.baseline`).
``config``
    The ``[tool.gradcheck]`` table of ``pyproject.toml``
    (:mod:`gradcheck.frontend.config`), for editors and linters of TOML.

They are data: gradcheck itself validates with its own code and needs no JSON Schema
library. A consumer validates with one of its choice::

    import json, jsonschema, gradcheck.schemas
    jsonschema.validate(json.loads(output), gradcheck.schemas.load("verify"))

>>> sorted(names())
['baseline', 'config', 'verify']
>>> load("verify")["properties"]["version"]
{'const': 1}
"""

from __future__ import annotations

import json
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

__all__ = ["load", "names", "path"]

_NAMES = ("verify", "baseline", "config")


def names() -> tuple[str, ...]:
    """The schemas shipped: ``("verify", "baseline", "config")``."""
    return _NAMES


def path(name: str) -> Traversable:
    """The schema file of ``name`` (a :class:`~importlib.resources.abc.Traversable`:
    ``str()`` of it is the file's path in an installed package).

    Raises
    ------
    ValueError
        ``name`` is not one of :func:`names`.
    """
    if name not in _NAMES:
        raise ValueError(f"no schema named {name!r}; the schemas are {', '.join(_NAMES)}")
    return resources.files(__name__).joinpath(f"{name}.schema.json")


def load(name: str) -> dict[str, Any]:
    """The schema of ``name`` as a dict (a fresh copy at each call).

    Raises
    ------
    ValueError
        ``name`` is not one of :func:`names`.
    """
    schema: dict[str, Any] = json.loads(path(name).read_text(encoding="utf-8"))
    return schema
