"""The state of a job's process that a target could leave behind, and whether a process
may check one more of gradcheck's own targets (:mod:`gradcheck.frontend.runner`).

Each target is checked in a process forked from the zygote for it: it starts from the
zygote's state whatever ran before. The fork itself is cheap; what costs is the copy of
every page of the zygote that the target's process writes to (Python's reference counts,
its allocator, the interpreter's caches: about 3,500 page copies and 15 ms of CPU per
target, measured in ``benchmarks/RESULTS.md``), a quarter of a built-in target's checks.

So a process that has checked one of gradcheck's *own* targets (the built-in library,
:mod:`gradcheck.builtin_targets`: no user code) may check the next one of them, but
only when :func:`changes` finds no difference between its state and the state it
started in, item by item:

- NumPy's error state, its error callback, its buffer size and its print options;
- every signal handler, the blocked signals, and the interval timers (``alarm`` too);
- the working directory, the environment (``os.environ``), ``sys.path``, the import
  machinery's lists (``meta_path``, ``path_hooks``);
- the random states: Python's ``random``, NumPy's legacy global state, the engine's
  ``gradcheck.random``;
- the modules: none imported since but from the standard library or site-packages
  (Hypothesis draws the literals of the *local* modules imported, so a new local module
  would change the next target's draws);
- no thread and no child process left; the warning filters, the standard streams, the
  recursion limit, trace and profile functions, the garbage collector's switch and
  thresholds, the umask; the engine's switches (memory guarding, no-autodiff depth,
  the layouts under test).

Nothing is reset: a difference in any item ends the process, and the next target gets a
fresh one. A user's target never shares a process (its code could change what no list
names).
"""

from __future__ import annotations

import gc
import os
import random
import signal
import sys
import sysconfig
import threading
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["OWN_LIBRARY", "ProcessState", "changes", "is_own_target"]

#: The module of gradcheck's own targets (the only ones a process is reused for).
OWN_LIBRARY = "gradcheck.builtin_targets"


def is_own_target(spec: str) -> bool:
    """Whether ``spec`` names one of gradcheck's own targets (``module:Name`` whose
    module is :data:`OWN_LIBRARY`, the file inside this package)."""
    module, _, name = spec.partition(":")
    if module != OWN_LIBRARY or not name:
        return False
    loaded = sys.modules.get(OWN_LIBRARY)
    if loaded is None:  # the coordinator: it routes by the name, the worker checks
        return True
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.dirname(os.path.abspath(getattr(loaded, "__file__", "") or "")) == here


def _installed(path: str) -> bool:
    """Whether a module's file is the standard library's or an installed package's (in
    a ``site-packages`` folder: gradcheck itself may be installed editable, elsewhere)."""
    parts = set(os.path.normpath(path).split(os.sep))
    if {"site-packages", "dist-packages"} & parts:
        return True
    paths = sysconfig.get_paths()
    real = os.path.realpath(path)
    stdlib = (os.path.realpath(paths[k]) + os.sep for k in ("stdlib", "platstdlib") if k in paths)
    return real.startswith(tuple(stdlib))


def _signals() -> dict[int, Any]:
    handlers = {}
    for number in signal.valid_signals():
        try:
            handlers[int(number)] = signal.getsignal(number)
        except (ValueError, OSError):  # pragma: no cover - a number Python cannot read
            pass
    return handlers


def _timers() -> tuple[Any, ...]:
    names = ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF")
    return tuple(signal.getitimer(getattr(signal, n)) for n in names if hasattr(signal, n))


def _blocked() -> frozenset[int]:
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        return frozenset()
    return frozenset(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _numpy(read: str) -> Callable[[], Any]:
    """NumPy's ``read()`` (imported when read, not here: the command imports the runner,
    and this module with it, before it starts the zygote)."""

    def reader() -> Any:
        import numpy as np

        return getattr(np, read)()

    return reader


def _numpy_random() -> tuple[Any, ...]:
    import numpy as np

    name, keys, pos, has_gauss, gauss = np.random.get_state(legacy=True)
    return (name, np.asarray(keys).tobytes(), pos, has_gauss, gauss)


def _engine() -> tuple[Any, ...]:
    """The engine's switches and its random generator's state (the modules imported
    already: importing them here would change the state compared)."""
    found: list[Any] = []
    guard = sys.modules.get("gradcheck.engine._utils.lock_management")
    found.append(getattr(guard, "MEM_GUARD", None))
    graph = sys.modules.get("gradcheck.engine.graph")
    found.append(graph.NO_AUTODIFF_DEPTH.get() if graph is not None else None)
    layout = sys.modules.get("gradcheck.checking.layout")
    if layout is not None:
        found += [layout.STRIDED.get(), layout.INPUT_LAYOUTS.get()]
    engine_random = sys.modules.get("gradcheck.engine.random")
    rng = getattr(engine_random, "_rng", None)
    found.append(repr(rng.bit_generator.state) if rng is not None else None)
    return tuple(found)


def _children() -> Any:
    """This process's child processes (Linux: their ids; elsewhere whether it has any
    it has not reaped)."""
    tasks = "/proc/self/task"
    if os.path.isdir(tasks):
        try:
            found: list[int] = []
            for task in os.listdir(tasks):
                with open(os.path.join(tasks, task, "children")) as f:
                    found += (int(pid) for pid in f.read().split())
            return sorted(found)
        except OSError:  # pragma: no cover - a kernel without the children file
            pass
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


#: Each item compared: its name (what :func:`changes` reports) and how it is read.
ITEMS: dict[str, Callable[[], Any]] = {
    "numpy error state": _numpy("geterr"),
    "numpy error callback": _numpy("geterrcall"),
    "numpy buffer size": _numpy("getbufsize"),
    "numpy print options": _numpy("get_printoptions"),
    "signal handlers": _signals,
    "blocked signals": _blocked,
    "interval timers": _timers,
    "working directory": os.getcwd,
    "environment": lambda: dict(os.environ),
    "sys.path": lambda: list(sys.path),
    "import machinery": lambda: (list(sys.meta_path), list(sys.path_hooks)),
    "random": random.getstate,
    "numpy random": _numpy_random,
    "engine": _engine,
    "threads": lambda: sorted(t.ident or 0 for t in threading.enumerate()),
    "child processes": _children,
    "warning filters": lambda: (list(warnings.filters), warnings.showwarning),
    "streams": lambda: (sys.stdin, sys.stdout, sys.stderr),
    "interpreter": lambda: (
        sys.getrecursionlimit(),
        sys.gettrace(),
        sys.getprofile(),
        sys.getswitchinterval(),
    ),
    "garbage collector": lambda: (gc.isenabled(), gc.get_threshold()),
    "umask": _umask,
}


class ProcessState:
    """The state of this process when it took its first target (:attr:`values`) and
    the modules it had then."""

    def __init__(self) -> None:
        self.values = {name: _read(read) for name, read in ITEMS.items()}
        self.modules = set(sys.modules)


def _read(read: Callable[[], Any]) -> Any:
    try:
        return read()
    except Exception as exc:  # an item that cannot be read: never equal
        return _Unreadable(exc)


class _Unreadable:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]


def changes(start: ProcessState) -> list[str]:
    """The items whose state differs from ``start`` (empty: the process may check one
    more of gradcheck's own targets)."""
    changed = [name for name, read in ITEMS.items() if _read(read) != start.values[name]]
    for name in sorted(set(sys.modules) - start.modules):
        path = getattr(sys.modules.get(name), "__file__", None)
        if path and not _installed(path):
            changed.append(f"modules ({name})")
            break
    return changed
