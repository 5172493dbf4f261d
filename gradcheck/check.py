"""`check`: is the gradient of one target right at one example?

The steps follow DESIGN.md "One check, step by step": a forward with the graph and a
backward with a random upstream gradient ``v``; structural checks (each failure its
own kind, see :data:`gradcheck.result.FAILURE_KINDS`); then the analytic gradient
against finite differences (:mod:`gradcheck.numerical`) and the verdict

    |analytic - numeric| <= atol + rtol * |numeric| + c * error_estimate

element by element, where the function is differentiable. Nothing is printed:
the result is data (:class:`~gradcheck.result.CheckResult`), rendered by
:mod:`gradcheck.report` and the front ends.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np

from gradcheck.errors import GradcheckError, InvalidGradient
from gradcheck.numerical import Evaluator, full_estimate
from gradcheck.result import CheckResult, Element, Failure, InputErrors
from gradcheck.target import Target, TargetRaised, resolve_target, user_frame
from gradcheck.tensor import Tensor

__all__ = ["check", "CheckUsageError", "DEFAULT_TOLERANCES", "FULL_MODE_MAX_SIZE"]

#: Default (rtol, atol) per gradient dtype. ``atol`` here is relative to the input's
#: gradient scale (the largest |numeric| of that input), so that it means the same at
#: every magnitude; an ``atol=`` passed to :func:`check` is absolute.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-9),
    "float32": (1e-4, 1e-5),
    "float16": (1e-2, 1e-2),
}
#: The multiple of the finite-difference error estimate added to the tolerance.
ERROR_ESTIMATE_FACTOR = 3.0
#: Multiple of eps·|x|·|s''| allowed for the rounding of the inputs of the analytic
#: gradient (its backward error); matters for float16 and float32 only.
INPUT_ROUNDING_FACTOR = 4.0
#: mode="auto" checks element by element up to this many elements in all inputs.
FULL_MODE_MAX_SIZE = 4096
#: Elements listed as "worst" in a result.
WORST_ELEMENTS = 5
#: Elements that fast mode isolates by bisection, at most, per input.
FAST_MODE_MAX_LOCATED = 8
#: Gradients of two runs on fresh graphs (and backward(2v) against 2·backward(v))
#: may differ by this many units in the last place of the gradient's scale.
_REPEAT_ULPS = 4

_SETTINGS = (
    "params",
    "constants",
    "seed",
    "mode",
    "atol",
    "rtol",
    "dtype",
    "reference",
    "complex_step",
    "directions",
)


class CheckUsageError(GradcheckError, ValueError):
    """``check`` was called with arguments it cannot use (wrong number of inputs, an
    unknown setting, an unknown mode)."""


def check(
    target: Any,
    *arrays: Any,
    params: Mapping[str, Any] | None = None,
    constants: Sequence[int] = (),
    seed: int = 0,
    mode: str = "auto",
    atol: float | None = None,
    rtol: float | None = None,
    dtype: Any = None,
    reference: str = "float64",
    complex_step: bool = False,
    directions: int = 4,
    **op_params: Any,
) -> CheckResult:
    """Check the gradient of ``target`` at ``arrays``.

    Parameters
    ----------
    target : Operation subclass, function of Tensors, or Target
        The op (see :func:`gradcheck.resolve_target`).
    *arrays : array_like
        One value per tensor input. Non-float inputs are constants.
    params : mapping, optional
        The op's keyword parameters. Parameters whose names are not settings of
        ``check`` may also be given directly as keywords (``check(Sum, x, axis=0)``);
        ``params=`` is the way to pass one whose name is a setting (``seed``, ``mode``...).
    constants : sequence of int
        Indices of inputs that are constant: they must receive no gradient.
    seed : int
        Seeds the upstream gradient ``v`` (a signed Gaussian) and fast mode's
        directions; the same seed replays the same check.
    mode : {"auto", "full", "fast"}
        "full" compares every element; "fast" compares ``directions`` random
        directional derivatives and bisects to the bad elements when one fails;
        "auto" is "full" up to :data:`FULL_MODE_MAX_SIZE` elements.
    atol, rtol : float, optional
        Tolerances. Defaults depend on the gradient's dtype
        (:data:`DEFAULT_TOLERANCES`); a default ``atol`` scales with the gradient.
    dtype : data-type, optional
        Cast float inputs to this dtype before checking.
    reference : {"float64", "native"}
        Evaluate finite differences in float64 when the op accepts it (default), or
        in the inputs' own dtype.
    complex_step : bool
        Use the complex step instead of central differences (ops analytic in their
        inputs only; kinks are then not detected).
    directions : int
        Random directions in fast mode.
    **op_params
        The op's keyword parameters (convenience for ``params=``).

    Returns
    -------
    CheckResult

    Raises
    ------
    CheckUsageError
        Wrong number of inputs, an unknown keyword, an unknown mode or reference.
    NotATarget
        ``target`` is not an op.

    Examples
    --------
    >>> import numpy as np
    >>> import gradcheck as mg
    >>> result = check(lambda x: mg.tanh(x) * x, np.linspace(-2, 2, 5))
    >>> result.verdict, result.failure
    ('passed', None)
    """
    start = time.perf_counter()
    tgt = resolve_target(target)
    all_params = _merge_params(tgt, params, op_params)
    if mode not in ("auto", "full", "fast"):
        raise CheckUsageError(f"mode must be 'auto', 'full' or 'fast', not {mode!r}")
    if reference not in ("float64", "native"):
        raise CheckUsageError(f"reference must be 'float64' or 'native', not {reference!r}")
    xs = _as_arrays(tgt, arrays, dtype)
    const = {i for i in constants} | {i for i, a in enumerate(xs) if a.dtype.kind != "f"}
    bad = [i for i in const if not 0 <= i < len(xs)]
    if bad:
        raise CheckUsageError(f"constants={tuple(constants)} names inputs that do not exist")
    if mode == "auto":
        size = sum(xs[i].size for i in range(len(xs)) if i not in const)
        mode = "full" if size <= FULL_MODE_MAX_SIZE else "fast"
    settings = {
        "mode": mode,
        "atol": atol,
        "rtol": rtol,
        "dtype": None if dtype is None else str(np.dtype(dtype)),
        "reference": reference,
        "complex_step": complex_step,
        "directions": directions,
        "constants": sorted(const),
    }
    run = _Run(tgt, xs, all_params, const, np.random.default_rng(seed), settings)
    result = run.execute(atol, rtol)
    result.seed = seed
    result.seconds = time.perf_counter() - start
    return result


def _merge_params(
    tgt: Target, params: Mapping[str, Any] | None, op_params: Mapping[str, Any]
) -> dict[str, Any]:
    merged = dict(params or {})
    for name, value in op_params.items():
        if name not in tgt.signature.parameters:
            raise CheckUsageError(
                f"check() got {name}=, which is neither a setting of check() nor a "
                f"parameter of {tgt.name} (its parameters: "
                f"{', '.join(tgt.signature.parameters) or 'none'}); "
                f"pass op parameters whose names clash with settings as params={{...}}"
            )
        merged[name] = value
    return merged


def _as_arrays(tgt: Target, arrays: Sequence[Any], dtype: Any) -> list[np.ndarray]:
    sig = tgt.signature
    if len(arrays) < sig.arity or (len(arrays) > sig.arity and not sig.variadic):
        want = f"at least {sig.arity}" if sig.variadic else str(sig.arity)
        raise CheckUsageError(
            f"{tgt.name} takes {want} tensor input(s) "
            f"({', '.join(sig.input_names) or 'none named'}); check() got {len(arrays)}"
        )
    out = []
    for a in arrays:
        x = np.array(a.data if isinstance(a, Tensor) else a)
        if dtype is not None and x.dtype.kind == "f":
            x = x.astype(dtype)
        out.append(x)
    return out


def _tolerances(dt: np.dtype, atol: float | None, rtol: float | None) -> tuple[float, float, bool]:
    """(rtol, atol, atol_is_relative_to_scale)."""
    d_rtol, d_atol = DEFAULT_TOLERANCES.get(str(dt), DEFAULT_TOLERANCES["float64"])
    return (d_rtol if rtol is None else rtol), (d_atol if atol is None else atol), atol is None


def _same(a: np.ndarray, b: np.ndarray, dt: np.dtype) -> bool:
    """Equal up to a few units in the last place of the gradient's scale."""
    a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a64.shape != b64.shape:
        return False
    eps = float(np.finfo(dt).eps) if dt.kind == "f" else 0.0
    scale = max(float(np.max(np.abs(a64), initial=0.0)), float(np.max(np.abs(b64), initial=0.0)))
    return bool(np.all(np.abs(a64 - b64) <= _REPEAT_ULPS * eps * scale))


@dataclass
class _Fail(Exception):
    failure: Failure


class _Run:
    """One check's state: the target, the example, and the call counters."""

    def __init__(
        self,
        tgt: Target,
        xs: list[np.ndarray],
        params: dict[str, Any],
        const: set[int],
        rng: np.random.Generator,
        settings: dict[str, Any],
    ) -> None:
        self.tgt, self.xs, self.params, self.const = tgt, xs, params, const
        self.rng, self.settings = rng, settings
        self.forward_calls = 0
        self.backward_calls = 0

    def result(self, verdict: str, **fields: Any) -> CheckResult:
        return CheckResult(
            verdict=verdict,
            target=self.tgt.name,
            inputs=[x.copy() for x in self.xs],
            params=dict(self.params),
            settings=dict(self.settings),
            forward_calls=self.forward_calls,
            backward_calls=self.backward_calls,
            **fields,
        )

    def execute(self, atol: float | None, rtol: float | None) -> CheckResult:
        try:
            v, grads = self.structure()
            return self.numerics(v, grads, atol, rtol)
        except _Fail as fail:
            return self.result("failed", failure=fail.failure)

    # -- step 1 and 2: forward, backward, structure ---------------------------------
    def forward(self) -> Any:
        self.forward_calls += 1
        try:
            return self.tgt.apply(self.xs, self.params, constants=sorted(self.const))
        except TargetRaised as exc:
            raise _Fail(_raised("forward_error", exc)) from None

    def backward(self, graph: Any, v: np.ndarray) -> list[Any]:
        self.backward_calls += 1
        try:
            return self.tgt.backward(graph, v)
        except TargetRaised as exc:
            if isinstance(exc.exception, InvalidGradient):
                raise _Fail(self.invalid_gradient(exc, v)) from None
            raise _Fail(_raised("backward_error", exc)) from None

    def structure(self) -> tuple[np.ndarray, list[Any]]:
        graph = self.forward()
        out = graph.output
        if not isinstance(out, Tensor):
            raise _Fail(
                Failure(
                    "invalid_output",
                    f"the target returned {type(out).__name__}, not a Tensor; build its "
                    f"result with gradcheck ops (or write an Operation)",
                )
            )
        if out.dtype.kind != "f":
            raise _Fail(
                Failure("invalid_output", f"the output has dtype {out.dtype}, not a real float")
            )
        if not np.all(np.isfinite(out.data)):
            bad = int(np.size(out.data) - np.count_nonzero(np.isfinite(out.data)))
            raise _Fail(
                Failure(
                    "nonfinite_output",
                    f"the output has {bad} non-finite value(s) at these inputs",
                )
            )
        self.check_unchanged(graph, "forward")
        v = self.rng.standard_normal(out.shape).astype(out.dtype)
        v_before = v.copy()
        grads = self.backward(graph, v)
        if not np.array_equal(v, v_before, equal_nan=True):
            raise _Fail(
                Failure(
                    "mutated_upstream",
                    "the backward changed the upstream gradient (the `grad` it was "
                    "given) in place; compute a new array instead (e.g. `grad * x`, "
                    "not `grad *= x`)",
                )
            )
        self.check_unchanged(graph, "backward")
        self.check_gradients(grads, v)
        # Determinism: a fresh graph, the same v.
        again = self.backward(self.forward(), v.copy())
        for i, (g1, g2) in enumerate(zip(grads, again)):
            if (g1 is None) != (g2 is None) or (
                g1 is not None and not _same(g1, g2, np.asarray(g1).dtype)
            ):
                raise _Fail(
                    Failure(
                        "nondeterministic",
                        f"input {i}: a second forward and backward on a fresh graph with "
                        f"the same upstream gradient gave a different gradient "
                        f"(max difference {_maxdiff(g1, g2):.3g})",
                        input=i,
                    )
                )
        # Linearity in v: backward(-2v) == -2 backward(v), exact in floating point.
        # (-2, not 2: a backward that is only positively homogeneous, |grad| * ...,
        # passes with 2.)
        scaled = self.backward(self.forward(), -2 * v)
        for i, (g1, g2) in enumerate(zip(grads, scaled)):
            if g1 is None:
                continue
            expected = -2 * np.asarray(g1)
            if g2 is None or not _same(expected, g2, np.asarray(g1).dtype):
                raise _Fail(
                    Failure(
                        "nonlinear",
                        f"input {i}: backward(-2v) is not -2·backward(v) (max difference "
                        f"{_maxdiff(expected, g2):.3g}); a gradient must be linear in the "
                        f"upstream gradient: multiply `grad` in, do not ignore or "
                        f"transform it",
                        input=i,
                    )
                )
        return v, grads

    def check_unchanged(self, graph: Any, phase: str) -> None:
        for i, (t, x) in enumerate(zip(graph.tensors, self.xs)):
            if t.data.shape != x.shape or not np.array_equal(t.data, x, equal_nan=True):
                raise _Fail(
                    Failure(
                        "mutated_input",
                        f"input {i} was changed in place by the {phase}; an op must "
                        f"not write to its inputs' data",
                        input=i,
                    )
                )

    def check_gradients(self, grads: list[Any], v: np.ndarray) -> None:
        for i, (g, x) in enumerate(zip(grads, self.xs)):
            if i in self.const:
                if g is not None:
                    raise _Fail(
                        Failure(
                            "extra_gradient",
                            f"input {i} is a constant but received a gradient; "
                            f"constants must get none",
                            input=i,
                        )
                    )
                continue
            if g is None:
                continue  # missing: judged after the numerics (fine if it is zero)
            self.check_value(i, g, x)
        arrays = [(i, g) for i, g in enumerate(grads) if isinstance(g, np.ndarray)]
        for i, g in arrays:
            if np.shares_memory(g, v):
                raise _Fail(
                    Failure(
                        "aliased_gradient",
                        f"the gradient of input {i} shares memory with the upstream "
                        f"gradient; return a new array",
                        input=i,
                    )
                )
        for a, (i, g) in enumerate(arrays):
            for j, h in arrays[a + 1 :]:
                if g.size and np.shares_memory(g, h):
                    raise _Fail(
                        Failure(
                            "aliased_gradient",
                            f"the gradients of inputs {i} and {j} share memory; each "
                            f"input needs its own array",
                            input=i,
                        )
                    )

    def check_value(self, i: int, g: Any, x: np.ndarray, *, raw: bool = False) -> None:
        """Type, dtype, shape and finiteness of the gradient ``g`` of input ``i``."""
        where = f"input {i}"
        if not isinstance(g, np.ndarray) and not (isinstance(g, Real) and not isinstance(g, bool)):
            raise _Fail(
                Failure(
                    "not_array",
                    f"the gradient of {where} is a {type(g).__name__}, not an ndarray or "
                    f"a real number",
                    input=i,
                )
            )
        dt = np.asarray(g).dtype
        if dt.kind not in "iuf":
            raise _Fail(
                Failure(
                    "non_real_dtype",
                    f"the gradient of {where} has dtype {dt}; gradients are real",
                    input=i,
                )
            )
        if dt != x.dtype and not (raw and dt.kind != "f"):
            raise _Fail(
                Failure(
                    "wrong_dtype",
                    f"the gradient of {where} has dtype {dt}, its input {x.dtype}",
                    input=i,
                )
            )
        if np.shape(g) != x.shape:
            raise _Fail(
                Failure(
                    "wrong_shape",
                    f"the gradient of {where} has shape {np.shape(g)}, its input {x.shape}",
                    input=i,
                )
            )
        if not np.all(np.isfinite(g)):
            bad = int(np.size(g) - np.count_nonzero(np.isfinite(g)))
            raise _Fail(
                Failure(
                    "nonfinite_gradient",
                    f"the gradient of {where} has {bad} non-finite value(s)",
                    input=i,
                )
            )

    def invalid_gradient(self, exc: TargetRaised, v: np.ndarray) -> Failure:
        """The engine rejected a gradient: say which input and what was wrong."""
        raw = self.tgt.raw_gradients(self.xs, self.params, v, constants=sorted(self.const))
        if raw is not None:
            for i, (g, x) in enumerate(zip(raw, self.xs)):
                if g is None:
                    continue
                try:
                    self.check_value(i, g, x, raw=True)
                except _Fail as fail:
                    return fail.failure
        # A function target: some inner op's gradient; classify by the engine's words.
        text = str(exc.exception)
        kind = "wrong_shape" if "shape" in text else "not_array"
        return Failure(kind, text, exception=f"InvalidGradient: {text}")

    # -- step 3-5: numerics and the verdict -------------------------------------------
    def numerics(
        self, v: np.ndarray, grads: list[Any], atol: float | None, rtol: float | None
    ) -> CheckResult:
        try:
            ev = Evaluator(
                self.tgt.forward,
                self.xs,
                self.params,
                v,
                reference=self.settings["reference"],
                bind=self.tgt.bind,
            )
        except Exception as exc:
            raise _Fail(_raised("forward_error", TargetRaised("forward", exc))) from None
        per_input: list[InputErrors] = []
        elements: list[Element] = []
        kinks: list[tuple[int, tuple[int, ...]]] = []
        failure: Failure | None = None
        try:
            for i, x in enumerate(self.xs):
                if i in self.const:
                    continue
                g = grads[i]
                analytic = np.zeros(x.shape) if g is None else np.asarray(g, dtype=np.float64)
                r, a, relative = _tolerances(x.dtype, atol, rtol)
                comparison = _Comparison(i, x, analytic, r, a, relative)
                if self.settings["mode"] == "fast" and not self.settings["complex_step"]:
                    _fast(ev, comparison, self.rng, self.settings["directions"])
                else:
                    _full(ev, comparison, self.settings["complex_step"])
                per_input.append(comparison.summary())
                elements.extend(comparison.elements)
                kinks.extend((i, idx) for idx in comparison.kinks)
                if failure is None and comparison.mismatched:
                    failure = comparison.failure(missing=g is None)
        except _Fail:
            raise
        except ValueError as exc:
            if self.settings["complex_step"]:
                raise CheckUsageError(str(exc)) from None
            raise _Fail(_raised("forward_error", TargetRaised("forward", exc))) from None
        except Exception as exc:
            raise _Fail(_raised("forward_error", TargetRaised("forward", exc))) from None
        finally:
            self.forward_calls += ev.calls if "ev" in locals() else 0
        worst = sorted(elements, key=lambda e: -e.ratio)[:WORST_ELEMENTS]
        if failure is not None:
            verdict = "failed"
        elif kinks:
            verdict = "not differentiable"
        else:
            verdict = "passed"
        return self.result(verdict, failure=failure, per_input=per_input, worst=worst, kinks=kinks)


def _maxdiff(a: Any, b: Any) -> float:
    if a is None or b is None:
        return float("nan")
    try:
        return float(np.max(np.abs(np.asarray(a, float) - np.asarray(b, float)), initial=0.0))
    except ValueError:
        return float("nan")


def _raised(kind: str, exc: TargetRaised) -> Failure:
    original = exc.exception
    text = f"{type(original).__name__}: {original}"
    frame = user_frame(original.__traceback__)
    return Failure(
        kind,
        f"the {exc.phase} raised {text}" + (f"\n  at {frame}" if frame else ""),
        exception=text,
        frame=frame,
    )


class _Comparison:
    """Analytic against numeric for one input: tolerances, elements, verdicts."""

    def __init__(
        self,
        i: int,
        x: np.ndarray,
        analytic: np.ndarray,
        rtol: float,
        atol: float,
        relative: bool,
    ):
        self.x = x
        info = np.finfo(x.dtype if x.dtype.kind == "f" else np.float64)
        self.eps = float(info.eps)
        self.smallest_normal = float(info.smallest_normal)
        self.i, self.analytic, self.rtol, self.atol, self.relative = (
            i,
            analytic,
            rtol,
            atol,
            relative,
        )
        self.elements: list[Element] = []
        self.kinks: list[tuple[int, ...]] = []
        self.mismatched = 0
        self.max_abs = 0.0
        self.max_rel = 0.0
        self.max_ratio = 0.0
        self.size = analytic.size
        self.direction_failure: str | None = None

    def abs_tol(self, numeric: np.ndarray) -> float:
        """The absolute tolerance for this input, given (an estimate of) its numeric
        gradient: scaled by the gradient's size for the default."""
        if not self.relative:
            return self.atol
        finite = np.abs(numeric[np.isfinite(numeric)])
        scale = float(finite.max()) if finite.size else 0.0
        # Below the dtype's smallest normal number a gradient loses relative precision
        # (a float16 gradient of 1e-8 underflows to 0): no claim is made there.
        return self.atol * scale + self.smallest_normal

    def settled(self, first: np.ndarray) -> np.ndarray:
        a = self.abs_tol(first)
        return np.abs(self.analytic - first) <= a + self.rtol * np.abs(first)

    def jump_threshold(self, first: np.ndarray) -> float:
        finite = np.abs(first[np.isfinite(first)])
        return self.abs_tol(first) + self.rtol * (float(finite.max()) if finite.size else 0.0)

    def record(
        self,
        flat_index: np.ndarray,
        analytic: np.ndarray,
        numeric: np.ndarray,
        error: np.ndarray,
        kink: np.ndarray,
        atol: float,
        extra: np.ndarray | float = 0.0,
    ) -> None:
        """Judge elements (flat indices into the input) and keep the worst; ``extra``
        is added to each element's allowed difference."""
        shape = self.analytic.shape
        with np.errstate(all="ignore"):
            diff = np.abs(analytic - numeric)
            allowed = atol + self.rtol * np.abs(numeric) + ERROR_ESTIMATE_FACTOR * error + extra
            ratio = np.where(np.isfinite(diff), diff / allowed, np.inf)
            rel = diff / np.maximum(np.abs(numeric), np.finfo(np.float64).tiny)
        smooth = ~kink
        bad = smooth & ~(ratio <= 1.0)
        self.mismatched += int(bad.sum())
        for j in flat_index[kink]:
            self.kinks.append(tuple(int(k) for k in np.unravel_index(j, shape)))
        if smooth.any():
            self.max_abs = max(self.max_abs, float(diff[smooth].max()))
            self.max_rel = max(self.max_rel, float(rel[smooth].max()))
            self.max_ratio = max(self.max_ratio, float(ratio[smooth].max()))
        order = np.argsort(-np.where(smooth, ratio, -1.0), kind="stable")[:WORST_ELEMENTS]
        for o in order:
            if not smooth[o]:
                continue
            self.elements.append(
                Element(
                    input=self.i,
                    index=tuple(int(k) for k in np.unravel_index(flat_index[o], shape)),
                    analytic=float(analytic[o]),
                    numeric=float(numeric[o]),
                    abs_error=float(diff[o]),
                    rel_error=float(rel[o]),
                    ratio=float(ratio[o]),
                )
            )

    def summary(self) -> InputErrors:
        return InputErrors(
            input=self.i,
            max_abs_error=self.max_abs,
            max_rel_error=self.max_rel,
            error_ratio=self.max_ratio,
            mismatched=self.mismatched,
            size=self.size,
            kinks=len(self.kinks),
        )

    def failure(self, *, missing: bool) -> Failure:
        worst = tuple(sorted((e for e in self.elements if e.ratio > 1), key=lambda e: -e.ratio))
        worst = worst[:WORST_ELEMENTS]
        if missing:
            return Failure(
                "missing_gradient",
                f"input {self.i} received no gradient, but its numeric gradient is not "
                f"zero ({self.mismatched} / {self.size} elements)",
                input=self.i,
                worst=worst,
                mismatched=self.mismatched,
                size=self.size,
            )
        if worst:
            e = worst[0]
            message = (
                f"the gradient of input {self.i} differs from finite differences "
                f"at {self.mismatched} / {self.size} elements; worst at index {e.index}: "
                f"analytic {e.analytic:.10g}, numeric {e.numeric:.10g}"
            )
        else:
            message = f"the gradient of input {self.i} differs from finite differences " + (
                self.direction_failure or ""
            )
        return Failure(
            "mismatch",
            message,
            input=self.i,
            worst=worst,
            mismatched=self.mismatched,
            size=self.size,
        )


def _full(ev: Evaluator, cmp: _Comparison, complex_step: bool) -> None:
    i = cmp.i
    if complex_step:
        numeric = ev.complex_step(i)
        error = 8 * ev.eps * np.abs(numeric)
        kink = np.zeros(numeric.shape, dtype=bool)
        curvature = np.zeros(numeric.shape)
    else:
        est = full_estimate(ev, i, settled=cmp.settled, jump_threshold=cmp.jump_threshold)
        numeric, error, kink, curvature = est.value, est.error, est.kink, est.curvature
    # Backward error of the analytic gradient: computed in the op's dtype, it is at
    # best the gradient at a point off by a rounding of each input, eps·|x|, which
    # moves it by about s''·eps·|x|. This is what float16 sin(25 x) needs.
    x = np.abs(cmp.x).astype(np.float64).reshape(-1)
    with np.errstate(all="ignore"):
        extra = INPUT_ROUNDING_FACTOR * cmp.eps * x * np.abs(curvature.reshape(-1))
    extra = np.where(np.isfinite(extra), extra, 0.0)
    cmp.record(
        np.arange(numeric.size),
        cmp.analytic.reshape(-1),
        numeric.reshape(-1),
        error.reshape(-1),
        kink.reshape(-1),
        cmp.abs_tol(np.where(kink, 0.0, numeric)),
        extra,
    )


def _fast(ev: Evaluator, cmp: _Comparison, rng: np.random.Generator, directions: int) -> None:
    """Directional derivatives along random signed directions; when one disagrees
    (or crosses a kink), bisect the elements to find the ones responsible."""
    i = cmp.i
    x = ev.work[i].reshape(-1).astype(np.float64)
    g = cmp.analytic.reshape(-1)
    h0 = float(np.cbrt(ev.eps))
    scale = np.maximum(np.abs(x), 1.0)
    # Tolerance per element, with the analytic gradient standing in for the numeric.
    atol = cmp.abs_tol(g)
    t = atol + cmp.rtol * np.abs(g)
    located: list[int] = []

    def agrees(e: np.ndarray) -> tuple[bool, float, float, float, bool]:
        numeric, err, kink, curvature = ev.refine(i, e, h0, float(np.sqrt(np.sum((t * e) ** 2))))
        analytic = float(g @ e)
        # As in full mode, plus the inputs' rounding: e is scaled like x, so about
        # eps·|e' H e| (curvature along e).
        allowed = (
            float(np.sqrt(np.sum((t * e) ** 2)))
            + ERROR_ESTIMATE_FACTOR * err
            + INPUT_ROUNDING_FACTOR * cmp.eps * abs(curvature)
        )
        ok = bool(np.isfinite(numeric) and abs(analytic - numeric) <= allowed and not kink)
        return ok, analytic, numeric, allowed, kink

    def bisect(members: np.ndarray, d: np.ndarray) -> None:
        if len(located) >= FAST_MODE_MAX_LOCATED:
            return
        if members.size <= 2:
            located.extend(int(j) for j in members)
            return
        for half in (members[: members.size // 2], members[members.size // 2 :]):
            e = np.zeros_like(d)
            e[half] = d[half]
            if not agrees(e)[0]:
                bisect(half, d)

    for _ in range(directions):
        d = rng.standard_normal(x.size) * scale
        ok, analytic, numeric, allowed, kink = agrees(d)
        if not kink:  # a direction across a kink says nothing about the error
            diff = abs(analytic - numeric)
            cmp.max_abs = max(cmp.max_abs, diff)
            cmp.max_rel = max(cmp.max_rel, diff / max(abs(numeric), np.finfo(float).tiny))
            cmp.max_ratio = max(cmp.max_ratio, diff / allowed if allowed > 0 else np.inf)
        if not ok:
            cmp.direction_failure = (
                None
                if kink
                else (
                    f"along a random direction: <analytic, d> = {analytic:.10g}, numeric "
                    f"{numeric:.10g} (allowed difference {allowed:.3g})"
                )
            )
            bisect(np.arange(x.size), d)
            break
    if not located:
        if cmp.direction_failure is not None:
            cmp.mismatched += 1
        return
    # Judge the located elements one by one, as full mode would.
    threshold = cmp.jump_threshold(g)
    idx = np.array(sorted(set(located)))
    results = [ev.refine(i, int(j), float(h0 * scale[j]), threshold, scale[j]) for j in idx]
    numeric = np.array([r[0] for r in results])
    error = np.array([r[1] for r in results])
    kink = np.array([r[2] for r in results])
    curvature = np.abs(np.array([r[3] for r in results]))
    extra = INPUT_ROUNDING_FACTOR * cmp.eps * np.abs(x[idx]) * curvature
    before = cmp.mismatched
    cmp.record(idx, g[idx], numeric, error, kink, atol, extra)
    if cmp.mismatched == before and not kink.any() and cmp.direction_failure is not None:
        cmp.mismatched += 1  # the direction failed; no single element explains it
