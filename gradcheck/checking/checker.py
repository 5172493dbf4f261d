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

import inspect
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from numbers import Real
from typing import Any

import numpy as np

from gradcheck.checking.adapters.variants import Variant, split_complex
from gradcheck.checking.batched import BATCH_SIZE, batched_disagreement, batched_on
from gradcheck.checking.check_settings import CheckSettings
from gradcheck.checking.compare import (
    Comparison,
    compare_fast,
    compare_full,
    judge_full,
)
from gradcheck.checking.compiled import BACKENDS, compiled_disagreement, compiled_target
from gradcheck.checking.contiguity import noncontiguous_disagreement
from gradcheck.checking.layout import STRIDED, strided, strided_for
from gradcheck.checking.numerical import (
    Estimate,
    Evaluator,
    exact_in,
    full_estimate,
    refine_elements,
    step_sizes,
)
from gradcheck.checking.outside import exception_class, exception_name, is_domain_error
from gradcheck.checking.outside import skip_on as skip_on_classes
from gradcheck.checking.reference import forward_disagreement, reference_name
from gradcheck.checking.resolve import resolve_target
from gradcheck.checking.result import CheckResult, Element, Failure, InputErrors
from gradcheck.checking.structure import (
    Evidence,
    Stage,
    first_failure,
    repeated_and_scaled,
)
from gradcheck.checking.target import Target, user_frame
from gradcheck.checking.thresholds import (
    BACKWARD_ROUNDING_CAP,
    BACKWARD_ROUNDING_FACTOR,
    BACKWARD_ROUNDING_FACTORS,
    NONFINITE_ELEMENTS_PROBED,
    OWN_SCALE_AGREEMENT,
    OWN_SCALE_RATIO,
    ROUNDING_MOVE_ULPS,
    ROUNDING_SAMPLES,
    WIDE_ULPS,
    WORST_ELEMENTS,
)
from gradcheck.checking.tolerance import DEFAULT_TOLERANCES, Tolerance, tolerance_for
from gradcheck.checking.trees import flatten as flatten_trees
from gradcheck.checking.trees import paths as leaf_paths
from gradcheck.checking.vocabulary import MAX_ORDER, MODES, Kind, Mode, Skip, Verdict
from gradcheck.engine.tensor_base import Tensor
from gradcheck.errors import (
    CheckUsageError,
    ComplexStepUnsupported,
    InvalidGradient,
    TargetRaised,
    exception_text,
)

__all__ = [
    "check",
    "CHECK_SETTINGS",
    "numerical_gradient",
    "CheckUsageError",
    "DEFAULT_TOLERANCES",
    "FULL_MODE_MAX_SIZE",
]

#: The dtypes ``check(dtype=...)`` takes besides NumPy's real floats: complex inputs
#: (two real inputs each, see :mod:`gradcheck.checking.adapters.variants`), bfloat16
#: (checked as float32 arrays holding bfloat16 values); torch and JAX targets only.
OTHER_DTYPES: tuple[str, ...] = ("complex128", "complex64", "bfloat16")
#: The derivatives ``check(modes=...)`` compares: reverse mode (the backward) and
#: forward mode (the jvp).
AD_MODES: tuple[str, ...] = ("rev", "fwd")
#: mode="auto" checks element by element up to this many elements in all inputs.
FULL_MODE_MAX_SIZE = 4096


def check(
    target: Any,
    *arrays: Any,
    params: Mapping[str, Any] | None = None,
    constants: Sequence[int] | int = (),
    seed: int = 0,
    mode: str = Mode.AUTO,
    atol: float | None = None,
    rtol: float | None = None,
    dtype: Any = None,
    reference: str = "float64",
    complex_step: bool = False,
    directions: int = 4,
    group_size: int | None = None,
    order: int = 1,
    modes: Sequence[str] = ("rev",),
    device: str | None = None,
    nondet_tol: float = 0.0,
    skip_on: Any = (),
    upstream: Any = None,
    reference_forward: Any = None,
    compiled: Any = None,
    batched: bool | None = None,
    **op_params: Any,
) -> CheckResult:
    """Check the gradient of ``target`` at ``arrays``.

    Parameters
    ----------
    target : Operation subclass, function of Tensors, or Target
        The op (see :func:`gradcheck.resolve_target`).
    *arrays : array_like, or a tree of them
        One value per tensor input. Non-float inputs are constants. For a torch or
        JAX target, an input may be a dict, list, tuple or dataclass of arrays (a
        parameter tree): each leaf is then an input of its own (``constants`` counts
        leaves), and a failure names it by its path (``params['dense']['w']``).
    params : mapping, optional
        The op's keyword parameters. Parameters whose names are not settings of
        ``check`` may also be given directly as keywords (``check(Sum, x, axis=0)``);
        ``params=`` is the way to pass one whose name is a setting (``seed``, ``mode``...).
    constants : int or sequence of int
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
        Random directions in fast mode, at most: half of them first, the rest only
        when one of those fails or agrees less than clearly (its difference above a
        quarter of the allowed one, :data:`~gradcheck.checking.thresholds.CLEAR_AGREEMENT`).
    group_size : int, optional
        Fast mode: instead of ``directions`` directions over all of an input's
        elements, one random direction over each group of at most this many, the
        groups a random partition of the input (two forward calls per group): an
        element's error then hides only below the tolerance of its group's sum, not
        of the whole input's (:func:`gradcheck.verify` screens large inputs so).
    order : int, 1 to :data:`~gradcheck.checking.vocabulary.MAX_ORDER`
        2: check order 1 (in every one of ``modes``), then, where it passed, the
        gradient of the backward (torch's ``gradgradcheck``): the
        target ``(x..., v) -> backward(x, v)``, with an upstream gradient ``v`` drawn
        from the seed, whose gradient (the double backward) is compared with finite
        differences of the backward, with respect to the inputs and to ``v``.
        ``N``: every order below ``N`` first, then the target
        ``(x..., v_2, ..., v_N)``, order ``N - 1``'s backward with the upstream
        gradient ``v_N``, the same way. torch and JAX targets, complex inputs too.
    modes : sequence of {"rev", "fwd"}, or a string ``"rev,fwd"``
        The derivatives compared with the finite differences: the backward (reverse
        mode) and the ``jvp`` (forward mode: each element of the gradient from the
        ``jvp`` of its unit tangent). torch and JAX targets for ``"fwd"``. A failure
        says which order and mode failed (``Failure.order``, ``Failure.ad_mode``).
    device : str, optional
        Run a torch target on this device (``"cuda"``); the float64 reference runs
        there too (on the CPU for a device without float64).
    nondet_tol : float
        How far a second backward on the same graph (and one on a fresh graph, beyond
        its rounding) may differ: 0 (the same bits on the same graph) unless the op
        is documented nondeterministic (torch's ``nondet_tol``).
    upstream : array_like, optional
        The upstream gradient ``v`` the backward takes, of the output's shape: at
        order 1 the one analytic and numeric are products with, at order 2 the
        input ``v`` of the checked backward (whose own upstream gradient is then
        drawn from the seed). Default: drawn from the seed. :func:`gradcheck.verify`
        draws it at order 2, so that it shrinks like the other inputs.
    skip_on : exception class, str, or a sequence of them
        Exceptions that say the input is outside the op's domain (a class,
        ``"module:Name"`` or a builtin's name): a forward that raises one at the
        example skips it (verdict inconclusive, like an output that is not finite),
        and a finite-difference step where it raises one is not used. NumPy's and
        torch's ``LinAlgError`` (a singular matrix) always are
        (:mod:`gradcheck.checking.outside`); any other exception is a failure.
    reference_forward : callable or str, optional
        A reference implementation of the forward (``"module:function"`` or the
        function): a NumPy function of the same inputs (as arrays) and keyword
        parameters, returning the output (a tuple for several). The op's output must
        agree with it within the output dtype's tolerances (``rtol``/``atol`` when
        given), else the check fails with kind ``forward_mismatch`` (torch's OpInfo
        ``ref``, MyGrad's ``true_func``). Not to be confused with ``reference``.
    compiled : {"aot_eager", "eager", "inductor"} or True, optional
        Also run the op compiled (torch: ``torch.compile`` with this backend, True
        for ``"aot_eager"``; JAX: ``jax.jit``, whatever the name) on the same example
        with the same upstream gradient, where the gradient check passed (not at a
        kink, where each may take another subgradient): its output
        and gradients must agree with the eager op's within the dtype's tolerances,
        else the check fails with kind ``compiled_mismatch``, saying which side
        (forward or backward). torch and JAX targets.
    batched : bool, optional
        Also run the op, its backward and (with ``"fwd"`` in ``modes``) its jvp under
        ``torch.func.vmap`` over a small batch (the example and copies of it moved a
        little, each with its own upstream gradient and tangent), where the gradient
        check passed: each batch element must agree with the op called plainly on
        it, else the check fails with kind ``batched_forward`` (the output) or
        ``batched_grad`` (a gradient), naming the element and the vmap rule (torch's
        ``check_batched_grad``, ``check_batched_forward_grad``). Default (None): on
        for a ``torch.autograd.Function`` declaring a vmap rule (a ``vmap``
        staticmethod or ``generate_vmap_rule = True``). True on anything but a torch
        op of real inputs at first order (or a Function without a vmap rule) is a
        usage error.
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
    # "rev,fwd" as describe(), the configuration file and the command line spell it
    modes = tuple(m.strip() for m in modes.split(",")) if isinstance(modes, str) else tuple(modes)
    # one input index, as describe(), the configuration file and the command line take it
    if isinstance(constants, (int, np.integer)):
        constants = (int(constants),)
    _validate(order, modes, nondet_tol, mode, reference, atol, rtol)
    named = skip_on_classes(skip_on)
    backend = _backend(compiled)
    if group_size is not None and not (
        isinstance(group_size, int) and not isinstance(group_size, bool) and group_size >= 1
    ):
        raise CheckUsageError(f"group_size must be an integer >= 1 or None, not {group_size!r}")
    bfloat16 = isinstance(dtype, str) and dtype == "bfloat16"
    if bfloat16:
        dtype = np.float32  # arrays holding bfloat16 values (rounded below)
    # Inputs that are trees of arrays (a dict of parameters) are checked leaf by leaf.
    leaves, trees = flatten_trees(arrays)
    if not any(t is not None for t in trees):
        trees = ()
    xs, cast, const = _inputs(tgt, leaves, dtype, all_params, constants, len(arrays))
    if mode == Mode.AUTO:
        size = sum(xs[i].size for i in range(len(xs)) if i not in const)
        mode = Mode.FULL if size <= FULL_MODE_MAX_SIZE else Mode.FAST
    settings = CheckSettings(
        mode=mode,
        atol=atol,
        rtol=rtol,
        dtype="bfloat16" if bfloat16 else None if dtype is None else str(np.dtype(dtype)),
        reference=reference,
        complex_step=complex_step,
        directions=directions,
        constants=tuple(sorted(const)),
        order=order,
        modes=modes,
        device=device,
        nondet_tol=nondet_tol,
        group_size=group_size,
        skip_on=tuple(exception_name(c) for c in named),
        reference_forward=None if reference_forward is None else reference_name(reference_forward),
        compiled=backend,
        batched=batched,
    )
    variant = Variant(device=device, bfloat16=bfloat16, trees=trees)
    if bfloat16:
        xs = [_bfloat16_values(x) for x in xs]
    names = _input_names(tgt, all_params, len(xs), order, trees)
    if reference_forward is not None:
        precision: Any = "bfloat16" if bfloat16 else None
        differs = forward_disagreement(
            tgt,
            xs,
            all_params,
            sorted(const),
            reference_forward,
            lambda dt: tolerance_for(precision or dt, atol, rtol),
        )
        if differs is not None:
            result = CheckResult(
                Verdict.FAILED,
                tgt.name,
                failure=differs,
                inputs=[x.copy() for x in xs],
                params=dict(all_params),
                seed=seed,
                settings=settings.recorded(),
                forward_calls=1,
                seconds=time.perf_counter() - start,
            )
            result.input_names = names
            result.failure = _named_failure(differs, names)
            return result
    tgt, xs, const, parts = _as_variant(tgt, xs, const, variant, order, modes)
    compiled_tgt = None if backend is None else compiled_target(tgt, backend)
    # (complex inputs, checked as their parts, have no batched run: refused when asked)
    batch = batched_on(tgt if parts is None else replace(tgt, batcher=None), batched)
    result = _check_orders(
        tgt, xs, all_params, const, seed, settings, atol, rtol, order, modes, upstream
    )
    # (at a kink the two may pick different subgradients, both right)
    if compiled_tgt is not None and result.verdict == Verdict.PASSED:
        differs = compiled_disagreement(
            tgt,
            compiled_tgt,
            xs,
            all_params,
            sorted(const),
            (seed, 3),
            lambda dt: tolerance_for(np.dtype(dt) if not bfloat16 else "bfloat16", atol, rtol),
        )
        result.forward_calls += 2
        result.backward_calls += 2
        if differs is not None:
            result.verdict, result.failure, result.note = Verdict.FAILED, differs, ""
    if batch and result.verdict == Verdict.PASSED:
        differs = batched_disagreement(
            tgt,
            xs,
            all_params,
            sorted(const),
            seed,
            "fwd" in modes,
            lambda dt: tolerance_for(np.dtype(dt) if not bfloat16 else "bfloat16", atol, rtol),
        )
        # (a plain call and a share of a vmapped one per element, each way)
        result.forward_calls += 2 * BATCH_SIZE
        result.backward_calls += 2 * BATCH_SIZE
        if differs is not None:
            result.verdict, result.failure, result.note = Verdict.FAILED, differs, ""
    if parts is not None:
        # each complex input as its two real parts: x.real, x.imag
        names = [
            names[i] + (f".{part.split()[0][:4]}" if part and names[i] else "") for i, part in parts
        ]
    result.input_names = names
    if result.failure is not None:
        result.failure = _named_failure(result.failure, names)
    if parts is not None:
        result = _complex_named(result, parts)
    _integers_refused(tgt, cast, result)
    result.seed = seed
    result.seconds = time.perf_counter() - start
    return result


#: The settings :func:`check` takes: its keyword-only parameters but ``params`` (the
#: op's own). Read off the signature, so that every front end that passes settings to
#: it (the pytest plugin's ``gradcheck`` fixture and marker) takes each one.
CHECK_SETTINGS: tuple[str, ...] = tuple(
    name
    for name, p in inspect.signature(check).parameters.items()
    if p.kind is inspect.Parameter.KEYWORD_ONLY and name != "params"
)


def _input_names(
    tgt: Target, params: Mapping[str, Any], n: int, order: int, trees: Sequence[Any] = ()
) -> list[str]:
    """The names of a check's ``n`` inputs as the user named them: the forward's
    parameters (a tree input's leaves by their paths, ``params['dense']['w']``), then
    the parameters a module brings along (``linear.weight``), and ``v`` for the
    upstream gradient that order 2 appends (``v_3``, ``v_4`` for those of higher
    orders); "" where not known (the extra inputs of a variadic op)."""
    own = list(tgt.signature.given(params).input_names)
    if trees:
        own = leaf_paths(own, trees)
    brought = [f.name for f in tgt.fixed]
    count = n - len(brought)
    names = own[:count] + [""] * (count - len(own)) + brought
    upstream = ["v", *(f"v_{k}" for k in range(3, order + 1))] if order >= 2 else []
    return [*names, *upstream]


_INPUT_INDEX = re.compile(r"\binput (\d+)\b")


def _named_failure(failure: Failure, names: Sequence[str]) -> Failure:
    """``failure`` with its message's ``input i`` named; the text of an exception the
    op raised, and the frame, stay the op's own words."""
    message = failure.message
    own = [t for t in (failure.exception, failure.frame) if t and t in message]
    cut = min((message.index(t) for t in own), default=len(message))
    return replace(failure, message=_named(message[:cut], names) + message[cut:])


def _named(message: str, names: Sequence[str]) -> str:
    """``message`` with each ``input i`` named as the user named the input."""

    def name(match: re.Match[str]) -> str:
        i = int(match.group(1))
        return f"input {names[i]}" if i < len(names) and names[i] else match.group(0)

    return _INPUT_INDEX.sub(name, message)


def _validate(
    order: int,
    modes: Sequence[str],
    nondet_tol: Any,
    mode: str,
    reference: str,
    atol: Any,
    rtol: Any,
) -> None:
    """:func:`check`'s settings, each a :class:`CheckUsageError` naming it when wrong."""
    if isinstance(order, bool) or order not in range(1, MAX_ORDER + 1):
        raise CheckUsageError(f"order must be an integer from 1 to {MAX_ORDER}, not {order!r}")
    if not modes or any(m not in AD_MODES for m in modes):
        raise CheckUsageError(f"modes must be 'rev', 'fwd' or both, not {tuple(modes)!r}")
    # (numbers.Real declares no comparisons in the stubs: the ignores below)
    if not (isinstance(nondet_tol, Real) and 0 <= nondet_tol < math.inf):  # type: ignore[operator]
        raise CheckUsageError(f"nondet_tol must be a finite number >= 0, not {nondet_tol!r}")
    if mode not in MODES:
        raise CheckUsageError(f"mode must be 'auto', 'full' or 'fast', not {mode!r}")
    if reference not in ("float64", "native"):
        raise CheckUsageError(f"reference must be 'float64' or 'native', not {reference!r}")
    for name, tol in (("atol", atol), ("rtol", rtol)):
        if tol is not None and not (isinstance(tol, Real) and tol >= 0 and math.isfinite(tol)):  # type: ignore[operator]
            raise CheckUsageError(f"{name} must be a finite number >= 0, not {tol!r}")


def _backend(compiled: Any) -> str | None:
    """``compiled=`` as a backend name (True: ``aot_eager``), None for eager."""
    if compiled is None or compiled is False:
        return None
    if compiled is True:
        return "aot_eager"
    if isinstance(compiled, str) and compiled in BACKENDS:
        return compiled
    raise CheckUsageError(
        f"compiled must be True, {', '.join(repr(b) for b in BACKENDS)} or None, not {compiled!r}"
    )


def _inputs(
    tgt: Target,
    arrays: Sequence[Any],
    dtype: Any,
    params: Mapping[str, Any],
    constants: Sequence[int],
    given: int | None = None,
) -> tuple[list[np.ndarray], list[int], set[int]]:
    """:func:`check`'s inputs as arrays; the integer inputs cast to float64; the
    constants (named, not floating, or the target's constant fixed inputs).
    ``given``: how many inputs the op is given (its trees' leaves are ``arrays``)."""
    xs = _as_arrays(tgt, arrays, dtype, params, given)
    bad = [i for i in constants if not 0 <= i < len(xs)]
    if bad:
        raise CheckUsageError(f"constants={tuple(constants)} names inputs that do not exist")
    # Integer inputs are checked as float64 (an op of numbers is meant for floats too);
    # one named in `constants` stays as it is, and booleans are always constants.
    cast = [i for i, a in enumerate(xs) if a.dtype.kind in "iu" and i not in constants]
    for i in cast:
        xs[i] = xs[i].astype(np.float64)
    const = {i for i in constants} | {i for i, a in enumerate(xs) if a.dtype.kind not in "fc"}
    const |= {len(xs) - len(tgt.fixed) + k for k, f in enumerate(tgt.fixed) if f.constant}
    return xs, cast, const


def _as_variant(
    tgt: Target,
    xs: list[np.ndarray],
    const: set[int],
    variant: Variant,
    order: int,
    modes: Sequence[str],
) -> tuple[Target, list[np.ndarray], set[int], Any]:
    """The target checked as ``variant``; complex inputs as their real and imaginary
    parts (``parts`` says how, None without complex inputs)."""
    if any(x.dtype.kind == "c" for x in xs):
        # (at every order and in both modes: the adapters differentiate the parts)
        return _complex_as_real(tgt, xs, const, variant)
    return tgt.derive(variant), xs, const, None


def _integers_refused(tgt: Target, cast: Sequence[int], result: CheckResult) -> None:
    """A usage error when the op raised with the integer inputs cast to float64."""
    if cast and result.failure is not None and result.failure.kind == Kind.FORWARD_ERROR:
        names = ", ".join(map(str, cast))
        raise CheckUsageError(
            f"{tgt.name}: integer inputs are checked as float64 (input {names}), and the "
            f"op raised with floats ({result.failure.exception}); pass floats, or name "
            f"the input in constants= to pass it as given"
        )


def _check_orders(
    tgt: Target,
    xs: list[np.ndarray],
    params: dict[str, Any],
    const: set[int],
    seed: int,
    settings: CheckSettings,
    atol: float | None,
    rtol: float | None,
    order: int,
    modes: Sequence[str],
    upstream: Any = None,
) -> CheckResult:
    """Every order up to ``order``, each in every one of ``modes``: a stronger setting
    checks what the plain one does, and more. Order ``k`` runs only where order
    ``k - 1`` passed: its failure would hide the lower order's, and where that found a
    kink or nothing to compare, the example says nothing about the derivative of its
    backward either.

    The first failure is the result; without one, the first result that is not a pass
    (a kink, nothing compared), else the strongest check's (the first mode at
    ``order``), with the calls of all of them counted."""
    # What the op cannot be checked at is a usage error before anything runs, not
    # after a first-order failure that would hide it.
    base = tgt.variant or Variant()
    if order >= 2:
        tgt.derive(replace(base, order=order))
    if "fwd" in modes:
        tgt.derive(replace(base, order=order, forward=True))
    results: list[CheckResult] = []
    for k in range(1, order + 1):
        for ad_mode in modes:
            result = _check_one(
                tgt, xs, params, const, seed, settings, atol, rtol, k, ad_mode, upstream
            )
            result.failure = _say_where(result.failure, k, ad_mode, order, modes, len(xs))
            results.append(result)
            if result.verdict == Verdict.FAILED:
                break
        if any(r.verdict != Verdict.PASSED for r in results):
            break
    chosen = next((r for r in results if r.verdict == Verdict.FAILED), None)
    chosen = chosen or next((r for r in results if r.verdict != Verdict.PASSED), None)
    chosen = chosen or results[-len(modes)]
    chosen.forward_calls = sum(r.forward_calls for r in results)
    chosen.backward_calls = sum(r.backward_calls for r in results)
    return chosen


def _say_where(
    failure: Failure | None,
    order: int,
    ad_mode: str,
    asked_order: int,
    asked_modes: Sequence[str],
    inputs: int,
) -> Failure | None:
    """The failure with the order and the mode it was found at, said in its message
    where the check asked for more than a plain one (order 2, forward mode)."""
    if failure is None:
        return None
    failure = replace(failure, order=order, ad_mode=ad_mode)
    if order >= 2:
        if order == 2:
            what = "the gradient of the backward (order 2)"
        else:
            what = f"the gradient of the order {order - 1} backward (order {order})"
        if ad_mode == "fwd":
            what += " in forward mode (the jvp of the backward: fwd-over-rev)"
        if failure.input is not None and failure.input >= inputs:
            # the upstream gradients of the lower orders follow the op's inputs
            level = failure.input - inputs + 1
            if order == 2:
                what += ", with respect to the upstream gradient (its last input)"
            else:
                what += (
                    f", with respect to the upstream gradient of order {level} "
                    f"(input {failure.input})"
                )
    elif ad_mode == "fwd":
        what = "forward mode (jvp)"
    elif asked_order >= 2 or tuple(asked_modes) != ("rev",):
        what = "the backward (order 1, reverse mode)"
    else:
        return failure
    return replace(failure, message=f"{what}: {failure.message}")


def _check_one(
    tgt: Target,
    xs: list[np.ndarray],
    params: dict[str, Any],
    const: set[int],
    seed: int,
    settings: CheckSettings,
    atol: float | None,
    rtol: float | None,
    order: int,
    ad_mode: str,
    upstream: Any = None,
) -> CheckResult:
    """One check of ``tgt`` (already derived for the device, dtype, complex inputs) at
    ``order`` in ``ad_mode``, with the upstream gradient ``upstream`` (None: drawn)."""
    variant = tgt.variant or Variant()
    base = tgt
    free = tuple(i for i, x in enumerate(xs) if i not in const and x.dtype.kind == "f")
    # Order k is the target (x..., v_2, ..., v_k) -> the backward of order k - 1's
    # target with the upstream gradient v_k (drawn from the seed, of that target's
    # output's shape), built one order at a time.
    for level in range(2, order + 1):
        try:
            graph = tgt.apply(xs, params, constants=sorted(const))
        except TargetRaised:
            break  # the lower order's check says what the forward raised
        out = graph.output
        if upstream is None or level > 2:
            v = np.random.default_rng([seed, level]).standard_normal(out.shape)
        else:
            v = _fitted(upstream, out.shape)  # the upstream gradient of order 1's output
        v = v.astype(out.dtype)
        tgt = base.derive(replace(variant, order=level, differentiated=free))
        xs = [*xs, v]
    if ad_mode == "fwd":
        tgt = tgt.derive(replace(tgt.variant or Variant(), forward=True))
    run = _Run(tgt, xs, params, const, np.random.default_rng(seed), settings)
    if upstream is not None and order == 1:
        run.v_given = _fitted(upstream, None)
    with strided(strided_for(seed)):
        result = run.execute(atol, rtol)
        if result.failure is not None and run.outputs is not None:
            result.failure = _name_the_output(result.failure, run, seed, atol, rtol)
    return result


def _fitted(upstream: Any, shape: tuple[int, ...] | None) -> np.ndarray:
    """``upstream`` as a float array, of ``shape`` where that is known."""
    v = np.array(upstream.data if isinstance(upstream, Tensor) else upstream, dtype=np.float64)
    if shape is not None and v.shape != tuple(shape):
        raise CheckUsageError(
            f"upstream has the shape {v.shape}, but the output's is {tuple(shape)}; give "
            f"one value per element of the output"
        )
    return v


def _bfloat16_values(x: np.ndarray) -> np.ndarray:
    """A float input as float32 holding the nearest bfloat16 values (round to nearest
    even on the top 16 bits)."""
    if x.dtype.kind != "f":
        return x
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(x), out, x.astype(np.float32))


def _complex_as_real(
    tgt: Target, xs: list[np.ndarray], const: set[int], variant: Variant
) -> tuple[Target, list[np.ndarray], set[int], list[tuple[int, str]]]:
    """The target, inputs and constants with each complex input as two real inputs
    (its real and imaginary parts), and for each real input the (input, part) it is."""
    if not tgt.foreign:
        raise CheckUsageError(
            f"{tgt.name} is gradcheck's own op, whose tensors are real: complex inputs "
            f"need a torch or JAX target"
        )
    mask = tuple(x.dtype.kind == "c" for x in xs)
    real: list[np.ndarray] = []
    parts: list[tuple[int, str]] = []
    constants: set[int] = set()
    for i, x in enumerate(xs):
        pieces = list(split_complex(x)) if mask[i] else [x]
        names = ["real part", "imaginary part"] if mask[i] else [""]
        for piece, name in zip(pieces, names):
            if i in const:
                constants.add(len(real))
            parts.append((i, name))
            real.append(piece)
    derived = tgt.derive(replace(variant, complex_inputs=mask))
    return derived, real, constants, parts


def _complex_named(result: CheckResult, parts: list[tuple[int, str]]) -> CheckResult:
    """A failure at a real input of a complex op named as the part of the op's input."""
    failure = result.failure
    if failure is None or failure.input is None or failure.input >= len(parts):
        return result
    i, part = parts[failure.input]
    if part:
        note = f"(input {failure.input} is the {part} of complex input {i}) "
        result.failure = replace(failure, message=note + failure.message)
    return result


def _merge_params(
    tgt: Target, params: Mapping[str, Any] | None, op_params: Mapping[str, Any]
) -> dict[str, Any]:
    merged = dict(params or {})
    for name, value in op_params.items():
        if not tgt.signature.accepts(name):
            raise CheckUsageError(
                f"check() got {name}=, which is neither a setting of check() nor a "
                f"parameter of {tgt.name} (its parameters: "
                f"{', '.join(tgt.signature.parameters) or 'none'}); "
                f"pass op parameters whose names clash with settings as params={{...}}"
            )
        merged[name] = value
    return merged


def _as_arrays(
    tgt: Target,
    arrays: Sequence[Any],
    dtype: Any,
    params: Mapping[str, Any],
    given: int | None = None,
) -> list[np.ndarray]:
    sig = tgt.signature.given(params)
    n = len(arrays) if given is None else given
    # An op that brings inputs along (a module's parameters) takes them as given
    # after its own inputs, or appends their values.
    fixed = len(tgt.fixed) if n == sig.arity + len(tgt.fixed) and tgt.fixed else 0
    if n - fixed < sig.arity or (n - fixed > sig.arity and not sig.variadic):
        want = f"at least {sig.arity}" if sig.variadic else str(sig.arity)
        brought = f" and its {len(tgt.fixed)} parameters after them" if tgt.fixed else ""
        raise CheckUsageError(
            f"{tgt.name} takes {want} tensor input(s) "
            f"({', '.join(sig.input_names) or 'none named'}){brought}; check() got {n}"
        )
    out = []
    for a in arrays:
        x = np.array(a.data if isinstance(a, Tensor) else a)
        if dtype is not None and x.dtype.kind == "f":
            x = x.astype(dtype)
        out.append(x)
    if tgt.fixed and not fixed:
        # in the inputs' floating dtype (the module runs in it)
        like = next((x.dtype for x in out if x.dtype.kind == "f"), None)
        for f in tgt.fixed:
            value = np.array(f.value)
            out.append(
                value.astype(like) if like is not None and value.dtype.kind == "f" else value
            )
    return out


def _name_the_output(
    failure: Failure, run: _Run, seed: int, atol: float | None, rtol: float | None
) -> Failure:
    """The output of an op with several outputs that a failure comes from, named in
    it: the one differentiable output, or the first whose upstream gradient alone
    (zero on the others) fails the same way. One output, or a failure that is not
    one output's (the op raised, an input was changed), stays unnamed."""
    outputs = run.outputs
    if outputs is None or failure.output is not None or run.v is None:
        return failure
    if failure.kind in (
        Kind.FORWARD_ERROR,
        Kind.MUTATED_INPUT,
        Kind.INVALID_OUTPUT,
        Kind.UNDEFINED_GRAD,  # (its message names the outputs)
        Kind.NONCONTIGUOUS_INPUT,  # (an input's: its message names it)
    ):
        return failure
    candidates = outputs.indices
    if len(candidates) > 1:
        candidates = [
            k
            for k in candidates
            if _fails_alone(run, outputs.only(k, run.v), seed, atol, rtol, failure.kind)
        ][:1]
    if not candidates:
        return failure
    k = candidates[0]
    return replace(failure, output=k, message=f"{outputs.label(k)}: {failure.message}")


def _fails_alone(
    run: _Run, v: np.ndarray, seed: int, atol: float | None, rtol: float | None, kind: str
) -> bool:
    again = _Run(run.tgt, run.xs, run.params, run.const, np.random.default_rng(seed), run.settings)
    again.v_given = v
    result = again.execute(atol, rtol)
    run.forward_calls += again.forward_calls
    run.backward_calls += again.backward_calls
    return result.failure is not None and result.failure.kind == kind


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
        #: (see :meth:`wide_gradient`).
        self._wide: tuple[list[np.ndarray], list[Any]] | None = None

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
            **fields,
        )

    def execute(self, atol: float | None, rtol: float | None) -> CheckResult:
        try:
            v, grads = self.structure()
            result = self.numerics(v, grads, atol, rtol)
            if result.failure is None:
                self.each_input_constant(v, grads, atol, rtol)
                self.undefined_upstream(v, atol, rtol)
                if STRIDED.get():  # (gradcheck.checking.layout: a share of checks)
                    self.noncontiguous_inputs(v, grads, atol, rtol)
            return result
        except _Fail as fail:
            return self.result(Verdict.FAILED, failure=fail.failure)
        except _Inconclusive as nothing:
            return self.result(Verdict.INCONCLUSIVE, note=nothing.reason)

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
                raise _Fail(self.invalid_gradient(exc, v)) from None
            raise _Fail(_raised(Kind.BACKWARD_ERROR, exc)) from None

    def structure(self) -> tuple[np.ndarray, list[Any]]:
        """Run the op as the stages of :mod:`gradcheck.checking.structure` need it,
        walking the structural checks after each; (v, the gradients) when all pass."""
        e = Evidence(self.xs, self.const, graph=self.forward())
        e.nondet_tol = float(self.settings.nondet_tol)
        self.outputs = e.graph.outputs
        self.walk(Stage.FORWARD, e)
        out = e.graph.output
        if not np.all(np.isfinite(out.data)):
            # Outside the op's domain (var with ddof=1 of one element, log|det| of a
            # singular matrix): skipped, like a kink. (A non-finite *gradient* at a
            # finite output stays a failure.)
            raise _Inconclusive(Skip.UNDEFINED)
        if all(i in self.const or x.size == 0 for i, x in enumerate(self.xs)):
            raise _Inconclusive(Skip.NOTHING)
        e.v = self.rng.standard_normal(out.shape).astype(out.dtype)
        if self.v_given is not None:  # (given, or one output's upstream gradient alone)
            e.v = _fitted(self.v_given, out.shape).astype(out.dtype)
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

    def evaluator(self, v: np.ndarray) -> Evaluator:
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

        ev = Evaluator(
            forward, self.xs, self.params, v, reference=self.settings.reference, bind=bind
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
        bad = np.flatnonzero(~np.isfinite(np.asarray(gradient, dtype=np.float64)))
        if bad.size > NONFINITE_ELEMENTS_PROBED:
            bad = bad[np.linspace(0, bad.size - 1, NONFINITE_ELEMENTS_PROBED).astype(int)]
        try:
            ev = self.evaluator(v)
        except Exception:
            return False
        try:
            flat = ev.work[i].reshape(-1)
            for j, h in zip(bad, step_sizes(flat[bad], ev.eps)):
                est = ev.refine(i, int(j), float(h), 0.0, abs(float(flat[j])))
                if not est.unbounded:
                    return False
                if ev.edge_derivative(i, int(j), float(h)) is not None:
                    return False  # a finite derivative from inside the domain
        except Exception:
            return False
        finally:
            self.forward_calls += ev.calls
        return True

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
                if exc.phase == "forward" and self.outside(exc.exception):
                    raise _Inconclusive(Skip.DOMAIN_ERROR) from None
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

        def off(expected: Any, got: Any, like: np.ndarray, which: int | None) -> float | None:
            # (an op allowed to differ run to run, nondet_tol, may here too)
            diff = _off(expected, got, like, atol, rtol, self)
            if diff is None or diff <= nondet_tol:
                return None
            if which is not None and atol is None and rtol is None:
                # Another layout sums in another order: a float16 softmax's gradient
                # moves by a few ulps of its terms. Allowed up to the backward's own
                # rounding, measured (once) by moving the inputs' last bits; reading
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
        :data:`ROUNDING_MOVE_ULPS`, random direction), at most over
        :data:`ROUNDING_SAMPLES` such moves; None for float64 inputs, unless ``every``
        (then zeros stay, see :func:`_few_ulps`).

        A backward computed in a low precision is right only to its own rounding,
        which no formula predicts: a layer norm's terms of ~5|v| cancel to a gradient
        of 1e-4, rounding at 1e-7; a constant channel's x - mean is 0 in float64 but
        one ulp in float32, which 1/sqrt(eps) amplifies. Both move the computed
        gradient by about that much when the inputs' last bits change, where the
        exact gradient moves by far less; a systematic error (a precision lost the
        same way whatever the last bits) does not move, and stays a failure.

        ``arrays`` (with ``every``): the moves are of these instead of the example's
        inputs (float64 copies of a float32 or float16 example, see
        :meth:`convicted_wide`).
        """
        xs = self.xs if arrays is None else arrays
        if not every and all(x.dtype.kind != "f" or x.dtype == np.float64 for x in xs):
            return [None] * len(xs)
        rng = np.random.default_rng(0)  # the same moves for the same example
        jitter = [None if g is None else np.zeros(np.shape(g)) for g in grads]
        for _ in range(ROUNDING_SAMPLES):
            moved = [_few_ulps(x, rng, 0.0 if every else None) for x in xs]
            try:
                _, again = self.tgt.run(
                    moved, self.params, v, constants=sorted(self.const), outputs=self.outputs
                )
            except Exception:
                continue
            finally:
                self.forward_calls += 1
                self.backward_calls += 1
            for i, (g0, g1) in enumerate(zip(grads, again)):
                if jitter[i] is not None and g1 is not None and np.shape(g1) == np.shape(g0):
                    with np.errstate(all="ignore"):
                        d = np.abs(np.asarray(g1, np.float64) - np.asarray(g0, np.float64))
                    # (jitter[i] is not None: checked above)
                    jitter[i] = np.maximum(jitter[i], np.where(np.isfinite(d), d, 0.0))  # type: ignore[arg-type]
        return [None if x.dtype == np.float64 and not every else j for x, j in zip(xs, jitter)]

    def at_own_scale(self, ev: Evaluator, comparison: Comparison) -> Comparison | None:
        """The mismatch judged again where the analytic gradient is far larger than
        finite differences found (:data:`OWN_SCALE_RATIO` times): there the steps may
        have crossed a singular set nearer than they are long, and measured another
        function. Steps at the scale the analytic gradient implies
        (``Evaluator.at_own_scale``) decide each such element: where they agree with
        it, their estimate replaces the first one; a wrong gradient that large (a
        smooth function, a factor too big) disagrees there too and stays a failure.
        None where no element was re-estimated."""
        if comparison.estimated is None:
            return None
        numeric, error, kink, curvature, noise = (np.array(a) for a in comparison.estimated)
        analytic = comparison.analytic.reshape(-1)
        changed = False
        for j in sorted(set(comparison.bad))[:NONFINITE_ELEMENTS_PROBED]:
            a, n = float(analytic[j]), float(numeric.reshape(-1)[j])
            if not (
                math.isfinite(a) and abs(a) > OWN_SCALE_RATIO * max(abs(n), error.reshape(-1)[j])
            ):
                continue
            found = ev.at_own_scale(comparison.i, j, a)
            if found is None or not abs(found[0] - a) <= OWN_SCALE_AGREEMENT * abs(a):
                continue
            numeric.reshape(-1)[j], error.reshape(-1)[j] = found
            kink.reshape(-1)[j] = False
            curvature.reshape(-1)[j] = 0.0
            changed = True
        if not changed:
            return None
        again = Comparison(
            comparison.i,
            comparison.x,
            comparison.analytic,
            comparison.tol,
            comparison.v_max,
            comparison.jitter,
        )
        judge_full(again, (numeric, error, kink, curvature, noise))
        again.estimated = (numeric, error, kink, curvature, noise)
        return again

    def judged_wide(
        self,
        i: int,
        x: np.ndarray,
        v: np.ndarray,
        comparison: Comparison,
        tol: Tolerance,
        v_max: float,
    ) -> Comparison:
        """A float32 or float16 mismatch that is the dtype's precision, not the
        backward's formula: the same backward run on float64 copies of the inputs
        agrees with finite differences, and the low-precision gradient lies within
        :data:`WIDE_ULPS` of its units in the last place (on the scale of 1 or of the
        gradient) from it. Then that judgement stands (0.5·x·(1 + tanh u) in float32 at
        x = -5.25, where tanh rounds to -1: every term cancels to its rounding, and no
        move of the inputs' last bits shows it); else the mismatch."""
        g, g64 = comparison.analytic, self.wide_gradient(v, i)
        if g64 is None or g64.shape != g.shape:
            return comparison
        scale = max(1.0, float(np.max(np.abs(g64), initial=0.0)))
        with np.errstate(all="ignore"):
            off = float(np.max(np.abs(g - g64), initial=0.0))
        if not off <= WIDE_ULPS * float(np.finfo(x.dtype).eps) * scale:
            return comparison
        estimated = comparison.estimated
        if estimated is None:
            return comparison
        again = Comparison(i, x, g64, tol, v_max, comparison.jitter)
        judge_full(again, estimated)
        return comparison if again.mismatched else again

    def wide_gradient(self, v: np.ndarray, i: int) -> np.ndarray | None:
        """Input ``i``'s gradient from the backward run on float64 copies of the
        inputs (with ``v`` in float64), once per check; None where the op does not run
        in float64 (it raised, or its output is not float64)."""
        if self._wide is None:
            wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in self.xs]
            try:
                out, grads = self.tgt.run(
                    wide,
                    self.params,
                    v.astype(np.float64),
                    constants=sorted(self.const),
                    outputs=self.outputs,
                )
            except Exception:
                out, grads = None, []
            finally:
                self.forward_calls += 1
                self.backward_calls += 1
            if np.asarray(out).dtype != np.float64:
                grads = []
            self._wide = (wide, list(grads))
        grads = self._wide[1]
        g64 = grads[i] if i < len(grads) else None
        return None if g64 is None else np.asarray(g64, dtype=np.float64)

    def convicted_wide(
        self, i: int, x: np.ndarray, v: np.ndarray, comparison: Comparison, ev: Evaluator
    ) -> Comparison | None:
        """A float32 or float16 gradient that passed its dtype's tolerances, where a
        float64 check of the same backward fails, and the low-precision gradient
        carries that error: the failing float64 judgement (a Comparison whose failure
        says so); else None.

        A low-precision gradient is right only to its dtype's rounding, so its
        tolerances are wide (float16: 1e-2 of the gradient's scale), and an error
        below them, though far above what the float64 finite differences resolve
        (a wrong reduction off by 8% of one element, a zeroed element of 6e-6 beside
        elements of 0.5), passes. The same backward run on float64 copies of the
        inputs shows the formula's error without that rounding; judged as a float64
        check would judge it (the elements it flags refined at float64's threshold,
        and allowed the float64 backward's measured rounding), it is a failure where
        the low-precision gradient is off the same way (within half the error).

        Not judged so: an op whose float64 run computes in the low dtype (a forward
        that the finite differences evaluate in it, see
        :meth:`~gradcheck.checking.numerical.Evaluator`; a gradient exactly
        representable in it: a float16 backward cast back), whose float64 numbers say
        nothing finer than the dtype's own."""
        if comparison.estimated is None or ev.eval_dtype != np.float64:
            return None
        g64 = self.wide_gradient(v, i)
        if g64 is None or g64.shape != comparison.analytic.shape:
            return None
        if exact_in(g64, x.dtype):
            return None
        if comparison.estimated is None:
            return None
        numeric, error, kink, curvature, noise = (np.array(a) for a in comparison.estimated)
        x64 = x.astype(np.float64)
        tol = tolerance_for(np.dtype(np.float64), None, None)
        v_max = float(np.max(np.abs(v), initial=0.0))
        wide = Comparison(i, x64, g64, tol, v_max)
        judge_full(wide, (numeric, error, kink, curvature, noise))
        if not wide.mismatched:
            return None
        # The flagged elements at float64's jump threshold (the low dtype's may have
        # left a small kink unmarked, or settled an element by its first difference).
        which = np.array(sorted(set(wide.bad)))
        est = Estimate(numeric, error, kink, curvature, np.zeros(numeric.size, bool), 0, noise)
        threshold = wide.jump_threshold(np.where(kink, 0.0, numeric))
        refine_elements(ev, i, est, which, threshold)
        estimated = (est.value, est.error, est.kink, est.curvature, est.noise)
        assert self._wide is not None  # (made by wide_gradient)
        arrays, grads = self._wide
        jitter = self.rounding_jitter(v.astype(np.float64), grads, every=True, arrays=arrays)
        wide = Comparison(i, x64, g64, tol, v_max, jitter[i])
        judge_full(wide, estimated)
        bad = np.array(wide.bad, dtype=int)
        if not bad.size:
            return None
        low = comparison.analytic.reshape(-1)
        with np.errstate(invalid="ignore"):
            carried = np.abs(low[bad] - g64.reshape(-1)[bad]) <= 0.5 * np.abs(
                g64.reshape(-1)[bad] - est.value[bad]
            )
        if not carried.any():
            return None
        wide.estimated = estimated
        wide.low = (comparison.analytic, str(x.dtype))
        return wide

    def judged_as_float64(
        self, i: int, x: np.ndarray, comparison: Comparison, ev: Evaluator, v_max: float
    ) -> Comparison | None:
        """A float32 or float16 gradient that passed its dtype's tolerances, of an op
        whose forward computes in that dtype even when given float64 (``f(x.half())``
        cast back: the finite differences run in it, :attr:`Evaluator.inner`), judged
        as a float64 check of the same op judges it: with float64's tolerances beside
        the same error estimates, which hold that dtype's noise already, and the
        allowances for the gradient's own rounding in its dtype (its measured jitter,
        the rounding of intermediates of the upstream gradient's size, eps·|x|·|s''|).
        The failing judgement, or None.

        The dtype's tolerances (float16: 1e-2 of the gradient's scale, and 1e-2
        relative) are for finite differences that its noise would otherwise judge too
        strictly; here the error estimate counts that noise, and on top of it they
        passed a backward off by 5 to 10% (exp, x·y computed in float16), which the
        float64 check of the same op fails. (:meth:`convicted_wide` does not judge
        such an op: its float64 run computes in the low dtype.)"""
        if comparison.estimated is None or ev.inner is None:
            return None
        tol = tolerance_for(np.dtype(np.float64), None, None)
        # The measured jitter moved the inputs by up to ROUNDING_MOVE_ULPS of their
        # ulps, a move that float64 steps never see but that in float16 changes the
        # exact gradient of exp at 4 by 1.5%: per ulp, as eps·|x|·|s''| counts it.
        jitter = None if comparison.jitter is None else comparison.jitter / ROUNDING_MOVE_ULPS
        again = Comparison(i, x, comparison.analytic, tol, v_max, jitter)
        judge_full(again, comparison.estimated)
        if not again.mismatched:
            return None
        # The flagged elements refined at the float64 judgement's own jump threshold
        # (the dtype's may have settled them by their first difference).
        numeric, error, kink, curvature, noise = (np.array(e) for e in comparison.estimated)
        which = np.array(sorted(set(again.bad)))
        est = Estimate(numeric, error, kink, curvature, np.zeros(numeric.size, bool), 0, noise)
        refine_elements(ev, i, est, which, again.jump_threshold(np.where(kink, 0.0, numeric)))
        estimated = (est.value, est.error, est.kink, est.curvature, est.noise)
        again = Comparison(i, x, comparison.analytic, tol, v_max, jitter)
        judge_full(again, estimated)
        if not again.mismatched:
            return None
        again.estimated = estimated
        return again

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

    def invalid_gradient(self, exc: TargetRaised, v: np.ndarray) -> Failure:
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
        return Failure(kind, text, exception=f"InvalidGradient: {text}")

    # -- step 3-5: numerics and the verdict -------------------------------------------
    def numerics(
        self, v: np.ndarray, grads: list[Any], atol: float | None, rtol: float | None
    ) -> CheckResult:
        try:
            ev = self.evaluator(v)
        except Exception as exc:
            if self.outside(exc):
                raise _Inconclusive(Skip.DOMAIN_ERROR) from None
            raise _Fail(_raised(Kind.FORWARD_ERROR, TargetRaised("forward", exc))) from None
        v_max = float(np.max(np.abs(v), initial=0.0))
        jitter = self.rounding_jitter(v, grads)
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
                tol = tolerance_for(self.precision(x), atol, rtol)
                comparison = Comparison(i, x, analytic, tol, v_max, jitter[i])
                fast = self.settings.mode == Mode.FAST and not self.settings.complex_step
                if fast:
                    compare_fast(
                        ev,
                        comparison,
                        self.rng,
                        self.settings.directions,
                        self.settings.group_size,
                    )
                else:
                    compare_full(ev, comparison, self.settings.complex_step)
                if comparison.mismatched and jitter[i] is None and comparison.estimated:
                    # A float64 backward is right to its rounding too, which matters
                    # where it is ill-conditioned (an inverse of a matrix of entries
                    # 1e-159 errs by 1 where the gradient is 0, next to elements of
                    # 2e158): measured only where a mismatch needs it.
                    measured = self.rounding_jitter(v, grads, every=True)
                    jitter = [m if j is None else j for j, m in zip(jitter, measured)]
                    again = Comparison(i, x, analytic, tol, v_max, jitter[i])
                    judge_full(again, comparison.estimated)
                    again.estimated, comparison = comparison.estimated, again
                    if again.mismatched and atol is None and rtol is None:
                        comparison = self.at_own_scale(ev, again) or again
                    comparison.estimated = None  # (as before: judged_wide is for float32/16)
                if comparison.mismatched and comparison.estimated and x.dtype.itemsize < 8:
                    comparison = self.judged_wide(i, x, v, comparison, tol, v_max)
                elif x.dtype.itemsize < 8 and atol is None and rtol is None:
                    # (tolerances the user chose are what they accept)
                    comparison = (
                        self.convicted_wide(i, x, v, comparison, ev)
                        or self.judged_as_float64(i, x, comparison, ev, v_max)
                        or comparison
                    )
                per_input.append(comparison.summary())
                elements.extend(comparison.elements)
                kinks.extend((i, idx) for idx in comparison.kinks)
                if failure is None and comparison.mismatched:
                    failure = comparison.failure(missing=g is None)
        except ComplexStepUnsupported as exc:
            raise CheckUsageError(str(exc)) from None
        except Exception as exc:
            if self.outside(exc):
                raise _Inconclusive(Skip.DOMAIN_ERROR) from None
            raise _Fail(
                _raised(Kind.FORWARD_ERROR, TargetRaised("forward at a perturbed input", exc))
            ) from None
        finally:
            self.forward_calls += ev.calls
        worst = sorted(elements, key=lambda e: -e.ratio)[:WORST_ELEMENTS]
        compared = sum(e.size - e.kinks for e in per_input)
        verdict, note = Verdict.PASSED, ""
        if failure is not None:
            verdict = Verdict.FAILED
        elif kinks:
            verdict = Verdict.NOT_DIFFERENTIABLE if compared else Verdict.INCONCLUSIVE
            note = Skip.NOT_DIFFERENTIABLE
        fields = {"per_input": per_input, "worst": worst, "kinks": kinks, "note": note}
        return self.result(verdict, failure=failure, **fields)


def _few_ulps(x: np.ndarray, rng: np.random.Generator, zero: float | None = None) -> np.ndarray:
    """``x`` with each float element moved up or down by 1 to :data:`ROUNDING_MOVE_ULPS`
    units in its last place (a zero by as many times ``zero`` of the input's largest
    element, by default eps: a subnormal step would change nothing).

    The float64 measure (made only where a mismatch needs it) leaves zeros where they
    are (``zero=0``): a zero is exact, and a branch at x == 0 is where bugs live (xlogy's
    forward mask reused for d/dx gives 0 instead of log y there, pytorch#80770); moved
    off it, the gradient would jump by the very error to be caught."""
    if x.dtype.kind != "f":
        return x
    scale = float(np.max(np.abs(x), initial=0.0)) or 1.0
    zero = float(np.finfo(x.dtype).eps) if zero is None else zero
    with np.errstate(all="ignore"):
        ulp = np.where(x != 0, np.spacing(np.abs(x)), zero * scale)
        moves = rng.integers(1, ROUNDING_MOVE_ULPS + 1, x.shape) * rng.choice([-1, 1], x.shape)
        out = (x + moves * ulp).astype(x.dtype)
    return np.where(np.isfinite(out), out, x)


def _raised(kind: str, exc: TargetRaised) -> Failure:
    original = exc.exception
    text = exception_text(original)
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
