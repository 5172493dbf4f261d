"""One check's run: the target called on the example, step by step, and the structural
checks after each step (DESIGN.md "One check, step by step", steps 1 and 2).

:class:`_Run` holds the state of one check (the target, the example, the upstream
gradient, the call counters) and runs the op as :mod:`gradcheck.checking.structure`
needs it (:meth:`_Run.structure`), measures what the verdict allows for rounding
(:meth:`_Run.backward_rounding`, :meth:`_Run.rounding_jitter`), makes the finite
differences' evaluator (:meth:`_Run.evaluator`), and runs the checks that follow a
numeric pass (each input a constant in turn, undefined upstream gradients,
non-contiguous inputs). The numeric verdict is :mod:`gradcheck.checking.verdict`'s.

A failure leaves a step as :class:`_Fail`, "nothing to compare here" as
:class:`_Inconclusive`; :func:`gradcheck.checking.verdict.execute` turns them into the
result.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gradcheck.checking.check_inputs import fitted_upstream
from gradcheck.checking.check_settings import CheckSettings
from gradcheck.checking.contiguity import noncontiguous_disagreement
from gradcheck.checking.jitter import few_ulps, unless_outlier
from gradcheck.checking.numerical import (
    Evaluator,
)
from gradcheck.checking.outside import exception_class, is_domain_error
from gradcheck.checking.result import CheckResult, Failure
from gradcheck.checking.structure import (
    Evidence,
    Stage,
    doubled_overflowed,
    first_failure,
    inner_wrong_shape,
    repeated_and_scaled,
)
from gradcheck.checking.target import Target, own_tensor_hint, user_frame
from gradcheck.checking.thresholds import (
    BACKWARD_ROUNDING_CAP,
    BACKWARD_ROUNDING_FACTOR,
    BACKWARD_ROUNDING_FACTORS,
    NONFINITE_ELEMENTS_PROBED,
    OUTLIER_RUNS,
    ROUNDING_SAMPLES,
)
from gradcheck.checking.tolerance import tolerance_for
from gradcheck.checking.vocabulary import Kind, Skip
from gradcheck.errors import (
    InvalidGradient,
    TargetRaised,
    exception_text,
)


def _off(
    confirmed: Any,
    got: Any,
    x: np.ndarray,
    atol: float | None,
    rtol: float | None,
    run: _Run | None = None,
) -> float | None:
    """The largest difference of a gradient ``got`` from the ``confirmed`` one of the
    same input, when it is beyond the dtype's tolerances; else None. A missing
    gradient counts as zeros."""
    a64 = np.zeros(x.shape) if confirmed is None else np.asarray(confirmed, np.float64)
    b64 = np.zeros(x.shape) if got is None else np.asarray(got, np.float64)
    if a64.shape != b64.shape:
        return math.inf
    tol = tolerance_for(x.dtype if run is None else run.precision(x), atol, rtol)
    allowed = tol.allowed(a64, float(np.max(np.abs(a64), initial=0.0)))
    diff = np.abs(a64 - b64)
    return float(np.max(diff)) if np.any(diff > allowed) else None


@dataclass
class _Fail(Exception):
    failure: Failure


@dataclass
class _Inconclusive(Exception):
    """Nothing to compare at this example; ``reason`` is a :class:`Skip`."""

    reason: str


def _overflow_shifts(dtype: np.dtype, v: np.ndarray) -> list[int]:
    """The powers of two ``_Run.overflows`` scales the upstream gradient ``v`` down by,
    smallest first: a small one, then up to the largest that leaves ``v``'s smallest
    nonzero element a normal number of its dtype, in steps of 4x (a backward's
    intermediate products may leave the range below where the largest shift is
    exact)."""
    first = 8 if np.dtype(dtype).itemsize < 4 else 24
    nonzero = np.abs(v[v != 0]).astype(np.float64)
    if not nonzero.size:
        return [first]
    room = math.floor(math.log2(float(nonzero.min()) / float(np.finfo(v.dtype).tiny)))
    shifts = [first]
    while shifts[-1] < room:
        shifts.append(min(room, shifts[-1] * 4))
    return shifts


def _nonfinite(gradient: Any) -> np.ndarray:
    """``gradient``'s non-finite elements (flat), NONFINITE_ELEMENTS_PROBED at most."""
    bad = np.flatnonzero(~np.isfinite(np.asarray(gradient, dtype=np.float64)))
    if bad.size > NONFINITE_ELEMENTS_PROBED:
        bad = bad[np.linspace(0, bad.size - 1, NONFINITE_ELEMENTS_PROBED).astype(int)]
    return bad


class _Run:
    """One check's state: the target, the example, and the call counters."""

    def __init__(
        self,
        tgt: Target,
        xs: list[np.ndarray],
        params: dict[str, Any],
        const: set[int],
        rng: np.random.Generator,
        settings: CheckSettings,
    ) -> None:
        self.tgt, self.xs, self.params, self.const = tgt, xs, params, const
        self.rng, self.settings = rng, settings
        self._screen_rng: np.random.Generator | None = None
        self.forward_calls = 0
        self.backward_calls = 0
        #: For an op with several outputs, their layout (from the first forward).
        self.outputs: Any = None
        #: The upstream gradient: drawn from the seed, unless given here.
        self.v: np.ndarray | None = None
        self.v_given: np.ndarray | None = None
        #: The output at the example (once the structural checks ran).
        self.value: np.ndarray | None = None
        #: The exceptions besides LinAlgError that say an input is outside the domain.
        self.skip_on = tuple(exception_class(n) for n in settings.skip_on)
        #: Float64 copies of the inputs and the backward's gradients there, once run
        #: (see :func:`gradcheck.checking.low_precision.wide_gradient`).
        self._wide: tuple[list[np.ndarray], list[Any]] | None = None

    def screen_rng(self) -> np.random.Generator:
        """The screen's directions (gradcheck.checking.screen) come from a stream of
        their own, spawned from the check's seed (not from ``rng``'s state): whether the
        screen runs moves nothing that ``rng`` draws after it. Made on first use (a
        spawn costs about what a small forward does)."""
        if self._screen_rng is None:
            self._screen_rng = self.rng.spawn(1)[0]
        return self._screen_rng

    def outside(self, exc: BaseException) -> bool:
        """Whether ``exc`` (what the op raised) says the input is outside its domain
        (:mod:`gradcheck.checking.outside`)."""
        return is_domain_error(exc, self.skip_on)

    def precision(self, x: np.ndarray) -> Any:
        """The dtype whose tolerances an input's gradient gets: its own, or bfloat16
        for the float32 arrays of a bfloat16 check."""
        if self.settings.dtype == "bfloat16" and x.dtype == np.float32:
            return "bfloat16"
        return x.dtype

    def result(self, verdict: str, **fields: Any) -> CheckResult:
        return CheckResult(
            verdict=verdict,
            target=self.tgt.name,
            inputs=[x.copy() for x in self.xs],
            params=dict(self.params),
            settings=self.settings.recorded(),
            forward_calls=self.forward_calls,
            backward_calls=self.backward_calls,
            upstream=None if self.v is None else self.v.copy(),
            upstream_outputs=[] if self.outputs is None else self.outputs.pieces(),
            **fields,
        )

    # -- step 1 and 2: forward, backward, structure ---------------------------------
    def forward(self) -> Any:
        self.forward_calls += 1
        try:
            return self.tgt.apply(self.xs, self.params, constants=sorted(self.const))
        except TargetRaised as exc:
            if self.outside(exc.exception):
                raise _Inconclusive(Skip.DOMAIN_ERROR) from None
            raise _Fail(_raised(Kind.FORWARD_ERROR, exc)) from None

    def backward(self, graph: Any, v: np.ndarray) -> list[Any]:
        self.backward_calls += 1
        try:
            return self.tgt.backward(graph, v)
        except TargetRaised as exc:
            if isinstance(exc.exception, InvalidGradient):
                raise _Fail(self.invalid_gradient(exc, v, graph)) from None
            if self.outside(exc.exception):
                raise _Inconclusive(Skip.BACKWARD_DOMAIN_ERROR) from None
            raise _Fail(_raised(Kind.BACKWARD_ERROR, exc)) from None

    def structure(self) -> tuple[np.ndarray, list[Any]]:
        """Run the op as the stages of :mod:`gradcheck.checking.structure` need it,
        walking the structural checks after each; (v, the gradients) when all pass."""
        e = Evidence(self.xs, self.const, graph=self.forward())
        e.nondet_tol = float(self.settings.nondet_tol)
        self.outputs = e.graph.outputs
        if all(i in self.const or x.size == 0 for i, x in enumerate(self.xs)):
            # (before the output's checks: an op of integer inputs only, all constants,
            # returns integers, which is no fault of its gradient)
            raise _Inconclusive(Skip.NOTHING)
        self.walk(Stage.FORWARD, e)
        out = e.graph.output
        if not np.all(np.isfinite(out.data)):
            # Outside the op's domain (var(x, ddof=1) of one element, log|det| of a
            # singular matrix): skipped, like a kink; a non-finite *gradient* fails.
            raise _Inconclusive(Skip.UNDEFINED)
        e.v = drawn_upstream(self.rng, out.shape).astype(out.dtype)
        if self.v_given is not None:  # (given, or one output's upstream gradient alone)
            e.v = fitted_upstream(self.v_given, out.shape).astype(out.dtype)
        self.v = e.v.copy()
        e.v_given = e.v.copy()
        creator = getattr(out, "creator", None)  # (the backward frees the graph)
        e.grads = self.backward(e.graph, e.v)
        self.walk(Stage.BACKWARD, e)
        try:
            self.walk_gradients(e, e.grads, everyone=False)
        except _Fail as fail:
            if fail.failure.kind == Kind.NONFINITE_GRADIENT:
                if self.overflows(e.i, e.gradient, e.v):
                    raise _Inconclusive(Skip.OVERFLOW) from None
                if self.no_finite_derivative(e.i, e.gradient, e.v):
                    raise _Inconclusive(Skip.NOT_DIFFERENTIABLE) from None
                if self.steep(e.i, e.gradient, e.v):
                    raise _Inconclusive(Skip.OVERFLOW) from None
                bad = _nonfinite(e.gradient)  # (the forward jumps at x: eigh's vectors)
                if self.probed(e.v, lambda ev: ev.apart_somewhere(e.i, bad, self.const, True)):
                    raise _Inconclusive(Skip.APART) from None
            raise
        self.walk(Stage.GRADIENTS, e)
        e.returned, e.foreign = self.returned_dtypes(e, creator), self.tgt.foreign
        self.walk(Stage.RETURNED, e)
        # The repeat and the scaled backward share one fresh graph where they pass: the
        # same output again, and backward(-2v) == -2·backward(v) within the repeat's
        # rounding, say that the op is deterministic and its backward linear in v (a
        # forward and a backward fewer per example). Where not, they run apart, to say
        # which it is.
        repeat = self.forward()
        e.output, e.output_again = np.array(out.data), np.array(repeat.output.data)
        self.value = e.output
        e.scaled = self.backward(repeat, -2 * e.v)
        shared = repeated_and_scaled(e)
        if not shared:
            repeat = self.forward()
            e.output_again = np.array(repeat.output.data)
            e.again = self.backward(repeat, e.v.copy())
            self.walk(Stage.REPEAT, e)
        # After the fresh-graph repeat: a backward that differs every time is
        # nondeterministic, one that differs only on the same graph is not reentrant.
        e.reentered = self.backward_again(creator, e.v_given)
        if e.reentered:
            self.walk(Stage.REENTRANT, e)
        if not shared:
            e.scaled = self.backward(self.forward(), -2 * e.v)
            if doubled_overflowed(e):  # (terms the double of v overflows: ask at -v/2)
                e.scale, e.scaled = -0.5, self.backward(self.forward(), -0.5 * e.v)
            if first_failure(Stage.SCALED, e) is not None:
                # Deterministic (the repeat passed): measure the backward's rounding.
                e.backward_rounding = self.backward_rounding(e.v, e.grads)
            self.walk(Stage.SCALED, e)
        return e.v, e.grads

    def backward_rounding(self, v: np.ndarray, grads: list[Any]) -> list[float]:
        """Per input, the most ``backward(c·v) / c`` differs from its gradient over the
        factors :data:`BACKWARD_ROUNDING_FACTORS`, where that is rounding: at most
        :data:`BACKWARD_ROUNDING_CAP` of the gradient's scale (else 0).

        A linear backward gives ``c·backward(v)`` up to its rounding, which a fixed
        number of ulps does not bound: a factor just above 1 makes every intermediate
        round anew (log|v| + x with |x| = 200 rounds at 3e-14, where a move of ``v`` by
        a few ulps leaves it as it was), and 2 takes the path ``-2v`` takes where the
        backward scales by a norm of ``v`` (matrix_exp: the number of squarings). A
        backward that is not linear in ``v`` moves by the gradient's own size, far above
        any rounding, and is allowed nothing."""
        moved_by = [0.0] * len(grads)
        for c in BACKWARD_ROUNDING_FACTORS:
            scaled = (v.astype(np.float64) * c).astype(v.dtype)
            again = self.backward(self.forward(), scaled)
            for i, (g0, g1) in enumerate(zip(grads, again)):
                if g0 is None or g1 is None or np.shape(g0) != np.shape(g1):
                    continue
                g0, g1 = np.asarray(g0, np.float64), np.asarray(g1, np.float64)
                with np.errstate(all="ignore"):
                    d = np.abs(g1 / c - g0)
                moved_by[i] = max(moved_by[i], float(np.max(np.where(np.isfinite(d), d, np.inf))))
        for i, g in enumerate(grads):
            if g is not None and np.asarray(g).dtype.kind == "f":
                info = np.finfo(np.asarray(g).dtype)
                scale = float(np.max(np.abs(np.asarray(g, np.float64)), initial=0.0))
                if not moved_by[i] <= BACKWARD_ROUNDING_CAP * float(info.eps) ** 0.5 * scale:
                    moved_by[i] = 0.0
        return moved_by

    def evaluator(self, v: np.ndarray, computes_in: np.dtype | None = None) -> Evaluator:
        """Finite differences of ``<v, f>`` around this example. Once the output at the
        example is known, a forward that raises a domain error at a perturbed point
        (a step that crossed into the set where the op is not defined: a singular
        matrix) gives outputs that are not finite there, which the numerics leave out
        as they do an output that is not finite; the example's own forward raising one
        is the caller's to classify."""
        tgt, outside, shape = self.tgt, self.outside, np.shape(v)
        armed = False

        def nowhere(exc: Exception) -> np.ndarray:
            if armed and outside(exc):
                return np.full(shape, np.nan)
            raise exc

        def forward(arrays: Any, params: Any) -> Any:
            try:
                return tgt.forward(arrays, params)
            except Exception as exc:
                return nowhere(exc)

        def bind(arrays: Any, params: Any) -> Any:
            call = tgt.bind(arrays, params)

            def bound() -> Any:  # (the inner loop of the finite differences)
                try:
                    return call()
                except Exception as exc:
                    return nowhere(exc)

            return bound

        # At order 2 and above the forward is a backward, linear in its upstream
        # gradient, the last input (see Evaluator.unit_rounding).
        variant = self.tgt.variant
        linear = (len(self.xs) - 1,) if variant is not None and variant.order >= 2 else ()
        ev = Evaluator(
            forward,
            self.xs,
            self.params,
            v,
            reference=self.settings.reference,
            bind=bind,
            linear=linear,
            computes_in=computes_in,
        )
        armed = True
        return ev

    def overflows(self, i: int, gradient: Any, v: np.ndarray) -> bool:
        """Whether input ``i``'s gradient is not finite only because it is beyond its
        dtype's range: the backward of ``v * 2**-k`` (exact: a power of two) is finite
        at every element where ``gradient`` is not, and more than half the dtype's
        largest value once scaled back. A backward that gives inf or nan whatever the
        scale (an ``inf / inf`` of its own) stays a failure.

        Two scales are tried: a small ``k``, then the largest that keeps every nonzero
        element of ``v`` a normal number (the gradient of ``sum(inv(A))`` at a matrix of
        entries 1e-209 is about 1e418: no small ``k`` brings it into range). Where a
        larger shift gives zeros at those elements instead, the backward works beyond the
        dtype's range both ways there, which is the same: nothing to compare."""
        g = np.asarray(gradient)
        if g.dtype.kind != "f" or v.dtype.kind != "f":
            return False
        bad = ~np.isfinite(g)
        top = math.log2(float(np.finfo(g.dtype).max)) - 1.0
        for shift in _overflow_shifts(g.dtype, v):
            try:
                small = self.backward(self.forward(), v * v.dtype.type(2.0**-shift))[i]
            except _Fail:
                return False
            small = np.asarray(small) if small is not None else None
            if small is None or small.shape != g.shape:
                return False
            found = np.abs(small[bad].astype(np.float64))
            if not np.all(np.isfinite(found)):
                continue  # still beyond the range
            if np.any(found == 0):
                # Beyond the range at v and lost below it a shift further: the
                # backward's intermediates span more than the dtype's range (sum(inv(A))
                # at a matrix whose determinant underflows: nan at v, -0 at v·2**-384),
                # and what it returns there says nothing about its formula.
                return True
            return bool(np.all(np.log2(found) + shift > top))
        return False

    def no_finite_derivative(self, i: int, gradient: Any, v: np.ndarray) -> bool:
        """Whether finite differences show no finite derivative at every element of
        input ``i`` where ``gradient`` is not finite (at most
        :data:`NONFINITE_ELEMENTS_PROBED` of them, evenly spread).

        There an inf or nan may be the gradient's right value or its rounding: the
        derivative is infinite (a pole), or the function varies on a scale no step
        reaches (log|det| of a matrix of entries 1e-288, whose inverse overflows), and
        nothing can be said. Where the derivative is a finite number, or two finite
        one-sided ones (``abs`` at 0: any subgradient is finite), or, at the edge of
        the op's domain (the output not finite to one side), a finite one-sided one
        from inside (``x**1.5`` at 0), a non-finite gradient is wrong, and stays a
        ``nonfinite_gradient`` failure."""
        bad = _nonfinite(gradient)
        return self.probed(v, lambda ev: ev.unbounded_along(i, bad))

    def steep(self, i: int, gradient: Any, v: np.ndarray) -> bool:
        """Whether the forward's slope along an element where ``gradient`` is not finite
        is beyond its dtype's range (:meth:`PointProbes.steep_beyond`): the gradient is
        not representable, and its other elements may be inf or nan too (log|det|)."""
        g = np.asarray(gradient)
        if g.dtype.kind != "f":
            return False
        top = math.log2(float(np.finfo(g.dtype).max))
        return self.probed(v, lambda ev: ev.steep_beyond(i, _nonfinite(g), top))

    def probed(self, v: np.ndarray, probe: Callable[[Evaluator], bool]) -> bool:
        """``probe`` of the finite differences of ``<v, f>`` around this example (its
        forward calls counted); False where either raises. A non-finite gradient is
        also no failure where the forward stands apart at x
        (:meth:`PointProbes.apart_somewhere`: eigh's eigenvectors at a repeated
        eigenvalue jump at any move of an off-diagonal element, and torch's backward
        divides by the eigenvalues' difference); where it is continuous and its
        derivative finite (a norm's x / |x| at 0) a nan stays a failure."""
        try:
            ev = self.evaluator(v)
        except Exception:
            return False
        try:
            return bool(probe(ev))
        except Exception:
            return False
        finally:
            self.forward_calls += ev.calls

    def each_input_constant(
        self, v: np.ndarray, grads: list[Any], atol: float | None, rtol: float | None
    ) -> None:
        """Once more with each input that takes a gradient made a constant in turn (as
        when it needs none: torch's ``needs_input_grad[i]`` False, MyGrad's
        ``constant=True``): the op's backward takes its other paths, and the other
        inputs' gradients must be the ones the numerics just confirmed, the constant
        must get none. Only for ops with two such inputs or more."""
        free = [i for i, x in enumerate(self.xs) if i not in self.const and x.dtype.kind == "f"]
        if len(free) < 2:
            return
        for i in free:
            self.forward_calls += 1
            self.backward_calls += 1
            try:
                _, again = self.tgt.run(
                    self.xs,
                    self.params,
                    v,
                    constants=sorted({*self.const, i}),
                    outputs=self.outputs,
                )
            except TargetRaised as exc:
                if self.outside(exc.exception):
                    forward = exc.phase == "forward"
                    raise _Inconclusive(
                        Skip.DOMAIN_ERROR if forward else Skip.BACKWARD_DOMAIN_ERROR
                    ) from None
                kind = Kind.BACKWARD_ERROR if exc.phase == "backward" else Kind.FORWARD_ERROR
                failure = _raised(kind, exc)
                message = f"with input {i} a constant (it needs no gradient), {failure.message}"
                raise _Fail(replace(failure, message=message)) from None
            if again[i] is not None:
                raise _Fail(
                    Failure(
                        Kind.EXTRA_GRADIENT,
                        f"input {i} was made a constant (it needs no gradient) and received "
                        f"a gradient; constants must get none",
                        input=i,
                    )
                )
            for j in free:
                diff = None if j == i else _off(grads[j], again[j], self.xs[j], atol, rtol, self)
                if diff is not None:
                    raise _Fail(
                        Failure(
                            Kind.MISMATCH,
                            f"input {j}: with input {i} a constant (it needs no gradient: "
                            f"needs_input_grad[{i}] False in torch), the gradient of input "
                            f"{j} differs from the one the numerics confirmed with every "
                            f"input taking a gradient (max difference {diff:.3g}); the "
                            f"backward's path for an input that needs no gradient is wrong",
                            input=j,
                        )
                    )

    def undefined_upstream(self, v: np.ndarray, atol: float | None, rtol: float | None) -> None:
        """For an op with several differentiable outputs, in a framework that has
        undefined gradients (torch): the backward with no upstream gradient at all for
        some outputs (what torch passes for outputs the loss does not use: ``None`` in
        a Function that called ``ctx.set_materialize_grads(False)``, zeros in one that
        did not), each output undefined in turn and each the only one defined in turn
        (torch's ``check_undefined_grad``). Each input's gradient must be the one of
        zeros there (None counts as zeros); a backward that raises or gives another
        fails with kind ``undefined_grad``."""
        outputs = self.outputs
        if outputs is None or not self.tgt.foreign or len(outputs.indices) < 2:
            return
        indices = outputs.indices
        cases: list[tuple[int, ...]] = []
        for k in indices:
            for case in ((k,), tuple(j for j in indices if j != k)):
                if case not in cases:
                    cases.append(case)
        free = [i for i, x in enumerate(self.xs) if i not in self.const and x.dtype.kind == "f"]
        for undefined in cases:
            graph = self.forward()
            named = ", ".join(outputs.label(k) for k in undefined)
            said = f"with no upstream gradient (undefined: None in torch) for {named}"
            try:
                got = self.tgt.backward_undefined(
                    getattr(graph.output, "creator", None), v, undefined
                )
            except TargetRaised as exc:
                failure = _raised(Kind.UNDEFINED_GRAD, exc)
                message = (
                    f"{said}, as torch passes for outputs the loss does not use, {failure.message}"
                )
                raise _Fail(replace(failure, message=message)) from None
            if got is None:
                return  # the framework has no undefined gradients
            self.backward_calls += 1
            masked = sum(
                (outputs.only(k, v) for k in indices if k not in undefined), np.zeros_like(v)
            )
            expected = self.backward(self.forward(), masked)
            for i in free:
                diff = _off(expected[i], got[i], self.xs[i], atol, rtol, self)
                if diff is None:
                    continue
                e = np.zeros(1) if expected[i] is None else np.asarray(expected[i], np.float64)
                zeros = f"zeros there give max |gradient| {float(np.max(np.abs(e))):.3g}"
                what = (
                    f"received no gradient (None), where {zeros}"
                    if got[i] is None
                    else f"received another gradient than with zeros there (max difference "
                    f"{diff:.3g}; {zeros})"
                )
                raise _Fail(
                    Failure(
                        Kind.UNDEFINED_GRAD,
                        f"input {i}: {said}, input {i} {what}; the backward must treat an "
                        f"undefined gradient as zeros",
                        input=i,
                    )
                )

    def noncontiguous_inputs(
        self, v: np.ndarray, grads: list[Any], atol: float | None, rtol: float | None
    ) -> None:
        """Once more with the inputs non-contiguous views of the same values: the
        output and the gradients must be the ones the numerics just confirmed, else
        ``noncontiguous_input`` (:mod:`gradcheck.checking.contiguity`)."""
        if self.value is None:
            return
        nondet_tol = float(self.settings.nondet_tol)
        rounding: list[np.ndarray | None] = []
        output_moves: list[float] = []

        def output_moved() -> float:
            if not output_moves:
                output_moves.append(self.output_jitter(v))
            return output_moves[0]

        def off(expected: Any, got: Any, like: np.ndarray, which: int | None) -> float | None:
            # (an op allowed to differ run to run, nondet_tol, may here too)
            diff = _off(expected, got, like, atol, rtol, self)
            if diff is None or diff <= nondet_tol:
                return None
            if atol is not None or rtol is not None:
                return diff  # (tolerances the user chose are what they accept)
            if not math.isfinite(diff):
                # Not finite in another order where the last bits alone move the
                # output by more than sqrt(eps) of its size: the example sits on the
                # edge of the op's domain (log|det| of a matrix with a repeated row:
                # -inf, or a rounding's finite log, with a gradient to match), not
                # read wrong. (inf where a move alone leaves the domain.)
                value = np.asarray(self.value, np.float64)
                size = float(np.max(np.abs(value[np.isfinite(value)]), initial=1.0))
                kind = np.asarray(self.value).dtype
                eps = float(np.finfo(kind).eps) if kind.kind == "f" else 0.0
                return None if output_moved() > math.sqrt(eps) * size else diff
            if which is None:
                # The output, summed in another order: allowed up to the forward's own
                # rounding, measured as the gradients' below (a singular matrix's
                # determinant, 0 against 1e-30, whose tolerance, relative to 0, is 0)
                return None if diff <= BACKWARD_ROUNDING_FACTOR * output_moved() else diff
            # A gradient. Another layout sums in another order: a float16 softmax's
            # gradient moves by a few ulps of its terms. Allowed up to the backward's
            # own rounding, measured (once) by moving the inputs' last bits; reading
            # the storage in the wrong order moves it by the gradient's size.
            if not rounding:
                rounding.extend(self.rounding_jitter(v, grads, every=True))
            moved = rounding[which] if which < len(rounding) else None
            if moved is not None and diff <= BACKWARD_ROUNDING_FACTOR * float(
                np.max(moved, initial=0.0)
            ):
                return None
            return diff

        failure, runs = noncontiguous_disagreement(
            self.tgt,
            self.xs,
            self.params,
            sorted(self.const),
            v,
            self.outputs,
            self.value,
            grads,
            off,
        )
        self.forward_calls += runs
        self.backward_calls += runs
        if failure is not None:
            raise _Fail(failure)

    def backward_again(self, creator: Any, v: np.ndarray) -> list[Any]:
        """The gradients of a second backward of ``v`` on the first forward's graph,
        where the framework keeps it (torch); [] where not."""
        try:
            found = self.tgt.backward_again(creator, v)
        except TargetRaised as exc:
            # The first backward ran: the second fails on what the first changed
            # (torch's check of saved tensors modified in place, an attribute deleted).
            failure = _raised(Kind.NOT_REENTRANT, exc)
            message = (
                f"{failure.message}\nthe first backward on this graph ran; the backward "
                f"changes what the forward saved (torch: 'Backward is not reentrant')"
            )
            raise _Fail(replace(failure, message=message)) from None
        if found is None:
            return []
        self.backward_calls += 1
        return found

    def returned_dtypes(self, e: Evidence, creator: Any) -> list[Any]:
        """The dtypes the op's code returned its gradients in, before any cast (see
        :meth:`~gradcheck.checking.target.Target.returned_dtypes`); [] if unknown."""
        found = self.tgt.returned_dtypes(
            creator, self.xs, self.params, e.v_given, constants=sorted(self.const)
        )
        if found is None:
            return []
        if not self.tgt.foreign:
            self.forward_calls += 1  # an Operation target's forward, run again
        return found

    def rounding_jitter(
        self,
        v: np.ndarray,
        grads: list[Any],
        *,
        every: bool = False,
        arrays: list[np.ndarray] | None = None,
    ) -> list[np.ndarray | None]:
        """Per input, how far its gradient moves when every float input of a float32 or
        float16 example moves by a few units in the last place (1 to
        :data:`~gradcheck.checking.thresholds.ROUNDING_MOVE_ULPS`, random direction), at most over
        :data:`ROUNDING_SAMPLES` such moves; None for float64 inputs, unless ``every``
        (then zeros stay, see :func:`~gradcheck.checking.jitter.few_ulps`).

        A backward computed in a low precision is right only to its own rounding,
        which no formula predicts: a layer norm's terms of ~5|v| cancel to a gradient
        of 1e-4, rounding at 1e-7; a constant channel's x - mean is 0 in float64 but
        one ulp in float32, which 1/sqrt(eps) amplifies. Both move the computed
        gradient by about that much when the inputs' last bits change, where the
        exact gradient moves by far less; a systematic error (a precision lost the
        same way whatever the last bits) does not move, and stays a failure.

        ``arrays`` (with ``every``): the moves are of these instead of the example's
        inputs (float64 copies of a float32 or float16 example, see
        :func:`gradcheck.checking.low_precision.convicted_wide`).
        """
        xs = self.xs if arrays is None else arrays
        if not every and all(x.dtype.kind != "f" or x.dtype == np.float64 for x in xs):
            return [None] * len(xs)
        jitter = [None if g is None else np.zeros(np.shape(g)) for g in grads]
        moved: list[list[np.ndarray]] = [[] for _ in grads]
        for _, again in self.moved_runs(xs, v, every):
            for i, (g0, g1) in enumerate(zip(grads, again)):
                if jitter[i] is not None and g1 is not None and np.shape(g1) == np.shape(g0):
                    g1 = np.asarray(g1, np.float64)
                    moved[i].append(g1)
                    with np.errstate(all="ignore"):
                        d = np.abs(g1 - np.asarray(g0, np.float64))
                    # (jitter[i] is not None: checked above)
                    jitter[i] = np.maximum(jitter[i], np.where(np.isfinite(d), d, 0.0))  # type: ignore[arg-type]
        for i, runs in enumerate(moved):
            found = jitter[i]
            if found is not None and len(runs) >= OUTLIER_RUNS:
                jitter[i] = unless_outlier(np.asarray(grads[i], np.float64), runs, found)
        return [None if x.dtype == np.float64 and not every else j for x, j in zip(xs, jitter)]

    def moved_runs(
        self, xs: list[np.ndarray], v: np.ndarray, every: bool
    ) -> Iterator[tuple[Any, list[Any]]]:
        """The op's output and gradients (for ``v``) at up to :data:`ROUNDING_SAMPLES`
        copies of ``xs`` whose float elements moved by a few units in the last place
        (the same moves for the same example; see :meth:`rounding_jitter`); a move at
        which the op raised is left out."""
        rng = np.random.default_rng(0)
        for _ in range(ROUNDING_SAMPLES):
            moved = [few_ulps(x, rng, 0.0 if every else None) for x in xs]
            try:
                found = self.tgt.run(
                    moved, self.params, v, constants=sorted(self.const), outputs=self.outputs
                )
            except Exception:
                continue
            finally:
                self.forward_calls += 1
                self.backward_calls += 1
            yield found

    def output_jitter(self, v: np.ndarray) -> float:
        """How far the output moves (at most, any element) when every float input
        moves by a few units in the last place: the forward's own rounding (inf where
        a move makes a finite output non-finite). A
        determinant of a singular matrix is 0 in one summation order and 1e-30 in
        another, as far from 0 as the rounding of its terms (~1e-14 here)."""
        value = np.asarray(self.value, np.float64)
        moved = 0.0
        for out, _ in self.moved_runs(self.xs, v, True):
            out = np.asarray(out, np.float64)
            if out.shape == value.shape:
                with np.errstate(all="ignore"):
                    d = np.abs(out - value)
                if np.any(np.isfinite(value) & ~np.isfinite(out)):
                    return math.inf  # (the last bits alone leave the op's domain)
                moved = max(moved, float(np.max(np.where(np.isfinite(d), d, 0.0), initial=0.0)))
        return moved

    def walk(self, stage: str, e: Evidence) -> None:
        failure = first_failure(stage, e)
        if failure is not None:
            raise _Fail(failure)

    def walk_gradients(self, e: Evidence, grads: Sequence[Any], *, everyone: bool) -> None:
        """Each input's gradient in turn: a constant's, then the others' (each one's
        that has a gradient; with ``everyone``, constants' too)."""
        for i, g in enumerate(grads):
            e.i, e.gradient = i, g
            if i in self.const and not everyone:
                self.walk(Stage.CONSTANT, e)
            elif g is not None:  # missing: judged after the numerics (fine if it is zero)
                self.walk(Stage.GRADIENT, e)

    def invalid_gradient(self, exc: TargetRaised, v: np.ndarray, graph: Any = None) -> Failure:
        """The engine rejected a gradient: say which input and what was wrong."""
        raw = self.tgt.raw_gradients(self.xs, self.params, v, constants=sorted(self.const))
        if raw is not None:
            e = Evidence(self.xs, self.const, raw=True)
            try:
                self.walk_gradients(e, raw, everyone=True)
            except _Fail as fail:
                return fail.failure
        # A function target: some inner op's gradient; classify by the engine's words.
        text = str(exc.exception)
        kind = Kind.WRONG_SHAPE if "shape" in text else Kind.NOT_ARRAY
        named = inner_wrong_shape(exc.exception, graph, Evidence(self.xs, self.const))
        if kind == Kind.WRONG_SHAPE and named is not None:
            return named
        return Failure(kind, text, exception=f"InvalidGradient: {text}")


def drawn_upstream(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """The upstream gradient ``v`` a check draws for an output of ``shape``: a signed
    Gaussian, so that a backward mixing up the output's elements shows; 1 for a
    scalar output (drawn all the same, so that what follows draws the same), where
    nothing can be mixed up and ``vᵀJ`` is then the derivative itself, as the report
    shows it. A backward that ignores ``v`` (or its sign, or squares it) fails the
    linearity check, ``backward(-2v) == -2·backward(v)``, at ``v = 1`` too."""
    v = rng.standard_normal(shape)
    return np.ones((), dtype=v.dtype) if v.ndim == 0 else v


def _raised(kind: str, exc: TargetRaised) -> Failure:
    original = exc.exception
    text = exception_text(original)
    frame = user_frame(original.__traceback__)
    return Failure(
        kind,
        f"the {exc.phase} raised {text}"
        + (f"\n  at {frame}" if frame else "")
        + own_tensor_hint(original),
        exception=text,
        frame=frame,
    )
