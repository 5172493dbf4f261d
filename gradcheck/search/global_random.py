"""The global random states through a search, as Hypothesis keeps them, at less cost.

Hypothesis seeds the global random generators before each example it runs (Python's
``random``, and NumPy's legacy ``numpy.random`` once NumPy is loaded) and puts back
their state after it, so that an op that draws from them (a dropout written with
``np.random.rand``) sees the same numbers whenever the same example is checked. That is
a ``getstate`` and a ``setstate`` of each Mersenne Twister (624 words copied each way,
NumPy's through a dict) and a fresh ``Random(0)``'s state and its hash, per example:
0.1-0.3 ms, a tenth of a 40x50 example of x·tanh(x)
(``benchmarks/xtanh_search_cost.py``) and of a built-in target's small one.

While gradcheck searches (:func:`seeded_per_example`), Hypothesis's handles on
the two global states are swapped for :class:`_SeededPerExample`: each example still
starts from the state Hypothesis seeds (``random.setstate`` of ``Random(0)``'s state,
``numpy.random.seed(0)``), so what the op sees is the same; the states from before the
search are saved once, when the first search running in the process starts, and put
back once, when the last one ends, rather than after every example (nothing between
two examples of a search draws from the global states: Hypothesis draws from its own
generators, gradcheck's strategies and checks from seeded ``numpy.random.Generator``
objects); and ``Random(seed)``'s state, a function of the seed alone, is made once per
seed. Generators a user registered with ``hypothesis.register_random`` are left as
Hypothesis keeps them. Should a later Hypothesis rename these private names, nothing
is swapped and Hypothesis does as it did (``tests/search/test_global_random.py``
notices).
"""

from __future__ import annotations

import contextlib
import functools
import random
import threading
from collections.abc import Callable, Iterator
from typing import Any

_lock = threading.Lock()
_inside = 0  # searches running now, in every thread
#: (the key of a Hypothesis handle, the handle, the state before) while inside
_saved: list[tuple[Any, Any, Any]] = []
_seeded_state: list[Any] = []  # Hypothesis's function, while ours stands in


class _SeededPerExample:
    """A Hypothesis handle on a global random state (``seed``, ``getstate``,
    ``setstate``) that seeds per example and leaves the putting back to
    :func:`seeded_per_example`'s end: ``getstate`` saves nothing, and
    ``setstate`` of that nothing does nothing."""

    def __init__(self, seed: Callable[[Any], None], setstate: Callable[[Any], Any]) -> None:
        self._seed, self._setstate = seed, setstate

    def seed(self, seed: Any) -> None:
        self._seed(seed)

    def getstate(self) -> None:
        return None

    def setstate(self, state: Any) -> None:
        if state is not None:
            self._setstate(state)


def _numpy_ours() -> _SeededPerExample:
    import numpy as np

    return _SeededPerExample(np.random.seed, np.random.set_state)


#: Ours, one per global state (Hypothesis keeps its handles by weak reference).
_OURS: dict[str, _SeededPerExample] = {}


def _entropy() -> Any | None:
    """Hypothesis's module of global random states where it has what is swapped."""
    try:
        from hypothesis.internal import entropy
    except ImportError:  # pragma: no cover - moved in a later Hypothesis
        return None
    names = (
        "RANDOMS_TO_MANAGE",
        "NumpyRandomWrapper",
        "get_seeder_and_restorer",
        "_global_random_rkey",
        "_seeded_state",
    )
    return entropy if all(hasattr(entropy, n) for n in names) else None


def _handles(entropy: Any) -> list[tuple[Any, Any, str]]:
    """(key, handle, which) of Hypothesis's handles on ``random``'s and NumPy's state,
    NumPy's made where not yet made."""
    entropy.get_seeder_and_restorer(0)  # (registers NumPy's, NumPy being loaded; seeds nothing)
    found = []
    for key, handle in list(entropy.RANDOMS_TO_MANAGE.items()):
        if key == entropy._global_random_rkey and handle is random:
            found.append((key, handle, "random"))
        elif isinstance(handle, entropy.NumpyRandomWrapper):
            found.append((key, handle, "numpy"))
    return found


def swapped() -> bool:
    """Whether Hypothesis now seeds the global states through :class:`_SeededPerExample`."""
    entropy = _entropy()
    return entropy is not None and any(
        isinstance(h, _SeededPerExample) for h in entropy.RANDOMS_TO_MANAGE.values()
    )


@contextlib.contextmanager
def seeded_per_example() -> Iterator[None]:
    """While inside, Hypothesis seeds the global random states per example without
    saving and restoring them each time; on leaving (the last search in the
    process), the states from before are back (module docstring)."""
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
    if entropy is None:
        return
    if not _OURS:
        _OURS["random"] = _SeededPerExample(random.seed, random.setstate)
        _OURS["numpy"] = _numpy_ours()
    for key, handle, which in _handles(entropy):
        state = random.getstate() if which == "random" else np.random.get_state()
        _saved.append((key, handle, state))
        entropy.RANDOMS_TO_MANAGE[key] = _OURS[which]
    _seeded_state.append(entropy._seeded_state)
    entropy._seeded_state = functools.lru_cache(maxsize=16)(entropy._seeded_state)


def _swap_out() -> None:
    import numpy as np

    entropy = _entropy()
    if entropy is not None and _seeded_state:
        entropy._seeded_state = _seeded_state.pop()
    while _saved:
        key, handle, state = _saved.pop()
        if entropy is not None:
            entropy.RANDOMS_TO_MANAGE[key] = handle
        if handle is random:
            random.setstate(state)
        else:
            np.random.set_state(state)
