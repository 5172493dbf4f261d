"""What a search gives back: :class:`VerifyResult` (the outcome of
:func:`gradcheck.verify` for one target, with its JSON form) and :class:`LoadedTarget`
(an op as the user named it). Below :mod:`gradcheck.search.verifier`, which re-exports
both, so that the search's reporting (:mod:`gradcheck.search.reporting`) makes results
without importing the search.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gradcheck.checking.result import CheckResult, jsonable
from gradcheck.checking.target import bound_name, instance_name
from gradcheck.checking.vocabulary import COMPARISON_KINDS
from gradcheck.errors import printable


def target_label(obj: Callable[..., Any]) -> str:
    """A ``module:QualName`` label for an object given directly (not by a spec); an
    instance (an ``nn.Module``) by the module-level name bound to it, ``module:name``."""
    named = instance_name(obj)
    if named is not None:
        return printable(":".join(named))
    module = getattr(obj, "__module__", None) or "?"
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", repr(obj))
    return printable(f"{module}:{bound_name(obj, module, str(qualname))}")


@dataclass(frozen=True)
class LoadedTarget:
    """An op named by the user.

    Attributes
    ----------
    name : str
        How to name it again on the command line (``mymodule:MyOp``,
        ``ops/my_ops.py:MyOp``); used in reports and replay commands.
    obj : type[Operation] or callable
        The ``Operation`` subclass or the function.
    """

    name: str
    obj: Any


@dataclass
class VerifyResult:
    """The outcome of :func:`verify` for one target.

    Attributes
    ----------
    target : str
        The target's name (``module:Name``).
    passed : bool
        True when every checked example passed (and at least one was checked).
    verdict : str
        ``"passed"``, ``"failed"``, or ``"inconclusive"`` (no example could be judged:
        every one drawn was skipped, see ``skipped``).
    examples : int
        Examples checked up to and including the first failure (rejected ones not
        counted).
    rejected : int
        Examples skipped (never failed): at a point where the op is not
        differentiable, where its output is not finite, or with nothing to compare.
    skipped : dict
        ``rejected`` by reason (:class:`~gradcheck.checking.vocabulary.Skip`):
        ``{"not differentiable there": 3, "output not finite there": 1}``.
    failure : CheckResult or None
        The check of the shrunk failing example (its ``inputs`` are the shrunk
        inputs).
    max_abs_error, max_rel_error : float
        The largest absolute and relative gradient errors seen (over every example
        checked, the failing ones and those met while shrinking included); ``nan``
        when none was measured. A relative error is an element's error over its size
        as the tolerance takes it (:attr:`Element.rel_error`); the two maxima may be
        two examples' (``max_abs_error_at``, ``max_rel_error_at``).
    error_ratio : float
        The largest error relative to its tolerance (< 1 passes); ``nan`` when none was
        measured.
    seconds : float
        Wall time of the run.
    seed : int
        The seed that replays the run.
    settings : dict
        The effective settings (shapes, domain, dtype, kwargs, mode, tolerances...).
    shrink_steps : int
        Examples run while shrinking a failure.
    found : str
        Where the search found the failure, when its input is one of the search's
        reaches: ``"at a large input (66 elements)"``, ``"at the domain bound 0"``,
        ``"just inside the domain bound 1"``, ``"at a large magnitude (|x| = 23.5)"``,
        ``"at a near-tie (two values 3.1e-05 apart)"``; else which example of the
        search first failed (``"at example 4 of 100, then shrunk in 12 steps"``);
        empty when nothing failed.
    worst : CheckResult or None
        Of the failing examples the search saw (while searching and while shrinking),
        the one with the largest relative gradient error: shrinking keeps an input
        that fails, not the size of the error, so a gross bug can shrink to an
        example where it is small. None when no failing example compared gradients.
    budget_spent : bool
        The search stopped before its last example, its ``time_budget`` spent:
        ``note`` says after how many (never when it found a failure).
    worst_example : str
        Which example ``worst`` was: ``"example 4 of the search"``, ``"shrink step
        7"``. The run's seed replays it (the run goes the same way), and so does
        ``gradcheck.check(target, *worst.inputs, seed=worst.seed)`` with the settings.
    max_abs_error_at, max_rel_error_at : str
        Which example had ``max_abs_error`` and which ``max_rel_error``:
        ``"the reported example"`` (the shrunk failure), ``"example 3 of the search"``,
        ``"shrink step 7"`` (as ``worst_example``; ``"... with seed 12"`` in a run of
        several seeds); empty where none was measured. The two maxima may be of two
        examples: the report says so.
    shapes : str
        For an op of several inputs whose shapes were drawn, whether they broadcast:
        ``"inputs drawn with broadcasting: 23 of 100 examples"``, or why every input
        had the same shape (the op rejected broadcast shapes, broadcasting was turned
        off, none was drawn); empty otherwise.
    """

    target: str
    passed: bool
    verdict: str
    examples: int
    rejected: int
    failure: CheckResult | None
    max_abs_error: float
    max_rel_error: float
    error_ratio: float
    seconds: float
    seed: int
    settings: dict[str, Any] = field(default_factory=dict)
    shrink_steps: int = 0
    note: str = ""
    skipped: dict[str, int] = field(default_factory=dict)
    found: str = ""
    shapes: str = ""
    worst: CheckResult | None = None
    worst_example: str = ""
    max_abs_error_at: str = ""
    max_rel_error_at: str = ""
    #: The search stopped early, its ``time_budget`` spent (``note`` says where).
    budget_spent: bool = False

    def __str__(self) -> str:
        """The report the command line prints for this target (:func:`gradcheck.report`)."""
        from gradcheck.frontend.report import report

        return report(self)

    @property
    def skip_lines(self) -> list[str]:
        """``"3 examples skipped: not differentiable there"``, one per reason; first, where
        the search stopped drawing with fewer examples checked than asked (not for a
        failure, which ends it, nor a time budget, which ``note`` says), how many were
        checked: a skipped draw is not one of ``max_examples``, so the skips may
        outnumber them."""
        lines = [
            f"{n} example{'s' * (n != 1)} skipped: {reason}" for reason, n in self.skipped.items()
        ]
        asked = self.settings.get("max_examples")
        stopped_short = (
            self.rejected
            and isinstance(asked, int)
            and self.examples < asked
            and not self.budget_spent
            and (self.failure is None or self.examples == 0)
        )
        if stopped_short:
            lines.insert(
                0,
                f"checked {self.examples} of the {asked} examples asked: the {self.rejected} "
                f"skipped below are draws besides them (max_examples counts checked examples "
                f"only), after which the search stopped drawing",
            )
        return lines

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form (the schema is in :mod:`gradcheck.frontend.render`); floats that
        are not finite become the strings ``"nan"``, ``"inf"``, ``"-inf"``, as in
        :meth:`CheckResult.to_dict`."""
        document: dict[str, Any] = jsonable(
            {
                "target": self.target,
                "passed": self.passed,
                "verdict": self.verdict,
                "examples": self.examples,
                "rejected": self.rejected,
                "skipped": self.skipped,
                "failure": None if self.failure is None else _failure_dict(self.failure),
                "max_abs_error": self.max_abs_error,
                "max_rel_error": self.max_rel_error,
                "error_ratio": self.error_ratio,
                "max_abs_error_at": self.max_abs_error_at or None,
                "max_rel_error_at": self.max_rel_error_at or None,
                "seconds": self.seconds,
                "seed": self.seed,
                "settings": self.settings,
                "shrink_steps": self.shrink_steps,
                "note": self.note or None,
                "found": self.found or None,
                "worst_seen": None
                if self.worst is None
                else {"example": self.worst_example, **_failure_dict(self.worst)},
                "shapes": self.shapes or None,
            }
        )
        return document


def _failure_dict(result: Any) -> dict[str, Any]:
    """The failing check's dict with its failure's fields (kind, message, input,
    worst...) lifted to the top level, as the JSON schema promises; its errors "nan"
    where the failure was not the gradient comparison's (:func:`_errors`)."""
    data = result.to_dict()
    failure = data.pop("failure") or {}
    if not _compared(result):
        data.update(zip(("max_abs_error", "max_rel_error", "error_ratio"), ("nan",) * 3))
    return {**data, **failure}


def _errors(result: Any) -> tuple[float, float, float]:
    """Max absolute, relative error and error ratio of a check; nan when it compared
    no gradient (the op raised before, or a structural check failed first), and for a
    check that failed other than in the comparison (which passed, then a structural
    check or a re-run failed: its errors are not the failure's)."""
    if not result.per_input or not _compared(result):
        return math.nan, math.nan, math.nan
    return result.max_abs_error, result.max_rel_error, result.error_ratio


def _compared(result: Any) -> bool:
    """Whether a check passed, or failed in the gradient comparison itself."""
    return result.failure is None or result.failure.kind in COMPARISON_KINDS


def _at_least(a: float, b: float) -> bool:
    """Whether ``a`` was measured and is no smaller than ``b`` (or ``b`` was not)."""
    return not math.isnan(a) and (math.isnan(b) or a >= b)


#: Relative errors closer than this (relatively) are the same as the report prints
#: them (three digits): a bug off by a constant factor shows the same relative error
#: at every example, up to the finite differences' noise.
SAME_REL = 5e-3


def _larger(rel: float, than_rel: float) -> bool:
    """Whether relative error ``rel`` is larger than ``than_rel`` as the report prints
    them (by more than :data:`SAME_REL`; a measured one is larger than none)."""
    if math.isnan(rel):
        return False
    return math.isnan(than_rel) or rel > than_rel * (1 + SAME_REL)


def _nan_low(x: float) -> float:
    return -math.inf if math.isnan(x) else x


def _nanmax(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return max(a, b)
