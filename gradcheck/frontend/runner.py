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
``spawn`` (the coordinator never forks: its threads' locks would be copied held).
Each target's seed is fixed before any job starts, so a run checks the same examples
whatever ``--jobs`` is, and results come back in the order of the jobs.

The coordinator sends the zygote ``("preload", modules)`` (the frameworks to import at
once; not answered), ``("load", function, args)`` (answered ``("loaded",
result)`` or ``("load_error", exception, traceback)``), ``("warm",)`` before the jobs
of a run of several (:func:`_warm_up`), ``("job", index, job)``
followed by one end of a new pipe (answered ``("forked", index, pid)``; ``("exit",
index, exit_code, pid)`` when that process has ended: the coordinator finds the job it
is checking now by the pid), or ``None`` to let it go. Over its
pipe, a job's process waits for ``("go", index)``, then sends ``("started", index,
settings)`` (the effective settings),
``("example", index, inputs, check_seed, done, total)`` before each example is checked
(``done`` of ``total`` examples counted so far: one message per example, not two),
and last ``("result", index, VerifyResult, again)`` (``again``: it may check another
of gradcheck's own targets, and waits for ``("run", index, job)`` or the end of its
pipe) or ``("error", index, exception)``. The zygote ignores SIGINT
and runs in a process group of its own (the coordinator alone decides when the run
stops), and dies with the coordinator (Linux: ``PR_SET_PDEATHSIG``; elsewhere a thread
watches the coordinator); a job's process dies with the zygote.

An error in a job (a bad setting, an op that cannot be loaded) is handed to the caller
when that job's turn comes, as it would be in a serial run.
"""

from __future__ import annotations

import dataclasses
import gc
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
from typing import TYPE_CHECKING, Any

from gradcheck.checking.vocabulary import Kind, Verdict
from gradcheck.defaults import DEFAULT_EXAMPLE_TIMEOUT
from gradcheck.errors import (
    GradcheckError,
    InternalError,
    Interrupted,
    LoadError,
    RemoteError,
    WorkerDied,
    exception_text,
)
from gradcheck.frontend.process_state import ProcessState, changes, is_own_target

if TYPE_CHECKING:
    from typing import TypeAlias

    import numpy as np

    from gradcheck.search.verifier import LoadedTarget, VerifyResult

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
    max_memory : int or None
        The most bytes the job's process may allocate (:func:`default_max_memory`).
    """

    spec: str
    settings: dict[str, Any] = field(default_factory=dict)
    verbose: bool = False
    timeout: float | None = None
    example_timeout: float | None = DEFAULT_EXAMPLE_TIMEOUT
    #: The most bytes the job's process may allocate (None or 0: no limit).
    max_memory: int | None = None


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


@dataclass(frozen=True)
class ListedTarget:
    """A target as the coordinator knows it (the object itself stays in the worker
    that imported it): its name, whether it carries a @gradcheck.describe, and where
    it is defined (file relative to the working directory, line), when known."""

    name: str
    described: bool = False
    location: tuple[str | None, int | None] = (None, None)


def listed(target: LoadedTarget) -> ListedTarget:
    """What the coordinator keeps of a loaded target."""
    from gradcheck.frontend.ci_report import source_location
    from gradcheck.search.description import description_of

    return ListedTarget(
        target.name, description_of(target.obj) is not None, source_location(target.obj)
    )


def run_job(
    job: Job,
    target: LoadedTarget | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_example: Callable[[Sequence[np.ndarray], int], None] | None = None,
    started: Callable[[dict[str, Any]], None] | None = None,
) -> VerifyResult:
    """Check one job in this process (``target`` is loaded from ``job.spec`` when not
    given); ``started`` receives the effective settings before the first example."""
    from gradcheck.frontend.loading import load_targets
    from gradcheck.search.verifier import effective_options, verify

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


# --- the zygote and its children -------------------------------------------------------
#
# One process per run (the *zygote*) is spawned at the start; it imports NumPy,
# Hypothesis and the checker, then, when asked, the user's modules (:meth:`Run.load`):
# the command itself never runs user code. Each job is checked in a process forked from
# the zygote for it alone, which ends with the job: every target starts from the same
# state (NumPy's error state, signal handlers and alarms, the working directory, the
# environment, sys.path, the random states, the modules' globals), whatever ran before
# it, at the cost of a fork (milliseconds) instead of a Python start. Each child leads a
# process group of its own, killed when the child ends (also after a normal exit), so
# what an op started ends with it; the zygote is not a daemonic process, so an op may
# start a multiprocessing.Pool.


def _zygote_main(conn: Connection, setup: WorkerSetup) -> None:
    """The zygote's life: set up, say it is ready, then load targets and fork a child
    per job until told to stop."""
    _become_worker(setup)
    # What every check needs, imported once for all the children.
    import hypothesis  # noqa: F401

    import gradcheck.checking.checker
    import gradcheck.frontend.loading
    import gradcheck.search.verifier
    import gradcheck.strategies  # noqa: F401

    children: dict[int, tuple[int, int | None]] = {}  # pid: (job index, pidfd)
    try:
        conn.send(("ready",))
        while True:
            fds = [fd for _, fd in children.values() if fd is not None]
            polling = len(fds) < len(children)  # no pidfd: look every 50 ms
            ready = wait([conn, *fds], 0.05 if polling else None)
            if conn in ready:
                message = conn.recv()
                if message is None:
                    return
                if message[0] == "preload":
                    _preload(message[1])
                elif message[0] == "load":
                    _zygote_load(conn, message[1], message[2])
                elif message[0] == "warm":
                    _warm_up()
                else:
                    _zygote_fork(conn, message[1], message[2], setup, children)
            _zygote_reap(conn, children)
    except (EOFError, OSError):
        pass  # the coordinator is gone
    finally:
        for pid in children:
            _kill_group(pid)
        for pid in children:  # reaped: their CPU time counts in the zygote's children's
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass
        # Nothing is left to finish: no interpreter teardown (NumPy, Hypothesis:
        # tenths of a second the command would wait for).
        _flush_all()
        # What is left is the kernel's (freeing a framework's memory: about 0.3 s for
        # torch), which the coordinator need not wait for: nothing here writes to its
        # output any more, and it hears so (Run.close).
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            conn.send(("gone",))
        except (OSError, ValueError):
            pass  # (then the coordinator waits for the exit, as before)
        os._exit(0)


def _warm_up() -> None:
    """One small search here, so that what Hypothesis and the checker build on first
    use (modules imported lazily, strategies, caches: about 0.2 s) is built once and
    inherited by every job's process, not built again for each target; then the heap
    is frozen (gc.freeze), so that the children's collections do not copy its pages.
    (A run of one target does without: it would pay the same once, plus the warm-up.)"""
    import gradcheck.builtin_targets as builtin
    from gradcheck.search.verifier import LoadedTarget, verify

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            target = getattr(builtin, "multiply")  # noqa: B009 - made by globals().update
            verify(LoadedTarget("warm-up", target), max_examples=3, seed=0)
    except Exception:  # only a warm-up: a job meets any real problem again
        pass
    gc.freeze()


def _preload(modules: Sequence[str]) -> None:
    """Import the frameworks the targets will need, before they are loaded (a head
    start, and imported once for every target's process: gradcheck.frontend.preload).
    A module that cannot be imported is left to the loading, which says why."""
    import importlib

    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:
            pass


def _zygote_load(conn: Connection, function: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """Run ``function(*args)`` here (it imports the user's modules, which the children
    inherit); send its result, or its error with the traceback text."""
    try:
        result = function(*args)
    except Exception as exc:
        trace = "".join(traceback.format_exception(exc.__cause__ or exc))
        conn.send(("load_error", _transportable(exc), trace))
        return
    try:
        conn.send(("loaded", result))
    except Exception:  # an object of the user's that does not pickle
        conn.send(("loaded", _picklable(result)))


def _zygote_fork(
    conn: Connection,
    index: int,
    job: Job,
    setup: WorkerSetup,
    children: dict[int, tuple[int, int | None]],
) -> None:
    from multiprocessing.reduction import recv_handle

    fd = recv_handle(conn)
    # What the zygote imported (a framework: hundreds of thousands of objects) is never
    # garbage for a child: frozen, the child's collections neither walk it (a full
    # collection would take tenths of a second) nor copy its pages by touching it.
    gc.freeze()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _child_main(conn, fd, index, job, setup)
    os.close(fd)
    try:
        pidfd: int | None = os.pidfd_open(pid)  # type: ignore[attr-defined, unused-ignore]
    except (AttributeError, OSError):
        pidfd = None
    children[pid] = (index, pidfd)
    conn.send(("forked", index, pid))


def _zygote_reap(conn: Connection, children: dict[int, tuple[int, int | None]]) -> None:
    """For each child that has ended: kill its process group (what the op started),
    reap it, and tell the coordinator how it ended."""
    for pid, (index, pidfd) in list(children.items()):
        try:
            ended = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            ended = None
        if ended is None:
            continue
        _kill_group(pid)  # while the child is a zombie: its pid, the group's id, is not reused
        _, status = os.waitpid(pid, 0)
        if pidfd is not None:
            os.close(pidfd)
        del children[pid]
        conn.send(("exit", index, os.waitstatus_to_exitcode(status), pid))


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _child_main(control: Connection, fd: int, index: int, job: Job, setup: WorkerSetup) -> None:
    """A job's process: a group of its own, the memory limit, the job; then its end."""
    code = 0
    try:
        os.setpgid(0, 0)
        control.close()
        _die_with_parent()
        if job.max_memory:
            limit_memory(job.max_memory)
        _serve(Connection(fd), index, job, setup)
    except BaseException:  # whatever happens, this process ends here
        code = 70
    finally:
        _flush_all()
        os._exit(code)


def _write_stderr(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except Exception:  # closed or replaced by the op
        pass


def _flush_all() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # closed or replaced by the op
            pass


#: Where the memory limit applies: RLIMIT_DATA (the heap and private mappings, NumPy's
#: arrays included, not the address space a library only reserves) where it exists.
_MEMORY_LIMIT = "RLIMIT_DATA" if sys.platform.startswith("linux") else "RLIMIT_AS"


#: The share of the machine's memory the jobs running at once may take together, unless
#: --max-memory says otherwise: an op that allocates without end fails at once (a
#: MemoryError), before the machine swaps.
MEMORY_SHARE = 0.75


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity mask, where the platform
    has one: a container or ``taskset`` may allow fewer than the machine has)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))  # type: ignore[attr-defined, unused-ignore]
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_jobs(n_targets: int, devices: bool = False) -> int:
    """How many jobs a run checks at once without ``--jobs``: one per usable core, no
    more than there are targets; one where a job names a device (the jobs would
    share one accelerator's memory). Each job is a process of its own, forked from
    the zygote, with its own memory limit and state: running two at once changes no
    verdict, only the order in which the progress lines appear."""
    if devices:
        return 1
    return max(1, min(usable_cores(), n_targets))


def default_max_memory(n_jobs: int) -> int | None:
    """Each of ``n_jobs`` processes' share of :data:`MEMORY_SHARE` of the physical
    memory (None where the size is not known)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None
    return max(int(total * MEMORY_SHARE) // max(1, n_jobs), 1 << 30)


def limit_memory(limit: int) -> None:
    """Let this process allocate at most ``limit`` bytes (where the platform can say)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return
    which = getattr(resource, _MEMORY_LIMIT, None)
    if which is None:  # pragma: no cover
        return
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    try:
        resource.setrlimit(which, (limit, hard))
    except (ValueError, OSError):  # pragma: no cover - a limit the system refuses
        pass


def _become_worker(setup: WorkerSetup) -> None:
    # Ctrl-C reaches the coordinator, which stops the workers; a worker's own
    # KeyboardInterrupt is then always the op's (gradcheck.search.verifier.is_ctrl_c).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(os, "setpgid"):
        # Its own process group: signals to the terminal's group reach the coordinator
        # only. A background group must not be stopped for using the terminal.
        try:
            os.setpgid(0, 0)
        except OSError:
            pass
        for name in ("SIGTTOU", "SIGTTIN"):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    _die_with_coordinator()
    # The user's code reads nothing from the terminal; its writes to fd 1 go to stderr
    # when stdout must stay one document.
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


def _die_with_parent() -> bool:
    """Linux: the kernel kills this process when its parent dies, even mid C loop."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False
    return True


def _die_with_coordinator() -> None:
    parent = multiprocessing.parent_process()
    if parent is None:  # pragma: no cover - always a spawned child here
        return
    if _die_with_parent() and os.getppid() != parent.pid:  # it died before prctl
        os._exit(1)

    def watch() -> None:  # where there is no PR_SET_PDEATHSIG (and as a second guard)
        wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="gradcheck-coordinator-watch").start()


def _serve(conn: Connection, index: int, job: Job, setup: WorkerSetup) -> None:
    os.chdir(setup.cwd)
    # Forked ahead of its turn (a spare, while the jobs before it run): the job starts
    # when the coordinator says so; a closed pipe (the run ended first) ends it here.
    if conn.recv() != ("go", index):  # pragma: no cover - protocol bug
        raise InternalError("a worker was told to start another job")
    # The state a fresh process has: one of gradcheck's own targets may follow in this
    # process only while nothing of it has changed (gradcheck.frontend.process_state).
    start = ProcessState() if is_own_target(job.spec) else None
    while _serve_one(conn, index, job, start):
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        _, index, job = message  # ("run", index, job): the next of gradcheck's own


def _serve_one(conn: Connection, index: int, job: Job, start: ProcessState | None) -> bool:
    """Check one job and send what came of it; whether this process may check another
    of gradcheck's own targets (the job was one, and the process's state is as it was
    at its start)."""
    counted = [0, 0]  # (done, total): sent with the next example, or in the result

    def progress(done: int, total: int) -> None:
        counted[:] = done, total

    def on_example(arrays: Sequence[np.ndarray], check_seed: int) -> None:
        conn.send(("example", index, _portable(arrays), check_seed, *counted))

    def started(settings: dict[str, Any]) -> None:
        conn.send(("started", index, _picklable(settings)))

    try:
        result = run_job(job, progress=progress, on_example=on_example, started=started)
    except Exception as exc:
        if isinstance(exc, GradcheckError) and not isinstance(exc, InternalError):
            conn.send(("error", index, _transportable(exc)))  # a usage error: ends the run
            return False
        # gradcheck's own failure on this target: the target fails, the run goes on
        remote = _transportable(exc)
        assert isinstance(remote, RemoteError) or isinstance(exc, InternalError)
        trace = getattr(remote, "remote_traceback", "")
        _write_stderr(f"{trace.rstrip()}\n")
        conn.send(("internal", index, type(exc).__name__, _safe_str(exc)))
        return False
    if job.max_memory:
        result = _name_the_memory_limit(result, job.max_memory)
    again = start is not None and is_own_target(job.spec) and not changes(start)
    try:
        conn.send(("result", index, result, again))
    except Exception:  # something of the user's in it does not pickle
        conn.send(("result", index, _picklable_result(result), again))
    return again


def _name_the_memory_limit(result: VerifyResult, limit: int) -> VerifyResult:
    """A failure the op's MemoryError caused says which limit it met."""
    check = result.failure
    if check is None or check.failure is None or "MemoryError" not in check.failure.message:
        return result
    note = f" (each target may allocate {_size(limit)}: --max-memory)"
    failure = dataclasses.replace(check.failure, message=check.failure.message + note)
    return dataclasses.replace(result, failure=dataclasses.replace(check, failure=failure))


def _size(n: int) -> str:
    return f"{n / 2**30:.3g} GiB" if n >= 2**30 else f"{n / 2**20:.3g} MiB"


def _picklable(value: Any) -> Any:
    """``value`` when it pickles; else a dict with what does not pickle as its repr."""
    try:
        pickle.dumps(value)
        return value
    except Exception:  # a lambda, a lock, an object whose pickling raises
        pass
    if isinstance(value, dict):
        return {str(k): _picklable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_picklable(v) for v in value)
    return _safe_str(value, repr)


def _picklable_result(result: VerifyResult) -> VerifyResult:
    result = dataclasses.replace(result, settings=_picklable(result.settings))
    if result.failure is not None:
        check = result.failure
        check = dataclasses.replace(
            check, params=_picklable(check.params), settings=_picklable(check.settings)
        )
        result = dataclasses.replace(result, failure=check)
    return result


def _safe_str(value: Any, how: Callable[[Any], str] = str) -> str:
    """``str(value)`` (or ``repr``), or a stand-in when the user's method raises."""
    try:
        return how(value)
    except Exception:
        return f"<{type(value).__name__} object whose {how.__name__}() raised>"


def _portable(arrays: Sequence[Any]) -> tuple[list[np.ndarray] | None, str]:
    """An example as the coordinator keeps it: the arrays when small, and always their
    dtypes and shapes as text."""
    import numpy as np

    arrays = [np.asarray(a) for a in arrays]
    shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in arrays)
    if sum(a.size for a in arrays) > EXAMPLE_ELEMENTS_SENT:
        return None, shapes
    return [np.array(a) for a in arrays], shapes


def _transportable(exc: BaseException) -> BaseException:
    """The error to raise in the coordinator: a GradcheckError as it is (when it
    pickles), anything else as a RemoteError with its traceback text."""
    if isinstance(exc, GradcheckError) and _pickles(exc):
        return exc.with_traceback(None)
    try:
        text = "".join(traceback.format_exception(exc))
    except Exception:  # the exception's __str__ raises
        text = f"{type(exc).__name__} (its message cannot be shown)\n"
    return RemoteError(type(exc).__name__, _safe_str(exc), text)


def _pickles(exc: BaseException) -> bool:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return False
    return True


# --- the coordinator --------------------------------------------------------------------

#: What a job gives: its result, or the error that ends the run when its turn comes.
Outcome: TypeAlias = "VerifyResult | BaseException"


@dataclass
class _Running:
    """A job a child is checking, as far as the coordinator knows."""

    index: int
    started: float
    #: When the current example was reported (or the job started).
    beat: float = 0.0
    #: The effective settings, once the child has loaded the target.
    settings: dict[str, Any] | None = None
    #: The example being checked: (arrays or None, their shapes as text, check seed).
    example: tuple[list[np.ndarray] | None, str, int] | None = None
    examples_started: int = 0
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

    def __init__(self, context: Any, setup: WorkerSetup) -> None:
        self.conn, self._child = context.Pipe(duplex=True)
        # Not daemonic: a daemonic process's children may not start processes, and a
        # job's child is the zygote's (an op may use a multiprocessing.Pool).
        self.process = context.Process(
            target=_zygote_main, args=(self._child, setup), daemon=False, name="gradcheck-worker"
        )
        self.ready = False
        #: Told to go (:meth:`Run.release`).
        self.released = False

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
            self._zygote = _Zygote(self._context, self.setup)
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
        (:func:`_warm_up`), which each job's process then inherits; not waited for."""
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
        from multiprocessing.reduction import send_handle

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
        timeout = None if not deadlines else max(0.0, min(deadlines) - time.monotonic())
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
            if index not in self._running:
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
            while running.conn.poll():
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
        elif what == "example":
            (arrays, shapes), check_seed, done, total = rest[1], rest[2], rest[3], rest[4]
            running.example = (arrays, shapes, check_seed)
            running.examples_started += 1
            running.beat = time.monotonic()
            if done != running.done:  # the examples counted since the last one
                running.done = done
                if running.progress is not None:
                    running.progress(done, total)
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


# --- one call in a child process (the pytest plugin) -------------------------------------


def in_child_process(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` run in a child forked for it (where there is
    ``fork``; else here): its result or its exception comes back. The op's
    ``os._exit``, a crash, ``SystemExit`` or ``KeyboardInterrupt`` end the child only,
    and come back as a :class:`~gradcheck.errors.WorkerDied` error saying so; what the
    child started (its process group) is killed when it ends.

    The target need not pickle (the child has it already); the result must (else its
    parts that do not are sent as their repr).
    """
    if not hasattr(os, "fork"):  # pragma: no cover - Windows
        return function(*args, **kwargs)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _call_in_child(read, write, function, args, kwargs)
    os.close(write)
    with os.fdopen(read, "rb") as stream:
        data = stream.read()
    _, status = os.waitpid(pid, 0)
    _kill_group(pid)
    if not data:
        how = _how_it_ended(os.waitstatus_to_exitcode(status))
        raise WorkerDied(
            f"the process checking it {how}: the op ended its process (os._exit, a crash "
            f"in native code, or it was killed)"
        )
    outcome, value = pickle.loads(data)
    if outcome == "raised":
        raise value
    return value


def _call_in_child(
    read: int, write: int, function: Callable[..., Any], args: Any, kwargs: Any
) -> None:
    try:
        os.close(read)
        os.setpgid(0, 0)
        try:
            payload: tuple[str, Any] = ("returned", function(*args, **kwargs))
        except (SystemExit, KeyboardInterrupt) as exc:
            payload = (
                "raised",
                WorkerDied(
                    f"the op raised {exception_text(exc)}, which would have ended the test session"
                ),
            )
        except Exception as exc:
            payload = ("raised", exc)
        try:
            data = pickle.dumps(payload)
        except Exception:
            if payload[0] == "returned":
                data = pickle.dumps(("returned", _picklable_any(payload[1])))
            else:
                data = pickle.dumps(("raised", _transportable(payload[1])))
        with os.fdopen(write, "wb") as stream:
            stream.write(data)
    finally:
        _flush_all()
        os._exit(0)


def _picklable_any(value: Any) -> Any:
    from gradcheck.search.verifier import VerifyResult

    if isinstance(value, VerifyResult):
        return _picklable_result(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: _picklable(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **fields)
    return _picklable(value)


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
    if exitcode is None:
        return "ended (how is not known: the process that started it is gone)"
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
    from gradcheck.checking.result import CheckResult, Failure
    from gradcheck.search.verifier import VerifyResult

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
    from gradcheck.search.verifier import VerifyResult

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


def _internal_error(job: Job, running: _Running, type_name: str, message: str) -> VerifyResult:
    if type_name == "MemoryError":
        text = "gradcheck ran out of memory while checking it (a huge output or gradient?)"
        if job.max_memory:
            text += f"; the limit is {_size(job.max_memory)} (--max-memory)"
    else:
        text = (
            f"gradcheck itself failed while checking it ({type_name}: {message}; its "
            f"traceback is above): a bug in gradcheck, please report it"
        )
    elapsed = time.monotonic() - running.started
    return _unfinished(job, running, Verdict.FAILED, Kind.INTERNAL_ERROR, text, elapsed)


def is_gradcheck_bug(result: VerifyResult) -> bool:
    """Whether the result is an internal_error failure that is a bug of gradcheck's."""
    check = result.failure
    return (
        check is not None
        and check.failure is not None
        and check.failure.kind == Kind.INTERNAL_ERROR
        and "ran out of memory" not in check.failure.message
    )


def _worker_died(job: Job, running: _Running, exitcode: int | None) -> VerifyResult:
    when = "" if running.example is not None else " before its first example (while loading it?)"
    message = (
        f"the worker process checking it {_how_it_ended(exitcode)}{when}: the op ended its "
        f"process (os._exit, a crash in native code, or it was killed)"
    )
    elapsed = time.monotonic() - running.started
    return _unfinished(job, running, Verdict.FAILED, Kind.WORKER_DIED, message, elapsed)
