"""Imported by each worker of gradcheck's Dask LocalCluster as it starts (Dask's
``distributed.worker.preload``): what every check needs, so that the first task does
not wait for it (gradcheck.frontend.dask_executor)."""

import hypothesis  # noqa: F401

import gradcheck.checking.checker
import gradcheck.frontend.dask_executor
import gradcheck.strategies  # noqa: F401
