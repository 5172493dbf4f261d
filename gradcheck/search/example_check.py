"""One example of a search, checked: :class:`_Search` (the state of one target's
search: the examples counted, skipped and rejected, the worst seen, the shapes the op
does not run at) and its check of each example Hypothesis draws (:func:`_check`: large
examples screened by directional derivatives, along one direction first
(:func:`projected_pass`), then over groups, a failure confirmed in full); the
signals a check sends the Hypothesis test (:class:`_ExampleFailed`, and the search's
ends).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.checking.trees import of_specs, rebuild
from gradcheck.checking.vocabulary import Kind, Mode, Skip, Verdict
from gradcheck.errors import GradcheckError
from gradcheck.search.domain import ShapeDomain
from gradcheck.search.examples import constant_inputs
from gradcheck.search.reporting import _exited, stepped_out_of_domain
from gradcheck.search.results import _at_least, _errors, _nan_low, _nanmax


class _ExampleFailed(Exception):
    """Raised inside the Hypothesis test to mark a failing example; carries its
    CheckResult so the shrunk one comes out with the final exception."""

    def __init__(self, result: Any) -> None:
        super().__init__("gradient check failed")
        self.result = result


class _OutOfMemory(BaseException):
    """Raised inside the Hypothesis test when the op ran out of memory: a BaseException,
    so that Hypothesis neither retries nor shrinks it (each try would fill the memory
    again); the search ends with that example's failure."""

    def __init__(self, result: Any) -> None:
        super().__init__("the op ran out of memory")
        self.result = result


def _out_of_memory(result: Any) -> bool:
    failure = result.failure
    text = (failure.exception or "") if failure is not None else ""
    return text.split(":")[0] in ("MemoryError", "_ArrayMemoryError")


#: The cost of an example (mode "auto"): one whose differentiable inputs hold more
#: than this many elements (and at most the checker's FULL_MODE_MAX_SIZE, above which
#: "auto" is fast mode anyway) is screened first, by fast mode with one direction per
#: group of :data:`SCREEN_GROUP_SIZE` elements (2 forward calls per group, where full
#: mode makes 2 per element and refines); where the screen does not pass it, the
#: example is checked in full mode, whose verdict and report count. Smaller examples,
#: and so the shrunk ones, go to full mode directly.
SCREEN_ABOVE = 256


#: A group's direction hides an element's error only below the tolerance of the
#: group's sum, rtol·sqrt(128) ≈ 11× an element's: a relative error of 1e-6 in one
#: float64 element of 2000 (10× its tolerance) shows in an example where that
#: element's |gradient·d| stands out of its group's (measured: 5 of 40 random inputs
#: of x·tanh(x)), so in some example of a run of 100 (every one of the runs measured,
#: benchmarks/torch_side_by_side.py), at a sixteenth of full mode's forward calls.
SCREEN_GROUP_SIZE = 128


#: Before the groups' screen, one random direction over each input's n elements (fast
#: mode with one direction: 2 forward calls, 4 where a Richardson pair is needed),
#: judged tightly: the example passes there where the direction's error is within
#: this fraction of its tolerance over sqrt(n), i.e. of one element's tolerance (the
#: tolerance of a direction over n elements is about sqrt(n) elements'); anywhere
#: else the groups' screen follows, as before, on the same seed. A correct float64
#: op errs by 1e-16 where the tolerance is 1e-7: x·tanh(x) at 40x50 measured at most
#: 0.068 of this scale over 200 inputs (its median 0.009). A relative error of 1e-6
#: in one element (XTanhOneOff) stands out of it unless that element's |gradient·d|
#: is below ~1/20 of the others' (RMS): of 200 inputs, the groups' screen failed 92,
#: and each of those 92 failed this test too (it passed 49, all of which the groups
#: passed): what it lets pass, the groups would have passed
#: (benchmarks/screen_sensitivity.py, benchmarks/RESULTS.md). Against a group of
#: 128, whose allowance is about sqrt(128) elements' (11x), this one's is 22x tighter
#: where the elements' tolerances are alike; a group is the tighter one only where its
#: random members miss every element whose tolerance is far above the others'. The
#: default tolerances bound that spread (atol is a fraction of the largest gradient:
#: at most 101x in float64), and with one element 101x the others among 2000 this
#: allowance is still 9x a group's; an ``atol`` the caller gave bounds nothing, and
#: such an example goes to the groups' screen directly.
PROJECTION_TIGHTNESS = 0.5


def _check(
    tgt: Any,
    arrays: Sequence[Any],
    options: dict[str, Any],
    check_seed: int,
    *,
    shrinking: bool = False,
    upstream: np.ndarray | None = None,
) -> Any:
    """The check of one example. In mode "auto", an example of more than
    :data:`SCREEN_ABOVE` elements is screened first: along one direction per input
    (passed where :func:`projected_pass`), else over groups of
    :data:`SCREEN_GROUP_SIZE` on the same seed; while ``shrinking``, a groups' screen that
    fails with elements located and judged (as full mode judges them) is the
    example's failure (:func:`screened_failure`): the shrinker only needs to know
    that the example still fails, and full mode refining every wrong element of a
    large input costs seconds per step; the shrunk example is checked in full mode
    for the report (:func:`_in_full`)."""
    from gradcheck.checking.checker import FULL_MODE_MAX_SIZE, check

    shapes = options.get("shapes")
    trees = () if shapes is None else of_specs(shapes)[1]
    # The leaves drawn for a tree input, in their tree again (check() names them).
    given = rebuild(arrays, trees) if any(t is not None for t in trees) else arrays

    def run(**mode: Any) -> Any:
        return check(
            tgt,
            *given,
            params=options.get("kwargs"),
            constants=constant_inputs(options),
            atol=options.get("atol"),
            rtol=options.get("rtol"),
            seed=check_seed,
            # what the drawn arrays are checked as: bfloat16 for float32 draws
            dtype="bfloat16" if options.get("dtype") == "bfloat16" else None,
            order=options.get("order", 1),
            modes=options.get("modes", ("rev",)),
            device=options.get("device"),
            nondet_tol=options.get("nondet_tol", 0.0),
            skip_on=options.get("skip_on") or (),
            upstream=upstream,
            reference_forward=options.get("reference_forward"),
            compiled=options.get("compiled"),
            batched=options.get("batched"),
            **mode,
        )

    if options["mode"] == Mode.AUTO:
        const = set(constant_inputs(options))
        size = sum(np.size(a) for i, a in enumerate(arrays) if i not in const)
        if SCREEN_ABOVE < size <= FULL_MODE_MAX_SIZE:
            if options.get("atol") is None:  # (see PROJECTION_TIGHTNESS)
                projected = run(mode=Mode.FAST, directions=1)
                if projected_pass(projected):
                    return projected
            screened = run(mode=Mode.FAST, group_size=SCREEN_GROUP_SIZE)
            if screened.verdict == Verdict.PASSED or (shrinking and screened_failure(screened)):
                return screened
    return run(mode=options["mode"])


def projected_pass(result: Any) -> bool:
    """Whether one direction per input (fast mode with ``directions=1``) passed
    ``result`` tightly: each input's error ratio times the square root of its size
    within :data:`PROJECTION_TIGHTNESS` (what one element's tolerance allows along a
    direction over all of them). Anything else (a failure, a kink, a looser
    agreement, an input judged otherwise) is no pass: the groups' screen decides."""
    if result.verdict != Verdict.PASSED or not result.per_input:
        return False
    return all(
        math.isfinite(e.error_ratio) and e.error_ratio * math.sqrt(e.size) <= PROJECTION_TIGHTNESS
        for e in result.per_input
    )


def _same_example(a: Any, b: Any) -> bool:
    return (
        a.seed == b.seed
        and len(a.inputs) == len(b.inputs)
        and all(
            np.shape(x) == np.shape(y) and np.array_equal(x, y, equal_nan=True)
            for x, y in zip(a.inputs, b.inputs)
        )
    )


def screened_failure(result: Any) -> bool:
    """Whether ``result`` is a screen's (fast mode's) failure at elements it located
    and judged one by one: what a shrinking search takes as the example's failure."""
    failure = result.failure
    return bool(
        result.verdict == Verdict.FAILED
        and result.settings.get("mode") == Mode.FAST
        and failure is not None
        and failure.kind == Kind.MISMATCH
        and failure.worst
    )


def _in_full(search: _Search, failure: Any) -> Any:
    """The shrunk failure as the report shows it: where a screen found it (mode
    "auto", while shrinking), the same example checked in full mode; should that not
    fail, the search's first failure (which full mode confirmed)."""
    if search.options["mode"] != Mode.AUTO or not screened_failure(failure):
        return failure
    first = search.first_failure
    if first is not None and _same_example(first, failure):
        return first  # (nothing shrank: that one was checked in full already)
    inputs, upstream = failure.inputs, None
    if search.options.get("order", 1) >= 2:
        # the search's v: at order k >= 2, the first of the k - 1 upstream gradients
        # that follow the inputs (the others are drawn from the seed)
        k = failure.failure.order or 1
        if k >= 2:
            inputs, upstream = inputs[: -(k - 1)], inputs[-(k - 1)]
        else:
            upstream = failure.upstream
    full = _check(search.tgt, inputs, search.options, failure.seed, upstream=upstream)
    return full if full.verdict == Verdict.FAILED else search.first_failure


class _Rejected(BaseException):
    """Ends a search whose every draw the op is known to reject: broadcast shapes of
    an op that takes equal shapes only, or the one shape of a search of fixed shapes
    (a BaseException: Hypothesis lets it through rather than shrinking it)."""


class _OutOfTime(BaseException):
    """Ends a search whose time budget is spent, at the next new example it would
    draw (a BaseException: Hypothesis lets it through; it is never raised while a
    failure shrinks)."""


class _Kinked(BaseException):
    """Ends a later part of a search whose draws were not differentiable more than
    ``_Search.kink_limit`` times (see :func:`gradcheck.search.examples.distinct_after_kinks`);
    a BaseException, as :class:`_OutOfTime`, never raised while a failure shrinks."""


class _Search:
    """The body of the Hypothesis test, and what it has seen: each example's check,
    counted, rejected where the op is not differentiable, raised where it fails."""

    def __init__(self, tgt: Any, options: dict[str, Any], progress: Any, on_example: Any) -> None:
        self.tgt, self.options, self.progress = tgt, options, progress
        #: when the time budget is spent (perf_counter; counted from the first
        #: example, not from the imports before it), and whether it was
        self.deadline: float | None = None if options.get("time_budget") else math.inf
        self.out_of_time = False
        self.on_example = on_example
        self.examples = self.rejected = self.shrink_steps = 0
        self.skipped: dict[str, int] = {}
        self.max_abs = self.max_rel = self.max_ratio = math.nan
        #: which example had max_abs, and which max_rel (see :meth:`label`)
        self.max_abs_at = self.max_rel_at = ""
        self.first_failure: Any = None
        #: the failing check with the largest relative error seen, and which it was
        self.worst: Any = None
        self.worst_example = ""
        self.failed_at = 0  # the search's example that failed first
        #: whether the examples now are the large-input search's
        self.large = False
        self.domain = ShapeDomain(tgt, options, constant_inputs(options))
        #: examples checked (while searching) whose inputs' shapes differ
        self.broadcast_examples = 0
        self.arity = 1
        #: whether the examples now are a search of fixed shapes
        self.fixed = False
        #: the examples before the search drew distinct values, where it did (see
        #: :func:`gradcheck.search.examples.distinct_after_kinks`)
        self.distinct_from: int | None = None
        #: in a later part of the search, how many of its draws may be skipped as not
        #: differentiable before it ends (:class:`_Kinked`), and how many were
        self.kink_limit: int | None = None
        self.phase_kinks = 0
        # A usage error met while checking (the op rejects its parameters...) ends
        # the run: it is re-raised after the search, which must not shrink it.
        self.fatal: GradcheckError | None = None

    def example(self, arrays: Any, check_seed: int, data: Any = None) -> None:
        """Check one example Hypothesis drew (while searching, or while shrinking a
        failure): rejected where it checked nothing, counted, and raised as
        :class:`_ExampleFailed` when it failed."""
        from hypothesis import target as hypothesis_target

        searching = self.first_failure is None
        broadcast = self._admit(arrays, check_seed, searching)
        result = self._checked(arrays, check_seed, data, searching)
        self._reject_unchecked(arrays, result, searching)
        if searching:
            self.examples += 1
            self.broadcast_examples += broadcast
            if self.progress is not None:
                self.progress(self.examples, self.options["max_examples"])
        abs_err, rel_err, ratio = _errors(result)
        if _at_least(abs_err, self.max_abs) and abs_err != self.max_abs:
            self.max_abs_at = self.label(searching)
        if _at_least(rel_err, self.max_rel) and rel_err != self.max_rel:
            self.max_rel_at = self.label(searching)
        self.max_abs = _nanmax(self.max_abs, abs_err)
        self.max_rel = _nanmax(self.max_rel, rel_err)
        self.max_ratio = _nanmax(self.max_ratio, ratio)
        if not result.passed:
            if searching:
                self.first_failure = result
                self.failed_at = self.examples
            self.keep_if_worst(result, rel_err, ratio, searching)
            if self.worst is result and rel_err == self.max_rel:
                # (a tie for the run's max rel err, which keep_if_worst broke by the error
                # ratio: the table's number is named with the example the report shows)
                self.max_rel_at = self.worst_example
            raise _ExampleFailed(result)
        if math.isfinite(ratio):
            # Steer the search towards the inputs where the gradient is least accurate.
            hypothesis_target(ratio, label="error / tolerance")

    def _admit(self, arrays: Any, check_seed: int, searching: bool) -> bool:
        """Whether the example's inputs broadcast; raised out of the search where it
        ends here (a usage error met before, shapes the op refuses, the time budget)."""
        if self.fatal is not None:
            raise self.fatal
        key = tuple(np.shape(a) for a in arrays)
        broadcast = self.domain.broadcast(key)
        if broadcast and self.domain.refuses_broadcast:
            raise _Rejected  # learnt: the op takes equal shapes only
        if self.fixed and key in self.domain.rejected:
            raise _Rejected
        if self.deadline is None:
            self.deadline = time.perf_counter() + self.options["time_budget"]
        elif searching and time.perf_counter() > self.deadline:
            self.out_of_time = True
            raise _OutOfTime
        if not searching:
            self.shrink_steps += 1
        if self.on_example is not None:
            self.on_example(arrays, check_seed)
        return broadcast

    def _checked(self, arrays: Any, check_seed: int, data: Any, searching: bool) -> Any:
        """The example's check (an op that exited its process: that failure); a usage
        error ends the search, an op out of memory too."""
        try:
            upstream = self.upstream(arrays, data)
            result = _check(
                self.tgt,
                arrays,
                self.options,
                check_seed,
                shrinking=not searching,
                upstream=upstream,
            )
        except GradcheckError as exc:
            self.fatal = exc
            raise
        except (SystemExit, KeyboardInterrupt) as exc:
            if is_ctrl_c(exc):
                raise
            result = _exited(self.tgt, arrays, self.options, check_seed, exc)
        if not result.passed and _out_of_memory(result):  # before any retry or rejection
            self.first_failure = self.first_failure or result
            raise _OutOfMemory(result)
        return result

    def _reject_unchecked(self, arrays: Any, result: Any, searching: bool) -> None:
        """Reject (Hypothesis's ``reject``) an example that checked nothing, counting
        why while searching: not differentiable there, a shape the op does not run
        at, a step that left the op's domain."""
        from hypothesis import reject

        reason = None
        if result.verdict in (Verdict.NOT_DIFFERENTIABLE, Verdict.INCONCLUSIVE):
            self.domain.skipped(arrays, result)
            reason = result.note or Skip.NOT_DIFFERENTIABLE
            if searching and self.domain.raises_at_shapes(arrays, result):
                reason = Skip.SHAPE
        elif self.domain.outside(arrays, result):
            reason = Skip.SHAPE
        elif stepped_out_of_domain(arrays, result, self.options):
            reason = Skip.RAISED_NEAR
        if reason is None:
            return
        if searching:
            self.rejected += 1
            self.skipped[reason] = self.skipped.get(reason, 0) + 1
            if reason == Skip.NOT_DIFFERENTIABLE and self.kink_limit is not None:
                self.phase_kinks += 1
                if self.phase_kinks > self.kink_limit:
                    raise _Kinked
        reject()

    def going_on(self, verdict: str) -> bool:
        """Whether the search goes on to its next part after one that gave
        ``verdict``: not after a failure, a usage error, or with its budget spent."""
        return verdict == Verdict.PASSED and self.fatal is None and not self.out_of_time

    def upstream(self, arrays: Any, data: Any) -> np.ndarray | None:
        """At order 2 and above, the upstream gradient ``v`` the checked backward takes
        (order 2's; those of higher orders come from the check's seed), drawn
        by Hypothesis (of the output's shape and dtype, from a forward call) so that it
        shrinks with the inputs; None at order 1 (the check draws it from its seed),
        and where the forward raises (the check reports that)."""
        if self.options.get("order", 1) < 2 or data is None:
            return None
        from hypothesis import strategies as st
        from hypothesis.extra import numpy as hnp

        try:
            graph = self.tgt.apply(
                [np.asarray(a) for a in arrays],
                dict(self.options.get("kwargs") or {}),
                constants=constant_inputs(self.options),
            )
        except Exception:
            return None
        out = np.asarray(graph.output.data)  # (as the check joins several outputs)
        if out.dtype.kind != "f":
            return None
        width = {2: 16, 4: 32}.get(out.dtype.itemsize, 64)
        elements = st.floats(-2.0, 2.0, width=width, allow_subnormal=False)  # type: ignore[arg-type]
        v: np.ndarray = data.draw(hnp.arrays(out.dtype, out.shape, elements=elements), label="v")
        return v

    def keep_if_worst(self, result: Any, rel_err: float, ratio: float, searching: bool) -> None:
        """Keep ``result`` (a failing check) if its relative error is the largest of the
        failures seen so far (the error ratio breaks ties)."""
        if math.isnan(rel_err):
            return
        if self.worst is not None:
            _, best_rel, best_ratio = _errors(self.worst)
            if (rel_err, _nan_low(ratio)) <= (best_rel, _nan_low(best_ratio)):
                return
        self.worst = result
        self.worst_example = self.label(searching)

    def label(self, searching: bool) -> str:
        """Which example this is: ``"example 4 of the search"``, ``"shrink step 7"``."""
        if searching:
            return f"example {self.examples} of the search"
        return f"shrink step {self.shrink_steps}"


def is_ctrl_c(exc: BaseException) -> bool:
    """True for a KeyboardInterrupt that Python's SIGINT handler may have raised (a
    Ctrl-C, which must stop the caller); False for SystemExit, and for a
    KeyboardInterrupt while SIGINT is handled otherwise (``gradcheck verify`` handles
    it itself, its workers ignore it): then the op's code raised it."""
    import signal

    return (
        isinstance(exc, KeyboardInterrupt)
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
