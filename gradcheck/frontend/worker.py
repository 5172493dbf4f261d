"""The worker processes of a ``gradcheck verify`` run (:mod:`gradcheck.frontend.runner`
is their coordinator): the *zygote*, which imports NumPy, Hypothesis, the checker and
the user's modules and forks a process per job, and a job's process, which checks its
target (:func:`run_job`) and sends its examples and result back; the limits each one
runs under (its memory, its death with its parent), and the result and the exceptions
made picklable for the pipe.
"""

from __future__ import annotations

import dataclasses
import gc
import multiprocessing
import os
import pickle
import select
import signal
import sys
import threading
import traceback
import types
import warnings
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

from gradcheck.checking.vocabulary import Kind
from gradcheck.errors import (
    GradcheckError,
    InternalError,
    LoadError,
    RemoteError,
    WorkerDied,
    exception_text,
)
from gradcheck.frontend.jobs import THREAD_VARIABLES, Job, WorkerSetup, _size
from gradcheck.frontend.process_state import ProcessState, changes, is_own_target
from gradcheck.frontend.unfinished import ExampleSlot, _how_it_ended, sealed

if TYPE_CHECKING:
    import numpy as np

    from gradcheck.search.verifier import LoadedTarget, VerifyResult


def run_job(
    job: Job,
    target: LoadedTarget | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_example: Callable[[Sequence[np.ndarray], int], None] | None = None,
    started: Callable[[dict[str, Any], tuple[str, ...]], None] | None = None,
) -> VerifyResult:
    """Check one job in this process (``target`` is loaded from ``job.spec`` when not
    given); ``started`` receives the effective settings and the inputs' names before
    the first example."""
    from gradcheck.frontend.loading import enter_module_state, load_targets
    from gradcheck.search.verifier import resolved_options, verify

    if target is None:
        found = load_targets(job.spec)
        if len(found) != 1:
            raise LoadError(f"'{job.spec}' names {len(found)} targets, not one")
        target = found[0]
    enter_module_state(job.spec)
    checked: Any = target
    if started is not None:
        # resolved once: verify below takes the resolved target as it is
        given = {k: v for k, v in job.settings.items() if k != "seed"}
        checked, settings = resolved_options(target, given)
        started(settings, tuple(checked.input_names))
    with warnings.catch_warnings():
        # NumPy's "invalid value encountered in log" and the like, from the op evaluated
        # at generated and perturbed points: the checker reports what matters (a
        # non-finite output is a failure); --verbose shows them.
        if not job.verbose:
            warnings.simplefilter("ignore", RuntimeWarning)
        return verify(checked, **job.settings, progress=progress, on_example=on_example)


def zygote_context(setup: WorkerSetup) -> tuple[Any, bool]:
    """How the zygote starts: the ``multiprocessing`` context, and whether it forks.

    Forked from the command (``setup.fork``, which the command sets for its own
    process alone) on Linux while no other thread runs (a thread's lock would be
    copied held): the zygote then starts with what the command has imported instead
    of a Python start and a second import of it, and without the resource tracker a
    spawn starts (about 50 ms of CPU on a framework target's critical path, and 40 ms
    more beside it: benchmarks/torch_target_time.py). Elsewhere, and in a process that
    may have imported the user's modules (pytest's, a caller's list of arguments:
    the zygote would find them there instead of importing them afresh), spawned."""
    if setup.fork and sys.platform.startswith("linux") and threading.active_count() == 1:
        return multiprocessing.get_context("fork"), True
    return multiprocessing.get_context("spawn"), False


def _zygote_main(conn: Connection, setup: WorkerSetup, ours: Connection | None = None) -> None:
    """The zygote's life: set up, say it is ready, then load targets and fork a child
    per job until told to stop. ``ours``: the coordinator's end of the pipe, which a
    forked zygote has a copy of."""
    if ours is not None:
        _as_if_spawned(ours)
    _become_worker(setup)
    import_the_search()
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
                    _torch_threads(setup, _preload, message[1])
                elif message[0] == "load":
                    _zygote_load(conn, message[1], message[2], setup)
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


def import_the_search() -> None:
    """What every check needs (Hypothesis, the checker, the search, the strategies),
    imported once in the zygote for all its children (:func:`without_collections`)."""

    def imported() -> None:
        import hypothesis  # noqa: F401

        import gradcheck.checking.checker
        import gradcheck.frontend.loading
        import gradcheck.search.verifier
        import gradcheck.strategies.inputs  # noqa: F401

    without_collections(imported)


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
    A module that cannot be imported is left to the loading, which says why. The
    imports run without the garbage collector (:func:`without_collections`)."""
    import importlib

    def imported() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:
                pass

    without_collections(imported)


def without_collections(function: Callable[[], Any]) -> Any:
    """``function()`` (imports whose objects live as long as the process) with the
    garbage collector off, then what it made frozen (``gc.freeze``), as every fork
    freezes it anyway (:func:`_zygote_fork`).

    ``import torch`` makes about 200,000 objects: with the collector on, each young
    collection that moves them on and three full ones that walk all of them, NumPy's,
    Hypothesis's and the checker's too, took 0.3-0.5 s of its 1.0-1.2 s of CPU
    (benchmarks/RESULTS.md, i40-torch8). Left unfrozen with the collector back on,
    the first young collection would walk all of them at once. What the imports left
    as garbage (some 7,000 objects for torch) is frozen with the rest: the zygote and
    its children keep it, as they keep what is garbage at a fork."""
    was = gc.isenabled()
    gc.disable()
    try:
        return function()
    finally:
        gc.freeze()
        if was:
            gc.enable()


#: The intra-op threads torch was given as it was imported in this zygote (None: torch
#: was not imported here, or the user chose: ``WorkerSetup.torch_threads``).
_TORCH_GIVEN: int | None = None


def _torch_threads(setup: WorkerSetup, function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)``, where it imports torch (the frameworks' preload, or the
    user's modules), with torch started on ``setup.torch_threads`` intra-op threads.

    The count is in the environment as ``OMP_NUM_THREADS`` while ``function`` runs
    (torch reads it as it starts, for its own threads and MKL's, and so does the
    OpenMP runtime it brings) and out of it after, so that what the op starts later
    does not inherit it. A module that sets its own count as it is imported
    (``torch.set_num_threads``) keeps it: it sets it after torch read ours."""
    global _TORCH_GIVEN
    given = setup.torch_threads
    if given is None or "torch" in sys.modules:
        return function(*args)
    saved = os.environ.get(THREAD_VARIABLES[0])
    os.environ[THREAD_VARIABLES[0]] = str(given)
    try:
        return function(*args)
    finally:
        if saved is None:
            os.environ.pop(THREAD_VARIABLES[0], None)
        else:
            os.environ[THREAD_VARIABLES[0]] = saved
        if "torch" in sys.modules:
            _TORCH_GIVEN = given


def torch_threads_note(setup: WorkerSetup) -> str | None:
    """What ``--verbose`` says of torch's intra-op threads in a job's process (None
    where torch is not imported)."""
    torch = sys.modules.get("torch")
    get = getattr(torch, "get_num_threads", None)
    if get is None:
        return None
    count = get()
    threads = f"torch runs {count} intra-op thread{'s' if count != 1 else ''}"
    if setup.torch_threads is None:
        return f"{threads}, as {' or '.join(THREAD_VARIABLES)} chose"
    if _TORCH_GIVEN is None:
        return f"{threads}: torch was imported before gradcheck could choose"
    if count != _TORCH_GIVEN:
        return f"{threads}, as the target's module set"
    return (
        f"{threads} (gradcheck's choice for its workers' small inputs: a thread pool "
        f"only waits there on a loaded machine; set OMP_NUM_THREADS to choose)"
    )


def _zygote_load(
    conn: Connection, function: Callable[..., Any], args: tuple[Any, ...], setup: WorkerSetup
) -> None:
    """Run ``function(*args)`` here (it imports the user's modules, which the children
    inherit; torch with ``setup.torch_threads`` threads); send its result, or its error
    with the traceback text."""
    try:
        result = _torch_threads(setup, function, *args)
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


def _readable(conn: Connection) -> bool:
    """Whether a message (or the end) waits on ``conn``: ``conn.poll()`` without the
    selector it builds and closes at each call (the coordinator asks this of a job's
    pipe two or three times per example it receives)."""
    if not hasattr(select, "poll"):  # pragma: no cover - not on Linux
        return conn.poll()
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    return bool(poller.poll(0))


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


def _as_if_spawned(ours: Connection) -> None:
    """A zygote forked from the command (:func:`zygote_context`) as a spawned one
    starts: without the command's end of their pipe (else the command's death would
    not be its end of file), with the signal handlers of a fresh Python (the
    command's SIGTERM handler raises its Interrupted, which would end the zygote
    instead of stopping the run) and no wakeup descriptor of the command's, and an
    empty ``__main__`` (what a spawned zygote has: gradcheck.frontend.runner)."""
    ours.close()
    signal.set_wakeup_fd(-1)
    for signum in signal.valid_signals():
        try:
            handler = signal.getsignal(signum)
            if callable(handler) and handler is not signal.default_int_handler:
                signal.signal(signum, signal.SIG_DFL)
        except (OSError, ValueError):  # a signal that cannot be caught
            pass
    sys.modules["__main__"] = types.ModuleType("__main__")


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
    note = torch_threads_note(setup) if job.verbose else None
    if note is not None:
        _write_stderr(f"{job.spec}: {note}\n")
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
    from multiprocessing.reduction import send_handle

    counted = [0, 0]  # (done, total): left with the next example, or in the result
    slot = ExampleSlot.create()

    def progress(done: int, total: int) -> None:
        counted[:] = done, total

    def on_example(arrays: Sequence[np.ndarray], check_seed: int) -> None:
        slot.write(sealed(arrays, check_seed), *counted)

    def started(settings: dict[str, Any], names: tuple[str, ...]) -> None:
        conn.send(("started", index, _picklable(settings), names))
        send_handle(conn, slot.fd, os.getppid())  # (the pid: Windows's; unused here)

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
    finally:
        os.close(slot.fd)  # (the coordinator holds its own)
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
            died = WorkerDied(
                f"the op raised {exception_text(exc)}, which would have ended the test session"
            )
            died.kind = Kind.EXITED  # as a search reports it: the op's, not its process's end
            payload = ("raised", died)
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
