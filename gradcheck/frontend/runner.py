"""Run the targets of a ``gradcheck verify`` run: in this process, or in worker
processes (``--jobs N``).

A :class:`Job` is plain data (the target's spec, the keyword arguments of
:func:`gradcheck.verify` with the target's seed among them), so that it pickles and a
worker started with ``spawn`` (the only start method on Windows and macOS, and the
one used here everywhere, so every platform behaves alike) rebuilds the target by
loading the spec again. Each target's seed is fixed before any job starts, so a
parallel run checks the same examples as a serial one, and results come back in the
order of the jobs: the output is the same.

An error in a job (a bad setting, an op that cannot be loaded in the worker) is raised
in the calling process when that job's turn comes, as it would be in a serial run.
"""

from __future__ import annotations

import multiprocessing
import pickle
import traceback
import warnings
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from gradcheck.errors import GradcheckError, LoadError, RemoteError
from gradcheck.frontend.loading import load_targets
from gradcheck.search.verifier import LoadedTarget, VerifyResult, verify

__all__ = ["Job", "RemoteError", "run_job", "run_jobs"]


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
    """

    spec: str
    settings: dict[str, Any] = field(default_factory=dict)
    verbose: bool = False


def run_job(
    job: Job,
    target: LoadedTarget | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> VerifyResult:
    """Check one job in this process (``target`` is loaded from ``job.spec`` when not
    given)."""
    if target is None:
        found = load_targets(job.spec)
        if len(found) != 1:
            raise LoadError(f"'{job.spec}' names {len(found)} targets, not one")
        target = found[0]
    with warnings.catch_warnings():
        # NumPy's "invalid value encountered in log" and the like, from the op evaluated
        # at generated and perturbed points: the checker reports what matters (a
        # non-finite output is a failure); --verbose shows them.
        if not job.verbose:
            warnings.simplefilter("ignore", RuntimeWarning)
        return verify(target, **job.settings, progress=progress)


def _work(job: Job) -> tuple[VerifyResult | None, BaseException | None]:
    """A worker's whole task: the result, or the error to raise in the parent."""
    try:
        return run_job(job), None
    except Exception as exc:
        if isinstance(exc, GradcheckError) and _pickles(exc):
            return None, exc.with_traceback(None)
        text = "".join(traceback.format_exception(exc))
        return None, RemoteError(type(exc).__name__, str(exc), text)


def _pickles(exc: BaseException) -> bool:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return False
    return True


def run_jobs(
    jobs: Sequence[Job],
    n_jobs: int = 1,
    *,
    targets: Sequence[LoadedTarget] | None = None,
    progress: Callable[[Job], Callable[[int, int], None] | None] | None = None,
) -> Generator[VerifyResult, None, None]:
    """The results of ``jobs``, in their order.

    With ``n_jobs`` 1 (or a single job) they run here, one by one, on the already
    loaded ``targets`` and with ``progress(job)`` as each one's progress callback;
    otherwise in ``n_jobs`` spawned worker processes, without progress. The first
    error (in job order) is raised and the jobs not yet started are cancelled.
    """
    if n_jobs <= 1 or len(jobs) <= 1:
        for i, job in enumerate(jobs):
            target = targets[i] if targets is not None else None
            yield run_job(job, target, progress(job) if progress is not None else None)
        return
    context = multiprocessing.get_context("spawn")
    executor = ProcessPoolExecutor(max_workers=min(n_jobs, len(jobs)), mp_context=context)
    try:
        for result, error in executor.map(_work, jobs):
            if error is not None:
                raise error
            assert result is not None
            yield result
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
