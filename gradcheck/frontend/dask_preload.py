"""Imported by each worker of gradcheck's Dask LocalCluster as it starts (Dask's
``distributed.worker.preload``): the worker starts its gradcheck run's zygote at once
(which imports NumPy, Hypothesis and the checker, and warms up, while the Dask worker
goes on to connect to the scheduler), so that its first task does not wait for it
(gradcheck.frontend.dask_executor)."""

from typing import Any

from gradcheck.frontend.dask_executor import SETUP_KEY, close_worker_runs, start_worker_run
from gradcheck.frontend.jobs import WorkerSetup


def _setup_fields() -> Any:
    """The run's settings a Dask worker was started with, or None: also where the module
    is imported without Dask (a walk of the package, pytest's doctest collection on a
    machine without the extra), where there is nothing to start."""
    try:
        import dask
    except ImportError:
        return None
    return dask.config.get(SETUP_KEY, None)


# At import, not in dask_setup: the earliest moment, and in the main thread (the zygote
# dies with the thread that started it).
_fields = _setup_fields()
if _fields is not None:
    start_worker_run(WorkerSetup(*_fields))


def dask_teardown(worker: Any) -> None:
    close_worker_runs()
