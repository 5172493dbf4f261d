"""Reading the files a user names, writing the ones ``gradcheck verify`` produces, and
keeping stdout for the command's own output.

Reading (:func:`read_text`): the configuration and the baseline are small text files.
The file is opened without blocking (a FIFO named by mistake would wait for a writer
forever), must be a regular file no larger than a limit (``/dev/zero`` and an 8 GB
file are refused before a byte is read), and must be UTF-8; any problem is one line
naming the file.

Writing (:class:`OutputFile`): a path given on the command line is resolved against
the working directory when the command starts (an op may ``chdir``), checked before
any check runs (so that a typo does not cost the whole run), its missing parent
folders created (as pytest does for ``--junitxml``); the content goes to a temporary
file in the same folder, renamed over the destination only once it is complete, so a
write that fails half-way leaves the previous file as it was. The destination must be
a regular file or none: a folder, a FIFO (a write would wait for a reader forever) or
a device is refused before any check runs. A symbolic link is replaced by the file,
never written through: in CI, a committed link must not aim a report at another file.

Stdout (:func:`stdout_to_stderr`): with a format whose stdout is one document (JSON),
whatever the user's code writes there goes to stderr: ``print``, ``sys.__stdout__``,
``os.write(1, ...)`` and C code alike, by pointing file descriptor 1 at stderr while
the user's code runs (importing the targets here; the checks run in workers, whose
descriptor 1 is stderr from the start).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from gradcheck.errors import GradcheckError

__all__ = ["OutputFile", "read_text", "stdout_to_stderr", "unreadable_number"]


def read_text(path: Path | str, *, what: str, limit: int, error: type[GradcheckError]) -> str:
    """The text of a small regular UTF-8 file.

    Raises
    ------
    error
        One line ``PATH: cannot read the WHAT (...)`` or ``PATH: not a WHAT: ...``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise error(f"{path}: cannot read the {what}: {kind}")
        if info.st_size > limit:
            raise error(
                f"{path}: the {what} is {info.st_size:,} bytes, more than the {limit:,} a "
                f"{what} may have; is it the right file?"
            )
        with os.fdopen(fd, "rb", closefd=False) as stream:
            data = stream.read(limit + 1)
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror})") from None
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while read
        raise error(f"{path}: the {what} is more than {limit:,} bytes; is it the right file?")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(
            f"{path}: the {what} is not UTF-8 text (byte {data[exc.start]:#04x} at offset "
            f"{exc.start}); save it as UTF-8"
        ) from None


def unreadable_number(exc: ValueError) -> str:
    """What a parser's ValueError means to the user: Python refuses integers of more
    than 4300 digits (its advice to raise the limit is not for them)."""
    if "digits" in str(exc):
        return "a number has more than 4300 digits"
    return str(exc)


class OutputFile:
    """A file ``gradcheck verify`` will write: checked now, written atomically later.

    Raises
    ------
    error
        (from the constructor) The path is a folder, or its folder cannot be created
        or written to: one line naming the path.
    """

    def __init__(self, path: Path | str, *, what: str, error: type[GradcheckError]) -> None:
        self.given, self.what, self.error = str(path), what, error
        # Absolute now: the checks may change the working directory.
        self.path = Path(os.path.abspath(path))
        self._check()

    def _fail(self, problem: str) -> GradcheckError:
        return self.error(f"{self.given}: cannot write the {self.what} ({problem})")

    def _check(self) -> None:
        # The folder's links are followed (a link to a folder is the user's choice);
        # the file's own is not: it is replaced.
        target = Path(os.path.realpath(self.path.parent)) / self.path.name
        try:
            info = os.lstat(target)
        except OSError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise self._fail("it is a folder; give a file name")
        if info is not None and stat.S_ISLNK(info.st_mode):
            try:  # a link to a device (/dev/stdout) is not replaced either
                info = os.stat(target)
            except OSError:
                info = None  # a dangling link: replaced
        if info is not None and not stat.S_ISREG(info.st_mode):
            raise self._fail(
                "it is not a regular file (a FIFO, a device or a socket); give a file name"
            )
        self.path = target
        folder = target.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._fail(f"cannot create the folder {folder}: {exc.strerror}") from None
        try:  # the one reliable test: create a file there (and remove it)
            fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise self._fail(f"cannot create a file in {folder}: {exc.strerror or exc}") from None
        os.close(fd)
        os.unlink(probe)

    def write(self, data: bytes) -> None:
        """Write ``data``: to a temporary file renamed over the destination (a regular
        file or none), or in place (anything else).

        Raises
        ------
        error
            The write failed; the previous file is unchanged and no temporary file is
            left.
        """
        target = self.path
        try:
            info = os.lstat(target) if os.path.lexists(target) else None
            if info is not None and not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                raise self._fail("it is no longer a regular file")
            self._replace(target, data)
        except OSError as exc:
            raise self.error(
                f"{self.given}: cannot write the {self.what} ({exc.strerror or exc}); the "
                f"previous file, if any, is unchanged"
            ) from None

    @staticmethod
    def _replace(target: Path, data: bytes) -> None:
        fd, temporary = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
        )
        try:
            with os.fdopen(fd, "wb") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            if target.is_file() and not target.is_symlink():
                os.chmod(temporary, stat.S_IMODE(target.stat().st_mode))
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(temporary, 0o666 & ~umask)
            os.replace(temporary, target)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise


@contextlib.contextmanager
def stdout_to_stderr(active: bool = True) -> Iterator[None]:
    """While inside (when ``active``), writes to stdout go to stderr, at the level of
    the file descriptor as well as of ``sys.stdout``; the command's own stdout is
    restored after, with nothing of the user's left in its buffers."""
    if not active:
        yield
        return
    _flush_all()
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no descriptor 1 (closed): sys.stdout alone is redirected
        saved = None
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        _flush_all()  # the user's writes, buffered in Python or in C, go to stderr
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _flush_all() -> None:
    for stream in (sys.stdout, sys.__stdout__, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    if os.name == "posix":  # C's stdio buffers (printf in an extension)
        import ctypes

        try:
            ctypes.CDLL(None).fflush(None)
        except (OSError, AttributeError):
            pass
