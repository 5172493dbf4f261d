"""Imported by each worker of gradcheck's Dask LocalCluster as it starts (Dask's
``distributed.worker.preload``): the worker starts its gradcheck run (its zygote, which
imports NumPy, Hypothesis and the checker, and warms up) while it connects to the
scheduler, so that its first task does not wait for it
(gradcheck.frontend.dask_executor)."""

from typing import Any

import dask

from gradcheck.frontend.dask_executor import SETUP_KEY, close_worker_runs, start_worker_run
from gradcheck.frontend.runner import WorkerSetup


def dask_setup(worker: Any) -> None:
    fields = dask.config.get(SETUP_KEY, None)
    if fields is not None:
        start_worker_run(WorkerSetup(*fields))


def dask_teardown(worker: Any) -> None:
    close_worker_runs()
