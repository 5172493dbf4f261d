"""Memory guarding: the arrays a graph needs are read-only while it needs them.

A tensor's ``data`` (and an array given to an op) is what the graph's ``backward``
reads: writing it in place between the forward pass and backprop would silently
corrupt the gradients. So, as in MyGrad, while memory guarding is on (the default),
an array that takes part in a graph has ``writeable=False`` as long as a graph that
needs it exists; it gets its writeability back when that graph is cleared
(``backward``, ``clear_graph``) or garbage-collected, and an array that was read-only
before stays read-only.

What is locked, and when (the engine's part is in ``gradcheck.tensor_base``): an
array can only be written by code that holds it, and outside the engine it is held
only once it has been handed out: an array the user gave (an op input that is not a
tensor, ``Tensor(x, copy=False)``), or one read through ``Tensor.data`` or
``numpy.asarray(tensor)``. The engine locks such *exposed* arrays: when an op takes
a tensor whose array is exposed, and when the array of a tensor that is already in a
graph is read. An array the engine made and never handed out (the output of an op
nobody looked at) needs no lock, since nobody can write it, and costs nothing: so
the per-op path pays for guarding only where there is something to guard. Seen from
outside, every array of a graph is read-only whenever one can look at it.

Each lock is counted per array (:data:`_array_counter`, keyed by ``id``; the array
itself and its writeability before the first lock are in :data:`_array_tracker`),
and the locks are held by :class:`_Locks` objects that the graph keeps (on the op
that needs the arrays): when the op is dropped, its locks are released, and the
array is writeable again when its last lock goes. A view cannot be made writeable
while its base is read-only: a view released before its base waits in
:data:`_views_waiting_for_unlock` until the base's own lock goes.

Memory guarding is process-wide (as in MyGrad); turn it off with
:func:`turn_memory_guarding_off` or, for a block or a function, :data:`mem_guard_off`.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "MEM_GUARD",
    "mem_guard_active",
    "mem_guard_off",
    "mem_guard_on",
    "turn_memory_guarding_off",
    "turn_memory_guarding_on",
    "lock_arr_writeability",
    "array_is_tracked",
]

_F = TypeVar("_F", bound=Callable[..., Any])

#: Whether the arrays of a graph are made read-only (see the module's docstring).
#: Read by every op; set it with :func:`turn_memory_guarding_on`/``_off`` or
#: :data:`mem_guard_on`/``mem_guard_off``.
MEM_GUARD: bool = True

#: id(array) -> how many locks are held on it
_array_counter: dict[int, int] = {}
#: id(array) -> (the array, whether it was writeable before its first lock)
_array_tracker: dict[int, tuple[np.ndarray, bool]] = {}
#: id(locked array) -> {id(view): view}: views of it that are to become writeable
#: again once it does
_views_waiting_for_unlock: defaultdict[int, dict[int, np.ndarray]] = defaultdict(dict)


def mem_guard_active() -> bool:
    """True when memory guarding is on."""
    return MEM_GUARD


def turn_memory_guarding_off() -> None:
    """Stop making the arrays of new graphs read-only (locks already held stay until
    their graph is cleared)."""
    global MEM_GUARD
    MEM_GUARD = False


def turn_memory_guarding_on() -> None:
    """Make the arrays of new graphs read-only again (the default)."""
    global MEM_GUARD
    MEM_GUARD = True


class MemStateContext:
    """Context manager and decorator that sets memory guarding on or off for a block
    (or for each call of a function) and then restores what it was; blocks nest."""

    def __init__(self, state: bool) -> None:
        self._state = state
        self._saved: list[bool] = []

    def __enter__(self) -> None:
        global MEM_GUARD
        self._saved.append(MEM_GUARD)
        MEM_GUARD = self._state

    def __exit__(self, *exc_info: object) -> None:
        global MEM_GUARD
        MEM_GUARD = self._saved.pop()

    def __call__(self, func: _F) -> _F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"mem_guard_{'on' if self._state else 'off'}"


class _NoMemGuard(MemStateContext):
    def __init__(self) -> None:
        super().__init__(False)


class _WithMemGuard(MemStateContext):
    def __init__(self) -> None:
        super().__init__(True)


#: ``with mem_guard_off:`` / ``@mem_guard_off``: no memory guarding inside.
mem_guard_off = _NoMemGuard()
#: ``with mem_guard_on:`` / ``@mem_guard_on``: memory guarding inside.
mem_guard_on = _WithMemGuard()


def array_is_tracked(arr: np.ndarray) -> bool:
    """True when a lock of memory guarding is held on ``arr``."""
    return id(arr) in _array_counter


def _tracked_base(arr: np.ndarray) -> np.ndarray | None:
    """The nearest array that ``arr`` is a view of and that memory guarding locked."""
    base = arr.base
    while isinstance(base, np.ndarray):
        if id(base) in _array_counter:
            return base
        base = base.base
    return None


def lock_arr_writeability(arr: np.ndarray) -> np.ndarray:
    """Take one lock on ``arr``: it is read-only until its last lock is released.

    A read-only view of a locked array counts as writeable before: it was made
    read-only by the lock on its base, and gets its writeability back with it.
    """
    key = id(arr)
    count = _array_counter.get(key)
    if count is not None:
        _array_counter[key] = count + 1
        return arr
    was_writeable = arr.flags.writeable
    if was_writeable:
        # (positional: NumPy parses setflags' keywords, and the `flags` setter's,
        # at several times the cost)
        arr.setflags(False)  # type: ignore[call-arg]  # (write=, positionally)
    else:
        base = _tracked_base(arr)
        was_writeable = base is not None and _array_tracker[id(base)][1]
    _array_counter[key] = 1
    _array_tracker[key] = (arr, was_writeable)
    return arr


def _release_lock_on_arr_writeability(arr: np.ndarray) -> None:
    """Release one lock on ``arr``; with its last, restore its writeability."""
    key = id(arr)
    count = _array_counter.pop(key, 0)
    if count > 1:
        _array_counter[key] = count - 1
        return
    if not count:
        return
    if _array_tracker.pop(key)[1]:
        _make_writeable(arr)
    if _views_waiting_for_unlock:
        for view in _views_waiting_for_unlock.pop(key, {}).values():
            if id(view) not in _array_counter:
                _make_writeable(view)


def note_view(view: np.ndarray) -> None:
    """``view`` was made read-only by a lock on an array it is a view of (NumPy
    gives a view of a read-only array no writeability): make it writeable again
    once that lock goes."""
    base = _tracked_base(view)
    if base is not None and _array_tracker[id(base)][1]:
        _views_waiting_for_unlock[id(base)][id(view)] = view


def _make_writeable(arr: np.ndarray) -> None:
    if arr.base is not None:
        base = _tracked_base(arr)
        if base is not None:  # (its base is still locked: wait for it)
            _views_waiting_for_unlock[id(base)][id(arr)] = arr
            return
    try:
        arr.setflags(True)  # type: ignore[call-arg]  # (write=, positionally)
    except ValueError:  # a view of memory that is read-only for another reason
        pass


class _Locks:
    """Locks held by part of a graph (a tensor), released when it drops this object
    (or this object is garbage-collected)."""

    __slots__ = ("arrays",)

    def __init__(self, arrays: list[np.ndarray]) -> None:
        for arr in arrays:
            lock_arr_writeability(arr)
        self.arrays = arrays

    def add(self, arr: np.ndarray) -> None:
        self.arrays.append(lock_arr_writeability(arr))

    def __del__(self) -> None:
        for arr in self.arrays:
            _release_lock_on_arr_writeability(arr)
