"""The settings of one check, as one frozen object.

:func:`gradcheck.check` validates its keywords once and gathers them in a
:class:`CheckSettings`, which every stage of the check reads by attribute
(``settings.mode``, ``settings.nondet_tol``) instead of looking strings up in a dict.
What a :class:`~gradcheck.CheckResult` records of them (its ``settings``, the replay of
the check, in JSON too) is :meth:`CheckSettings.recorded`: the plain settings always,
the others only where they are not a plain check's.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from gradcheck.checking.vocabulary import Mode

__all__ = ["CHECK_DEFAULTS", "DESCRIBED", "CheckSettings", "described_params", "with_described"]


@dataclass(frozen=True)
class CheckSettings:
    """What one check was asked, validated (see :func:`gradcheck.check` for each).

    ``dtype`` is a NumPy dtype's name (or ``"bfloat16"``), None to keep the inputs'
    own; ``constants`` the constant inputs, sorted; ``skip_on`` the names of the
    exceptions that say an input is outside the op's domain; ``compiled`` a
    ``torch.compile`` backend, None for eager.
    """

    mode: str
    atol: float | None
    rtol: float | None
    dtype: str | None
    reference: str
    complex_step: bool
    directions: int
    constants: tuple[int, ...]
    # the settings of issue 20, recorded only where they are not a plain check's
    order: int = 1
    modes: tuple[str, ...] = ("rev",)
    device: str | None = None
    nondet_tol: float = 0.0
    group_size: int | None = None
    skip_on: tuple[str, ...] = ()
    reference_forward: str | None = None
    compiled: str | None = None
    batched: bool | None = None
    #: Whether full mode was chosen by mode "auto", which screens large float64 inputs
    #: first (:mod:`gradcheck.checking.screen`); not recorded: "full" replays it.
    screen: bool = False

    def recorded(self) -> dict[str, Any]:
        """The settings as :attr:`gradcheck.CheckResult.settings` records them (a new
        dict; tuples as lists), those after ``constants`` only where they differ from
        a plain check's."""
        out: dict[str, Any] = {}
        for position, (name, plain) in enumerate(_PLAIN):
            value = getattr(self, name)
            if position < _ALWAYS or value != plain:
                out[name] = list(value) if isinstance(value, tuple) else value
        return out


#: The settings every record holds (``mode`` to ``constants``).
_ALWAYS = [f.name for f in fields(CheckSettings)].index("order")
#: Each recorded setting's name and its value in a plain check (``screen`` is not
#: recorded), read once.
_PLAIN = [
    (f.name, getattr(CheckSettings("", None, None, None, "", False, 0, ()), f.name))
    for f in fields(CheckSettings)
    if f.name != "screen"
]


#: The attribute :func:`gradcheck.describe` sets on an op, holding its description
#: (:class:`gradcheck.search.description.Description`, which takes the name from here):
#: :func:`gradcheck.check` reads the settings it takes from it, by this name alone.
DESCRIBED = "__gradcheck__"

#: What :func:`gradcheck.check` takes for a setting that neither the call nor the op's
#: description gives.
CHECK_DEFAULTS: dict[str, Any] = {
    "mode": Mode.AUTO,
    "atol": None,
    "rtol": None,
    "constants": (),
    "order": 1,
    "modes": ("rev",),
    "device": None,
    "nondet_tol": 0.0,
    "skip_on": (),
    "reference_forward": None,
    "compiled": None,
    "batched": None,
}


def with_described(target: Any, **given: Any) -> tuple[Any, ...]:
    """The ``given`` settings of a check, in their order: each given value (not
    None), else the one ``@gradcheck.describe`` declares on ``target`` (or on the op
    a resolved target holds, ``target.obj``), else :data:`CHECK_DEFAULTS`'s. The
    order of :mod:`gradcheck.search.precedence` (the call over the description over
    the defaults), so that ``check(op, x)`` checks what ``gradcheck verify op`` does
    (``describe(order=2)``, ``describe(skip_on=...)``). The description's ``dtype``,
    ``shapes`` and ``domain`` say what a search draws: they are not a check's.

    >>> class Op:
    ...     __gradcheck__ = type("D", (), {"as_dict": lambda self: {"order": 2}})()
    >>> with_described(Op, order=None, mode=None), with_described(Op, order=1, mode="full")
    ((2, 'auto'), (1, 'full'))
    """
    declared = _declared(target)
    return tuple(
        value if value is not None else declared.get(name, CHECK_DEFAULTS[name])
        for name, value in given.items()
    )


def described_params(target: Any, params: Any, op_params: Any) -> Any:
    """A check's op parameters: the ones given (``params=`` or keywords), else the
    ``kwargs`` that ``@gradcheck.describe`` declares (a positional parameter that is
    not a tensor, such as a custom_vjp's ``nondiff_argnums``), as ``gradcheck verify``
    passes them: ``check(op, x)`` on the shrunk input of a failure replays it.

    >>> class Op:
    ...     __gradcheck__ = type("D", (), {"as_dict": lambda self: {"kwargs": {"t": 3}}})()
    >>> described_params(Op, None, {}), described_params(Op, {"t": 1}, {})
    ({'t': 3}, {'t': 1})
    """
    if params is not None or op_params:
        return params
    kwargs = _declared(target).get("kwargs")
    return dict(kwargs) if kwargs else None


def _declared(target: Any) -> dict[str, Any]:
    for obj in (target, getattr(target, "obj", None)):
        as_dict = getattr(getattr(obj, DESCRIBED, None), "as_dict", None)
        if callable(as_dict):
            return dict(as_dict())
    return {}
