"""Domain errors: exceptions that say an input is outside the op's domain.

Some ops are defined on part of their inputs' space only and say so by raising: the
inverse of a singular matrix (NumPy's and torch's ``LinAlgError``), a solver that meets
a rank-deficient system. An example drawn there is not a failure of the op: it is
skipped and counted like an output that is not finite (``Skip.DOMAIN_ERROR``), and a
finite-difference step that crosses into that set sees no output there, as if the
output were not finite (the numerics use the steps that stay inside). Any other
exception stays a failure (``forward_error``): an op that breaks where it should run
is what the checker is for.

Which exceptions are domain errors: the linear-algebra errors of the frameworks
(:data:`DOMAIN_ERRORS`, recognised by name, so that none is imported here), and the
classes a user names (``check(skip_on=...)``, ``describe(skip_on=...)``,
``--skip-on``, the ``skip-on`` key of ``[tool.gradcheck]``), each as a class or as
``"module:Name"`` (a builtin by its name alone: ``"ZeroDivisionError"``).
"""

from __future__ import annotations

import builtins
import importlib
from collections.abc import Sequence
from typing import Any

from gradcheck.errors import CheckUsageError

__all__ = ["DOMAIN_ERRORS", "exception_class", "exception_name", "is_domain_error", "skip_on"]

#: ``(module, class name)`` of the exceptions that are domain errors whatever the user
#: names: a singular matrix in NumPy and in torch (``torch.linalg.LinAlgError`` is
#: ``torch._C._LinAlgError``). JAX raises none: its inverse of a singular matrix is
#: inf and nan, which the check skips as an output that is not finite.
DOMAIN_ERRORS: tuple[tuple[str, str], ...] = (
    ("numpy.linalg", "LinAlgError"),
    ("numpy.linalg.linalg", "LinAlgError"),
    ("torch._C", "_LinAlgError"),
    ("torch.linalg", "LinAlgError"),
)
_KNOWN = frozenset(DOMAIN_ERRORS)
#: The classes :func:`exception_name` has named, by name: a class defined where no
#: import reaches it (in a function) is found again by the name it was given.
_NAMED: dict[str, type[BaseException]] = {}


def exception_class(spec: Any) -> type[BaseException]:
    """The exception class ``spec`` names: a class, ``"module:Name"`` (``Name`` may be
    dotted: ``"mylib:Solver.Singular"``), or the name of a builtin exception.

    >>> exception_class("ZeroDivisionError")
    <class 'ZeroDivisionError'>
    >>> exception_class("numpy.linalg:LinAlgError")
    <class 'numpy.linalg.LinAlgError'>
    """
    if isinstance(spec, type) and issubclass(spec, BaseException):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise CheckUsageError(
            f"skip_on takes exception classes, 'module:ExceptionName' or a builtin "
            f"exception's name, not {spec!r}"
        )
    text = spec.strip()
    if text in _NAMED:
        return _NAMED[text]
    module, sep, name = text.rpartition(":")
    if not sep:
        found = getattr(builtins, text, None)
        if not (isinstance(found, type) and issubclass(found, BaseException)):
            raise CheckUsageError(
                f"skip_on: {text!r} is not a builtin exception; name another one as "
                f"'module:ExceptionName' (numpy.linalg:LinAlgError)"
            )
        return found
    try:
        found = importlib.import_module(module)
        for part in name.split("."):
            found = getattr(found, part)
    except ImportError as exc:
        raise CheckUsageError(f"skip_on: cannot import {module!r} for {text!r} ({exc})") from None
    except AttributeError:
        raise CheckUsageError(f"skip_on: module {module!r} has no {name!r}") from None
    if not (isinstance(found, type) and issubclass(found, BaseException)):
        raise CheckUsageError(f"skip_on: {text!r} is not an exception class")
    return found


def exception_name(cls: type[BaseException]) -> str:
    """``"module:Name"`` of an exception class (just ``Name`` for a builtin), the
    spelling :func:`exception_class` reads back.

    >>> exception_name(ZeroDivisionError)
    'ZeroDivisionError'
    """
    if cls.__module__ == "builtins":
        return cls.__qualname__
    name = f"{cls.__module__}:{cls.__qualname__}"
    _NAMED[name] = cls
    return name


def skip_on(specs: Any) -> tuple[type[BaseException], ...]:
    """The exception classes of a ``skip_on`` setting (one spec or a sequence of them;
    None for none)."""
    if specs is None:
        return ()
    if isinstance(specs, (str, type)):
        specs = (specs,)
    if not isinstance(specs, Sequence):
        raise CheckUsageError(
            f"skip_on takes an exception class or 'module:ExceptionName', or a list of "
            f"them, not {specs!r}"
        )
    return tuple(dict.fromkeys(exception_class(s) for s in specs))


def is_domain_error(exc: BaseException, named: Sequence[type[BaseException]] = ()) -> bool:
    """Whether ``exc`` says that the input is outside the op's domain: one of
    :data:`DOMAIN_ERRORS` (or a subclass), or of the classes ``named``.

    >>> import numpy as np
    >>> is_domain_error(np.linalg.LinAlgError("Singular matrix"))
    True
    >>> is_domain_error(ValueError("bad")), is_domain_error(ValueError("bad"), (ValueError,))
    (False, True)
    """
    if named and isinstance(exc, tuple(named)):
        return True
    return any((c.__module__, c.__name__) in _KNOWN for c in type(exc).__mro__)
