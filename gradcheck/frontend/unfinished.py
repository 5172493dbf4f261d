"""The result of a target whose worker could not report one, made by the coordinator
(:mod:`gradcheck.frontend.runner`): ``timed_out``, ``worker_died``, ``internal_error``
at the example it was checking, and ``not_run`` for a target a signal stopped.
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import signal
import struct
import tempfile
import time
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gradcheck.checking.vocabulary import Kind, Verdict
from gradcheck.frontend.jobs import Job, _size

if TYPE_CHECKING:
    import numpy as np

    from gradcheck.frontend.runner import _Running
    from gradcheck.search.verifier import VerifyResult


#: An example whose arrays hold more elements than this is sent to the coordinator by
#: its shapes only (it names the example a hang or a crash was on).
EXAMPLE_ELEMENTS_SENT = 4096


def _portable(arrays: Sequence[Any]) -> tuple[list[np.ndarray] | None, str]:
    """An example as the coordinator keeps it: the arrays when small, and always their
    dtypes and shapes as text."""
    import numpy as np

    arrays = [np.asarray(a) for a in arrays]
    shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in arrays)
    if sum(a.size for a in arrays) > EXAMPLE_ELEMENTS_SENT:
        return None, shapes
    return [np.array(a) for a in arrays], shapes


def sealed(arrays: Sequence[Any], check_seed: int) -> tuple[bytes, int]:
    """An example as a job's process leaves it before checking it (:class:`ExampleSlot`):
    :func:`_portable`'s pair already pickled, so that the coordinator, which opens it
    only where the process dies or times out on it (:func:`opened`), does not unpickle
    the arrays of every example, and the check seed."""
    return pickle.dumps(_portable(arrays), protocol=pickle.HIGHEST_PROTOCOL), check_seed


class ExampleSlot:
    """Where a job's process leaves each example before it checks it (:func:`sealed`,
    with how many examples it started, how many it counted of how many, and when it
    started this one), for the coordinator to read where it needs it: a process that
    died or timed out, an example's time limit, a progress bar. An unnamed file that
    both hold: the job's process passes its descriptor after its ``("started", ...)``
    message. One write an example and no message: a message each (7,400 in the
    built-in library's run) woke the coordinator for each, 2.3 of the run's 85 CPU
    seconds in the coordinator alone (benchmarks/RESULTS.md, 2026-12-07 23:15)."""

    #: examples started, done, total, when this one started (time.monotonic: one
    #: clock for every process), its check seed, its pickle's length and CRC-32
    HEAD = struct.Struct("<qqqdqqI")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.started = 0

    @classmethod
    def create(cls) -> ExampleSlot:
        if hasattr(os, "memfd_create"):
            return cls(os.memfd_create("gradcheck-example", os.MFD_CLOEXEC))
        with tempfile.TemporaryFile() as file:  # (unlinked already)
            return cls(os.dup(file.fileno()))

    def write(self, example: tuple[bytes, int], done: int, total: int) -> None:
        """The example the process starts now (after ``done`` of ``total``)."""
        payload, check_seed = example
        self.started += 1
        head = self.HEAD.pack(
            self.started, done, total, time.monotonic(), check_seed, len(payload),
            zlib.crc32(payload),
        )
        os.pwrite(self.fd, head + payload, 0)

    @classmethod
    def read(cls, fd: int) -> tuple[int, int, int, float, tuple[bytes, int]] | None:
        """(started, done, total, when, the sealed example) as last written; None
        before the first. A read that met a write (its CRC wrong) is made again."""
        for _ in range(100):
            head = os.pread(fd, cls.HEAD.size, 0)
            if len(head) < cls.HEAD.size:
                return None
            started, done, total, when, seed, length, crc = cls.HEAD.unpack(head)
            payload = os.pread(fd, length, cls.HEAD.size)
            if len(payload) == length and zlib.crc32(payload) == crc:
                return started, done, total, when, (payload, seed)
            time.sleep(0.001)
        return None


#: Seconds between two readings of a job's examples counted, while a progress bar shows them.
PROGRESS_EVERY = 0.1


def _read_slot(running: _Running) -> None:
    """What the job's ExampleSlot says: the example it checks now, when that started,
    the examples counted (a progress bar told where they changed)."""
    got = None if running.slot is None else ExampleSlot.read(running.slot)
    if got is None or got[0] == running.examples_started:
        return
    running.examples_started, done, total, running.beat, running.example = got
    if done != running.done:
        running.done = done
        if running.progress is not None:
            running.progress(done, total)


def opened(
    example: tuple[bytes, int] | None,
) -> tuple[list[np.ndarray] | None, str, int] | None:
    """A :func:`sealed` example as the result reports it: (arrays or None, their shapes
    as text, check seed)."""
    if example is None:
        return None
    arrays, shapes = pickle.loads(example[0])
    return arrays, shapes, example[1]


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
    return unfinished_result(
        job.spec,
        running.settings or {k: v for k, v in job.settings.items() if k != "seed"},
        int(job.settings.get("seed", 0)),
        verdict=verdict,
        kind=kind,
        message=message,
        elapsed=elapsed,
        example=opened(running.example),
        started=running.examples_started,
        done=running.done,
        input_names=running.input_names,
    )


def unfinished_result(
    spec: str,
    settings: dict[str, Any],
    seed: int,
    *,
    verdict: str,
    kind: str,
    message: str,
    elapsed: float,
    example: tuple[list[np.ndarray] | None, str, int] | None,
    started: int,
    done: int,
    input_names: Sequence[str] = (),
) -> VerifyResult:
    """A search's result made where it did not report one (its process died, ran out
    of time, or gradcheck failed): a failure of ``kind`` at ``example``, the (arrays or
    None, their shapes as text, check seed) of the ``started``-th example drawn, its
    inputs named as the op names them: the command line's report and the pytest
    plugin's alike."""
    from gradcheck.checking.result import CheckResult, Failure
    from gradcheck.search.verifier import VerifyResult

    arrays, shapes, check_seed = example or ([], "", 0)
    if example is not None:
        shown = "the example below" if arrays else f"an example of shapes {shapes}"
        message += f"; it was checking {shown} (example {started} drawn)"
        message += ", too large to be shown" if not arrays else ""
    check = CheckResult(
        verdict=Verdict.FAILED,
        target=spec,
        failure=Failure(kind, message),
        inputs=list(arrays or []),
        params=dict(settings.get("kwargs") or {}),
        seed=check_seed,
        input_names=list(input_names),
    )
    return VerifyResult(
        target=spec,
        passed=False,
        verdict=verdict,
        examples=done,
        rejected=0,
        failure=check,
        max_abs_error=math.nan,
        max_rel_error=math.nan,
        error_ratio=math.nan,
        seconds=elapsed,
        seed=seed,
        settings=settings,
    )


class ExampleLog:
    """Where a search run in a forked child (the pytest plugin's) keeps the example it
    is on, so that the parent can report it when the child dies (``os._exit``, a
    crash): a file rewritten before each example. In the child, :meth:`named` takes
    the inputs' names once the target is resolved, and the log is ``verify``'s
    ``on_example``; in the parent, :meth:`died` makes the result the command line
    would report, and :meth:`close` removes the file."""

    def __init__(self) -> None:
        fd, self.path = tempfile.mkstemp(prefix="gradcheck-example-", suffix=".pickle")
        os.close(fd)
        self.started = 0
        self.input_names: tuple[str, ...] = ()
        self.example: tuple[list[np.ndarray] | None, str, int] | None = None
        self.started_at = time.monotonic()

    def named(self, names: Sequence[str]) -> None:
        self.input_names = tuple(names)
        self._write()

    def __call__(self, arrays: Sequence[np.ndarray], check_seed: int) -> None:
        self.started += 1
        self.example = (*_portable(arrays), check_seed)
        self._write()

    def _write(self) -> None:
        data = pickle.dumps((self.input_names, self.example, self.started))
        with open(self.path, "wb") as stream:
            stream.write(data)

    def died(
        self,
        spec: str,
        settings: dict[str, Any],
        died: BaseException,
        input_names: Sequence[str] = (),
    ) -> VerifyResult:
        """The failure of the search whose process ended (``died``, a ``WorkerDied``:
        its message and kind): at the example it was on, its inputs named
        ``input_names`` (else as the child named them)."""
        message = str(died)
        try:
            with open(self.path, "rb") as stream:
                names, example, started = pickle.loads(stream.read())
        except Exception:  # nothing written (it died loading the target) or cut short
            names, example, started = (), None, 0
        if example is None:
            message += " before its first example (while loading it?)"
        given = {k: v for k, v in settings.items() if k != "seed"}
        return unfinished_result(
            spec,
            given,
            int(settings.get("seed") or 0),
            verdict=Verdict.FAILED,
            kind=getattr(died, "kind", None) or Kind.WORKER_DIED,
            message=message,
            elapsed=time.monotonic() - self.started_at,
            example=example,
            started=started,
            done=max(started - 1, 0),
            input_names=input_names or names,
        )

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path)


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
