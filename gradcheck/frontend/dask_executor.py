"""``gradcheck verify --executor dask``: the run's jobs on a Dask cluster.

Dask's ``distributed`` (the optional extra ``gradcheck[dask]``) schedules the jobs: on
the cluster whose scheduler ``--scheduler ADDRESS`` names, or, without one, on a
``LocalCluster`` of ``--jobs`` worker processes started for the run. A job is one target
with its seed (with ``--seeds S``, one of the target's seeds); a task is one job.

The local runner's guarantees hold because a Dask worker does not check a target itself.
Each Dask worker keeps a gradcheck run of its own (:class:`gradcheck.frontend.
runner.Run`: a zygote started by the Dask worker, which imports NumPy, Hypothesis and
the checker, then loads the targets as the command's worker loaded them), and each task
checks its job in a process forked from that zygote for the job alone, exactly as
``--jobs`` does, on the same examples: the job's process enforces ``--timeout`` and
``--example-timeout``, and its death (an op's ``os._exit``, a crash in native code)
fails that target alone with ``worker_died`` while the zygote and the Dask worker carry
on to the next task (a zygote that died itself is started again). Each task's job has an
index of its own in the worker's run (:meth:`Run.check`), so the end of one task's
process is never taken for the next one's. So Dask never retries a target that killed
its process, nothing of one target reaches the next, and nothing hangs. The command
yields the outcomes in the order of the jobs, as the local runner does, and reports each
target as soon as it finishes. SIGINT and SIGTERM cancel what has not finished (its
targets are ``not_run``) and close the cluster.

Where the time goes (``benchmarks/dask_vs_jobs.py``): the LocalCluster starts in a
thread of the command while a local worker loads the targets; each Dask worker starts
its zygote as it starts (``gradcheck.frontend.dask_preload``), which warms up before its
first task; the cluster is killed, not closed, at the end. On a cluster you start
yourself, a worker's run is made at its first task (and made again when a task of
another command comes, whose settings differ).

The workers of a cluster you start yourself must import the targets (your project
installed, or on their ``PYTHONPATH``) and may start processes:
``DASK_DISTRIBUTED__WORKER__DAEMON=False dask worker ADDRESS --nthreads 1``.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import threading
import types
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from gradcheck.errors import GradcheckError, MissingExtra
from gradcheck.frontend.jobs import Job, WorkerSetup
from gradcheck.frontend.runner import Outcome, Run
from gradcheck.frontend.unfinished import _not_run

__all__ = ["DaskRun"]

#: The Dask configuration key that carries the run's :class:`WorkerSetup` (its fields,
#: as a list) to the workers of its LocalCluster, whose preload starts their runs.
SETUP_KEY = "gradcheck-worker-setup"


# --- on a Dask worker --------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Context:
    """What a task brings from the command besides its job."""

    setup: WorkerSetup
    #: The command's sys.path (loading the targets may have added the project's folder).
    sys_path: list[str]
    #: The calls that loaded the targets in the command's local worker
    #: (:meth:`DaskRun.load`), made again in each Dask worker's zygote.
    loads: list[tuple[Callable[..., Any], tuple[Any, ...]]]
    #: Names the command's run: a zygote that has made its loads serves its tasks.
    token: str


class _WorkerRun:
    """A Dask worker's gradcheck run: a zygote of its own, kept for every task of one
    command's run (one per task thread at a time). The zygote is spawned, as the local
    runner's is: one forked from the Dask worker (which spares a second interpreter
    start) made the jobs' processes a third dearer in CPU (their writes copy pages of a
    larger, scattered heap: benchmarks/RESULTS.md), and would copy the locks of the
    Dask worker's threads."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.setup = setup
        self.run = Run(1, setup)
        self.run.prestart()
        # A warm-up now, while the Dask worker starts (not waited for: the zygote reads
        # it once ready); another follows the targets' loading (_enter).
        assert self.run._zygote is not None
        self.run._zygote.conn.send(("warm",))
        #: The token of the run whose loads the zygote (the object named) has made.
        self._entered: tuple[str, Any] | None = None

    def check(self, job: Job, context: _Context) -> Outcome:
        # (run._zygote: a new one, after the zygote died, has made no loads yet.)
        zygote = self.run._zygote
        if zygote is None or self._entered != (context.token, zygote):
            self._enter(context)
        return self.run.check(job)

    def _enter(self, context: _Context) -> None:
        """Make the zygote the local runner's: the command's sys.path, none of the
        Dask worker's own modules, the targets loaded as the command loaded them; then
        warmed up (again), so that every job's process inherits what the search builds
        on first use from the modules now imported. An error here (an import that ends
        the zygote, say) is met again by each job, which reports it."""
        for function, args in [(_like_a_local_zygote, (context.sys_path,)), *context.loads]:
            try:
                self.run.load(function, *args)
            except Exception:
                pass
        self.run.warm()
        self._entered = (context.token, self.run._zygote)

    def close(self) -> None:
        self.run.close(graceful=False)


def _like_a_local_zygote(sys_path: list[str]) -> None:
    """(In a Dask worker's zygote) take the command's ``sys.path``, and leave out of
    ``sys.modules`` what only a Dask worker imports (this module, its preload, the main
    module Dask's spawn ran again, as ``__mp_main__``). Hypothesis mixes constants found
    in the source of the local modules imported (a checkout's, gradcheck's own when
    installed as editable) into the values it draws: the jobs' processes must find the
    modules a local zygote has, to draw the same examples as ``--jobs``."""
    sys.path[:] = sys_path
    sys.modules["__main__"] = types.ModuleType("__main__")
    for name in ("__mp_main__", "gradcheck.frontend.dask_preload", __name__):
        sys.modules.pop(name, None)


#: Runs of this Dask worker not in use by a task (the preload leaves one here).
_idle_runs: list[_WorkerRun] = []
_idle_lock = threading.Lock()


def start_worker_run(setup: WorkerSetup) -> None:
    """Start a run for ``setup`` on this Dask worker now (its preload, as it starts):
    its first task then finds the zygote ready and warm."""
    with _idle_lock:
        _idle_runs.append(_WorkerRun(setup))


def close_worker_runs() -> None:
    """Stop this worker's idle runs (their zygotes), as the Dask worker closes."""
    with _idle_lock:
        runs = list(_idle_runs)
        _idle_runs.clear()
    for run in runs:
        run.close()


def _take_run(setup: WorkerSetup) -> _WorkerRun:
    """An idle run of this worker for ``setup`` (those of other setups, left by another
    command's run, are stopped), or a new one."""
    stale = []
    found = None
    with _idle_lock:
        while _idle_runs and found is None:
            run = _idle_runs.pop()
            if run.setup == setup:
                found = run
            else:
                stale.append(run)
    for run in stale:
        run.close()
    return found if found is not None else _WorkerRun(setup)


def _check_on_dask_worker(job: Job, context: _Context) -> Outcome:
    """The task: check ``job`` in a process of this Dask worker's gradcheck run."""
    sys.path[:] = context.sys_path  # (a result may name the project's classes)
    run = None
    try:
        run = _take_run(context.setup)
        outcome = run.check(job, context)
    except BaseException as exc:  # reported as the job's outcome
        if run is not None:
            run.close()
        return exc
    with _idle_lock:
        _idle_runs.append(run)
    return outcome


# --- in the command ----------------------------------------------------------------------


class DaskRun:
    """The jobs of a run on a Dask cluster; the interface of :class:`Run`."""

    def __init__(
        self,
        n_jobs: int,
        setup: WorkerSetup,
        scheduler: str | None = None,
        on_finished: Callable[[int, Outcome], None] | None = None,
    ) -> None:
        # (each Dask worker starts its zygote from this setup: a Dask worker's process,
        # not the command's own, spawns it)
        setup = dataclasses.replace(setup, fork=False)
        self.n_jobs, self.setup, self.scheduler = max(1, n_jobs), setup, scheduler
        self.on_finished = on_finished
        self.jobs: list[Job] = []
        self._client: Any = None
        self._cluster: Any = None
        self._starting: threading.Thread | None = None
        self._start_error: BaseException | None = None
        self._futures: list[Any] = []
        self._loader: Run | None = None
        #: The calls that loaded the targets, for the Dask workers' zygotes to make.
        self._loads: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []
        self._finished: dict[int, Outcome] = {}
        self._next = 0

    def prestart(self) -> None:
        """Start the local worker that loads the targets, and the cluster (or the
        connection to the scheduler) beside it, in a thread: the two starts overlap
        with each other and with the command's reading of its options and files."""
        if self._loader is None:
            self._loader = Run(1, self.setup)
            self._loader.prestart()
        if self._starting is None and self._client is None:
            self._starting = threading.Thread(
                target=self._start, name="gradcheck-dask-start", daemon=True
            )
            self._starting.start()

    def _start(self) -> None:
        try:
            self._connect()
        except BaseException as exc:  # raised in the command's thread by _started
            self._start_error = exc

    def _connect(self) -> None:
        try:
            import dask
            from distributed import Client, LocalCluster
        except ImportError:
            raise MissingExtra(
                "--executor dask needs Dask's distributed: pip install 'gradcheck[dask]'"
            ) from None
        try:
            if self.scheduler is None:
                settings = {
                    # Worker processes that may start processes (the gradcheck zygote,
                    # and the op's own), one task at a time each, quiet.
                    "distributed.worker.daemon": False,
                    # Each starts its zygote as it starts (the zygote's settings:
                    # SETUP_KEY).
                    "distributed.worker.preload": ["gradcheck.frontend.dask_preload"],
                    SETUP_KEY: list(dataclasses.astuple(self.setup)),
                    # The workers' (and so the checks') environment is the command's,
                    # as with --jobs: none of the malloc and BLAS settings a nanny gives
                    # its worker (MALLOC_TRIM_THRESHOLD_=65536 slows NumPy's allocations).
                    "distributed.nanny.pre-spawn-environ": {},
                    # CPU the checks need, which a LocalCluster spends by default on
                    # its own watching (3.5% of a core, idle; benchmarks/RESULTS.md):
                    # no sampling profiler every 10 ms, nor GIL monitor every 1 ms, in
                    # a worker; event loops checked every second, not every 20 ms; the
                    # system sampled every 10 s, not twice a second; no work stealing
                    # (the scheduler hands each worker its next task as it finishes
                    # one: queuing); and no memory monitor (memory_limit=0 below: a
                    # job's process has a limit of its own, --max-memory).
                    "distributed.worker.profile.enabled": False,
                    "distributed.admin.system-monitor.gil.enabled": False,
                    "distributed.admin.tick.interval": "1s",
                    "distributed.admin.system-monitor.interval": "10s",
                    "distributed.scheduler.work-stealing": False,
                }
                with dask.config.set(settings):
                    self._cluster = LocalCluster(
                        n_workers=self.n_jobs,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        # (its HTTP server, which serves no dashboard, on a free
                        # port: the default, 8787, may be taken, which Dask warns of)
                        scheduler_kwargs={"dashboard_address": ":0"},
                        silence_logs=40,
                        memory_limit=0,
                    )
                self._client = Client(self._cluster)
            else:
                self._client = Client(self.scheduler, timeout=30)
        except Exception as exc:  # OSError, TimeoutError, RuntimeError of a nanny...
            self._close_cluster()
            what = (
                f"cannot reach the Dask scheduler at {self.scheduler}"
                if self.scheduler is not None
                else "cannot start a Dask LocalCluster"
            )
            raise GradcheckError(f"{what} ({type(exc).__name__}: {exc})") from None

    def _started(self) -> None:
        """Wait for the cluster; its start's error, if any, is raised here."""
        self.prestart()
        self._join()
        if self._start_error is not None:
            raise self._start_error

    def _join(self) -> None:
        if self._starting is not None:
            self._starting.join()
            self._starting = None

    def load(self, function: Callable[..., Any], *args: Any, what: str = "the targets") -> Any:
        """``function(*args)`` in a local worker process (the loading of the targets, the
        HTML report's charts): user code never runs in the command, here neither. Then
        the cluster is waited for, so that an error starting it is reported as a load
        error is (one line, exit 2)."""
        self.prestart()
        assert self._loader is not None
        try:
            result = self._loader.load(function, *args, what=what)
        except BaseException:
            self._join()  # (the loading's error is the one to report)
            raise
        self._started()
        if not self._futures:  # the targets' loading, not the charts' after the run
            self._loads.append((function, args))
        return result

    def results(self, jobs: Sequence[Job]) -> Iterator[tuple[int, Outcome]]:
        """Check ``jobs`` on the cluster; their outcomes in order."""
        from distributed import as_completed

        self._started()
        self.jobs = list(jobs)
        context = _Context(self.setup, list(sys.path), self._loads, uuid.uuid4().hex)
        index_of = {}
        for index, job in enumerate(self.jobs):
            future = self._client.submit(
                _check_on_dask_worker,
                job,
                context,
                key=f"gradcheck-{index}-{job.spec}",
                pure=False,
                retries=0,
            )
            index_of[future.key] = index
            self._futures.append(future)
        pending = as_completed(self._futures)
        while self._next < len(self.jobs):
            if self._next in self._finished:
                index = self._next
                self._next += 1
                yield index, self._finished.pop(index)
                continue
            future = next(pending)
            index = index_of[future.key]
            try:
                outcome = future.result()
            except Exception as exc:
                outcome = GradcheckError(
                    f"{self.jobs[index].spec}: the Dask cluster could not run it ({exc})"
                )
            self._finished[index] = outcome
            if self.on_finished is not None:
                self.on_finished(index, outcome)

    def stop(self, signum: int) -> list[tuple[int, Outcome]]:
        """Cancel what has not finished (not run) and close the cluster."""
        for index, future in enumerate(self._futures):  # (futures are in job order)
            finished = future.done() and future.status == "finished"
            if finished and index >= self._next and index not in self._finished:
                self._finished[index] = future.result()
        self.close()
        out: list[tuple[int, Outcome]] = []
        for index in range(self._next, len(self.jobs)):
            outcome = self._finished.pop(index, None)
            if outcome is None or isinstance(outcome, BaseException):
                outcome = _not_run(self.jobs[index], None, signum)
            out.append((index, outcome))
        self._next = len(self.jobs)
        return out

    def close(self, graceful: bool = True) -> None:
        if self._loader is not None:
            self._loader.close(graceful)
            self._loader = None
        self._join()  # a cluster still starting is closed once up
        for future in self._futures:
            if not future.done():
                future.cancel()
        self._close_cluster()

    def _close_cluster(self) -> None:
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        try:
            if client is not None:
                client.close(timeout=5)
            if cluster is not None:
                # Nothing on our LocalCluster's workers is left to finish: killed, they
                # end at once (their zygotes and the jobs' processes die with them),
                # where a graceful close takes a second or two.
                for nanny in list(cluster.workers.values()):
                    pid = getattr(getattr(nanny, "process", None), "pid", None)
                    if pid:
                        os.kill(pid, signal.SIGKILL)
                cluster.close(timeout=5)
        except Exception:
            pass
