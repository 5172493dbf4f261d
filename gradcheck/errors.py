"""The exceptions gradcheck raises.

Every error a user can meet derives from :class:`GradcheckError`, so that a caller
(the CLI, a test) can catch the whole family at once, and each class carries the exit
code the ``gradcheck`` command reports it with (the way click's exceptions do).

:class:`SkipGradient` is not an error: an :meth:`Operation.backward_var` raises it to say
"this input receives no gradient from me", and the engine catches it.
"""

from __future__ import annotations

__all__ = [
    "GradcheckError",
    "InvalidGradient",
    "InvalidBackprop",
    "SkipGradient",
    "LoadError",
    "ModuleLoadError",
    "TargetNotFound",
    "InvalidDescription",
]


class GradcheckError(Exception):
    """Base class of every error gradcheck raises on purpose."""

    #: The exit status of the ``gradcheck`` command when this error ends a run:
    #: 2 for usage and load errors, 1 for a failed check.
    exit_code: int = 2


class InvalidGradient(GradcheckError):
    """A gradient that is not a real number or a numeric array, or that cannot have
    the shape of the tensor it belongs to, was produced by an operation's
    ``backward_var`` or passed to ``Tensor.backward``."""

    exit_code = 1


class InvalidBackprop(GradcheckError):
    """Backpropagation was started through a graph that was already cleared, or from a
    non-scalar tensor of a graph that only supports backprop from a scalar."""


class SkipGradient(Exception):
    """Raised by ``Operation.backward_var`` to send no gradient to one input.

    This is a signal, not an error: ``Operation.backward`` catches it and moves on to
    the next input.
    """


class LoadError(GradcheckError):
    """A target named on the command line (or in a test) could not be loaded.

    The message is one line saying which target and why; the exception that caused
    it, if any, is chained as ``__cause__``.
    """

    exit_code = 2


class ModuleLoadError(LoadError):
    """The module of a target does not exist or raised while it was imported."""


class TargetNotFound(LoadError):
    """The module has no attribute of the given name, or offers no target at all."""


class InvalidDescription(GradcheckError):
    """An input description (from :func:`gradcheck.describe`, the command line or a
    call to :func:`gradcheck.verify`) has a bad value: the message names it and says
    what is expected."""

    exit_code = 2
    #: The setting at fault ("shapes", "domain", "kwargs"...), when known, so that a
    #: front end can name the option or config key that set it.
    field: str | None = None
