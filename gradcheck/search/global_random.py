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
seed. Hypothesis's own generator (``hypothesis.core.threadlocal``'s, the one it draws
seeds from where a test has none; a search has one) is seeded per example alike and
put back once. Generators a user registered with ``hypothesis.register_random`` are
left as Hypothesis keeps them.

Hypothesis also reads the whole state of ``random`` (624 words, 25-40 us) before and
after each argument it draws, and compares them, to warn of a strategy that draws from
``random``: three reads and two comparisons per example, 0.1-0.2 ms. The strategies a
search draws from are gradcheck's own (``gradcheck.strategies``: they draw through
Hypothesis alone, never from ``random``; ``tests/search/test_global_random.py``), so
while a search runs, the ``random`` that ``hypothesis.control`` reads is a stand-in
whose ``getstate`` reads nothing (:class:`_StateUnread`). Should a later Hypothesis
rename these private names, nothing is swapped and Hypothesis does as it did
(``tests/search/test_global_random.py`` notices).
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
#: hypothesis.control's `random` while the stand-in is there; our handle on Hypothesis's
#: own generator (Hypothesis keeps handles by weak reference: held here while swapped).
_control_random: list[Any] = []
_held: list[_SeededPerExample] = []


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


class _StateUnread:
    """``random`` as ``hypothesis.control`` reads it while a search draws from
    gradcheck's strategies alone: ``getstate`` reads nothing (so no strategy is taken
    for one drawing from ``random``); every other name is ``random``'s."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def getstate(self) -> None:
        return None


def _own_ours(entropy: Any, generator: random.Random) -> _SeededPerExample:
    """Hypothesis's own generator, seeded as Hypothesis seeds it (``Random(seed)``'s
    state, made once per seed) and put back once."""
    return _SeededPerExample(
        lambda seed: generator.setstate(entropy._seeded_state(seed)[0]), generator.setstate
    )


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
        "_RKEY",
    )
    return entropy if all(hasattr(entropy, n) for n in names) else None


def _handles(entropy: Any) -> list[tuple[Any, Any, str]]:
    """(key, handle, which) of Hypothesis's handles on ``random``'s and NumPy's state
    and on its own generator of this thread, NumPy's made where not yet made."""
    entropy.get_seeder_and_restorer(0)  # (registers NumPy's, NumPy being loaded; seeds nothing)
    own = _own_generator() or _make_own_generator(entropy)
    found: list[tuple[Any, Any, str]] = []
    for key, handle in list(entropy.RANDOMS_TO_MANAGE.items()):
        if key == entropy._global_random_rkey and handle is random:
            found.append((key, handle, "random"))
        elif isinstance(handle, entropy.NumpyRandomWrapper):
            found.append((key, handle, "numpy"))
        elif own is not None and handle is own:
            found.append((key, handle, "own"))
    return found


def _own_generator() -> random.Random | None:
    """Hypothesis's own generator of this thread, where it has made one."""
    try:
        from hypothesis.core import threadlocal

        own = threadlocal._hypothesis_global_random
    except (ImportError, AttributeError):  # pragma: no cover - moved in a later Hypothesis
        return None
    return own if type(own) is random.Random else None


def _make_own_generator(entropy: Any) -> random.Random | None:
    """Hypothesis's own generator of this thread, made and registered as Hypothesis
    makes it at the first example of a thread (``deterministic_PRNG``), but without
    the full collection and the walk of every object that ``register_random`` makes
    to warn of a generator nothing else holds (the thread's handle holds this one):
    0.1 s of CPU with torch loaded, on a torch target's critical path
    (``benchmarks/torch_target_time.py``). None where Hypothesis keeps it elsewhere."""
    try:
        from hypothesis.core import threadlocal
    except ImportError:  # pragma: no cover - moved in a later Hypothesis
        return None
    if getattr(threadlocal, "_hypothesis_global_random", False) is not None:
        return None
    own = threadlocal._hypothesis_global_random = random.Random()
    entropy.RANDOMS_TO_MANAGE[next(entropy._RKEY)] = own
    return own


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
        if which == "own":
            state = handle.getstate()
            _held.append(_own_ours(entropy, handle))
            ours = _held[-1]
        else:
            state = random.getstate() if which == "random" else np.random.get_state()
            ours = _OURS[which]
        _saved.append((key, handle, state))
        entropy.RANDOMS_TO_MANAGE[key] = ours
    _seeded_state.append(entropy._seeded_state)
    entropy._seeded_state = functools.lru_cache(maxsize=16)(entropy._seeded_state)
    control = _control()
    if control is not None:
        _control_random.append(control.random)
        control.random = _StateUnread(control.random)


def _control() -> Any | None:
    """``hypothesis.control`` where it reads ``random`` by that name."""
    try:
        import hypothesis.control as control
    except ImportError:  # pragma: no cover - moved in a later Hypothesis
        return None
    return control if hasattr(getattr(control, "random", None), "getstate") else None


def _swap_out() -> None:
    import numpy as np

    entropy = _entropy()
    if _control_random:
        control = _control()
        if control is not None:
            control.random = _control_random.pop()
        _control_random.clear()
    if entropy is not None and _seeded_state:
        entropy._seeded_state = _seeded_state.pop()
    while _saved:
        key, handle, state = _saved.pop()
        if entropy is not None:
            entropy.RANDOMS_TO_MANAGE[key] = handle
        if handle is random:
            random.setstate(state)
        elif isinstance(handle, random.Random):
            handle.setstate(state)
        else:
            np.random.set_state(state)
    _held.clear()
