"""The structural checks: everything a backward can get wrong besides its numbers.

One function per failure kind, named after it (:class:`~gradcheck.checking.vocabulary.Kind`),
each looking at the :class:`Evidence` of one check and returning a
:class:`~gradcheck.checking.result.Failure` or None. :data:`STRUCTURAL_CHECKS` lists them
in the order the checker walks them, each with the stage of the check after which it
looks (:func:`first_failure`); the checker (:mod:`gradcheck.checking.checker`) runs the
stages and stops at the first failure. To add a check: a function here, its kind in
the vocabulary, an entry in the registry.

The kinds decided elsewhere: ``forward_error`` and ``backward_error`` (the op raised),
``missing_gradient`` and ``mismatch`` (the numbers, :mod:`gradcheck.checking.compare`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np

from gradcheck.checking.computed_in import narrow_numbers
from gradcheck.checking.result import Failure
from gradcheck.checking.thresholds import (
    BACKWARD_ROUNDING_FACTOR,
    REPEAT_ULPS,
)
from gradcheck.checking.vocabulary import Kind
from gradcheck.engine.tensor_base import Tensor

__all__ = ["Evidence", "Stage", "STRUCTURAL_CHECKS", "first_failure"]


class Stage:
    """The points of a check at which structural checks look."""

    #: after the first forward (with the graph)
    FORWARD = "forward"
    #: after the first backward, with the upstream gradient ``v``
    BACKWARD = "backward"
    #: each constant input's gradient (``Evidence.i``, ``Evidence.gradient``)
    CONSTANT = "constant"
    #: each other input's gradient, where it has one
    GRADIENT = "gradient"
    #: all the gradients together
    GRADIENTS = "gradients"
    #: the gradients' dtypes as the op's own code returned them, before the engine or
    #: a framework cast them to their inputs' (``Evidence.returned``)
    RETURNED = "returned"
    #: after a second forward and backward on a fresh graph with the same ``v``
    REPEAT = "repeat"
    #: after a second backward of ``v`` on the first graph (``Evidence.reentered``),
    #: where the framework keeps its graphs (torch)
    REENTRANT = "reentrant"
    #: after a third, with ``-2 v``
    SCALED = "scaled"


@dataclass
class Evidence:
    """What the structural checks look at: the example and what the op did with it.

    Filled in stage by stage by the checker: ``graph`` after the forward; ``v``,
    ``v_given`` (a copy of ``v`` made before the backward) and ``grads`` after the
    backward; ``i`` and ``gradient`` for the per-input stages; ``returned`` (the dtypes
    the op's own code returned, before any cast); ``again`` and ``scaled`` after the
    repeated runs. ``raw`` marks gradients read straight from the op's
    ``backward_var``, before the engine cast them (integer dtypes then pass).
    """

    inputs: list[np.ndarray]
    constants: set[int]
    graph: Any = None
    stage: str = Stage.FORWARD
    v: Any = None
    v_given: Any = None
    grads: list[Any] = field(default_factory=list)
    i: int = 0
    gradient: Any = None
    raw: bool = False
    again: list[Any] = field(default_factory=list)
    scaled: list[Any] = field(default_factory=list)
    #: the factor of ``v`` that ``scaled`` had: -2, or -1/2 where -2 overflowed
    scale: float = -2.0
    #: per input, the dtype of the gradient as the op's own backward returned it
    #: (before any cast), where known; ``foreign``: the op is another framework's
    returned: list[Any] = field(default_factory=list)
    foreign: bool = False
    #: per input, the gradient of a second backward of ``v`` on the same graph
    reentered: list[Any] = field(default_factory=list)
    #: the output of the first forward and of the repeat's, on the same inputs
    output: Any = None
    output_again: Any = None
    #: how far repeated gradients may differ besides their rounding (torch's
    #: ``nondet_tol``): a second backward on the same graph must otherwise give the
    #: same bits, one on a fresh graph the same within :data:`REPEAT_ULPS`
    nondet_tol: float = 0.0
    #: per input, how far its gradient moves when ``v`` moves by a few units in its
    #: last place: the rounding of the backward itself, which the linearity check
    #: allows (measured by the checker only where the exact comparison fails; None
    #: until then)
    backward_rounding: list[float] | None = None


Check = Callable[[Evidence], "Failure | None"]


# -- the output --------------------------------------------------------------------
def invalid_output(e: Evidence) -> Failure | None:
    out = e.graph.output
    if not isinstance(out, Tensor):
        return Failure(
            Kind.INVALID_OUTPUT,
            f"the target returned {type(out).__name__}, not a Tensor; build its "
            f"result with gradcheck ops (or write an Operation)",
        )
    outputs = e.graph.outputs
    if outputs is not None and not outputs.indices:
        found = ", ".join(outputs.kind(k) for k in range(len(outputs.shapes)))
        return Failure(
            Kind.INVALID_OUTPUT,
            f"none of the op's {len(outputs.shapes)} outputs is a real floating-point "
            f"array ({found}): there is no gradient to check",
        )
    if out.dtype.kind != "f":
        return Failure(Kind.INVALID_OUTPUT, f"the output has dtype {out.dtype}, not a real float")
    return None


def low_precision_output(e: Evidence) -> Failure | None:
    """A floating output of less precision than every float input it is
    differentiated against (float32 for float64 inputs): the op computes, or casts
    its result, in a precision its inputs do not have (``torch.Tensor(...)`` makes
    float32), and its gradient is at best that precise."""
    floats = [
        x.dtype for i, x in enumerate(e.inputs) if x.dtype.kind == "f" and i not in e.constants
    ]
    if not floats:
        return None
    least = max(floats, key=lambda dt: np.finfo(dt).eps)
    outputs = e.graph.outputs
    if outputs is None:
        found = [(None, e.graph.output.dtype)]
    else:
        found = [(k, outputs.dtypes[k]) for k in outputs.indices]
    for k, dt in found:
        if dt is not None and dt.kind == "f" and np.finfo(dt).eps > np.finfo(least).eps:
            where = "the output" if k is None else outputs.label(k)
            return Failure(
                Kind.LOW_PRECISION_OUTPUT,
                f"{where} has dtype {dt}, less precise than the op's inputs ({least}): "
                f"the forward computes or casts its result in {dt} (torch.Tensor(...) "
                f"and .float() make float32); return it in the inputs' dtype",
                output=k,
            )
    return None


# -- what the op may not change ----------------------------------------------------
def mutated_input(e: Evidence) -> Failure | None:
    for i, (t, x) in enumerate(zip(e.graph.tensors, e.inputs)):
        if t.data.shape != x.shape or not _equal(t.data, x):
            return Failure(
                Kind.MUTATED_INPUT,
                f"input {i} was changed in place by the {e.stage}; an op must "
                f"not write to its inputs' data",
                input=i,
            )
    return None


def mutated_upstream(e: Evidence) -> Failure | None:
    # The engine hands the ops the output's `.grad` (its own copy of v): a change
    # made in place shows there.
    # (a gradcheck tensor's own `_grad`: the `.grad` of a view is the view of its
    # base's gradient, not the gradient backprop started from)
    out = e.graph.output
    given = out._grad if hasattr(out, "_grad") else getattr(out, "grad", None)
    if _equal(e.v, e.v_given) and (given is None or _equal(given, e.v_given)):
        return None
    return Failure(
        Kind.MUTATED_UPSTREAM,
        "the backward changed the upstream gradient (the `grad` it was "
        "given) in place; compute a new array instead (e.g. `grad * x`, "
        "not `grad *= x`)",
    )


# -- each input's gradient ---------------------------------------------------------
def extra_gradient(e: Evidence) -> Failure | None:
    if e.gradient is None:
        return None
    return Failure(
        Kind.EXTRA_GRADIENT,
        f"input {e.i} is a constant but received a gradient; constants must get none",
        input=e.i,
    )


def not_array(e: Evidence) -> Failure | None:
    g = e.gradient
    if isinstance(g, np.ndarray) or (isinstance(g, Real) and not isinstance(g, bool)):
        return None
    return Failure(
        Kind.NOT_ARRAY,
        f"the gradient of input {e.i} is a {type(g).__name__}, not an ndarray or a real number",
        input=e.i,
    )


def non_real_dtype(e: Evidence) -> Failure | None:
    dt = np.asarray(e.gradient).dtype
    if dt.kind in "iuf":
        return None
    return Failure(
        Kind.NON_REAL_DTYPE,
        f"the gradient of input {e.i} has dtype {dt}; gradients are real",
        input=e.i,
    )


def wrong_dtype(e: Evidence) -> Failure | None:
    if e.stage == Stage.RETURNED:
        return _returned_dtype(e)
    dt, want = np.asarray(e.gradient).dtype, e.inputs[e.i].dtype
    if dt == want or (e.raw and dt.kind != "f"):
        return None
    return Failure(
        Kind.WRONG_DTYPE,
        f"the gradient of input {e.i} has dtype {dt}, its input {want}",
        input=e.i,
    )


def _returned_dtype(e: Evidence) -> Failure | None:
    """The dtype each gradient had as the op's own code returned it, before the engine
    or a framework cast it to its input's (as MyGrad and torch do; ``.grad`` cannot
    show it): a backward (an ``Operation``'s ``backward_var``, a foreign op's backward)
    whose gradient is another floating dtype than its input's fails, narrower (float32
    for float64: the precision is lost, the cast cannot bring it back) or wider
    (float64 for float32, chainer#6212: the backward computes in a precision its op
    does not have, and a framework that does not cast passes the wrong dtype on).
    Wider is fine as far as the upstream gradient's dtype, the output's: a float32 and
    a float64 input make a float64 output, whose gradient the float32 input's
    backward hands on as it comes."""
    upstream = _output_dtypes(e)
    for i, (dt, x) in enumerate(zip(e.returned, e.inputs)):
        if dt is None or dt.kind != "f" or x.dtype.kind != "f" or dt == x.dtype:
            continue
        narrower = np.finfo(dt).eps > np.finfo(x.dtype).eps
        if not (e.foreign or narrower) and any(
            np.finfo(dt).eps >= np.finfo(out).eps for out in upstream
        ):
            continue
        if e.foreign:
            return Failure(
                Kind.WRONG_DTYPE,
                f"the backward returned the gradient of input {i} as {dt}, its input is "
                f"{x.dtype} (the framework casts it to {x.dtype} silently)",
                input=i,
            )
        why = (
            "backward_var computes it in less precision than its input (the engine "
            f"casts it back to {x.dtype}, the precision stays lost)"
            if narrower
            else "backward_var computes it in a wider dtype than its input (the engine "
            f"casts it to {x.dtype} silently; a framework that does not passes {dt} on)"
        )
        return Failure(
            Kind.WRONG_DTYPE,
            f"the gradient of input {i} has dtype {dt}, its input {x.dtype}: {why}",
            input=i,
        )
    return None


def _output_dtypes(e: Evidence) -> list[np.dtype]:
    """The floating dtypes of the op's differentiable outputs ([] where unknown)."""
    graph = e.graph
    if graph is None:
        return []
    outputs = graph.outputs
    found = (
        [graph.output.dtype]
        if outputs is None
        else [outputs.dtypes[k] for k in outputs.indices if outputs.dtypes[k] is not None]
    )
    return [np.dtype(dt) for dt in found if np.dtype(dt).kind == "f"]


def wrong_shape(e: Evidence) -> Failure | None:
    shape, want = np.shape(e.gradient), e.inputs[e.i].shape
    if shape == want:
        return None
    return Failure(
        Kind.WRONG_SHAPE,
        f"the gradient of input {e.i} has shape {shape}, its input {want}"
        + unreduced_broadcast(e, shape, want),
        input=e.i,
    )


def unreduced_broadcast(e: Evidence, shape: tuple[int, ...], want: tuple[int, ...]) -> str:
    """What to do where the inputs broadcast and the gradient kept the broadcast
    shape: the most common gradient bug of an op of several inputs (the search draws
    broadcast shapes by default), or an op meant for equal shapes only."""
    shapes = {np.shape(x) for x in e.inputs}
    try:
        if len(shapes) < 2 or np.broadcast_shapes(want, shape) != shape:
            return ""
    except ValueError:
        return ""
    return (
        f" (the inputs broadcast, {' and '.join(map(str, sorted(shapes)))}: sum the "
        "gradient over the axes the input was broadcast along, down to its shape; an "
        "op meant for equal shapes only says so with describe(broadcast=False) or "
        "--no-broadcast)"
    )


def inner_wrong_shape(exc: BaseException, graph: Any, e: Evidence) -> Failure | None:
    """The engine's rejection of an inner op's gradient shape (``exc``, raised in a
    function target's backward) as the function's input's ``wrong_shape``, where the
    inner op's variable is that input's tensor itself: named, with the hint for a
    gradient left in the inputs' broadcast shape; None where it is no input's."""
    variable, shapes = getattr(exc, "variable", None), getattr(exc, "shapes", None)
    tensors = getattr(graph, "tensors", None) or ()
    i = next((k for k, t in enumerate(tensors) if t is variable), None)
    if variable is None or shapes is None or i is None:
        return None
    shape, want = shapes
    said = f"the gradient of input {i} has shape {shape}, its input {want}"
    said += unreduced_broadcast(e, shape, want)
    return Failure(Kind.WRONG_SHAPE, f"{said}\n{exc}", input=i, exception=f"InvalidGradient: {exc}")


def nonfinite_gradient(e: Evidence) -> Failure | None:
    g = e.gradient
    if np.all(np.isfinite(g)):
        return None
    finite = np.isfinite(g)
    bad = int(np.size(g) - np.count_nonzero(finite))
    first = tuple(int(k) for k in np.argwhere(~np.asarray(finite))[0])
    value = np.asarray(g)[first]
    return Failure(
        Kind.NONFINITE_GRADIENT,
        f"the gradient of input {e.i} has {bad} non-finite value(s), the first "
        f"{value} at index {first}",
        input=e.i,
    )


# -- the gradients together --------------------------------------------------------
def aliased_gradient(e: Evidence) -> Failure | None:
    arrays = [(i, g) for i, g in enumerate(e.grads) if isinstance(g, np.ndarray)]
    for i, g in arrays:
        if np.shares_memory(g, e.v):
            return Failure(
                Kind.ALIASED_GRADIENT,
                f"the gradient of input {i} shares memory with the upstream "
                f"gradient; return a new array",
                input=i,
            )
    for a, (i, g) in enumerate(arrays):
        for j, h in arrays[a + 1 :]:
            if g.size and np.shares_memory(g, h):
                return Failure(
                    Kind.ALIASED_GRADIENT,
                    f"the gradients of inputs {i} and {j} share memory; each "
                    f"input needs its own array",
                    input=i,
                )
    return None


def nondeterministic(e: Evidence) -> Failure | None:
    if e.output is not None and not same(e.output, e.output_again, np.asarray(e.output).dtype):
        return Failure(
            Kind.NONDETERMINISTIC,
            f"a second forward at the same inputs gave a different output (max difference "
            f"{_maxdiff(e.output, e.output_again):.3g}): a random forward (bernoulli, "
            f"dropout) has no gradient to compare; draw its randomness from a seed or pass "
            f"it in (a mask) to check it (a torch module's dropout is off in `.eval()` "
            f"mode: check `module.eval()`)",
        )
    changed = _first_changed(e.grads, e.again, tol=e.nondet_tol)
    if changed is None:
        return None
    i, diff = changed
    return Failure(
        Kind.NONDETERMINISTIC,
        f"input {i}: a second forward and backward on a fresh graph with "
        f"the same upstream gradient gave a different gradient "
        f"(max difference {diff:.3g})",
        input=i,
    )


def not_reentrant(e: Evidence) -> Failure | None:
    # The same graph, the same upstream gradient: the same bits (as torch compares
    # it), unless a tolerance is given for a backward documented nondeterministic.
    changed = _first_changed(e.grads, e.reentered, exact=True, tol=e.nondet_tol)
    if changed is None:
        return None
    i, diff = changed
    return Failure(
        Kind.NOT_REENTRANT,
        f"input {i}: a second backward on the same graph, with the same upstream "
        f"gradient, gave a different gradient (max difference {diff:.3g}); the backward "
        f"changes what the forward saved (in place on a saved tensor, e.g. `grad *= ...` "
        f"or `.mul_()`), so backward with retain_graph=True, or a second order, is wrong "
        f"(torch: 'Backward is not reentrant')",
        input=i,
    )


def _first_changed(
    first: list[Any], second: list[Any], *, exact: bool = False, tol: float = 0.0
) -> tuple[int, float] | None:
    """The first input whose gradient differs between two runs (one of them missing
    counts), and by how much; None when every one is the same: bit for bit with
    ``exact``, else within :data:`REPEAT_ULPS`; or, either way, by at most ``tol``."""
    for i, (g1, g2) in enumerate(zip(first, second)):
        if (g1 is None) != (g2 is None):
            return i, _maxdiff(g1, g2)
        if g1 is None:
            continue
        if exact:
            equal = _equal(g1, g2)
        else:
            equal = same(g1, g2, np.asarray(g1).dtype)
        if not equal and not (tol > 0 and _maxdiff(g1, g2) <= tol):
            return i, _maxdiff(g1, g2)
    return None


def nonlinear(e: Evidence) -> Failure | None:
    # backward(-2v) == -2 backward(v), exact in floating point. (-2, not 2: a backward
    # that is only positively homogeneous, |grad| * ..., passes with 2.)
    c = f"{e.scale:g}"
    for i, (g1, g2) in enumerate(zip(e.grads, e.scaled)):
        if g1 is None:
            continue
        with np.errstate(over="ignore", invalid="ignore"):
            expected = e.scale * np.asarray(g1)
        if g2 is not None and np.shape(g2) == np.shape(expected):
            # Where -2·g overflows the gradient's dtype (a float32 exp near 88), the
            # scaled backward overflows too, by its own rounding: nothing to compare.
            over = np.isfinite(np.asarray(g1)) & ~np.isfinite(expected)
            if np.any(over):
                expected = np.where(over, 0, expected)
                g2 = np.where(over, 0, np.asarray(g2))
        if g2 is None or not (
            same(expected, g2, _computed_in(g1, g2))
            or _within_nondet_tol(expected, g2, e)
            or _within_backward_rounding(expected, g2, e, i)
        ):
            return Failure(
                Kind.NONLINEAR,
                f"input {i}: backward({c}v) is not {c}·backward(v) (max difference "
                f"{_maxdiff(expected, g2):.3g}); a gradient must be linear in the "
                f"upstream gradient: multiply `grad` in, do not ignore or "
                f"transform it",
                input=i,
            )
    return None


def doubled_overflowed(e: Evidence) -> bool:
    """Whether ``backward(-2v)`` (``e.scaled``) is not finite where ``backward(v)``
    and its double are: terms of the backward that are finite at ``v`` overflowed at
    ``-2v`` (cosh(x)·v1 + sinh(x)·v2 at x = -709.8, each term near the largest
    float64, their sum 2e307), which says nothing of its linearity; ``-v/2`` asks
    the same without overflow, and a backward that makes inf or nan of a negative
    ``v`` (a square root of it) still does so there."""
    for g1, g2 in zip(e.grads, e.scaled):
        if g1 is None or g2 is None or np.shape(g1) != np.shape(g2):
            continue
        g1 = np.asarray(g1)
        with np.errstate(over="ignore", invalid="ignore"):
            finite = np.isfinite(g1) & np.isfinite(-2 * g1)
        if g1.dtype.kind in "fc" and np.any(finite & ~np.isfinite(np.asarray(g2))):
            return True
    return False


def _computed_in(g1: Any, g2: Any) -> np.dtype:
    """The dtype whose ulps bound the rounding of a backward that gave ``g1`` and
    ``g2``: their own, or the narrower one whose numbers both are throughout
    (:func:`narrow_numbers`): a float64 gradient of float16 numbers was computed in
    float16 (torch's autograd through ``x.half()``, cast back); it rounds at
    float16's ulps, and below 6e-5 in float16's absolute subnormal steps, which
    scaling by -2 does not commute with (softmax(x.half()) at 1e-7·v: a difference
    of 6e-8, one float16 subnormal, read as a backward not linear in ``v``)."""
    dt = np.asarray(g1).dtype
    if g2 is None:
        return dt
    return narrow_numbers(np.asarray(g1), np.asarray(g2)) or dt


def _within_backward_rounding(expected: Any, scaled: Any, e: Evidence, i: int) -> bool:
    """A backward computed in log space (logcumsumexp) or scaled by a norm that includes
    ``v`` (matrix_exp) rounds differently for ``v`` and ``-2v``, by far more than a few
    ulps: the difference is allowed up to :data:`BACKWARD_ROUNDING_FACTOR` times the
    rounding measured by moving ``v``'s last bits. A backward that ignores or transforms
    ``v`` differs by the gradient's own size, while a move of a few ulps of ``v`` moves
    it by a few ulps: such a backward still fails."""
    if e.backward_rounding is None or i >= len(e.backward_rounding):
        return False
    allowed = BACKWARD_ROUNDING_FACTOR * e.backward_rounding[i]
    return bool(allowed > 0 and _maxdiff(expected, scaled) <= allowed)


def _within_nondet_tol(expected: Any, scaled: Any, e: Evidence) -> bool:
    """A backward documented nondeterministic (``nondet_tol``) differs from run to run
    by up to the tolerance; backward(-2v) by up to twice it."""
    return e.nondet_tol > 0 and _maxdiff(expected, scaled) <= 2 * e.nondet_tol


def repeated_and_scaled(e: Evidence) -> bool:
    """Whether one fresh graph, backward with ``-2 v`` (``Evidence.scaled``), passes
    both :func:`nondeterministic` and :func:`nonlinear`: the same output again, and
    -2 times the first gradients, each within :data:`REPEAT_ULPS` (scaling by -2 is
    exact, so a deterministic, linear backward meets it as the repeat with ``v``
    would). Where it does not, the checker runs the two apart to say which failed."""
    if not same(e.output, e.output_again, np.asarray(e.output).dtype):
        return False
    return nonlinear(e) is None


#: Every structural check, in the order the checker walks them, with the stage after
#: which it looks. A stage's checks run in this order; the first failure ends the check.
STRUCTURAL_CHECKS: tuple[tuple[str, Check], ...] = (
    (Stage.FORWARD, invalid_output),
    (Stage.FORWARD, low_precision_output),
    (Stage.FORWARD, mutated_input),
    (Stage.BACKWARD, mutated_upstream),
    (Stage.BACKWARD, mutated_input),
    (Stage.CONSTANT, extra_gradient),
    (Stage.GRADIENT, not_array),
    (Stage.GRADIENT, non_real_dtype),
    (Stage.GRADIENT, wrong_dtype),
    (Stage.GRADIENT, wrong_shape),
    (Stage.GRADIENT, nonfinite_gradient),
    (Stage.GRADIENTS, aliased_gradient),
    (Stage.RETURNED, wrong_dtype),
    (Stage.REPEAT, nondeterministic),
    (Stage.REENTRANT, not_reentrant),
    (Stage.SCALED, nonlinear),
)


#: Each stage's checks, in registry order (read per stage: a stage is walked several
#: times in every check, and the registry holds them all).
_BY_STAGE: dict[str, tuple[Check, ...]] = {
    stage: tuple(check for when, check in STRUCTURAL_CHECKS if when == stage)
    for stage in dict.fromkeys(when for when, _ in STRUCTURAL_CHECKS)
}


def first_failure(stage: str, e: Evidence) -> Failure | None:
    """The first failure of the checks of ``stage`` (in registry order), or None."""
    e.stage = stage
    for check in _BY_STAGE.get(stage, ()):
        if (failure := check(e)) is not None:
            return failure
    return None


def _equal(a: Any, b: Any) -> bool:
    """``np.array_equal(a, b, equal_nan=True)``, at the cost of one comparison where
    they are equal and hold no NaN (the usual case; profiled: NumPy's version was a
    tenth of a small check's structural stage)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    with np.errstate(invalid="ignore"):
        if (a == b).all():
            return True
    return bool(np.array_equal(a, b, equal_nan=True))


def same(a: Any, b: Any, dt: np.dtype) -> bool:
    """Equal up to :data:`REPEAT_ULPS` units in the last place of the gradient's scale."""
    a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a64.shape != b64.shape:
        return False
    with np.errstate(invalid="ignore"):
        if not np.any(a64 - b64):  # the same numbers (a nan or inf difference is not)
            return True
    info = np.finfo(dt if dt.kind == "f" else np.float64)
    scale = max(float(np.max(np.abs(a64), initial=0.0)), float(np.max(np.abs(b64), initial=0.0)))
    # Subnormal results round in absolute steps: scaling is not exact there.
    allowed = REPEAT_ULPS * (float(info.eps) * scale + float(info.smallest_normal))
    return bool(np.all(np.abs(a64 - b64) <= allowed))


def _maxdiff(a: Any, b: Any) -> float:
    if a is None or b is None:
        return float("nan")
    try:
        return float(np.max(np.abs(np.asarray(a, float) - np.asarray(b, float)), initial=0.0))
    except ValueError:
        return float("nan")
