"""gradcheck's own targets share a job's process while its state is as it started
(gradcheck.frontend.process_state); a user's target never does."""

from __future__ import annotations

import gc
import importlib
import os
import random
import signal
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from multiprocessing.reduction import recv_handle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gradcheck.checking.vocabulary import Kind
from gradcheck.frontend import process_state
from gradcheck.frontend.process_state import ProcessState, changes, is_own_target
from gradcheck.frontend.runner import Job, Run, WorkerSetup, _serve_one
from gradcheck.search.verifier import VerifyResult

OWN = "gradcheck.builtin_targets:"
FEW = {"max_examples": 2, "seed": 1}

USER_OPS = """
import os
import numpy as np
import gradcheck as mg

HERE = os.path.dirname(os.path.abspath(__file__))


class Double(mg.Operation):
    def __call__(self, x):
        self.variables = (x,)
        with open(os.path.join(HERE, "user.pid"), "w") as f:
            f.write(str(os.getpid()))
        return x.data * 2

    def backward_var(self, grad, index, **kw):
        return grad * 2
"""


class Recorded(Run):
    """A run that records which jobs got a process of their own (forked) and which
    went to a process that checked another (reused), with the processes' ids."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.forked: list[int] = []
        self.reused: list[tuple[int, int]] = []  # (pid, index)
        self.pids: dict[int, int] = {}  # index -> pid

    def _fork(self, index: int, spare: bool) -> None:
        self.forked.append(index)
        super()._fork(index, spare)
        running = self._running.get(index)
        if running is not None:
            self.pids[index] = running.pid

    def _reuse(self, idle: Any, index: int) -> bool:
        self.reused.append((idle.pid, index))
        self.pids[index] = idle.pid
        return super()._reuse(idle, index)


def run_all(run: Run, jobs: list[Job]) -> list[Any]:
    try:
        return [outcome for _, outcome in run.results(jobs)]
    finally:
        run.close()


def setup(cwd: Path | None = None) -> WorkerSetup:
    return WorkerSetup(cwd=str(cwd or os.getcwd()))


def test_gradcheck_own_targets_share_a_process():
    jobs = [Job(OWN + name, FEW) for name in ("square", "exp", "sin", "tanh")]
    run = Recorded(1, setup())
    outcomes = run_all(run, jobs)
    assert all(isinstance(o, VerifyResult) and o.passed for o in outcomes), outcomes
    assert run.forked == [0]
    assert [index for _, index in run.reused] == [1, 2, 3]
    assert len(set(run.pids.values())) == 1


def test_a_users_target_gets_a_process_of_its_own_and_nothing_follows_it(tmp_path: Path):
    (tmp_path / "user_ops.py").write_text(USER_OPS)
    user = Job(f"{tmp_path / 'user_ops.py'}:Double", FEW)
    jobs = [Job(OWN + "square", FEW), user, Job(OWN + "exp", FEW), user]
    run = Recorded(1, setup(tmp_path))
    outcomes = run_all(run, jobs)
    assert all(isinstance(o, VerifyResult) and o.passed for o in outcomes), outcomes
    assert 1 in run.forked and 3 in run.forked
    assert {index for _, index in run.reused} <= {0, 2}
    user_pids = {run.pids[1], run.pids[3]}
    assert len(user_pids) == 2  # each user target alone
    assert not user_pids & {run.pids[0], run.pids[2]}


def test_results_are_the_same_alone_and_after_other_targets():
    names = ["maximum", "sum_axis", "matmul", "softmax"]
    together = run_all(Run(1, setup()), [Job(OWN + n, {**FEW, "max_examples": 8}) for n in names])
    for name, shared in zip(names, together):
        (alone,) = run_all(Run(1, setup()), [Job(OWN + name, {**FEW, "max_examples": 8})])
        fields = ("verdict", "examples", "rejected", "max_abs_error", "error_ratio", "seed")
        assert [getattr(shared, f) for f in fields] == [getattr(alone, f) for f in fields]


def test_a_reused_process_that_dies_fails_the_target_it_was_checking():
    """The zygote reports a process's end by its id: the target that process is
    checking now fails (worker_died), not the one it was forked for."""
    jobs = [Job(OWN + name, FEW) for name in ("square", "exp", "sin")]
    killed: list[int] = []

    def progress(index: int, job: Job) -> None:
        if index == 1:
            pid = run._running[index].pid
            killed.append(pid)
            os.kill(pid, signal.SIGKILL)

    run = Recorded(1, setup(), progress=progress)
    outcomes = run_all(run, jobs)
    assert killed and run.reused and run.reused[0][1] == 1
    assert outcomes[0].passed and outcomes[2].passed
    assert outcomes[1].failure.failure.kind == Kind.WORKER_DIED
    assert "SIGKILL" in outcomes[1].failure.failure.message


def test_a_reused_process_over_its_time_limit_is_killed_and_the_run_goes_on():
    slow = Job(OWN + "conv_nd", {"max_examples": 50, "seed": 1}, timeout=0.01)
    jobs = [Job(OWN + "square", FEW), slow, Job(OWN + "exp", FEW)]
    outcomes = run_all(Recorded(1, setup()), jobs)
    assert outcomes[1].verdict == "timed_out"
    assert outcomes[0].passed and outcomes[2].passed


def test_only_gradcheck_own_library_counts_as_its_own():
    assert is_own_target(OWN + "exp")
    assert not is_own_target("gradcheck.builtin_targets")
    assert not is_own_target("user_ops:Exp")
    assert not is_own_target("gradcheck.testing.mutants:exp")


# --- each item of the state: a change is seen, and the process is not reused ------------


@pytest.fixture
def restore() -> Iterator[list[Callable[[], Any]]]:
    undo: list[Callable[[], Any]] = []
    yield undo
    for step in reversed(undo):
        step()


def _numpy_error_state(undo: list[Any]) -> None:
    saved = np.seterr(all="raise")
    undo.append(lambda: np.seterr(**saved))


def _numpy_callback(undo: list[Any]) -> None:
    saved = np.seterrcall(print)
    undo.append(lambda: np.seterrcall(saved))


def _print_options(undo: list[Any]) -> None:
    saved = np.get_printoptions()
    np.set_printoptions(precision=3)
    undo.append(lambda: np.set_printoptions(**saved))


def _signal_handler(undo: list[Any]) -> None:
    saved = signal.signal(signal.SIGUSR1, lambda *a: None)
    undo.append(lambda: signal.signal(signal.SIGUSR1, saved))


def _alarm(undo: list[Any]) -> None:
    signal.alarm(1000)
    undo.append(lambda: signal.alarm(0))


def _timer(undo: list[Any]) -> None:
    signal.setitimer(signal.ITIMER_PROF, 1000.0)
    undo.append(lambda: signal.setitimer(signal.ITIMER_PROF, 0))


def _blocked_signal(undo: list[Any]) -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])
    undo.append(lambda: signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGUSR2]))


def _cwd(undo: list[Any]) -> None:
    saved = os.getcwd()
    os.chdir(os.path.dirname(saved) or "/")
    undo.append(lambda: os.chdir(saved))


def _environment(undo: list[Any]) -> None:
    os.environ["GRADCHECK_TEST_REUSE"] = "1"
    undo.append(lambda: os.environ.pop("GRADCHECK_TEST_REUSE", None))


def _sys_path(undo: list[Any]) -> None:
    sys.path.append("/nowhere")
    undo.append(lambda: sys.path.remove("/nowhere"))


def _python_random(undo: list[Any]) -> None:
    saved = random.getstate()
    random.seed(12345)
    undo.append(lambda: random.setstate(saved))


def _numpy_random(undo: list[Any]) -> None:
    saved = np.random.get_state()
    np.random.seed(12345)
    undo.append(lambda: np.random.set_state(saved))


def _engine_random(undo: list[Any]) -> None:
    import gradcheck.random as engine_random

    saved = engine_random._rng
    engine_random.seed(12345)
    undo.append(lambda: setattr(engine_random, "_rng", saved))


def _memory_guard(undo: list[Any]) -> None:
    from gradcheck._utils import lock_management

    saved = lock_management.MEM_GUARD
    lock_management.MEM_GUARD = not saved
    undo.append(lambda: setattr(lock_management, "MEM_GUARD", saved))


def _thread(undo: list[Any]) -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    undo.append(lambda: (stop.set(), thread.join()))


def _child(undo: list[Any]) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    undo.append(lambda: (child.kill(), child.wait()))


def _warning_filter(undo: list[Any]) -> None:
    saved = list(warnings.filters)
    warnings.simplefilter("error", UserWarning)
    undo.append(lambda: setattr(warnings, "filters", saved))


def _stdout(undo: list[Any]) -> None:
    saved = sys.stdout
    sys.stdout = open(os.devnull, "w")  # closed by the undo
    undo.append(lambda: (sys.stdout.close(), setattr(sys, "stdout", saved)))


def _recursion_limit(undo: list[Any]) -> None:
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(saved + 1)
    undo.append(lambda: sys.setrecursionlimit(saved))


def _gc(undo: list[Any]) -> None:
    was = gc.isenabled()
    gc.disable()
    undo.append(lambda: gc.enable() if was else None)


def _umask(undo: list[Any]) -> None:
    saved = os.umask(0o077)
    undo.append(lambda: os.umask(saved))


def _local_module(undo: list[Any], tmp_path: Path) -> None:
    (tmp_path / "reuse_local_module.py").write_text("VALUE = 123456\n")
    sys.path.insert(0, str(tmp_path))
    importlib.import_module("reuse_local_module")
    sys.path.remove(str(tmp_path))
    undo.append(lambda: sys.modules.pop("reuse_local_module", None))


CHANGES = {
    "numpy error state": _numpy_error_state,
    "numpy error callback": _numpy_callback,
    "numpy print options": _print_options,
    "signal handlers": _signal_handler,
    "interval timers": _alarm,
    "blocked signals": _blocked_signal,
    "working directory": _cwd,
    "environment": _environment,
    "sys.path": _sys_path,
    "random": _python_random,
    "numpy random": _numpy_random,
    "engine": _engine_random,
    "threads": _thread,
    "child processes": _child,
    "warning filters": _warning_filter,
    "streams": _stdout,
    "interpreter": _recursion_limit,
    "garbage collector": _gc,
    "umask": _umask,
}


@pytest.mark.parametrize("item", sorted(CHANGES))
def test_each_item_of_the_state_that_changes_is_seen(item: str):
    """In a process forked for it, as a job's process is (none of the test session's
    own children or threads)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: reports what it saw, never returns
        seen: list[str] = ["failed"]
        try:
            start = ProcessState()
            before = changes(start)
            undo: list[Any] = []
            CHANGES[item](undo)
            seen = [repr(before), repr(changes(start))]
            for step in reversed(undo):
                step()
        finally:
            os.write(write, "\n".join(seen).encode())
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        before, after = [*f.read().splitlines(), "", ""][:2]
    os.waitpid(pid, 0)
    assert before == "[]"
    assert item in after


def test_another_timer_and_the_engine_switch_are_seen_too(restore: list[Any]):
    start = ProcessState()
    _timer(restore)
    _memory_guard(restore)
    assert {"interval timers", "engine"} <= set(changes(start))


def test_a_new_local_module_is_seen_an_installed_one_is_not(tmp_path: Path, restore: list[Any]):
    sys.modules.pop("colorsys", None)
    start = ProcessState()
    importlib.import_module("colorsys")  # the standard library's: Hypothesis mines nothing
    assert changes(start) == []
    _local_module(restore, tmp_path)
    assert changes(start) == ["modules (reuse_local_module)"]


def test_every_item_is_tested():
    assert set(process_state.ITEMS) == set(CHANGES) | {"numpy buffer size", "import machinery"}


def _drained(ours: Connection) -> list[Any]:
    """The messages a job's process sent, as the coordinator reads them: each
    ``("started", ...)`` is followed by its example slot's descriptor (passed, not a
    message: read as a message it leaves the pipe's framing broken and the next
    ``recv`` waiting for ever)."""
    messages = []
    while ours.poll():
        messages.append(ours.recv())
        if messages[-1][0] == "started":
            os.close(recv_handle(ours))
    return messages


@pytest.mark.parametrize("item", ["environment", "numpy error state", "signal handlers"])
def test_a_process_whose_state_changed_checks_no_other_target(item: str, restore: list[Any]):
    """What a job's process does after one of gradcheck's own targets: it offers to
    check another only while its state is the state it started in."""
    ours, theirs = Pipe()
    job = Job(OWN + "square", FEW)
    _serve_one(theirs, 0, job, None)  # what the zygote builds before it forks
    _drained(ours)
    start = ProcessState()
    assert _serve_one(theirs, 0, job, start) is True
    CHANGES[item](restore)
    assert _serve_one(theirs, 1, job, start) is False
    messages = _drained(ours)
    results = [m for m in messages if m[0] == "result"]
    assert [(m[1], m[3]) for m in results] == [(0, True), (1, False)]
    assert isinstance(results[0][2], VerifyResult) and results[0][2].passed
