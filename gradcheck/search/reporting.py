"""A finished search as a :class:`~gradcheck.search.results.VerifyResult`: its verdict
and notes (:func:`_result`), where a failure was found (:func:`found_at`), why nothing
could be checked (:func:`_unsatisfied`), and an op that exited its process
(:func:`_exited`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.checking.result import CheckResult
from gradcheck.checking.vocabulary import Kind, Skip, Verdict
from gradcheck.search.results import (
    VerifyResult,
    _at_least,
    _compared,
    _errors,
    _larger,
    _nanmax,
)

if TYPE_CHECKING:
    from gradcheck.search.example_check import _Search


def _result(
    search: _Search,
    name: str,
    options: dict[str, Any],
    seed: int,
    seconds: float,
    failure: Any,
    verdict: str,
    note: str,
) -> VerifyResult:
    """The :class:`VerifyResult` of a finished search: a pass that compared nothing is
    inconclusive; an op that ran at no shape failed with its forward's error."""
    if verdict == Verdict.PASSED and search.examples == 0:
        verdict, note = Verdict.INCONCLUSIVE, _unsatisfied(search.skipped)
    if search.out_of_time and failure is None:
        note = "; ".join(n for n in (_out_of_time(search, options), note) if n)
    if search.domain.nowhere and failure is None:
        # no shape ran: the forward's error is the failure, not a domain to learn
        failure, verdict = search.domain.first, Verdict.FAILED
        note = note if search.domain.refuses_broadcast else ""  # (--broadcast: the hint)
    if search.domain.rejected:
        note = "; ".join(n for n in (note, search.domain.note()) if n)
    if search.distinct_from is not None:
        note = "; ".join(n for n in (note, _distinct(search)) if n)
    # The worst seen, over every example (a failure shrinks to a small input, where
    # the bug may be small; the size of the bug is what the search saw).
    abs_err, rel_err, ratio = search.max_abs, search.max_rel, search.max_ratio
    abs_at, rel_at = search.max_abs_at, search.max_rel_at
    if failure is not None:
        # (the shrunk failure was checked last, at its shrink step: named as the report's)
        shrunk = _errors(failure)
        abs_at = "the reported example" if _at_least(shrunk[0], abs_err) else abs_at
        same = not math.isnan(shrunk[1]) and not _larger(rel_err, shrunk[1])  # (as printed)
        rel_at = "the reported example" if same else rel_at
        abs_err, rel_err, ratio = (
            _nanmax(a, b) for a, b in zip((abs_err, rel_err, ratio), _errors(failure))
        )
    worst = search.worst if failure is not None else None
    if worst is not None and not _larger(_errors(worst)[1], _errors(failure)[1]):
        worst, worst_example = failure, "the reported example"
    else:
        worst_example = search.worst_example if worst is not None else ""
    if failure is not None and not _compared(failure) and worst is None:
        # The gradients agreed wherever they were compared; what failed is another
        # check: its row shows no error ("-"), not the passing comparisons' 0.00e+00.
        abs_err = rel_err = ratio = math.nan
    abs_at, rel_at = ("", "") if math.isnan(abs_err) else (abs_at, rel_at)
    return VerifyResult(
        target=name,
        passed=verdict == Verdict.PASSED,
        verdict=verdict,
        examples=search.examples,
        rejected=search.rejected,
        failure=failure,
        max_abs_error=abs_err,
        max_rel_error=rel_err,
        error_ratio=ratio,
        seconds=seconds,
        seed=seed,
        settings=options,
        shrink_steps=search.shrink_steps,
        note=note,
        skipped=dict(search.skipped),
        found=_found(search, failure, options),
        worst=worst,
        worst_example=worst_example,
        max_abs_error_at=abs_at,
        max_rel_error_at=rel_at,
        shapes=_shapes_line(search, options),
        budget_spent=search.out_of_time and failure is None,
    )


def _distinct(search: _Search) -> str:
    """What a search that went on with distinct values says of it."""
    n = search.distinct_from
    return (
        f"not differentiable at many draws (ties, kinks): the examples after the first "
        f"{n} drew distinct values (as --unique)"
    )


def _out_of_time(search: _Search, options: Mapping[str, Any]) -> str:
    """What a search whose time budget ran out says of it (never silent)."""
    n, total = search.examples, options["max_examples"]
    return (
        f"time budget spent ({options['time_budget']:g} s, time_budget): the search "
        f"stopped after {n} of its {total} examples"
    )


def _found(search: _Search, failure: Any, options: Mapping[str, Any]) -> str:
    """Where the search found a failure (:attr:`VerifyResult.found`)."""
    if failure is None:
        return ""
    if not search.failed_at and search.domain.nowhere and failure is search.domain.first:
        # no example ran: the failure is the forward's error at the first draw
        n = search.rejected
        return f"at the first of {n} draw{'s' * (n != 1)}: the forward raised at every one"
    reach = found_at(failure.inputs, options, search.large)
    if reach or not search.failed_at:
        return reach
    shrunk = f", then shrunk in {search.shrink_steps} steps" if search.shrink_steps else ""
    return f"at example {search.failed_at} of {options['max_examples']}{shrunk}"


def _shapes_line(search: _Search, options: Mapping[str, Any]) -> str:
    """:attr:`VerifyResult.shapes`: for an op of several inputs whose shapes were
    drawn, how many examples broadcast, or why none did."""
    if options.get("shapes") is not None or search.arity < 2:
        return ""
    n, total = search.broadcast_examples, search.examples
    of = f"{total} example{'s' * (total != 1)}"
    if n:
        return f"inputs drawn with broadcasting: {n} of {of}"
    if search.domain.refuses_broadcast:
        return (
            f"broadcast shapes: rejected by the op ({search.domain.broadcast_error()}); "
            f"every input had the same shape in the {of} checked"
        )
    if options.get("broadcast") is False:
        return f"every input had the same shape in the {of} checked: broadcasting is off"
    return f"every input had the same shape in the {of} checked: no broadcast shapes were drawn"


def found_at(inputs: Sequence[Any], options: Mapping[str, Any], large: bool) -> str:
    """Which of the search's reaches a failing input lies in (see
    :attr:`VerifyResult.found`): a large input, a closed bound, a value just inside a
    bound, a large magnitude, a near-tie; empty for none of them.

    >>> from gradcheck.search.description import normalize_domain
    >>> found_at([np.array([0.0, 2.0])], {"domain": normalize_domain("[0:")}, False)
    'at the domain bound 0'
    >>> found_at([np.array([-40.0])], {}, False)
    'at a large magnitude (|x| = 40)'
    """
    from gradcheck.strategies._floats import DEFAULT_BOUND

    floats = [(i, np.asarray(a)) for i, a in enumerate(inputs) if np.asarray(a).dtype.kind in "fc"]
    if large:
        return f"at a large input ({sum(a.size for _, a in floats)} elements)"
    domain = options.get("domain")
    for i, a in floats:
        values = np.abs(a) if a.dtype.kind == "c" else a
        pair = domain[i] if domain is not None and isinstance(domain[0], tuple) else domain
        lo, hi = pair if pair is not None else (-math.inf, math.inf)
        closed = getattr(pair, "closed", (False, False))
        for bound, is_closed in ((lo, closed[0]), (hi, closed[1])):
            if not math.isfinite(bound) or not values.size:
                continue
            gap = float(np.min(np.abs(values - bound)))
            if gap == 0 and is_closed:
                return f"at the domain bound {bound:g}"
            if gap < 1e-2 * max(1.0, abs(bound)):
                return f"just inside the domain bound {bound:g}"
        if values.size and float(np.max(np.abs(values))) > DEFAULT_BOUND:
            return f"at a large magnitude (|x| = {float(np.max(np.abs(values))):.3g})"
    if options.get("unique") and floats:
        flat = np.sort(np.concatenate([np.ravel(a).real for _, a in floats]))
        if flat.size > 1 and 0 < float(np.min(np.diff(flat))) < 1e-2:
            return f"at a near-tie (two values {float(np.min(np.diff(flat))):.2g} apart)"
    return ""


def _unsatisfied(skipped: Mapping[str, int], *, drawn: bool = True) -> str:
    """Why no example was judged, and what to do."""
    if not skipped and not drawn:
        return (
            "no example could be drawn: the settings reject almost every draw (unique "
            "values, avoided points, a narrow domain); widen the domain or draw smaller "
            "shapes"
        )
    if not skipped:
        return "no example was checked"
    advice = {
        Skip.NOT_DIFFERENTIABLE: "narrow the domain, or declare the kinks with avoid",
        Skip.UNDEFINED: "declare the domain where the op is defined",
        Skip.DOMAIN_ERROR: "declare the domain where the op is defined",
        Skip.BACKWARD_DOMAIN_ERROR: "declare the domain where the op is defined",
        Skip.RAISED_NEAR: "keep the declared domain a step inside where the op raises",
        Skip.OVERFLOW: "declare a domain where the gradient fits the dtype",
        Skip.APART: "declare a domain away from where the op is singular",
        Skip.NOTHING: "give shapes with at least one element",
        Skip.SHAPE: "the shapes are below",
    }
    reasons = "; ".join(f"{reason} ({n})" for reason, n in skipped.items())
    hints = "; ".join(advice[reason] for reason in skipped if reason in advice)
    return f"every example drawn was skipped: {reasons}; {hints}"


#: How far finite differences step, as a multiple of cbrt(eps) * max(1, |x|): the
#: largest level of the checker's ladder (4**3 times its base step).
STEP_REACH = 64.0


def stepped_out_of_domain(
    arrays: Sequence[np.ndarray], result: Any, options: Mapping[str, Any]
) -> bool:
    """Whether ``result`` failed because the forward raised at a perturbed input and
    some value lies within the steps' reach of a finite bound of its domain: the steps
    left the domain (an op that raises outside it), which says nothing of the op.

    >>> from gradcheck.checking.result import CheckResult, Failure
    >>> raised = CheckResult("failed", "op", failure=Failure(
    ...     "forward_error", "the forward at a perturbed input raised ValueError"))
    >>> stepped_out_of_domain([np.array([1.0 + 1e-6])], raised, {"domain": (1.0, 2.0)})
    True
    >>> stepped_out_of_domain([np.array([1.5])], raised, {"domain": (1.0, 2.0)})
    False
    """
    failure = result.failure
    if failure is None or failure.kind != Kind.FORWARD_ERROR:
        return False
    if "perturbed" not in failure.message.split(" raised ")[0]:
        return False
    domain = options.get("domain")
    if domain is None:
        return False
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        if a.dtype.kind != "f" or not a.size:
            continue
        lo, hi = domain[i] if isinstance(domain[0], tuple) else domain
        reach = STEP_REACH * float(np.cbrt(np.finfo(a.dtype).eps))
        for bound in (lo, hi):
            if math.isfinite(bound):
                gap = float(np.min(np.abs(a.astype(np.float64) - bound)))
                if gap <= reach * max(1.0, abs(bound)):
                    return True
    return False


def _exited(
    tgt: Any, arrays: Sequence[Any], options: dict[str, Any], seed: int, exc: BaseException
) -> CheckResult:
    """The failed check of an example where the op raised SystemExit or
    KeyboardInterrupt."""
    from gradcheck.checking.result import Failure
    from gradcheck.checking.target import user_frame

    frame = user_frame(exc.__traceback__)
    text = f"{type(exc).__name__}({', '.join(map(repr, exc.args))})"
    how = " (sys.exit)" if isinstance(exc, SystemExit) else ""
    where = ""
    if getattr(exc, "gradcheck_perturbed", False):
        where = " at a perturbed input (a finite-difference step from the example below)"
    message = f"the op raised {text}{how}{where}, which would have ended the run"
    params = dict(options.get("kwargs") or {})
    try:  # named as the op names them, as every other failure's inputs are
        names = list(tgt.signature.given(params).input_names)[: len(arrays)]
    except Exception:
        names = []
    return CheckResult(
        verdict=Verdict.FAILED,
        target=tgt.name,
        failure=Failure(
            Kind.EXITED,
            message + (f"\n  at {frame}" if frame else ""),
            exception=text,
            frame=frame,
        ),
        inputs=[np.array(a) for a in arrays],
        params=params,
        seed=seed,
        input_names=names,
    )
