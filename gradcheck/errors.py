"""Every exception gradcheck defines.

Every error a user can meet derives from :class:`GradcheckError`, so that a caller
(the CLI, a test) can catch the whole family at once, and each class carries the exit
code the ``gradcheck`` command reports it with (the way click's exceptions do):

====  ======================================================================
0     every target passed (no exception)
1     a check failed: :class:`InvalidGradient`, :class:`TargetRaised`,
      :class:`GradcheckFailure`
2     a usage, load or configuration error: the rest
5     the run checked nothing (:class:`NothingToCheck`), as pytest's "no tests
      collected": a module that offers no target, an empty ``targets`` list
101   an internal error, a bug of gradcheck's own (:class:`InternalError`);
      the traceback is printed with a request to report it
130   SIGINT stopped the run (:class:`Interrupted`); 143 SIGTERM
====  ======================================================================

:class:`SkipGradient` and :class:`Interrupted` are not errors: an
:meth:`Operation.backward_var` raises the first to say "this input receives no gradient
from me", and the engine catches it; ``gradcheck verify``'s signal handler raises the
second to stop a run. Two private signals stay beside the loops that raise and catch
them and never leave their module
(``checker._Fail`` ends one check with its failure, ``verifier._ExampleFailed`` marks a
failing example inside the Hypothesis test).

The modules that raise an error also export its name (``gradcheck.checking.target.
TargetRaised``, ``gradcheck.frontend.config.ConfigError``...), where it was defined
before this module held them all.
"""

from __future__ import annotations

import re

__all__ = [
    "WorkerDied",
    "GradcheckError",
    "InvalidGradient",
    "InvalidBackprop",
    "DisconnectedView",
    "UnsupportedDtype",
    "SkipGradient",
    "LoadError",
    "ModuleLoadError",
    "TargetNotFound",
    "EmptyModule",
    "NothingToCheck",
    "NotATarget",
    "TargetRaised",
    "InvalidDescription",
    "CheckUsageError",
    "ComplexStepUnsupported",
    "MissingExtra",
    "ConfigError",
    "BaselineError",
    "MergeError",
    "OutputError",
    "GradcheckFailure",
    "InternalError",
    "RemoteError",
    "Interrupted",
]


class GradcheckError(Exception):
    """Base class of every error gradcheck raises on purpose."""

    #: The exit status of the ``gradcheck`` command when this error ends a run:
    #: 2 for usage and load errors, 1 for a failed check, 101 for a bug of gradcheck's.
    exit_code: int = 2


# --- the engine ------------------------------------------------------------------------


class InvalidGradient(GradcheckError):
    """A gradient that is not a real number or a numeric array, or that cannot have
    the shape of the tensor it belongs to, was produced by an operation's
    ``backward_var`` or passed to ``Tensor.backward``."""

    exit_code = 1


class InvalidBackwardGradient(InvalidGradient, TypeError, ValueError):
    """The gradient passed to ``Tensor.backward`` cannot be that tensor's: it is not a
    real number or an array-like of them, or its shape does not broadcast to the
    tensor's. Also a ``TypeError`` and a ``ValueError``, the errors MyGrad raises
    there (NumPy's, converting such a gradient)."""


class InvalidBackprop(GradcheckError):
    """Backpropagation was started through a graph that was already cleared, or from a
    non-scalar tensor of a graph that only supports backprop from a scalar."""

    exit_code = 2


class DisconnectedView(GradcheckError):
    """A view's op was asked to replay (``Tensor._replay_op``) after the graph that
    made the view was cleared: there is no op left to replay."""

    exit_code = 2


class UnsupportedDtype(GradcheckError, TypeError):
    """An op was given a floating dtype it cannot compute in: NumPy's ``linalg`` has
    no float16 (nor long double) routines, so ``gradcheck.linalg.inv``, ``det``,
    ``slogdet``, ``solve`` and the SVD-based matrix norms refuse them. The message names
    the op and the dtype. A ``TypeError``, as NumPy's own refusal is."""

    exit_code = 2


class SkipGradient(Exception):
    """Raised by ``Operation.backward_var`` to send no gradient to one input.

    This is a signal, not an error: ``Operation.backward`` catches it and moves on to
    the next input.
    """


# --- loading and resolving targets -----------------------------------------------------


class LoadError(GradcheckError):
    """A target named on the command line (or in a test) could not be loaded.

    The message is one line saying which target and why; the exception that caused
    it, if any, is chained as ``__cause__``.
    """

    exit_code = 2


class ModuleLoadError(LoadError):
    """The module of a target does not exist or raised while it was imported."""

    exit_code = 2


class TargetNotFound(LoadError):
    """The module has no attribute of the given name, or offers no target at all."""

    exit_code = 2


class EmptyModule(TargetNotFound):
    """The module names no target: it defines no ``Operation`` subclass and no function
    marked with :func:`gradcheck.describe`. A load error to a caller of ``load_targets``;
    a ``gradcheck verify`` run that finds nothing else to check exits with
    :class:`NothingToCheck`'s code."""

    exit_code = 2


class NothingToCheck(GradcheckError):
    """A run selected no target to check (every module it names offers none, the
    configuration lists no target): exit status 5, as pytest's when it collects no
    test, so that a CI job that checked nothing does not pass for one that checked."""

    exit_code = 5


class NotATarget(GradcheckError):
    """The object named as a target is neither an ``Operation`` subclass nor a
    function of Tensors."""

    exit_code = 2


# Control characters (ESC, CR, LF...), and the Unicode line separators and direction
# overrides: what could move a terminal's cursor, retitle it, or start a line that a CI
# runner reads as a command ("::error ...").
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` (from the user's code or files) as one line that is safe to print:
    each control character as its Python escape.

    >>> print(printable("name\\n::error::x\\x1b[2J"))
    name\\n::error::x\\x1b[2J
    """
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def exception_text(exc: BaseException) -> str:
    """``"Type: message"`` of an exception the user's code raised, printable (one line,
    no control characters), even when its ``__str__`` raises (then a stand-in says so):
    reporting it must not fail."""
    try:
        message = printable(str(exc))
    except Exception:
        message = "<its message cannot be shown: its __str__ raised>"
    return f"{type(exc).__name__}: {message}"


class TargetRaised(GradcheckError):
    """The target's forward or backward raised; ``phase`` says which and
    ``exception`` is the original exception (also its ``__cause__``)."""

    exit_code = 1

    def __init__(self, phase: str, exception: BaseException) -> None:
        super().__init__(f"{phase} raised {exception_text(exception)}")
        self.phase = phase
        self.exception = exception


# --- settings and checks ---------------------------------------------------------------


class InvalidDescription(GradcheckError):
    """An input description (from :func:`gradcheck.describe`, the command line or a
    call to :func:`gradcheck.verify`) has a bad value: the message names it and says
    what is expected."""

    exit_code = 2
    #: The setting at fault ("shapes", "domain", "kwargs"...), when known, so that a
    #: front end can name the option or config key that set it.
    field: str | None = None


class CheckUsageError(GradcheckError, ValueError):
    """``check`` was called with arguments it cannot use (wrong number of inputs, an
    unknown setting, an unknown mode)."""

    exit_code = 2


class ComplexStepUnsupported(GradcheckError, ValueError):
    """The complex step was asked for, but the target does not compute with complex
    input (it raised, or returned a real array)."""

    exit_code = 2


class MissingExtra(GradcheckError):
    """An optional dependency is not installed; the message names the extra."""

    exit_code = 2


# --- the front ends --------------------------------------------------------------------


class ConfigError(GradcheckError):
    """A configuration file cannot be read or holds a bad key or value."""

    exit_code = 2


class BaselineError(GradcheckError):
    """A baseline file cannot be read or is not a gradcheck baseline."""

    exit_code = 2


class MergeError(GradcheckError):
    """Files ``gradcheck merge`` cannot merge: not a shard's output, shards of
    different runs, a shard given twice or missing."""

    exit_code = 2


class OutputError(GradcheckError):
    """A file the command was asked to write (``--junit-xml``, ``--save-baseline``)
    cannot be written: its folder cannot be created, it is a folder, or the write
    failed (the previous file is then unchanged)."""

    exit_code = 2


class GradcheckFailure(GradcheckError):
    """A target collected by the pytest plugin failed; the message is the whole
    report."""

    exit_code = 1


class InternalError(GradcheckError):
    """An unexpected exception in gradcheck itself (not in the op, not in the user's
    input): a bug to report. The ``gradcheck`` command prints its traceback."""

    exit_code = 101


class RemoteError(InternalError):
    """An unexpected exception raised in a worker, re-raised here with its type name
    and traceback text (the exception itself may not pickle)."""

    exit_code = 101

    def __init__(self, type_name: str, message: str, remote_traceback: str) -> None:
        super().__init__(message)
        self.type_name, self.remote_traceback = type_name, remote_traceback

    def __reduce__(self) -> tuple[type[RemoteError], tuple[str, str, str]]:
        # It travels from the worker in a pickle; the default would call the class
        # with the message alone.
        return type(self), (self.type_name, str(self), self.remote_traceback)


class WorkerDied(GradcheckError):
    """The process checking a target ended before it reported (the op's ``os._exit``,
    a crash in native code, a signal), or the op raised ``SystemExit`` where that would
    have ended more than its own check (a test session): ``kind`` says which, as a
    failure's kind (None: its process died; ``Kind.EXITED`` for ``SystemExit``)."""

    exit_code = 1
    kind: str | None = None


class Interrupted(BaseException):
    """SIGINT or SIGTERM reached ``gradcheck verify``: its handler raises this, so that
    the run stops wherever the command waits, and the command prints and writes what
    finished and exits 128 + the signal's number (130, 143). A BaseException: nothing
    that catches errors (the op's code at import included) catches it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        import signal

        return signal.Signals(self.signum).name
