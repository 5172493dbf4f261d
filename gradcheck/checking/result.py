"""The result of one check, as data: :class:`CheckResult`, :class:`Failure`,
:class:`Element`.

Nothing here prints or computes; :mod:`gradcheck.frontend.report` renders a result as text,
the front ends as tables, JSON or JUnit. ``to_dict`` gives a JSON-ready form with
floats at full precision (``json.dumps`` writes the shortest repr that round-trips).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from gradcheck.checking.vocabulary import FAILURE_KINDS, Verdict
from gradcheck.frontend.report import check_text

__all__ = ["CheckResult", "Element", "Failure", "InputErrors", "FAILURE_KINDS"]


@dataclass(frozen=True)
class Element:
    """One compared element of one input's gradient."""

    input: int
    index: tuple[int, ...]
    analytic: float
    numeric: float
    abs_error: float
    #: abs_error over the element's size as the tolerance takes it: the largest of
    #: |numeric|, atol / rtol and what finite differences resolve there (the allowed
    #: difference but its rtol part), and of |analytic| where |numeric| is within
    #: that; never a zero reference
    #: (:meth:`~gradcheck.checking.compare.Comparison.relative_errors`).
    rel_error: float
    #: abs_error / allowed tolerance (> 1 means a mismatch).
    ratio: float
    #: The part of the allowed tolerance that is rounding: what finite differences
    #: cannot resolve at this point (the forward's rounding over the step) and the
    #: analytic gradient's own rounding. 0 where not measured.
    floor: float = 0.0


@dataclass(frozen=True)
class InputErrors:
    """Error summary of one input's gradient."""

    input: int
    max_abs_error: float
    #: The largest of the elements' relative errors (:attr:`Element.rel_error`): not
    #: necessarily the element of ``max_abs_error``.
    max_rel_error: float
    error_ratio: float
    mismatched: int
    size: int
    #: Elements where the function is not differentiable (a kink).
    kinks: int = 0
    #: The relative tolerance, and the absolute tolerance it came to (defaults scale
    #: with the gradient), for this input.
    rtol: float = 0.0
    atol: float = 0.0
    #: Elements whose gradient (analytic and numeric) is below the rounding floor:
    #: finite differences cannot tell it from 0 at this point, so it was not checked
    #: beyond that.
    below_floor: int = 0


@dataclass(frozen=True)
class Failure:
    """Why a check failed.

    ``kind`` is one of :data:`FAILURE_KINDS`; ``input`` the input concerned (None when
    not one); ``output`` the output concerned, for an op with several outputs (None
    when it has one, or when the failure is not one output's); ``worst`` the worst
    elements for a mismatch; ``exception`` and ``frame`` the exception text and the
    op's own frame when the op raised; ``order`` and ``ad_mode`` the check that
    failed (order 1, 2..., ``"rev"`` or ``"fwd"``).
    """

    kind: str
    message: str
    input: int | None = None
    worst: tuple[Element, ...] = ()
    mismatched: int = 0
    size: int = 0
    exception: str | None = None
    frame: str | None = None
    output: int | None = None
    #: The order (1, or 2: the gradient of the backward) and the derivative ("rev":
    #: the backward, "fwd": the jvp) whose check failed.
    order: int = 1
    ad_mode: str = "rev"


@dataclass
class CheckResult:
    """The outcome of :func:`gradcheck.check` on one example.

    ``verdict`` is "passed", "failed", "not differentiable" (some elements sit where
    the function has no derivative; the others agree; never a failure) or
    "inconclusive" (nothing was compared: every element at a kink, the output not
    finite, no float input or only empty ones); ``note`` says which
    (:class:`~gradcheck.checking.vocabulary.Skip`). ``error_ratio`` is the worst
    ``|analytic - numeric| / allowed`` over all compared elements: below 1 passes, and
    CI baselines compare it between runs.
    """

    verdict: str
    target: str
    failure: Failure | None = None
    inputs: list[np.ndarray] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    settings: dict[str, Any] = field(default_factory=dict)
    per_input: list[InputErrors] = field(default_factory=list)
    worst: list[Element] = field(default_factory=list)
    #: Elements where the function is not differentiable (input, index).
    kinks: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)
    forward_calls: int = 0
    backward_calls: int = 0
    seconds: float = 0.0
    #: Why the example was not judged (or not all of it), for a verdict of "not
    #: differentiable" or "inconclusive"; "" otherwise.
    note: str = ""
    #: The inputs' names, as the user named them (the parameters of the forward, an
    #: ``nn.Module``'s parameter paths, ``v`` for the upstream gradient at order 2);
    #: empty where not known. :meth:`input_name` reads them.
    input_names: list[str] = field(default_factory=list)
    #: The upstream gradient the check drew (``v``; at order 2 the one of the
    #: backward's output): analytic and numeric are its products with the Jacobian.
    #: None where the check stopped before drawing it.
    upstream: np.ndarray | None = None
    #: For an op of several outputs, each output's label and shape, in the order in
    #: which ``upstream`` joins their pieces (raveled); empty otherwise.
    upstream_outputs: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)

    def input_name(self, i: int) -> str:
        """How the report names input ``i``: its name, else ``input i``."""
        if 0 <= i < len(self.input_names) and self.input_names[i]:
            return self.input_names[i]
        return f"input {i}"

    def __str__(self) -> str:
        """The report the command line prints for this check
        (:func:`gradcheck.report`): ``assert result.passed, result`` shows it."""
        return check_text(self)

    @property
    def passed(self) -> bool:
        """True for "passed" and "not differentiable" (a kink is not a failure, and the
        other elements agree); False for "failed" and for "inconclusive" (nothing was
        compared: that is no pass)."""
        return self.verdict in (Verdict.PASSED, Verdict.NOT_DIFFERENTIABLE)

    @property
    def max_abs_error(self) -> float:
        return max((e.max_abs_error for e in self.per_input), default=0.0)

    @property
    def max_rel_error(self) -> float:
        return max((e.max_rel_error for e in self.per_input), default=0.0)

    @property
    def error_ratio(self) -> float:
        return max((e.error_ratio for e in self.per_input), default=0.0)

    @property
    def below_floor(self) -> int:
        """Elements whose gradient is below what finite differences resolve here
        (:attr:`InputErrors.below_floor`, over all inputs)."""
        return sum(e.below_floor for e in self.per_input)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (arrays as nested lists, non-finite floats as strings)."""
        return {
            "verdict": self.verdict,
            "passed": self.passed,
            "target": self.target,
            "failure": None if self.failure is None else jsonable(asdict(self.failure)),
            "max_abs_error": jsonable(self.max_abs_error),
            "max_rel_error": jsonable(self.max_rel_error),
            "error_ratio": jsonable(self.error_ratio),
            "per_input": [jsonable(asdict(e)) for e in self.per_input],
            "worst": [jsonable(asdict(e)) for e in self.worst],
            "kinks": [[i, list(idx)] for i, idx in self.kinks],
            "inputs": [
                {"dtype": str(a.dtype), "shape": list(a.shape), "data": jsonable(a.tolist())}
                for a in self.inputs
            ],
            "params": jsonable(self.params),
            "seed": self.seed,
            "settings": jsonable(self.settings),
            "forward_calls": self.forward_calls,
            "backward_calls": self.backward_calls,
            "seconds": self.seconds,
            "note": self.note or None,
            "input_names": list(self.input_names),
            "upstream": None
            if self.upstream is None
            else {
                "dtype": str(self.upstream.dtype),
                "shape": list(self.upstream.shape),
                "data": jsonable(self.upstream.tolist()),
            },
        }


def jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)  # "inf", "-inf", "nan": JSON has no literal for them
    if isinstance(x, (bool, int, float, str)) or x is None:
        return x
    if isinstance(x, complex):
        return repr(x)
    return repr(x)
