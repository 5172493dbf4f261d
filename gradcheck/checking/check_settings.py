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

__all__ = ["CheckSettings"]


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
        plain = CheckSettings("", None, None, None, "", False, 0, ())
        out: dict[str, Any] = {}
        for position, f in enumerate(fields(self)):
            value = getattr(self, f.name)
            if f.name == "screen":
                continue
            if position < _ALWAYS or value != getattr(plain, f.name):
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out


#: The settings every record holds (``mode`` to ``constants``).
_ALWAYS = [f.name for f in fields(CheckSettings)].index("order")
