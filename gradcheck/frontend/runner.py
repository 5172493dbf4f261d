"""Run the checks of a ``gradcheck verify`` run in processes of their own.

No user code runs in the process of the command itself (the *coordinator*): the
targets are imported and listed in a worker process, the *zygote* (:meth:`Run.load`),
and each target is checked in a process forked from the zygote for that target alone,
``--jobs N`` at once (one by default). So nothing an op or a module does ends the run,
writes into its output, or changes another target's verdict:

- a module that ends its process at import (``os._exit``) is a load error (exit 2);
- an op that raises ``SystemExit`` or ``KeyboardInterrupt`` fails with kind ``exited``
  (:func:`gradcheck.verify` makes it the failure of the example where it happened);
- an op that ends its process (``os._exit``, a segfault in an extension, a memory
  limit) fails with kind ``worker_died``, naming the exit code or the signal and the
  example it was checking;
- every target starts from the state the zygote had after the import (NumPy's error
  state, signal handlers and alarms, working directory, environment, ``sys.path``,
  random states, the modules' globals): verdicts do not depend on the order of the
  targets; and everything a target's process started (its process group) is killed
  when it ends, also after a normal end;

and every other target's result is kept. The cost is one Python start per run (the
zygote, started while the command reads its options) and one fork per target
(``benchmarks/cli_verify_time.py`` measures it), made ahead of the target's turn: while
``--jobs`` targets run, the next one's process is already forked and waits for the
coordinator's ``("go", index)`` (the *spare*), so that neither the fork nor the
zygote's waking up (tenths of a second on a loaded machine) lies between one target's
end and the next one's start; its time limits count from its turn
(``benchmarks/library_verify_time.py``). A job's process can be stopped
whatever it runs (a C loop that holds the GIL included), and may allocate at most
``Job.max_memory`` bytes (``--max-memory``).

gradcheck's own targets (the built-in library: no user code) are the exception to one
process per target: the fork is cheap, but the target's process then copies every page
of the zygote it writes to (reference counts, the allocator's pools, the interpreter's
caches: about 3,500 pages, 15 ms of CPU, a quarter of a built-in target's checks at 20
examples). A process that has checked one of them checks the next one too, as long as
its state is the state it started in (:mod:`gradcheck.frontend.process_state` compares
it item by item after each target; a difference, and the next target gets a fresh
process). The results are the same either way (``tests/cli/test_process_reuse.py``,
and every field of the library's JSON in ``benchmarks/library_verify_time.py``). A
user's target always has a process of its own, and no target follows it there.

A :class:`Job` is plain data (the target's spec, the keyword arguments of
:func:`gradcheck.verify` with the target's seed among them); the job's process finds
the target's module already imported (or imports it). The zygote is started with
``spawn``, or forked from the command's own process where that is safe
(:func:`~gradcheck.frontend.worker.zygote_context`: Linux, no other thread yet,
whose locks would be copied held, and nothing of the user's imported): no Python
start, no second import of what the command has, no resource tracker.
Each target's seed is fixed before any job starts, so a run checks the same examples
whatever ``--jobs`` is, and results come back in the order of the jobs.

The coordinator sends the zygote ``("preload", modules)`` (the frameworks to import at
once; not answered), ``("load", function, args)`` (answered ``("loaded",
result)`` or ``("load_error", exception, traceback)``), ``("warm",)`` before the jobs
of a run of several (:func:`~gradcheck.frontend.worker._warm_up`), ``("job", index, job)``
followed by one end of a new pipe (answered ``("forked", index, pid)``; ``("exit",
index, exit_code, pid)`` when that process has ended: the coordinator finds the job it
is checking now by the pid), or ``None`` to let it go. Over its pipe, a job's process
waits for ``("go", index)``, then sends ``("started", index, settings)`` (the effective
settings) and the descriptor of its ``unfinished.ExampleSlot``, where it leaves each
example before checking it (no message: the coordinator reads it where it needs it),
and last ``("result",
index, VerifyResult, again)`` (``again``: it may check another of gradcheck's own
targets, and waits for ``("run", index, job)`` or the end of its pipe) or ``("error",
index, exception)``. The zygote ignores SIGINT and runs in a process group of its own
(the coordinator alone decides when the run stops), and dies with the coordinator
(Linux: ``PR_SET_PDEATHSIG``; elsewhere a thread watches the coordinator); a job's
process dies with the zygote.

An error in a job (a bad setting, an op that cannot be loaded) is handed to the caller
when that job's turn comes, as it would be in a serial run.

This module is the coordinator (:class:`Run`); what it sends the workers is in
:mod:`gradcheck.frontend.jobs`, the workers' side (the zygote, a job's process,
:func:`in_child_process`) in :mod:`gradcheck.frontend.worker`, and the results it
makes for a process that reported none in :mod:`gradcheck.frontend.unfinished`; the
names are read here too.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
import sys
import threading
import time
import types
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.reduction import recv_handle, send_handle
from typing import TYPE_CHECKING, Any

from gradcheck.errors import (
    InternalError,
    Interrupted,
    LoadError,
    RemoteError,
)
from gradcheck.frontend.early import take as early_zygote
from gradcheck.frontend.jobs import (
    Job,
    ListedTarget,
    WorkerSetup,
    default_jobs,
    default_max_memory,
    listed,
    usable_cores,
)
from gradcheck.frontend.process_state import is_own_target
from gradcheck.frontend.unfinished import (
    PROGRESS_EVERY,
    _how_it_ended,
    _internal_error,
    _not_run,
    _read_slot,
    _timed_out,
    _worker_died,
    is_gradcheck_bug,
)
from gradcheck.frontend.worker import (
    _kill_group,
    _readable,
    _zygote_main,
    in_child_process,
    limit_memory,
    run_job,
    zygote_context,
)
from gradcheck.frontend.worker import _serve_one as _serve_one  # (tests)

if TYPE_CHECKING:
    from typing import TypeAlias

    from gradcheck.search.verifier import VerifyResult

# NumPy, the search and the loading are imported where they are used, not here: the
# command imports this module before it starts the zygote, whose start is then not
# behind them (benchmarks/torch_target_time.py); the zygote imports them at once.

__all__ = [
    "Interrupted",
    "Job",
    "ListedTarget",
    "RemoteError",
    "Run",
    "StopOnSignals",
    "WorkerSetup",
    "default_jobs",
    "usable_cores",
    "default_max_memory",
    "in_child_process",
    "is_gradcheck_bug",
    "limit_memory",
    "listed",
    "run_job",
]

#: Workers that die before they are ready, in a row, before the run gives up.
MAX_FAILED_STARTS = 3


# --- the zygote and its children -------------------------------------------------------
#
# One process per run (the *zygote*) is started at the start; it imports NumPy,
# Hypothesis and the checker, then, when asked, the user's modules (:meth:`Run.load`):
# the command itself never runs user code. Each job is checked in a process forked from
# the zygote for it alone, which ends with the job: every target starts from the same
# state (NumPy's error state, signal handlers and alarms, the working directory, the
# environment, sys.path, the random states, the modules' globals), whatever ran before
# it, at the cost of a fork (milliseconds) instead of a Python start. Each child leads a
# process group of its own, killed when the child ends (also after a normal exit), so
# what an op started ends with it; the zygote is not a daemonic process, so an op may
# start a multiprocessing.Pool.


# --- the coordinator --------------------------------------------------------------------

#: What a job gives: its result, or the error that ends the run when its turn comes.
Outcome: TypeAlias = "VerifyResult | BaseException"


@dataclass
class _Running:
    """A job a child is checking, as far as the coordinator knows."""

    index: int
    started: float
    #: When the current example started (or the job did).
    beat: float = 0.0
    #: The effective settings, once the child has loaded the target.
    settings: dict[str, Any] | None = None
    #: The example being checked, as left (gradcheck.frontend.unfinished.sealed), in
    #: the job's ExampleSlot (its descriptor: ``slot``), as last read.
    example: tuple[bytes, int] | None = None
    slot: int | None = None
    examples_started: int = 0
    #: The op's inputs' names, once the child has resolved the target.
    input_names: tuple[str, ...] = ()
    done: int = 0
    progress: Callable[[int, int], None] | None = None
    #: The child's process id (its process group's too) and the end of its pipe.
    pid: int = 0
    conn: Connection | None = None
    #: The pipe reached its end (the child closed it).
    closed: bool = False
    #: A spare: forked ahead of its turn, waiting for the coordinator's ("go",).
    waiting: bool = False


@dataclass
class _Idle:
    """A job's process that has sent its result and may check one more of gradcheck's
    own targets (under the same memory limit)."""

    pid: int
    conn: Connection
    max_memory: int | None


class _Zygote:
    """The coordinator's handle on the zygote process."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.ready = False
        #: Told to go (:meth:`Run.release`).
        self.released = False
        # The zygote the command forked first thing (gradcheck.frontend.early).
        early = early_zygote() if setup.fork else None
        if early is not None:
            self.process, self.conn = early
            self._child: Connection | None = None
            self.conn.send(("setup", setup))
            return
        context, forked = zygote_context(setup)
        self.conn, self._child = context.Pipe(duplex=True)
        # Not daemonic: a job's child is the zygote's, and may start processes (a Pool).
        # A forked zygote closes its copy of our end (our death is its end of file).
        args = (self._child, setup, self.conn if forked else None)
        self.process = context.Process(
            target=_zygote_main, args=args, daemon=False, name="gradcheck-worker"
        )

    def start(self) -> None:
        if self._child is None:  # the early zygote: started already
            return
        # A spawned child runs the parent's main script again (as __mp_main__) unless
        # the main module has no file or spec; a launcher without an `if __name__ ==
        # "__main__"` guard would start the command again in the worker. The worker
        # needs nothing from it: everything it receives is defined in gradcheck.
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            self.process.start()
        finally:
            if main is not None:
                sys.modules["__main__"] = main
        self._child.close()

    def kill(self, wait: bool = True) -> None:
        """Kill the zygote (its process group); its children die with it. Not
        ``wait``: it is reaped by a thread of this process when the kernel has freed
        its memory (or by init, once this process has ended first)."""
        pid = self.process.pid
        if pid is not None:
            try:
                if hasattr(os, "killpg") and os.getpgid(pid) == pid:
                    os.killpg(pid, signal.SIGKILL)
                else:
                    self.process.kill()
            except OSError:
                pass
            if wait:
                self.process.join(5)
            else:
                threading.Thread(
                    target=self.process.join, daemon=True, name="gradcheck-worker-reaper"
                ).start()
                # Not a child still running for multiprocessing.active_children() (the
                # command's end looks there, and the interpreter's exit joins those).
                children = getattr(multiprocessing.process, "_children", None)
                if isinstance(children, set):
                    children.discard(self.process)
        self.conn.close()

    def gone(self, timeout: float) -> bool:
        """Wait (up to ``timeout`` seconds) for the zygote's word that it has finished
        (its children reaped, its output flushed) and only its exit is left."""
        deadline = time.monotonic() + timeout
        try:
            while self.conn.poll(max(0.0, deadline - time.monotonic())):
                if self.conn.recv() == ("gone",):
                    return True
        except (EOFError, OSError):
            pass
        return False


class Run:
    """The processes of one run: a zygote, and ``n_jobs`` jobs' processes at most.

    :meth:`load` runs a function (the loading of the targets) in the zygote;
    :meth:`results` checks the jobs and yields ``(index, outcome)`` in their order, as
    each one's turn comes (:meth:`prestart` starts the zygote before they are known);
    ``progress(index, job)``, when given, is called as a job starts and returns its
    progress callback (or None). :meth:`stop` ends the run at once, :meth:`close` stops
    every process.
    """

    def __init__(
        self,
        n_jobs: int,
        setup: WorkerSetup,
        progress: Callable[[int, Job], Callable[[int, int], None] | None] | None = None,
        on_finished: Callable[[int, Outcome], None] | None = None,
    ) -> None:
        self.n_jobs, self.setup, self.progress = max(1, n_jobs), setup, progress
        self.on_finished = on_finished
        self.jobs: list[Job] = []
        self._context = multiprocessing.get_context("spawn")
        self._pending: deque[int] = deque()
        self._finished: dict[int, Outcome] = {}
        self._next = 0
        self._zygote: _Zygote | None = None
        self._running: dict[int, _Running] = {}
        #: Processes that checked one of gradcheck's own targets and may check another
        #: (gradcheck.frontend.process_state): they wait for ("run", index, job).
        self._idle: list[_Idle] = []
        self._failed_starts = 0

    def prestart(self) -> None:
        """Start the zygote now, before the jobs are known: its start (Python, NumPy,
        Hypothesis) overlaps with the command's reading of its options and files."""
        if self._zygote is None:
            self._zygote = _Zygote(self.setup)
            self._zygote.start()

    def preload(self, modules: Sequence[str]) -> None:
        """Have the zygote import ``modules`` (the frameworks the targets will need)
        as soon as it is ready, before it loads the targets; nothing is answered."""
        if not modules:
            return
        self.prestart()
        assert self._zygote is not None
        try:
            self._zygote.conn.send(("preload", tuple(modules)))
        except OSError:
            pass  # the zygote is gone: the load meets it

    def _ready_zygote(self) -> _Zygote:
        """The zygote, started and ready (started again after a death)."""
        while True:
            self.prestart()
            zygote = self._zygote
            assert zygote is not None
            if zygote.ready:
                return zygote
            try:
                message = zygote.conn.recv()
            except (EOFError, OSError):
                self._zygote_died()
                continue
            self._from_zygote(message)

    def load(self, function: Callable[..., Any], *args: Any, what: str = "the targets") -> Any:
        """``function(*args)``, run in the zygote (where the children will find what it
        imported); its error re-raised here, with ``remote_traceback`` (the text).

        Raises
        ------
        LoadError
            The function ended the zygote (``os._exit`` or a crash at import).
        """
        zygote = self._ready_zygote()
        zygote.conn.send(("load", function, args))
        while True:
            try:
                message = zygote.conn.recv()
            except (EOFError, OSError):
                zygote.process.join(5)
                how = _how_it_ended(zygote.process.exitcode)
                self._zygote_died()
                raise LoadError(
                    f"the process loading the targets {how} while importing {what}: a module "
                    f"ended its process at import (os._exit, a crash in native code)"
                ) from None
            if message[0] == "loaded":
                return message[1]
            if message[0] == "load_error":
                exc = message[1]
                exc.remote_traceback = message[2]
                raise exc
            self._from_zygote(message)  # pragma: no cover - nothing else comes now

    # -- the loop
    def results(self, jobs: Sequence[Job]) -> Iterator[tuple[int, Outcome]]:
        """Check ``jobs``; their outcomes in order."""
        self.jobs = list(jobs)
        self._pending = deque(range(len(self.jobs)))
        if len(self.jobs) > 1:
            try:
                self._ready_zygote().conn.send(("warm",))
            except OSError:
                pass  # the zygote is gone: the first job meets it
        while self._next < len(self.jobs):
            if self._next in self._finished:
                index = self._next
                self._next += 1
                self._dispatch()  # the next job (the spare) starts before this is shown
                yield index, self._finished.pop(index)
                continue
            self._dispatch()
            self._wait()

    def check(self, job: Job) -> Outcome:
        """Check one more job in a process of this run's zygote, and return its outcome
        (how a Dask worker uses a run, task after task: gradcheck.frontend.dask_executor).

        Each call gives its job an index of its own, never used before in this run: the
        zygote's messages name jobs by index, and one about an earlier job (the exit of
        its process, which may come after its result) must never be taken for this
        one's."""
        index = len(self.jobs)
        self.jobs.append(job)
        self._next = index
        self._pending.append(index)
        while index not in self._finished:
            self._dispatch()
            self._wait()
        self._next = index + 1
        return self._finished.pop(index)

    def warm(self) -> None:
        """Have the zygote build now what every check builds on first use
        (:func:`~gradcheck.frontend.worker._warm_up`), which each job's process then
        inherits; not waited for."""
        try:
            self._ready_zygote().conn.send(("warm",))
        except OSError:
            pass  # the zygote is gone: the next job meets it

    def _dispatch(self) -> None:
        """Start jobs while fewer than ``n_jobs`` run: the spare first (already
        forked, it only waits for its word), then new ones (one of gradcheck's own
        targets in a process that checked another and may check more: no fork at
        all); then fork the next job ahead of its turn, as the spare, so that the fork
        (and the zygote's waking up, slow on a loaded machine) is not on the way from
        one job's end to the next one's start, unless a process that may be reused
        for it is running."""
        while True:
            active = sum(not r.waiting for r in self._running.values())
            spares = [r for r in self._running.values() if r.waiting]
            if spares and active < self.n_jobs:
                self._go(min(spares, key=lambda r: r.index))
            elif self._pending and active < self.n_jobs:
                index = self._pending.popleft()
                idle = self._idle_for(index)
                if idle is None or not self._reuse(idle, index):
                    self._fork(index, spare=False)
            elif self._pending and not spares and not self._reusable_soon(self._pending[0]):
                self._fork(self._pending.popleft(), spare=True)
            else:
                break
        if not any(is_own_target(self.jobs[i].spec) for i in self._pending):
            self._let_idle_go()

    def _idle_for(self, index: int) -> _Idle | None:
        """An idle process that may check job ``index`` (one of gradcheck's own)."""
        job = self.jobs[index]
        if not is_own_target(job.spec):
            return None
        for idle in self._idle:
            if idle.max_memory == job.max_memory:
                self._idle.remove(idle)
                return idle
        return None

    def _reusable_soon(self, index: int) -> bool:
        """Whether job ``index`` may go to a process now checking one of gradcheck's
        own targets (then no spare is forked for it)."""
        return is_own_target(self.jobs[index].spec) and any(
            not r.waiting and is_own_target(self.jobs[r.index].spec) for r in self._running.values()
        )

    def _reuse(self, idle: _Idle, index: int) -> bool:
        """Job ``index``'s turn, in an idle process; False when that process is gone."""
        now = time.monotonic()
        running = _Running(index, now, beat=now, pid=idle.pid, conn=idle.conn)
        try:
            idle.conn.send(("run", index, self.jobs[index]))
        except OSError:
            _kill_group(idle.pid)
            idle.conn.close()
            return False
        self._running[index] = running
        if self.progress is not None:
            running.progress = self.progress(index, self.jobs[index])
        return True

    def _let_idle_go(self) -> None:
        """The idle processes end (their pipe closes: they exit)."""
        while self._idle:
            self._idle.pop().conn.close()

    def _fork(self, index: int, spare: bool) -> None:
        """Have the zygote fork the process of job ``index``; it starts at once unless
        it is a ``spare``."""
        zygote = self._ready_zygote()
        ours, theirs = self._context.Pipe(duplex=True)
        now = time.monotonic()
        running = _Running(index, now, beat=now, conn=ours, waiting=True)
        self._running[index] = running
        try:
            zygote.conn.send(("job", index, self.jobs[index]))
            send_handle(zygote.conn, theirs.fileno(), zygote.process.pid)
            theirs.close()
            if not spare:
                self._go(running)
            while running.pid == 0 and index in self._running:
                self._from_zygote(zygote.conn.recv())
        except (EOFError, OSError):
            theirs.close()
            self._zygote_died()

    def _go(self, running: _Running) -> None:
        """Job ``running.index``'s turn: its time starts now."""
        running.waiting = False
        running.started = running.beat = time.monotonic()
        if self.progress is not None:
            running.progress = self.progress(running.index, self.jobs[running.index])
        try:
            assert running.conn is not None
            running.conn.send(("go", running.index))
        except (OSError, AssertionError):
            pass  # it is gone: its end comes from the zygote ("exit")

    def _from_zygote(self, message: tuple[Any, ...]) -> None:
        what, *rest = message
        if what == "ready":
            assert self._zygote is not None
            self._zygote.ready = True
            self._failed_starts = 0
        elif what == "forked":
            running = self._running.get(rest[0])
            if running is not None:
                running.pid = rest[1]
        elif what == "exit":
            # By its process id: a process that checked several of gradcheck's own
            # targets was forked for the first of them.
            pid = rest[2]
            for idle in [i for i in self._idle if i.pid == pid]:
                self._idle.remove(idle)
                idle.conn.close()
            running = next((r for r in self._running.values() if r.pid == pid), None)
            if running is not None:
                self._receive(running)
            running = self._running.pop(running.index, None) if running is not None else None
            if running is not None:
                self._close(running)
                self._finish(
                    running.index, _worker_died(self.jobs[running.index], running, rest[1])
                )

    def _zygote_died(self) -> None:
        """The zygote ended (or never started): its children with it."""
        zygote, self._zygote = self._zygote, None
        if zygote is None:
            return
        zygote.process.join(5)
        if not zygote.ready:
            self._failed_starts += 1
            if self._failed_starts >= MAX_FAILED_STARTS:
                zygote.kill()
                raise InternalError(
                    f"cannot start a worker process: it {_how_it_ended(zygote.process.exitcode)}"
                )
        zygote.kill()
        self._let_idle_go()
        for index, running in sorted(self._running.items(), reverse=True):
            self._receive(running)
            if self._running.pop(index, None) is not None:
                self._kill(running)
                if running.waiting:  # it never started: forked again by the next zygote
                    self._pending.appendleft(index)
                else:
                    self._finish(index, _worker_died(self.jobs[index], running, None))

    def _wait(self) -> None:
        zygote = self._zygote
        waited: dict[Any, Any] = {}
        if zygote is not None:
            waited[zygote.conn] = zygote
            waited[zygote.process.sentinel] = zygote
        for running in self._running.values():
            if not running.closed and running.conn is not None:
                waited[running.conn] = running
        deadlines = [self._deadline(r)[0] for r in self._running.values()]
        shown = [r for r in self._running.values() if r.progress is not None]
        if shown:  # (progress bars: the examples counted, read this often)
            deadlines.append(time.monotonic() + PROGRESS_EVERY)
        timeout = None if not deadlines else max(0.0, min(deadlines) - time.monotonic())
        for running in shown:
            _read_slot(running)
        for ready in wait(list(waited), timeout):
            what = waited[ready]
            if isinstance(what, _Running):
                self._receive(what)
            elif zygote is not None and what is zygote is self._zygote:
                try:
                    while zygote.conn.poll():
                        self._from_zygote(zygote.conn.recv())
                except (EOFError, OSError):
                    self._zygote_died()
                    continue
                if not zygote.process.is_alive():
                    self._zygote_died()
        self._enforce_limits()

    def _deadline(self, running: _Running) -> tuple[float, str]:
        """When the job runs out of time, and which limit that is."""
        job = self.jobs[running.index]
        limits = [(math.inf, "")]
        if running.waiting:  # its time starts with its turn
            return limits[0]
        if job.timeout is not None:
            limits.append((running.started + job.timeout, "timeout"))
        if job.example_timeout is not None:
            limits.append((running.beat + job.example_timeout, "example_timeout"))
        return min(limits)

    def _enforce_limits(self) -> None:
        now = time.monotonic()
        for index, running in list(self._running.items()):
            if self._deadline(running)[0] > now:
                continue
            self._receive(running)  # it may have just finished
            _read_slot(running)  # or be on a later example
            if index not in self._running or self._deadline(running)[0] > now:
                continue
            limit = self._deadline(running)[1]
            del self._running[index]
            self._kill(running)
            self._finish(index, _timed_out(self.jobs[index], running, limit))

    def _receive(self, running: _Running) -> None:
        """Every message the child has sent."""
        if running.conn is None or running.closed:
            return
        try:
            while _readable(running.conn):
                self._handle(running, running.conn.recv())
                if running.index not in self._running:
                    return
        except (EOFError, OSError):
            running.closed = True  # its end comes from the zygote ("exit")

    def _handle(self, running: _Running, message: tuple[Any, ...]) -> None:
        what, *rest = message
        if rest[0] != running.index:  # pragma: no cover - protocol bug
            raise InternalError(f"a worker sent {what!r} for a job it does not run")
        if what == "started":
            running.settings = rest[1]
            running.input_names = tuple(rest[2]) if len(rest) > 2 else ()
            assert running.conn is not None  # (the message came through it)
            running.slot = recv_handle(running.conn)
        elif what == "internal":
            del self._running[running.index]
            self._close(running)
            job = self.jobs[running.index]
            self._finish(running.index, _internal_error(job, running, rest[1], rest[2]))
        elif what in ("result", "error"):
            del self._running[running.index]
            job = self.jobs[running.index]
            if what == "result" and rest[2] and is_own_target(job.spec) and running.conn:
                self._idle.append(_Idle(running.pid, running.conn, job.max_memory))
                running.conn = None
            self._close(running)
            self._finish(running.index, rest[1])

    @staticmethod
    def _close(running: _Running) -> None:
        """Its pipe and its ExampleSlot closed, the example there read first."""
        _read_slot(running)
        if running.slot is not None:
            os.close(running.slot)
            running.slot = None
        if running.conn is not None:
            running.conn.close()
            running.conn = None

    def _kill(self, running: _Running) -> None:
        """Kill a job's process and what it started (its process group)."""
        if running.pid:
            _kill_group(running.pid)
        self._close(running)

    def _finish(self, index: int, outcome: Outcome) -> None:
        """A job's outcome is known (its turn to be yielded may come later)."""
        self._finished[index] = outcome
        if self.on_finished is not None:
            self.on_finished(index, outcome)

    def stop(self, signum: int) -> list[tuple[int, Outcome]]:
        """End the run now (a signal asked for it): kill every process; the outcomes
        not yet yielded, in order, each finished target's result, and the others not
        run."""
        from gradcheck.search.verifier import VerifyResult

        running = dict(self._running)
        self.close(graceful=False)
        out: list[tuple[int, Outcome]] = []
        for index in range(self._next, len(self.jobs)):
            outcome = self._finished.pop(index, None)
            if not isinstance(outcome, VerifyResult):
                started = running.get(index)
                if started is not None and started.waiting:  # a spare: it never started
                    started = None
                outcome = _not_run(self.jobs[index], started, signum)
            out.append((index, outcome))
        self._next = len(self.jobs)
        return out

    def release(self) -> None:
        """Let the zygote go now, without waiting for its end (the run needs it no
        more: its results are in): it ends while the command writes its report, and
        :meth:`close` finds it gone, instead of waiting for a large process's exit
        (a framework's memory unmapped) after the report."""
        self._let_idle_go()
        zygote = self._zygote
        if zygote is None or not zygote.ready or self._running or zygote.released:
            return
        try:
            zygote.conn.send(None)
            zygote.released = True
        except OSError:
            pass

    def close(self, graceful: bool = True) -> None:
        """Kill the jobs still running (what they ran is not needed any more) and the
        zygote (``graceful``: asked to go first)."""
        for running in self._running.values():
            self._kill(running)
        self._running.clear()
        for idle in self._idle:
            _kill_group(idle.pid)
        self._let_idle_go()
        zygote, self._zygote = self._zygote, None
        if zygote is None:
            return
        finished = False
        if graceful and zygote.ready and zygote.process.is_alive():
            try:
                if not zygote.released:
                    zygote.conn.send(None)
                finished = zygote.gone(2.0)
            except OSError:
                pass
        zygote.kill(wait=not finished)


# --- signals ------------------------------------------------------------------------------


class StopOnSignals:
    """While inside, SIGINT and SIGTERM raise :class:`Interrupted` in the main thread
    (a sleeping or waiting coordinator wakes up at once). Once the command has
    acknowledged the stop (:meth:`acknowledge`), further signals are ignored until it
    has written what finished; until then each one raises again (user code at import
    may swallow one with a bare ``except``). Elsewhere than in the main thread, nothing
    is installed."""

    SIGNALS = ("SIGINT", "SIGTERM")

    def __init__(self) -> None:
        self.acknowledged = False
        self._before: dict[int, Any] = {}

    def _handler(self, signum: int, frame: Any) -> None:
        if not self.acknowledged:
            raise Interrupted(signum)

    def acknowledge(self) -> None:
        self.acknowledged = True

    def __enter__(self) -> StopOnSignals:
        if threading.current_thread() is threading.main_thread():
            for name in self.SIGNALS:
                number = getattr(signal, name, None)
                if number is not None:
                    self._before[number] = signal.signal(number, self._handler)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        for number, before in self._before.items():
            signal.signal(number, before)
        self._before.clear()
