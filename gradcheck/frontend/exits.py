"""How the ``gradcheck`` command ends: an error as one line and its exit code
(:func:`_fail`), a bug of gradcheck's own with its traceback
(:func:`_report_internal_error`), the process's end without the interpreter's teardown
(:func:`_end_process`), the standard streams guarded at the start, and the folders the
command works in (the working directory, Hypothesis's files).

Like :mod:`gradcheck.cli`, it imports neither NumPy nor the engine.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Iterator
from typing import Any, NoReturn

import click

from gradcheck.errors import InternalError, RemoteError


def _end_process(code: Any) -> None:
    """End the command's process now that it has said everything: its output flushed,
    then os._exit, without the interpreter's teardown (freeing every module's objects:
    tenths of a second after the summary, for nothing). No user code ran here, so no
    exit handler of the user's is skipped; a coverage run (which saves at exit) is left
    to end as usual, and so is a process with anything else still running (a thread,
    a child process: a Dask cluster's), which the interpreter's exit would join."""
    import multiprocessing
    import threading

    if "coverage" in sys.modules or multiprocessing.active_children():
        return
    if any(t.is_alive() and not t.daemon for t in threading.enumerate()[1:]):
        return
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): Python prints it, status 1
        _write_stderr(f"{code}\n")
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a closed pipe: what was lost is already reported
            pass
    os._exit(code)


def _write_stderr(text: str) -> None:
    try:
        sys.stderr.write(text)
    except Exception:
        pass


def _guard_standard_streams() -> list[int]:
    """Descriptors 0-2 that were closed, each now open on the null device (so that no
    file the command opens takes its number); and a terminal that cannot encode a
    character (a non-ASCII op name, an ASCII locale) shows it as an escape."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            setattr(sys, name, open(1 if name == "stdout" else 2, "w", closefd=False))
            stream = getattr(sys, name)
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    return closed


def _report_internal_error(exc: BaseException, context: str = "") -> None:
    """A bug of gradcheck's own, not of the op nor of the input: its traceback (the
    worker's, for a :class:`RemoteError`), always, then the one line asking for a report."""
    if isinstance(exc, RemoteError):
        name, trace = exc.type_name, exc.remote_traceback
    else:
        name, trace = type(exc).__name__, "".join(traceback.format_exception(exc))
    click.echo(trace.rstrip(), err=True)
    click.echo(
        f"Error: {context}internal error {name}: {exc} (a bug in gradcheck: please report "
        f"it, with the traceback above)",
        err=True,
    )


def _fail(message: str, code: int, exc: BaseException | None, verbose: bool) -> NoReturn:
    if isinstance(exc, InternalError):
        # a bug of gradcheck's own (a RemoteError: raised in the worker that loaded the
        # targets): its traceback and the request to report it, as anywhere else
        _report_internal_error(exc)
        raise click.exceptions.Exit(InternalError.exit_code)
    if verbose and exc is not None:
        cause = exc.__cause__ or exc
        # (an error from a worker carries its traceback as text)
        trace = getattr(exc, "remote_traceback", None) or "".join(traceback.format_exception(cause))
        click.echo(trace.rstrip(), err=True)
    click.echo(f"Error: {message}", err=True)
    raise click.exceptions.Exit(code)


def _working_directory(verbose: bool) -> str:
    try:
        return os.getcwd()
    except OSError as exc:
        _fail(
            f"the working directory cannot be read ({exc.strerror}: was it deleted?); "
            f"cd to an existing folder",
            2,
            exc,
            verbose,
        )


def _hypothesis_home() -> str | None:
    """Where Hypothesis may keep its files during a command: our cache folder, not
    ./.hypothesis (it caches what it learns, e.g. constants found in the user's code,
    and a command run in someone's project should not leave that behind); None when
    the user chose a folder (HYPOTHESIS_STORAGE_DIRECTORY)."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return None
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "gradcheck", "hypothesis")


@contextlib.contextmanager
def _hypothesis_files_out_of_the_working_directory() -> Iterator[None]:
    """Hypothesis's home is :func:`_hypothesis_home` while inside, and what it was
    after (set_hypothesis_home_dir exists in every Hypothesis we support; the
    environment variable is read only by recent ones, and would outlive the command)."""
    from hypothesis import configuration

    home = _hypothesis_home()
    if home is None:
        yield
        return
    before = getattr(configuration, "__hypothesis_home_directory", None)
    configuration.set_hypothesis_home_dir(home)
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(before)
