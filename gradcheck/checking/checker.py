"""`check`: is the gradient of one target right at one example?

The steps follow DESIGN.md "One check, step by step": a forward with the graph and a
backward with a random upstream gradient ``v``; structural checks (each failure its
own kind, see :data:`gradcheck.checking.result.FAILURE_KINDS`); then the analytic gradient
against finite differences (:mod:`gradcheck.checking.numerical`) and the verdict

    |analytic - numeric| <= atol + rtol * |numeric| + c * error_estimate

element by element, where the function is differentiable (:mod:`gradcheck.checking.compare`).
Nothing is printed: the result is data (:class:`~gradcheck.checking.result.CheckResult`),
rendered by :mod:`gradcheck.frontend.report` and the front ends.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np

from gradcheck.checking.compare import WORST_ELEMENTS, Comparison, compare_fast, compare_full
from gradcheck.checking.numerical import Evaluator, full_estimate
from gradcheck.checking.result import CheckResult, Element, Failure, InputErrors
from gradcheck.checking.target import Target, resolve_target, user_frame
from gradcheck.checking.vocabulary import MODES, Kind, Mode, Verdict
from gradcheck.errors import (
    CheckUsageError,
    ComplexStepUnsupported,
    InvalidGradient,
    TargetRaised,
)
from gradcheck.tensor_base import Tensor

__all__ = [
    "check",
    "numerical_gradient",
    "CheckUsageError",
    "DEFAULT_TOLERANCES",
    "FULL_MODE_MAX_SIZE",
]

#: Default (rtol, atol) per gradient dtype. ``atol`` here is relative to the input's
#: gradient scale (the largest |numeric| of that input), so that it means the same at
#: every magnitude, and a few eps of max|v| are added (see
#: :meth:`gradcheck.checking.compare.Comparison.abs_tol`); an ``atol=`` passed to
#: :func:`check` is absolute.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-7, 1e-9),
    "float32": (1e-4, 1e-5),
    "float16": (1e-2, 1e-2),
}
#: mode="auto" checks element by element up to this many elements in all inputs.
FULL_MODE_MAX_SIZE = 4096
#: Gradients of two runs on fresh graphs (and backward(2v) against 2·backward(v))
#: may differ by this many units in the last place of the gradient's scale.
_REPEAT_ULPS = 4


def check(
    target: Any,
    *arrays: Any,
    params: Mapping[str, Any] | None = None,
    constants: Sequence[int] = (),
    seed: int = 0,
    mode: str = Mode.AUTO,
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
    if mode not in MODES:
        raise CheckUsageError(f"mode must be 'auto', 'full' or 'fast', not {mode!r}")
    if reference not in ("float64", "native"):
        raise CheckUsageError(f"reference must be 'float64' or 'native', not {reference!r}")
    xs = _as_arrays(tgt, arrays, dtype)
    const = {i for i in constants} | {i for i, a in enumerate(xs) if a.dtype.kind != "f"}
    bad = [i for i in const if not 0 <= i < len(xs)]
    if bad:
        raise CheckUsageError(f"constants={tuple(constants)} names inputs that do not exist")
    if mode == Mode.AUTO:
        size = sum(xs[i].size for i in range(len(xs)) if i not in const)
        mode = Mode.FULL if size <= FULL_MODE_MAX_SIZE else Mode.FAST
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
    info = np.finfo(dt if dt.kind == "f" else np.float64)
    scale = max(float(np.max(np.abs(a64), initial=0.0)), float(np.max(np.abs(b64), initial=0.0)))
    # Subnormal results round in absolute steps: scaling is not exact there.
    allowed = _REPEAT_ULPS * (float(info.eps) * scale + float(info.smallest_normal))
    return bool(np.all(np.abs(a64 - b64) <= allowed))


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
            return self.result(Verdict.FAILED, failure=fail.failure)

    # -- step 1 and 2: forward, backward, structure ---------------------------------
    def forward(self) -> Any:
        self.forward_calls += 1
        try:
            return self.tgt.apply(self.xs, self.params, constants=sorted(self.const))
        except TargetRaised as exc:
            raise _Fail(_raised(Kind.FORWARD_ERROR, exc)) from None

    def backward(self, graph: Any, v: np.ndarray) -> list[Any]:
        self.backward_calls += 1
        try:
            return self.tgt.backward(graph, v)
        except TargetRaised as exc:
            if isinstance(exc.exception, InvalidGradient):
                raise _Fail(self.invalid_gradient(exc, v)) from None
            raise _Fail(_raised(Kind.BACKWARD_ERROR, exc)) from None

    def structure(self) -> tuple[np.ndarray, list[Any]]:
        graph = self.forward()
        out = graph.output
        if not isinstance(out, Tensor):
            raise _Fail(
                Failure(
                    Kind.INVALID_OUTPUT,
                    f"the target returned {type(out).__name__}, not a Tensor; build its "
                    f"result with gradcheck ops (or write an Operation)",
                )
            )
        if out.dtype.kind != "f":
            raise _Fail(
                Failure(Kind.INVALID_OUTPUT, f"the output has dtype {out.dtype}, not a real float")
            )
        if not np.all(np.isfinite(out.data)):
            bad = int(np.size(out.data) - np.count_nonzero(np.isfinite(out.data)))
            raise _Fail(
                Failure(
                    Kind.NONFINITE_OUTPUT,
                    f"the output has {bad} non-finite value(s) at these inputs",
                )
            )
        self.check_unchanged(graph, "forward")
        v = self.rng.standard_normal(out.shape).astype(out.dtype)
        v_before = v.copy()
        grads = self.backward(graph, v)
        # The engine hands the ops the output's `.grad` (its own copy of v): a change
        # made in place shows there.
        given = getattr(graph.output, "grad", None)
        if not np.array_equal(v, v_before, equal_nan=True) or (
            given is not None and not np.array_equal(given, v_before, equal_nan=True)
        ):
            raise _Fail(
                Failure(
                    Kind.MUTATED_UPSTREAM,
                    "the backward changed the upstream gradient (the `grad` it was "
                    "given) in place; compute a new array instead (e.g. `grad * x`, "
                    "not `grad *= x`)",
                )
            )
        self.check_unchanged(graph, "backward")
        self.check_gradients(grads, v)
        self.check_precision(v)
        # Determinism: a fresh graph, the same v.
        again = self.backward(self.forward(), v.copy())
        for i, (g1, g2) in enumerate(zip(grads, again)):
            if (g1 is None) != (g2 is None) or (
                g1 is not None and not _same(g1, g2, np.asarray(g1).dtype)
            ):
                raise _Fail(
                    Failure(
                        Kind.NONDETERMINISTIC,
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
                        Kind.NONLINEAR,
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
                        Kind.MUTATED_INPUT,
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
                            Kind.EXTRA_GRADIENT,
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
                        Kind.ALIASED_GRADIENT,
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
                            Kind.ALIASED_GRADIENT,
                            f"the gradients of inputs {i} and {j} share memory; each "
                            f"input needs its own array",
                            input=i,
                        )
                    )

    def check_precision(self, v: np.ndarray) -> None:
        """An ``Operation`` target whose ``backward_var`` returns a float gradient of
        less precision than its input (float32 for a float64 input) fails with
        ``wrong_dtype``. The engine casts every stored gradient to its tensor's dtype
        (as MyGrad and torch do), so ``.grad`` cannot show it; what ``backward_var``
        returned (one more forward) does. A wider gradient (float64 for a float32
        input) is what the engine's own ops return too, and is cast without loss."""
        raw = self.tgt.raw_gradients(self.xs, self.params, v, constants=sorted(self.const))
        if raw is None:  # not an Operation target
            return
        self.forward_calls += 1
        for i, (g, x) in enumerate(zip(raw, self.xs)):
            dt = getattr(g, "dtype", None)
            if (
                dt is not None
                and dt.kind == "f"
                and x.dtype.kind == "f"
                and np.finfo(dt).eps > np.finfo(x.dtype).eps
            ):
                raise _Fail(
                    Failure(
                        Kind.WRONG_DTYPE,
                        f"the gradient of input {i} has dtype {dt}, its input {x.dtype}: "
                        f"backward_var computes it in less precision than its input (the "
                        f"engine casts it back to {x.dtype}, the precision stays lost)",
                        input=i,
                    )
                )

    def check_value(self, i: int, g: Any, x: np.ndarray, *, raw: bool = False) -> None:
        """Type, dtype, shape and finiteness of the gradient ``g`` of input ``i``."""
        where = f"input {i}"
        if not isinstance(g, np.ndarray) and not (isinstance(g, Real) and not isinstance(g, bool)):
            raise _Fail(
                Failure(
                    Kind.NOT_ARRAY,
                    f"the gradient of {where} is a {type(g).__name__}, not an ndarray or "
                    f"a real number",
                    input=i,
                )
            )
        dt = np.asarray(g).dtype
        if dt.kind not in "iuf":
            raise _Fail(
                Failure(
                    Kind.NON_REAL_DTYPE,
                    f"the gradient of {where} has dtype {dt}; gradients are real",
                    input=i,
                )
            )
        if dt != x.dtype and not (raw and dt.kind != "f"):
            raise _Fail(
                Failure(
                    Kind.WRONG_DTYPE,
                    f"the gradient of {where} has dtype {dt}, its input {x.dtype}",
                    input=i,
                )
            )
        if np.shape(g) != x.shape:
            raise _Fail(
                Failure(
                    Kind.WRONG_SHAPE,
                    f"the gradient of {where} has shape {np.shape(g)}, its input {x.shape}",
                    input=i,
                )
            )
        if not np.all(np.isfinite(g)):
            bad = int(np.size(g) - np.count_nonzero(np.isfinite(g)))
            raise _Fail(
                Failure(
                    Kind.NONFINITE_GRADIENT,
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
        kind = Kind.WRONG_SHAPE if "shape" in text else Kind.NOT_ARRAY
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
            raise _Fail(_raised(Kind.FORWARD_ERROR, TargetRaised("forward", exc))) from None
        v_max = float(np.max(np.abs(v), initial=0.0))
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
                comparison = Comparison(i, x, analytic, r, a, relative, v_max)
                if self.settings["mode"] == Mode.FAST and not self.settings["complex_step"]:
                    compare_fast(ev, comparison, self.rng, self.settings["directions"])
                else:
                    compare_full(ev, comparison, self.settings["complex_step"])
                per_input.append(comparison.summary())
                elements.extend(comparison.elements)
                kinks.extend((i, idx) for idx in comparison.kinks)
                if failure is None and comparison.mismatched:
                    failure = comparison.failure(missing=g is None)
        except ComplexStepUnsupported as exc:
            raise CheckUsageError(str(exc)) from None
        except Exception as exc:
            raise _Fail(
                _raised(Kind.FORWARD_ERROR, TargetRaised("forward at a perturbed input", exc))
            ) from None
        finally:
            self.forward_calls += ev.calls
        worst = sorted(elements, key=lambda e: -e.ratio)[:WORST_ELEMENTS]
        if failure is not None:
            verdict = Verdict.FAILED
        elif kinks:
            verdict = Verdict.NOT_DIFFERENTIABLE
        else:
            verdict = Verdict.PASSED
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


def numerical_gradient(
    f: Any,
    *arrays: Any,
    v: Any = None,
    params: Mapping[str, Any] | None = None,
    inputs: Sequence[int] | None = None,
    complex_step: bool = False,
) -> list[np.ndarray]:
    """The numeric gradient of ``<v, f(*arrays)>`` with respect to each input.

    Parameters
    ----------
    f : Operation subclass, function of Tensors, or Target
        What to differentiate (resolved with :func:`gradcheck.resolve_target`).
    *arrays : array_like
        The point.
    v : array_like, optional
        The upstream gradient; ones of the output's shape by default (the gradient of
        ``f(...).sum()``).
    params : mapping, optional
        The op's keyword parameters.
    inputs : sequence of int, optional
        Which inputs to differentiate (default: every floating-point input); the
        others get None.
    complex_step : bool, default False
        Use the complex step (the target must compute with complex input).

    Returns
    -------
    list of ndarray or None
        Richardson-refined central differences, in float64.

    Examples
    --------
    >>> import numpy as np
    >>> import gradcheck as mg
    >>> g, = numerical_gradient(lambda x: x * x, np.array([1.0, 3.0]))
    >>> np.round(g, 8)
    array([2., 6.])
    """
    target = resolve_target(f)
    arrays_ = [np.asarray(a) for a in arrays]
    if v is None:
        out = target.forward(arrays_, params)
        v = np.ones(np.shape(out))
    ev = Evaluator(
        target.forward, arrays_, params, np.asarray(v, dtype=np.float64), bind=target.bind
    )
    which = (
        [i for i, a in enumerate(arrays_) if a.dtype.kind == "f"]
        if inputs is None
        else list(inputs)
    )
    grads: list[Any] = [None] * len(arrays_)
    for i in which:
        grads[i] = ev.complex_step(i) if complex_step else full_estimate(ev, i).value
    return grads
