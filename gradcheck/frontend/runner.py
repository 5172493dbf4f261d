"""Run the checks of a ``gradcheck verify`` run in worker processes.

No check runs in the process of the command itself (the *coordinator*): each target is
checked in a worker process, ``--jobs N`` workers at once (one by default), each taking
one target at a time. So nothing an op does ends the run or loses its results:

- an op that raises ``SystemExit`` or ``KeyboardInterrupt`` fails with kind ``exited``
  (:func:`gradcheck.verify` makes it the failure of the example where it happened);
- an op that ends its process (``os._exit``, a segfault in an extension, the OOM
  killer) fails with kind ``worker_died``, naming the exit code or the signal and the
  example it was checking, and a new worker takes the next target;

and every other target's result is kept. The cost is one process start per worker
(Python, NumPy, Hypothesis and the user's module imported again; ``benchmarks/
cli_verify_time.py`` measures it), which also buys the rest: a worker can be stopped
whatever it runs (a C loop that holds the GIL included), and its file descriptors are
its own.

A :class:`Job` is plain data (the target's spec, the keyword arguments of
:func:`gradcheck.verify` with the target's seed among them), so that it pickles and a
worker started with ``spawn`` (the only start method on Windows and macOS, and the one
used here everywhere, so every platform behaves alike) rebuilds the target by loading
the spec again. Each target's seed is fixed before any job starts, so a run checks the
same examples whatever ``--jobs`` is, and results come back in the order of the jobs.

The worker and the coordinator talk over one pipe per worker. The coordinator sends
``(index, job, sys_path)``, or ``None`` to let the worker go; the worker answers ``("ready",)``
once started, then per job ``("started", index, settings)`` (the effective settings),
``("example", index, inputs, check_seed)`` before each example is checked,
``("progress", index, done, total)`` after each counted one, and last ``("result",
index, VerifyResult)`` or ``("error", index, exception)``. A worker ignores SIGINT and
runs in a process group of its own (the coordinator alone decides when the run
stops), and dies with the coordinator (Linux: ``PR_SET_PDEATHSIG``; elsewhere a thread
watches the coordinator).

An error in a job (a bad setting, an op that cannot be loaded in the worker) is handed
to the caller when that job's turn comes, as it would be in a serial run.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
import traceback
import types
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np

from gradcheck.checking.result import CheckResult, Failure
from gradcheck.checking.vocabulary import Kind, Verdict
from gradcheck.defaults import DEFAULT_EXAMPLE_TIMEOUT
from gradcheck.errors import GradcheckError, InternalError, Interrupted, LoadError, RemoteError
from gradcheck.frontend.loading import load_targets
from gradcheck.search.verifier import LoadedTarget, VerifyResult, effective_options, verify

__all__ = ["Interrupted", "Job", "RemoteError", "Run", "StopOnSignals", "WorkerSetup", "run_job"]

#: An example whose arrays hold more elements than this is sent to the coordinator by
#: its shapes only (it names the example a hang or a crash was on).
EXAMPLE_ELEMENTS_SENT = 4096
#: Workers that die before they are ready, in a row, before the run gives up.
MAX_FAILED_STARTS = 3


@dataclass(frozen=True)
class Job:
    """One target to check, as data a worker process can receive.

    Attributes
    ----------
    spec : str
        The target as the command line names it (``module:Name``); loading it gives
        exactly one target.
    settings : dict
        Keyword arguments of :func:`gradcheck.verify`, ``seed`` included.
    verbose : bool
        Keep the op's runtime warnings (otherwise silenced).
    timeout : float or None
        The most seconds the target may take (None: no limit).
    example_timeout : float or None
        The most seconds one example may take, from when the worker reported it (the
        first one: from when the job started).
    """

    spec: str
    settings: dict[str, Any] = field(default_factory=dict)
    verbose: bool = False
    timeout: float | None = None
    example_timeout: float | None = DEFAULT_EXAMPLE_TIMEOUT


@dataclass(frozen=True)
class WorkerSetup:
    """What every worker of a run needs from the coordinator (its ``sys.path`` comes
    with each job: loading the targets may have added the project's folder)."""

    #: The working directory at the start of the run (each job starts there again).
    cwd: str
    #: Send whatever the user's code writes to file descriptor 1 to descriptor 2 (with
    #: a format whose stdout is one document).
    stdout_to_stderr: bool = False
    #: Hypothesis's home directory (None: Hypothesis's own choice).
    hypothesis_home: str | None = None


def run_job(
    job: Job,
    target: LoadedTarget | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_example: Callable[[Sequence[np.ndarray], int], None] | None = None,
    started: Callable[[dict[str, Any]], None] | None = None,
) -> VerifyResult:
    """Check one job in this process (``target`` is loaded from ``job.spec`` when not
    given); ``started`` receives the effective settings before the first example."""
    if target is None:
        found = load_targets(job.spec)
        if len(found) != 1:
            raise LoadError(f"'{job.spec}' names {len(found)} targets, not one")
        target = found[0]
    if started is not None:
        given = {k: v for k, v in job.settings.items() if k != "seed"}
        started(effective_options(target.obj, **given))
    with warnings.catch_warnings():
        # NumPy's "invalid value encountered in log" and the like, from the op evaluated
        # at generated and perturbed points: the checker reports what matters (a
        # non-finite output is a failure); --verbose shows them.
        if not job.verbose:
            warnings.simplefilter("ignore", RuntimeWarning)
        return verify(target, **job.settings, progress=progress, on_example=on_example)


# --- the worker -------------------------------------------------------------------------


def _worker_main(conn: Connection, setup: WorkerSetup) -> None:
    """A worker's life: set up, say it is ready, check jobs until told to stop."""
    _become_worker(setup)
    # What every check needs, imported while the coordinator still loads the targets.
    import hypothesis  # noqa: F401

    import gradcheck.checking.checker
    import gradcheck.strategies  # noqa: F401

    try:
        conn.send(("ready",))
        while True:
            message = conn.recv()
            if message is None:
                return
            index, job, sys_path = message
            sys.path[:] = sys_path
            _serve(conn, index, job, setup)
    except (EOFError, OSError):
        return  # the coordinator is gone


def _become_worker(setup: WorkerSetup) -> None:
    # Ctrl-C reaches the coordinator, which stops the workers; a worker's own
    # KeyboardInterrupt is then always the op's (gradcheck.search.verifier.is_ctrl_c).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(os, "setpgid"):
        # Its own process group: signals to the terminal's group reach the coordinator
        # only, and stopping a worker stops what the op started. A background group
        # must not be stopped for using the terminal.
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
        for name in ("SIGTTOU", "SIGTTIN"):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    _die_with_coordinator()
    # The op reads nothing from the terminal; its writes to fd 1 go to stderr when
    # stdout must stay one document.
    devnull = os.open(os.devnull, os.O_RDONLY)
    if devnull != 0:
        os.dup2(devnull, 0)
        os.close(devnull)
    if setup.stdout_to_stderr:
        sys.stdout.flush()
        os.dup2(2, 1)
    if setup.hypothesis_home is not None:
        from hypothesis.configuration import set_hypothesis_home_dir

        set_hypothesis_home_dir(setup.hypothesis_home)
    os.chdir(setup.cwd)


def _die_with_coordinator() -> None:
    parent = multiprocessing.parent_process()
    if parent is None:  # pragma: no cover - always a spawned child here
        return
    if sys.platform.startswith("linux"):
        import ctypes

        try:  # the kernel kills this process when the coordinator dies, even mid C loop
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        if os.getppid() != parent.pid:  # it died before prctl
            os._exit(1)

    def watch() -> None:  # where there is no PR_SET_PDEATHSIG (and as a second guard)
        wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="gradcheck-coordinator-watch").start()


def _serve(conn: Connection, index: int, job: Job, setup: WorkerSetup) -> None:
    os.chdir(setup.cwd)  # an op of the last job may have moved it

    def progress(done: int, total: int) -> None:
        conn.send(("progress", index, done, total))

    def on_example(arrays: Sequence[np.ndarray], check_seed: int) -> None:
        conn.send(("example", index, _portable(arrays), check_seed))

    def started(settings: dict[str, Any]) -> None:
        conn.send(("started", index, settings))

    try:
        result = run_job(job, progress=progress, on_example=on_example, started=started)
    except Exception as exc:
        conn.send(("error", index, _transportable(exc)))
        return
    try:
        conn.send(("result", index, result))
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        conn.send(("error", index, _transportable(exc)))


def _portable(arrays: Sequence[Any]) -> tuple[list[np.ndarray] | None, str]:
    """An example as the coordinator keeps it: the arrays when small, and always their
    dtypes and shapes as text."""
    arrays = [np.asarray(a) for a in arrays]
    shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in arrays)
    if sum(a.size for a in arrays) > EXAMPLE_ELEMENTS_SENT:
        return None, shapes
    return [np.array(a) for a in arrays], shapes


def _transportable(exc: Exception) -> BaseException:
    """The error to raise in the coordinator: a GradcheckError as it is (when it
    pickles), anything else as a RemoteError with its traceback text."""
    if isinstance(exc, GradcheckError) and _pickles(exc):
        return exc.with_traceback(None)
    text = "".join(traceback.format_exception(exc))
    return RemoteError(type(exc).__name__, str(exc), text)


def _pickles(exc: BaseException) -> bool:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return False
    return True


# --- the coordinator --------------------------------------------------------------------

#: What a job gives: its result, or the error that ends the run when its turn comes.
Outcome = VerifyResult | BaseException


@dataclass
class _Running:
    """A job a worker is checking, as far as the coordinator knows."""

    index: int
    started: float
    #: When the current example was reported (or the job started).
    beat: float = 0.0
    #: The effective settings, once the worker has loaded the target.
    settings: dict[str, Any] | None = None
    #: The example being checked: (arrays or None, their shapes as text, check seed).
    example: tuple[list[np.ndarray] | None, str, int] | None = None
    examples_started: int = 0
    done: int = 0
    progress: Callable[[int, int], None] | None = None


class _Worker:
    def __init__(self, context: Any, setup: WorkerSetup) -> None:
        self.conn, self._child = context.Pipe(duplex=True)
        self.process = context.Process(
            target=_worker_main, args=(self._child, setup), daemon=True, name="gradcheck-worker"
        )
        self.ready = False
        self.job: _Running | None = None

    def start(self) -> None:
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

    def kill(self) -> None:
        """Kill the worker and what the op started in its process group."""
        pid = self.process.pid
        if pid is None:  # never started
            self.conn.close()
            return
        try:
            if hasattr(os, "killpg") and os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                self.process.kill()
        except (OSError, ProcessLookupError):
            pass
        self.process.join(5)
        self.conn.close()


class Run:
    """The workers of one run: ``n_jobs`` worker processes at most.

    :meth:`results` checks the jobs and yields ``(index, outcome)`` in their order, as
    each one's turn comes (:meth:`prestart` starts a worker before they are known);
    ``progress(index, job)``, when given, is called as a job starts and returns its progress
    callback (or None). :meth:`stop` ends the run at once, :meth:`close` stops the
    workers.
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
        self._workers: list[_Worker] = []
        self._failed_starts = 0

    def prestart(self) -> None:
        """Start one worker now, before the jobs are known: its start (Python, NumPy,
        Hypothesis) overlaps with the coordinator's loading of the targets."""
        if not self._workers:
            self._add_worker()

    # -- the loop
    def results(self, jobs: Sequence[Job]) -> Iterator[tuple[int, Outcome]]:
        """Check ``jobs``; their outcomes in order."""
        self.jobs = list(jobs)
        self._pending = deque(range(len(self.jobs)))
        while self._next < len(self.jobs):
            if self._next in self._finished:
                index = self._next
                self._next += 1
                yield index, self._finished.pop(index)
                continue
            self._staff()
            self._dispatch()
            self._wait()

    def check(self, job: Job) -> Outcome:
        """Check one job on this run's workers, which stay for the next call (how a Dask
        worker uses a run: gradcheck.frontend.dask_executor)."""
        self._next = 0
        self._finished.clear()
        return next(iter(self.results([job])))[1]

    def _staff(self) -> None:
        busy = sum(w.job is not None for w in self._workers)
        wanted = min(self.n_jobs, len(self._pending) + busy)
        while len(self._workers) < wanted:
            self._add_worker()

    def _add_worker(self) -> None:
        worker = _Worker(self._context, self.setup)
        self._workers.append(worker)  # before it starts: a signal may come meanwhile
        worker.start()

    def _dispatch(self) -> None:
        for worker in self._workers:
            if worker.ready and worker.job is None and self._pending:
                index = self._pending.popleft()
                job = self.jobs[index]
                now = time.monotonic()
                worker.job = _Running(index, now, beat=now)
                worker.job.progress = self.progress(index, job) if self.progress else None
                worker.conn.send((index, job, list(sys.path)))

    def _wait(self) -> None:
        by_object: dict[Any, _Worker] = {}
        for worker in self._workers:
            by_object[worker.conn] = worker
            by_object[worker.process.sentinel] = worker
        deadlines = [self._deadline(w)[0] for w in self._workers if w.job is not None]
        timeout = None if not deadlines else max(0.0, min(deadlines) - time.monotonic())
        for ready in wait(list(by_object), timeout):
            worker = by_object[ready]
            if worker in self._workers:
                self._receive(worker)
        self._enforce_limits()

    def _deadline(self, worker: _Worker) -> tuple[float, str]:
        """When the worker's job runs out of time, and which limit that is."""
        assert worker.job is not None
        job, running = self.jobs[worker.job.index], worker.job
        limits = [(math.inf, "")]
        if job.timeout is not None:
            limits.append((running.started + job.timeout, "timeout"))
        if job.example_timeout is not None:
            limits.append((running.beat + job.example_timeout, "example_timeout"))
        return min(limits)

    def _enforce_limits(self) -> None:
        now = time.monotonic()
        for worker in list(self._workers):
            if worker.job is None or self._deadline(worker)[0] > now:
                continue
            self._receive(worker)  # it may have just finished
            if worker.job is None or worker not in self._workers:
                continue
            running, limit = worker.job, self._deadline(worker)[1]
            worker.job = None
            worker.kill()
            self._workers.remove(worker)
            self._finish(running.index, _timed_out(self.jobs[running.index], running, limit))

    def _receive(self, worker: _Worker) -> None:
        """Every message the worker has sent; its end, if it died."""
        if worker.process.pid is None:
            return
        try:
            while worker.conn.poll():
                self._handle(worker, worker.conn.recv())
        except (EOFError, OSError):
            pass
        if not worker.process.is_alive():
            self._reap(worker)

    def _handle(self, worker: _Worker, message: tuple[Any, ...]) -> None:
        what, *rest = message
        if what == "ready":
            worker.ready = True
            self._failed_starts = 0
            return
        running = worker.job
        if running is None or rest[0] != running.index:  # pragma: no cover - protocol bug
            raise InternalError(f"a worker sent {what!r} for a job it does not run")
        if what == "started":
            running.settings = rest[1]
        elif what == "example":
            (arrays, shapes), check_seed = rest[1], rest[2]
            running.example = (arrays, shapes, check_seed)
            running.examples_started += 1
            running.beat = time.monotonic()
        elif what == "progress":
            running.done = rest[1]
            if running.progress is not None:
                running.progress(rest[1], rest[2])
        elif what in ("result", "error"):
            worker.job = None
            self._finish(running.index, rest[1])

    def _finish(self, index: int, outcome: Outcome) -> None:
        """A job's outcome is known (its turn to be yielded may come later)."""
        self._finished[index] = outcome
        if self.on_finished is not None:
            self.on_finished(index, outcome)

    def _reap(self, worker: _Worker) -> None:
        worker.process.join()
        worker.conn.close()
        self._workers.remove(worker)
        if not worker.ready:
            self._failed_starts += 1
            if self._failed_starts >= MAX_FAILED_STARTS and worker.job is None:
                raise InternalError(
                    f"cannot start a worker process: it {_how_it_ended(worker.process.exitcode)}"
                )
        if worker.job is not None:
            running, worker.job = worker.job, None
            self._finish(
                running.index,
                _worker_died(self.jobs[running.index], running, worker.process.exitcode),
            )

    def stop(self, signum: int) -> list[tuple[int, Outcome]]:
        """End the run now (a signal asked for it): kill every worker; the outcomes not
        yet yielded, in order, each finished target's result, and the others not run."""
        running = {w.job.index: w.job for w in self._workers if w.job is not None}
        self.close(graceful=False)
        out: list[tuple[int, Outcome]] = []
        for index in range(self._next, len(self.jobs)):
            outcome = self._finished.pop(index, None)
            if not isinstance(outcome, VerifyResult):
                outcome = _not_run(self.jobs[index], running.get(index), signum)
            out.append((index, outcome))
        self._next = len(self.jobs)
        return out

    def close(self, graceful: bool = True) -> None:
        """Let idle workers go (or kill them at once), kill busy ones (what they ran is
        not needed any more)."""
        if graceful:  # a worker still starting has nothing to finish: killed below
            for worker in self._workers:
                if worker.ready and worker.job is None and worker.process.is_alive():
                    try:
                        worker.conn.send(None)
                    except OSError:
                        pass
            deadline = time.monotonic() + 2.0
            for worker in self._workers:
                if worker.ready and worker.job is None:
                    worker.process.join(max(0.0, deadline - time.monotonic()))
        for worker in self._workers:
            worker.kill()
        self._workers.clear()


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


# --- results for what the worker could not report ----------------------------------------


def _how_it_ended(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = "an unknown signal"
        return f"was killed by signal {-exitcode} ({name})"
    return f"exited with code {exitcode}"


def _unfinished(
    job: Job, running: _Running, verdict: str, kind: str, message: str, elapsed: float
) -> VerifyResult:
    """The result of a target whose worker did not report one: a failure of ``kind`` at
    the example it was on (when it had started one)."""
    arrays, shapes, check_seed = running.example or ([], "", 0)
    if running.example is not None:
        shown = "the example below" if arrays else f"an example of shapes {shapes}"
        message += f"; it was checking {shown} (example {running.examples_started} drawn)"
        message += ", too large to be shown" if not arrays else ""
    check = CheckResult(
        verdict=Verdict.FAILED,
        target=job.spec,
        failure=Failure(kind, message),
        inputs=list(arrays or []),
        params=dict((running.settings or job.settings).get("kwargs") or {}),
        seed=check_seed,
    )
    return VerifyResult(
        target=job.spec,
        passed=False,
        verdict=verdict,
        examples=running.done,
        rejected=0,
        failure=check,
        max_abs_error=math.nan,
        max_rel_error=math.nan,
        error_ratio=math.nan,
        seconds=elapsed,
        seed=int(job.settings.get("seed", 0)),
        settings=running.settings or {k: v for k, v in job.settings.items() if k != "seed"},
    )


def _not_run(job: Job, running: _Running | None, signum: int) -> VerifyResult:
    name = signal.Signals(signum).name
    note = f"{name} stopped the run before it started"
    if running is not None:
        note = f"{name} stopped the run after {running.done} of its examples"
    return VerifyResult(
        target=job.spec,
        passed=False,
        verdict=Verdict.NOT_RUN,
        examples=running.done if running is not None else 0,
        rejected=0,
        failure=None,
        max_abs_error=math.nan,
        max_rel_error=math.nan,
        error_ratio=math.nan,
        seconds=time.monotonic() - running.started if running is not None else 0.0,
        seed=int(job.settings.get("seed", 0)),
        settings=(running.settings if running is not None else None)
        or {k: v for k, v in job.settings.items() if k != "seed"},
        note=note,
    )


def _timed_out(job: Job, running: _Running, limit: str) -> VerifyResult:
    if limit == "timeout":
        message = f"the target ran longer than its time limit, {job.timeout:g} s (--timeout)"
    else:
        message = (
            f"one example ran longer than the limit per example, {job.example_timeout:g} s "
            f"(--example-timeout): the op hangs, or is slower than that on this example"
        )
    elapsed = time.monotonic() - running.started
    return _unfinished(job, running, Verdict.TIMED_OUT, Kind.TIMED_OUT, message, elapsed)


def _worker_died(job: Job, running: _Running, exitcode: int | None) -> VerifyResult:
    when = "" if running.example is not None else " before its first example (while loading it?)"
    message = (
        f"the worker process checking it {_how_it_ended(exitcode)}{when}: the op ended its "
        f"process (os._exit, a crash in native code, or it was killed)"
    )
    elapsed = time.monotonic() - running.started
    return _unfinished(job, running, Verdict.FAILED, Kind.WORKER_DIED, message, elapsed)
