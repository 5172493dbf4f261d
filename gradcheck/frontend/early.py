"""The zygote started before the command has read anything (issue 40, item 1).

``gradcheck verify ...`` (the script, or ``python -m gradcheck``) forks its zygote as
the first thing it does (:func:`start`, from ``gradcheck.__main__.run``), before it
imports click and the command's modules: the zygote's own imports (NumPy, Hypothesis,
the checker: about 0.15 s of CPU) then run beside the command's (about 0.06 s), on a
second core where there is one, instead of after them. The command takes it over
where it would have forked one (:func:`take`, from ``runner._Zygote``) and sends it
the run's ``WorkerSetup``, with which it becomes the zygote ``_zygote_main`` makes. A
command that never takes it (a usage error, ``--help``, another executor, a caller
that spawns its zygote) leaves it waiting: it dies with the command
(``PR_SET_PDEATHSIG``, or the end of file of their pipe).

Before the fork this imports what the fork needs (``multiprocessing``'s fork context
and its pipe) and what the command and the zygote would otherwise both import, each
in its own process (:func:`_import_shared`: NumPy, the runner's worker side, the
search's results): imported once, here, the zygote inherits them. That is about
0.09 s of CPU off the run (the command imports them anyway, for the settings' checks
and the results it renders); the zygote starts as much later and has as much less
to import, so nothing on the way to the target's first example waits longer (the
command's first line comes as much later).
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any

#: (the process, the command's end of its pipe), until taken.
_EARLY: tuple[Any, Any] | None = None

#: Options after which the command starts no zygote of its own in this process.
_NOT_HERE = ("--help", "-h", "--executor")


def wanted(argv: list[str]) -> bool:
    """Whether this command line runs targets in a zygote forked from this process:
    ``verify`` on Linux, with no option that makes it do otherwise."""
    if not sys.platform.startswith("linux") or os.environ.get("GRADCHECK_NO_EARLY_WORKER"):
        return False
    if len(argv) < 2 or argv[1] != "verify":
        return False
    if any(arg in _NOT_HERE or arg.startswith("--executor=") for arg in argv[2:]):
        return False
    # What the command reports as a usage error (a closed standard stream, a deleted
    # working directory) it reports alone: a file the zygote opened would take a closed
    # descriptor 1, and its imports fail without a working directory.
    try:
        for fd in (0, 1, 2):
            os.fstat(fd)
        os.getcwd()
    except OSError:
        return False
    return True


def start(argv: list[str] | None = None) -> None:
    """Fork the zygote now, where :func:`wanted` (called once, first thing)."""
    global _EARLY
    if _EARLY is not None or not wanted(sys.argv if argv is None else argv):
        return
    import multiprocessing
    import threading

    try:
        _import_shared()
    except Exception:  # the command meets it again where it needs the module
        return
    if threading.active_count() != 1:  # a lock copied held: as zygote_context
        return
    context = multiprocessing.get_context("fork")
    ours, theirs = context.Pipe(duplex=True)
    process = context.Process(
        target=_early_main, args=(theirs, ours), daemon=False, name="gradcheck-worker"
    )
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        process.start()
    except OSError:
        ours.close()
        return
    finally:
        if main is not None:
            sys.modules["__main__"] = main
    theirs.close()
    # Not a child the interpreter's exit joins (a usage error ends the command with it
    # still waiting for its setup): it ends with the command instead.
    children = getattr(multiprocessing.process, "_children", None)
    if isinstance(children, set):
        children.discard(process)
    _EARLY = (process, ours)


def _import_shared() -> None:
    """What both the command and every zygote import (the command: the runner's pipe
    protocol, the settings' checks, the results it renders; the zygote: the search),
    imported before the fork, so that the zygote inherits them; as the zygote imports
    (gradcheck.frontend.worker.without_collections): without collections, what they
    made frozen after."""
    import gc

    collecting = gc.isenabled()
    gc.disable()
    try:
        import importlib.metadata  # noqa: F401

        import numpy  # noqa: F401

        import gradcheck.frontend.worker
        import gradcheck.search.verifier  # noqa: F401
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def take() -> tuple[Any, Any] | None:
    """The early zygote (its process and the command's end of its pipe), once, where
    it was started and is alive; it waits for ``("setup", WorkerSetup)``."""
    global _EARLY
    early, _EARLY = _EARLY, None
    if early is None:
        return None
    process, conn = early
    if process.is_alive():
        return early
    conn.close()
    return None


def _early_main(conn: Any, ours: Any) -> None:
    """The early zygote: what every zygote imports, then the setup, then the zygote's
    life (``_zygote_main``); the end of file of the pipe ends it."""
    import signal

    # The terminal's Ctrl-C is the command's to handle (it stops the run), not an
    # interrupted import here; the zygote's own process group comes with its setup.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Until the setup comes, nothing here is the command's to report: whatever fails
    # ends this process quietly (the command then forks a zygote of its own).
    try:
        from gradcheck.frontend.worker import (
            _as_if_spawned,
            _die_with_parent,
            _zygote_main,
            import_the_search,
        )

        _as_if_spawned(ours)
        if _die_with_parent() and os.getppid() != _parent_pid():
            os._exit(0)  # the command ended before prctl
        import_the_search()
        message = conn.recv()
    except BaseException:
        os._exit(0)
    if not (isinstance(message, tuple) and message[:1] == ("setup",)):
        os._exit(0)
    _zygote_main(conn, message[1])


def _parent_pid() -> int | None:
    import multiprocessing

    parent = multiprocessing.parent_process()
    return None if parent is None else parent.pid
