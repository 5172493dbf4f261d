"""Where a setting comes from: the one order, and the one function that applies it.

A check's settings (shapes, domain, tolerances, seed...) can be given in several places.
Every caller (:func:`gradcheck.verify`, the ``gradcheck`` command, the pytest plugin)
merges its sources with :func:`layered`, naming each source by its layer, so the order
is written here and nowhere else. Weakest first:

============  ===========================================================================
layer         what it holds
============  ===========================================================================
defaults      the caller's fallbacks: :data:`gradcheck.search.verifier.DEFAULTS`, the
              run's seed of ``gradcheck verify``, the pytest plugin's seed 0
described     the op's own ``@gradcheck.describe(...)``
project       the ``[tool.gradcheck]`` table's defaults
entry         the target's ``[[tool.gradcheck.targets]]`` entry
baseline      what ``--baseline`` keeps of the target (its seed, to check the same
              examples)
ini           pytest's ini keys (``gradcheck_seed``...)
options       the command line (``gradcheck verify --seed``, ``pytest --gradcheck-seed``)
marker        ``@pytest.mark.gradcheck(...)`` (the nearest marker already won)
call          the keywords of the call itself (``gradcheck.verify(op, seed=3)``, a fixture
              call)
============  ===========================================================================

A value of ``None`` means "not set here" and hides nothing below it. This module is
plain Python (the pytest plugin imports it in every test session).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["LAYERS", "layered"]

#: The layers, weakest first (see the module docstring).
LAYERS: tuple[str, ...] = (
    "defaults",
    "described",
    "project",
    "entry",
    "baseline",
    "ini",
    "options",
    "marker",
    "call",
)


def layered(**sources: Mapping[str, Any] | None) -> dict[str, Any]:
    """Merge settings given per layer: a stronger layer's value replaces a weaker one's;
    ``None`` values (and ``None`` layers) are skipped.

    >>> layered(options={"seed": 3, "mode": None}, defaults={"seed": 0, "mode": "auto"})
    {'seed': 3, 'mode': 'auto'}

    Raises
    ------
    TypeError
        A source names no layer of :data:`LAYERS`.
    """
    unknown = sorted(set(sources) - set(LAYERS))
    if unknown:
        raise TypeError(f"unknown settings layer(s) {unknown}; the layers are {LAYERS}")
    merged: dict[str, Any] = {}
    for layer in LAYERS:
        for key, value in (sources.get(layer) or {}).items():
            if value is not None:
                merged[key] = value
    return merged
