"""NumPy's global random state through a search, as Hypothesis keeps it, at less cost.

Hypothesis seeds the global random generators before each example it runs (Python's
``random``, and NumPy's legacy ``numpy.random`` once NumPy is loaded) and puts back
their state after it, so that an op that draws from them (a dropout written with
``np.random.rand``) sees the same numbers whenever the same example is checked. For
NumPy that is a ``get_state`` and a ``set_state`` of the Mersenne Twister (624 words
copied each way) per example: 0.1-0.2 ms, a tenth of a 40x50 example of x·tanh(x)
(``benchmarks/xtanh_search_cost.py``) and of a built-in target's small one.

While gradcheck searches (:func:`numpy_seeded_per_example`), Hypothesis's handle on
NumPy's state is swapped for :class:`_SeededPerExample`: each example still starts
from ``numpy.random.seed`` of Hypothesis's seed, what the op sees is the same; the
state from before the search is saved once, when the first search running in the
process starts, and put back once, when the last one ends, rather than after every
example (nothing between two examples of a search draws from NumPy's global state:
Hypothesis draws from its own generators, gradcheck's strategies and checks from
seeded ``numpy.random.Generator`` objects). Should a later Hypothesis rename these
private names, nothing is swapped and Hypothesis does as it did
(``tests/search/test_global_random.py`` notices).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

_lock = threading.Lock()
_inside = 0  # searches running now, in every thread
#: (the key of Hypothesis's NumPy handle, the handle, NumPy's state before) while inside
_saved: list[tuple[Any, Any, Any]] = []


class _SeededPerExample:
    """Hypothesis's handle on NumPy's global state (``seed``, ``getstate``,
    ``setstate``) that seeds per example and leaves the putting back to
    :func:`numpy_seeded_per_example`'s end."""

    def seed(self, seed: int) -> None:
        import numpy as np

        np.random.seed(seed)

    def getstate(self) -> None:
        return None

    def setstate(self, state: Any) -> None:
        pass


#: The one handle (Hypothesis keeps its handles by weak reference).
_OURS = _SeededPerExample()


def _entropy() -> Any | None:
    """Hypothesis's module of global random states where it has what is swapped."""
    try:
        from hypothesis.internal import entropy
    except ImportError:  # pragma: no cover - moved in a later Hypothesis
        return None
    names = ("RANDOMS_TO_MANAGE", "NumpyRandomWrapper", "get_seeder_and_restorer")
    return entropy if all(hasattr(entropy, n) for n in names) else None


def _numpy_handle(entropy: Any) -> tuple[Any, Any] | None:
    """(key, handle) of Hypothesis's handle on NumPy's state, made where not yet made."""
    entropy.get_seeder_and_restorer(0)  # (registers it, NumPy being loaded; seeds nothing)
    for key, handle in list(entropy.RANDOMS_TO_MANAGE.items()):
        if isinstance(handle, entropy.NumpyRandomWrapper):
            return key, handle
    return None


def swapped() -> bool:
    """Whether Hypothesis now seeds NumPy through :class:`_SeededPerExample`."""
    entropy = _entropy()
    return entropy is not None and any(h is _OURS for h in entropy.RANDOMS_TO_MANAGE.values())


@contextlib.contextmanager
def numpy_seeded_per_example() -> Iterator[None]:
    """While inside, Hypothesis seeds NumPy's global state per example without
    saving and restoring it each time; on leaving (the last search in the process),
    the state from before is back (module docstring)."""
    global _inside
    with _lock:
        if _inside == 0:
            _swap_in()
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0:
                _swap_out()


def _swap_in() -> None:
    import numpy as np

    entropy = _entropy()
    found = None if entropy is None else _numpy_handle(entropy)
    if entropy is None or found is None:
        return
    key, handle = found
    _saved.append((key, handle, np.random.get_state()))
    entropy.RANDOMS_TO_MANAGE[key] = _OURS


def _swap_out() -> None:
    import numpy as np

    if not _saved:
        return
    key, handle, state = _saved.pop()
    entropy = _entropy()
    if entropy is not None:
        entropy.RANDOMS_TO_MANAGE[key] = handle
    np.random.set_state(state)
