"""What the coordinator of a ``gradcheck verify`` run sends its workers, as plain data
(:class:`Job`: one target and its settings; :class:`WorkerSetup`: what every worker
needs), what it keeps of a loaded target (:class:`ListedTarget`), and how many jobs
run at once and with how much memory (:func:`default_jobs`,
:func:`default_max_memory`).

Imports neither NumPy nor the search: the command imports it before the workers start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gradcheck.defaults import DEFAULT_EXAMPLE_TIMEOUT

if TYPE_CHECKING:
    from gradcheck.search.verifier import LoadedTarget


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
    #: The zygote may be forked from this process instead of spawned (Linux, and no
    #: other thread running at its start; else it is spawned): set by the command for
    #: its own process alone, which has imported nothing of the user's
    #: (:func:`gradcheck.frontend.worker.zygote_context`).
    fork: bool = False
    #: torch's intra-op threads in the workers (:func:`torch_threads`); None: torch's own
    #: count, which the user chose (``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS`` set).
    torch_threads: int | None = None


#: The environment variables with which a user chooses torch's intra-op threads (torch
#: reads them as it starts; so does the OpenMP runtime it brings).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def torch_threads(environ: Any = None) -> int | None:
    """torch's intra-op threads in a run's workers: one, unless the user chose (one of
    :data:`THREAD_VARIABLES` set: None, torch reads it as usual).

    torch starts a thread per core (two here), and some of its kernels hand even a
    tensor of a dozen elements to them (``x.unfold(-1, 3, 1).max(-1)``): on a loaded
    machine each such call then waits milliseconds for a thread to be scheduled
    (4.2 ms against 3.4 µs on one thread, benchmarks/RESULTS.md). A search draws small
    inputs, far below the 32,768 elements from which torch's kernels split their
    work, and a run of several targets checks one per core at once already (torch's
    own advice under multiprocessing: cores / processes threads each), so one thread
    costs a worker nothing it would gain from more. A target's module that sets its
    own count (``torch.set_num_threads``) as it is imported keeps it."""
    environ = os.environ if environ is None else environ
    if any(environ.get(name, "").strip() for name in THREAD_VARIABLES):
        return None
    return 1


@dataclass(frozen=True)
class ListedTarget:
    """A target as the coordinator knows it (the object itself stays in the worker
    that imported it): its name, whether it carries a @gradcheck.describe, and where
    it is defined (file relative to the working directory, line), when known."""

    name: str
    described: bool = False
    location: tuple[str | None, int | None] = (None, None)
    #: The names ``kwargs`` may give a value (its parameters, and positional ones
    #: such as ``alpha``); None: any keyword, or not known.
    keywords: tuple[str, ...] | None = None


def listed(target: LoadedTarget) -> ListedTarget:
    """What the coordinator keeps of a loaded target."""
    from gradcheck.frontend.ci_report import source_location
    from gradcheck.search.description import description_of

    return ListedTarget(
        target.name,
        description_of(target.obj) is not None,
        source_location(target.obj),
        _keywords(target.obj),
    )


def _keywords(obj: Any) -> tuple[str, ...] | None:
    from gradcheck.checking.signature import op_signature

    try:
        sig = op_signature(obj)
    except Exception:  # (what the check would say, it says there)
        return None
    return None if sig.any_keyword else (*sig.parameters, *sig.input_names)


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


def _size(n: int) -> str:
    return f"{n / 2**30:.3g} GiB" if n >= 2**30 else f"{n / 2**20:.3g} MiB"
