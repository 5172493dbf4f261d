"""``gradcheck verify --executor dask``: the run's jobs on a Dask cluster.

Dask's ``distributed`` (the optional extra ``gradcheck[dask]``) schedules the jobs: on
the cluster whose scheduler ``--scheduler ADDRESS`` names, or, without one, on a
``LocalCluster`` of ``--jobs`` worker processes started for the run. A job is one
target with its seed (with ``--seeds S``, one of the target's seeds).

The local runner's guarantees hold because a Dask worker does not check a target
itself: each task starts a gradcheck run of its own (:class:`gradcheck.frontend.runner.
Run`, its zygote forked from the Dask worker, which preloads NumPy, Hypothesis and the
checker), whose process checks the job, enforces ``--timeout`` and ``--example-timeout``,
and whose death (an op's ``os._exit``, a crash in native code) fails that target alone
with ``worker_died`` while the Dask worker carries on. So Dask never retries a target
that killed its process, nothing of one task reaches the next, and nothing hangs. The
command yields the outcomes in the order of the jobs, as the local runner does, and
reports each target as soon as it finishes. SIGINT and SIGTERM cancel what has not
finished (its targets are ``not_run``) and close the cluster.

The workers of a cluster you start yourself must import the targets (your project
installed, or on their ``PYTHONPATH``) and may start processes:
``DASK_DISTRIBUTED__WORKER__DAEMON=False dask worker ADDRESS --nthreads 1``.
"""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from gradcheck.errors import GradcheckError, MissingExtra
from gradcheck.frontend.runner import Job, Outcome, Run, WorkerSetup, _not_run

__all__ = ["DaskRun"]


def _new_run(setup: WorkerSetup) -> Run:
    run = Run(1, setup)
    # This Dask worker has NumPy, Hypothesis and gradcheck imported already (its
    # preload): a zygote forked from it starts with them at once.
    run._context = multiprocessing.get_context("fork")  # type: ignore[assignment]
    return run


def _check_on_dask_worker(job: Job, setup: WorkerSetup, sys_path: list[str]) -> Outcome:
    """The task: check ``job`` in a process of a gradcheck run of its own (its zygote
    forked from this Dask worker, the job's process from the zygote), closed after it:
    nothing of one task reaches the next."""
    sys.path[:] = sys_path  # the coordinator's, where the project's folder may be
    run = _new_run(setup)
    try:
        return run.check(job)
    except BaseException as exc:  # reported as the job's outcome
        return exc
    finally:
        run.close(graceful=False)


class DaskRun:
    """The jobs of a run on a Dask cluster; the interface of :class:`Run`."""

    def __init__(
        self,
        n_jobs: int,
        setup: WorkerSetup,
        scheduler: str | None = None,
        on_finished: Callable[[int, Outcome], None] | None = None,
    ) -> None:
        self.n_jobs, self.setup, self.scheduler = max(1, n_jobs), setup, scheduler
        self.on_finished = on_finished
        self.jobs: list[Job] = []
        self._client: Any = None
        self._cluster: Any = None
        self._futures: list[Any] = []
        self._loader: Run | None = None
        self._finished: dict[int, Outcome] = {}
        self._next = 0

    def prestart(self) -> None:
        """Start the cluster (or connect to the scheduler) now, while the command loads
        the targets."""
        if self._client is not None:
            return
        try:
            import dask
            from distributed import Client, LocalCluster
        except ImportError:
            raise MissingExtra(
                "--executor dask needs Dask's distributed: pip install 'gradcheck[dask]'"
            ) from None
        try:
            if self.scheduler is None:
                # Worker processes that may start processes (the gradcheck worker, and
                # the op's own), one task at a time each, quiet.
                settings = {
                    "distributed.worker.daemon": False,
                    # What every check needs, imported as each worker starts.
                    "distributed.worker.preload": ["gradcheck.frontend.dask_preload"],
                }
                with dask.config.set(settings):
                    self._cluster = LocalCluster(
                        n_workers=self.n_jobs,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        silence_logs=40,
                    )
                self._client = Client(self._cluster)
            else:
                self._client = Client(self.scheduler, timeout=30)
        except Exception as exc:  # OSError, TimeoutError, RuntimeError of a nanny...
            self.close()
            what = (
                f"cannot reach the Dask scheduler at {self.scheduler}"
                if self.scheduler is not None
                else "cannot start a Dask LocalCluster"
            )
            raise GradcheckError(f"{what} ({type(exc).__name__}: {exc})") from None

    def load(self, function: Callable[..., Any], *args: Any, what: str = "the targets") -> Any:
        """``function(*args)`` in a local worker process (the loading of the targets, the
        HTML report's charts): user code never runs in the command, here neither."""
        if self._loader is None:
            self._loader = Run(1, self.setup)
        return self._loader.load(function, *args, what=what)

    def results(self, jobs: Sequence[Job]) -> Iterator[tuple[int, Outcome]]:
        """Check ``jobs`` on the cluster; their outcomes in order."""
        from distributed import as_completed

        self.prestart()
        self.jobs = list(jobs)
        index_of = {}
        for index, job in enumerate(self.jobs):
            future = self._client.submit(
                _check_on_dask_worker,
                job,
                self.setup,
                list(sys.path),
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
        if self._client is None:
            return
        for future in self._futures:
            if not future.done():
                future.cancel()
        try:
            self._client.close(timeout=5)
            if self._cluster is not None:
                self._cluster.close(timeout=5)
        except Exception:
            pass
        self._client = self._cluster = None
