"""The seed alone decides what gradcheck draws.

A replay line (``gradcheck verify X --seed S``) must draw the examples the failing run
drew, wherever it runs: the command (one job or several), :func:`gradcheck.verify`,
the pytest fixtures, collected ``pytest --gradcheck`` items, a Dask worker; with
gradcheck installed editable or not. Recent Hypothesis (6.170 here) breaks that by itself:
now and then it draws a number or string it found written in the source of a *local*
module (any module of ``sys.modules`` outside site-packages and the standard library:
the user's target, a conftest, gradcheck itself when installed editable). Which
modules are loaded differs from one path to the next, and so did the draws; a literal
added to gradcheck's own code moved them too.

Hypothesis offers no setting for it (6.170), so :func:`seed_alone_decides` sets it
aside while gradcheck draws, in this one place: the pool of local literals reads as
empty, and the cache of literals allowed per kind of draw is one of our own (its
entries hold that pool, so Hypothesis's would serve literals found before). Hypothesis's
fixed list of interesting numbers (0, 1, the float limits...) is kept; it is the same
everywhere. Should a later Hypothesis rename these private names, nothing is replaced
and draws are what Hypothesis makes them, as before (``tests/search/test_draws.py`` notices).

Outside gradcheck's searches (a user's own Hypothesis tests in the same pytest run),
Hypothesis is as it was: the names are put back when the last search running in the
process ends (searches may run in threads side by side: a Dask worker's).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

#: The private names of ``hypothesis.internal.conjecture.providers`` replaced while
#: gradcheck draws.
HOOKS = ("_get_local_constants", "CONSTANTS_CACHE")

_lock = threading.Lock()
_inside = 0  # searches running now, in every thread
_saved: dict[str, Any] = {}
_ours: dict[str, Any] = {}


def _providers() -> Any | None:
    """Hypothesis's providers module where it has every hook, else None."""
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - moved in a later Hypothesis
        return None
    if not all(hasattr(providers, name) for name in HOOKS):
        return None
    return providers


def _replacements(providers: Any) -> dict[str, Any]:
    if not _ours:
        from hypothesis.internal.constants_ast import Constants

        nothing_local = Constants()
        _ours["_get_local_constants"] = lambda: nothing_local
        # The same kind of cache, empty: it only ever holds draws from the fixed list.
        _ours["CONSTANTS_CACHE"] = type(providers.CONSTANTS_CACHE)(1024)
    return _ours


def replaced() -> bool:
    """Whether the local literals are set aside now (inside :func:`seed_alone_decides`,
    with a Hypothesis that has the hooks)."""
    providers = _providers()
    return providers is not None and providers._get_local_constants is _ours.get(
        "_get_local_constants"
    )


@contextlib.contextmanager
def seed_alone_decides() -> Iterator[None]:
    """While inside, Hypothesis draws nothing from the source of loaded modules: the
    seed and the strategy alone decide the draws (module docstring)."""
    global _inside
    with _lock:
        if _inside == 0:
            providers = _providers()
            if providers is not None:
                for name, value in _replacements(providers).items():
                    _saved[name] = getattr(providers, name)
                    setattr(providers, name, value)
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _saved:
                providers = _providers()
                for name, value in _saved.items():
                    setattr(providers, name, value)
                _saved.clear()
