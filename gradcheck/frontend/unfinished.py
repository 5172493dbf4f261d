"""The result of a target whose worker could not report one, made by the coordinator
(:mod:`gradcheck.frontend.runner`): ``timed_out``, ``worker_died``, ``internal_error``
at the example it was checking, and ``not_run`` for a target a signal stopped.
"""

from __future__ import annotations

import math
import signal
import time
from typing import TYPE_CHECKING

from gradcheck.checking.vocabulary import Kind, Verdict
from gradcheck.frontend.jobs import Job, _size

if TYPE_CHECKING:
    from gradcheck.frontend.runner import _Running
    from gradcheck.search.verifier import VerifyResult


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
