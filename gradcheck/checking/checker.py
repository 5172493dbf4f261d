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
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gradcheck.checking.adapters.variants import Variant
from gradcheck.checking.batched import BATCH_SIZE, batched_disagreement, batched_on
from gradcheck.checking.check_inputs import (
    _as_variant,
    _backend,
    _bfloat16_values,
    _complex_named,
    _input_names,
    _inputs,
    _merge_params,
    _named_failure,
    _validate,
    fitted_upstream,
)
from gradcheck.checking.check_settings import CheckSettings, described_params, with_described
from gradcheck.checking.compiled import compiled_disagreement, compiled_target
from gradcheck.checking.layout import strided, strided_for
from gradcheck.checking.numerical import (
    Evaluator,
    full_estimate,
)
from gradcheck.checking.outside import exception_name
from gradcheck.checking.outside import skip_on as skip_on_classes
from gradcheck.checking.reference import forward_disagreement, reference_name
from gradcheck.checking.resolve import resolve_target
from gradcheck.checking.result import CheckResult, Failure
from gradcheck.checking.run import _Run, drawn_upstream
from gradcheck.checking.target import Target, own_error_state
from gradcheck.checking.thresholds import FULL_MODE_MAX_SIZE
from gradcheck.checking.tolerance import DEFAULT_TOLERANCES, tolerance_for
from gradcheck.checking.trees import flatten as flatten_trees
from gradcheck.checking.verdict import execute
from gradcheck.checking.vocabulary import Kind, Mode, Verdict
from gradcheck.errors import (
    CheckUsageError,
    TargetRaised,
)

__all__ = [
    "check",
    "CHECK_SETTINGS",
    "numerical_gradient",
    "CheckUsageError",
    "DEFAULT_TOLERANCES",
    "FULL_MODE_MAX_SIZE",
]


@own_error_state
def check(
    target: Any,
    *arrays: Any,
    params: Mapping[str, Any] | None = None,
    constants: Sequence[int] | int | None = None,
    seed: int = 0,
    mode: str | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    dtype: Any = None,
    reference: str = "float64",
    complex_step: bool = False,
    directions: int = 4,
    group_size: int | None = None,
    order: int | None = None,
    modes: Sequence[str] | str | None = None,
    device: str | None = None,
    nondet_tol: float | None = None,
    skip_on: Any = None,
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
        Neither given: the ``kwargs`` the op declares with :func:`gradcheck.describe`.
    constants : int or sequence of int, optional
        Indices of inputs that are constant: they must receive no gradient.
    seed : int
        Seeds the upstream gradient ``v`` (a signed Gaussian) and fast mode's
        directions; the same seed replays the same check.
    mode : {"auto", "full", "fast"}, optional
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
    order : int, 1 to :data:`~gradcheck.checking.vocabulary.MAX_ORDER`, optional
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
    nondet_tol : float, optional
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

    A setting left unset (None) takes the value the op declares with
    :func:`gradcheck.describe` (``mode``, ``atol``, ``rtol``, ``constants``, ``order``,
    ``modes``, ``device``, ``nondet_tol``, ``skip_on``, ``reference_forward``,
    ``compiled``, ``batched``), else its default (full or fast by size, order 1,
    ``("rev",)``, no constants, ``nondet_tol`` 0, no ``skip_on``): ``check(op, x)``
    checks what ``gradcheck verify op`` checks at each example.

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
    # What the call leaves unset (None), the op's @gradcheck.describe gives, then the
    # defaults: the order in which verify and the pytest plugin take them too.
    (mode, atol, rtol, constants, order, modes, device, nondet_tol, skip_on,
     reference_forward, compiled, batched) = with_described(target, mode=mode, atol=atol,
        rtol=rtol, constants=constants, order=order, modes=modes, device=device,
        nondet_tol=nondet_tol, skip_on=skip_on, reference_forward=reference_forward,
        compiled=compiled, batched=batched)  # fmt: skip
    tgt = resolve_target(target)
    all_params = _merge_params(tgt, described_params(target, params, op_params), op_params)
    modes, indices = _as_spelled(modes, constants)
    _validate(order, modes, nondet_tol, mode, reference, atol, rtol)
    named, backend = skip_on_classes(skip_on), _backend(compiled)
    _validate_group_size(group_size)
    bfloat16 = isinstance(dtype, str) and dtype == "bfloat16"
    if bfloat16:
        dtype = np.float32  # arrays holding bfloat16 values (rounded below)
    # Inputs that are trees of arrays (a dict of parameters) are checked leaf by leaf.
    leaves, trees = _leaves_and_trees(arrays)
    xs, const = _inputs(tgt, leaves, dtype, all_params, indices, len(arrays))
    mode, screen = _chosen_mode(mode, xs, const)
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
        screen=screen,
    )
    variant = Variant(device=device, bfloat16=bfloat16, trees=trees)
    if bfloat16:
        xs = [_bfloat16_values(x) for x in xs]
    names = _input_names(tgt, all_params, len(xs), order, trees)
    if reference_forward is not None:
        differs = _reference_failure(
            tgt, xs, all_params, const, reference_forward, bfloat16, atol, rtol
        )
        if differs is not None:
            return _failed_before_the_run(
                tgt, xs, all_params, seed, settings, differs, names, start
            )
    tgt, xs, const, parts = _as_variant(tgt, xs, const, variant, order, modes)
    compiled_tgt = None if backend is None else compiled_target(tgt, backend)
    # (complex inputs, checked as their parts, have no batched run: refused when asked)
    batch = batched_on(tgt if parts is None else replace(tgt, batcher=None), batched)
    result = _check_orders(
        tgt, xs, all_params, const, seed, settings, atol, rtol, order, modes, upstream
    )
    tolerances = _tolerances_of(bfloat16, atol, rtol)
    more = (xs, all_params, const, seed, modes, tolerances)
    _compiled_and_batched(result, tgt, compiled_tgt, batch, *more)
    return _finished(result, names, parts, seed, start)


def _leaves_and_trees(arrays: Sequence[Any]) -> tuple[Any, Any]:
    """The leaves of the inputs, and their trees (empty where no input is a tree)."""
    leaves, trees = flatten_trees(arrays)
    return leaves, trees if any(t is not None for t in trees) else ()


def _as_spelled(
    modes: str | Sequence[str], constants: Sequence[int] | int
) -> tuple[tuple[str, ...], Sequence[int]]:
    """``modes`` and ``constants`` as describe(), the configuration file and the
    command line spell them too: "rev,fwd", one input index."""
    modes = tuple(m.strip() for m in modes.split(",")) if isinstance(modes, str) else tuple(modes)
    if isinstance(constants, (int, np.integer)):
        return modes, (int(constants),)
    return modes, constants


def _chosen_mode(mode: str, xs: list[np.ndarray], const: set[int]) -> tuple[str, bool]:
    """(the mode, whether its full mode screens first): "auto" is full mode up to
    :data:`FULL_MODE_MAX_SIZE` elements, screened (:mod:`gradcheck.checking.screen`),
    else fast mode; "full" and "fast" are what they say."""
    if mode != Mode.AUTO:
        return mode, False
    size = sum(xs[i].size for i in range(len(xs)) if i not in const)
    return (Mode.FULL, True) if size <= FULL_MODE_MAX_SIZE else (Mode.FAST, False)


def _validate_group_size(group_size: Any) -> None:
    if group_size is not None and not (
        isinstance(group_size, int) and not isinstance(group_size, bool) and group_size >= 1
    ):
        raise CheckUsageError(f"group_size must be an integer >= 1 or None, not {group_size!r}")


def _tolerances_of(bfloat16: bool, atol: float | None, rtol: float | None) -> Any:
    """A dtype's tolerances for the runs that follow a check (compiled, batched)."""
    return lambda dt: tolerance_for(np.dtype(dt) if not bfloat16 else "bfloat16", atol, rtol)


def _reference_failure(
    tgt: Target,
    xs: list[np.ndarray],
    params: dict[str, Any],
    const: set[int],
    reference_forward: Any,
    bfloat16: bool,
    atol: float | None,
    rtol: float | None,
) -> Failure | None:
    """The op's output against the reference forward's (``reference_forward=``)."""
    precision: Any = "bfloat16" if bfloat16 else None
    return forward_disagreement(
        tgt,
        xs,
        params,
        sorted(const),
        reference_forward,
        lambda dt: tolerance_for(precision or dt, atol, rtol),
    )


def _failed_before_the_run(
    tgt: Target,
    xs: list[np.ndarray],
    params: dict[str, Any],
    seed: int,
    settings: CheckSettings,
    differs: Failure,
    names: list[str],
    start: float,
) -> CheckResult:
    """The result of a check whose op's forward disagreed with the reference's."""
    result = CheckResult(
        Verdict.FAILED,
        tgt.name,
        failure=differs,
        inputs=[x.copy() for x in xs],
        params=dict(params),
        seed=seed,
        settings=settings.recorded(),
        forward_calls=1,
        seconds=time.perf_counter() - start,
    )
    result.input_names = names
    result.failure = _named_failure(differs, names)
    return result


def _compiled_and_batched(
    result: CheckResult,
    tgt: Target,
    compiled_tgt: Target | None,
    batch: bool,
    xs: list[np.ndarray],
    params: dict[str, Any],
    const: set[int],
    seed: int,
    modes: tuple[str, ...],
    tolerances: Any,
) -> None:
    """Where the check passed: the compiled op against the eager one (``compiled=``),
    and the batched (vmapped) op against a loop (``batched=``); a disagreement fails
    ``result``."""
    # (at a kink the two may pick different subgradients, both right)
    if compiled_tgt is not None and result.verdict == Verdict.PASSED:
        differs = compiled_disagreement(
            tgt, compiled_tgt, xs, params, sorted(const), (seed, 3), tolerances
        )
        result.forward_calls += 2
        result.backward_calls += 2
        if differs is not None:
            result.verdict, result.failure, result.note = Verdict.FAILED, differs, ""
    if batch and result.verdict == Verdict.PASSED:
        differs = batched_disagreement(
            tgt, xs, params, sorted(const), seed, "fwd" in modes, tolerances
        )
        # (a plain call and a share of a vmapped one per element, each way)
        result.forward_calls += 2 * BATCH_SIZE
        result.backward_calls += 2 * BATCH_SIZE
        if differs is not None:
            result.verdict, result.failure, result.note = Verdict.FAILED, differs, ""


def _finished(
    result: CheckResult, names: list[str], parts: Any, seed: int, start: float
) -> CheckResult:
    """The result with the inputs named (complex ones as their parts), the seed and
    the time."""
    given = names
    if parts is not None:
        # each complex input as its two real parts: x.real, x.imag
        names = [
            names[i] + (f".{part.split()[0][:4]}" if part and names[i] else "") for i, part in parts
        ]
    if parts is None and result.inputs and len(names) > len(result.inputs):
        # order 1 failed first in a check of order k: its inputs have no v_2..v_k
        names = names[: len(result.inputs)]
    result.input_names = names
    if result.failure is not None:
        result.failure = _named_failure(result.failure, names)
    if parts is not None:
        result = _complex_named(result, parts, given)
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
            v = drawn_upstream(np.random.default_rng([seed, level]), out.shape)
        else:
            v = fitted_upstream(upstream, out.shape)  # the upstream gradient of order 1's output
        v = v.astype(out.dtype)
        tgt = base.derive(replace(variant, order=level, differentiated=free))
        xs = [*xs, v]
    if ad_mode == "fwd":
        tgt = tgt.derive(replace(tgt.variant or Variant(), forward=True))
    run = _Run(tgt, xs, params, const, np.random.default_rng(seed), settings)
    if upstream is not None and order == 1:
        run.v_given = fitted_upstream(upstream, None)
    with strided(strided_for(seed)):
        result = execute(run, atol, rtol)
        if result.failure is not None and run.outputs is not None:
            result = _name_the_output(result, run, seed, atol, rtol)
    return result


def _name_the_output(
    result: CheckResult, run: _Run, seed: int, atol: float | None, rtol: float | None
) -> CheckResult:
    """The output of an op with several outputs that a failure comes from, named in
    it: the one differentiable output, or the first whose upstream gradient alone
    (zero on the others) fails the same way. One output, or a failure that is not
    one output's (the op raised, an input was changed), stays unnamed. Where the
    output was found by its upstream gradient alone, the result is that check's:
    its numbers are that output's vᵀJ, and the v it shows is zero on the others (the
    label and the numbers speak of the same output)."""
    failure, outputs = result.failure, run.outputs
    if outputs is None or failure is None or failure.output is not None or run.v is None:
        return result
    if failure.kind in (
        Kind.FORWARD_ERROR,
        Kind.MUTATED_INPUT,
        Kind.INVALID_OUTPUT,
        Kind.UNDEFINED_GRAD,  # (its message names the outputs)
        Kind.NONCONTIGUOUS_INPUT,  # (an input's: its message names it)
    ):
        return result
    k = outputs.indices[0] if len(outputs.indices) == 1 else None
    for j in outputs.indices if k is None else ():
        alone = _fails_alone(run, outputs.only(j, run.v), seed, atol, rtol, failure.kind)
        if alone is not None:
            k, result = j, alone
            break
    if k is None or result.failure is None:
        return result
    named = replace(
        result.failure, output=k, message=f"{outputs.label(k)}: {result.failure.message}"
    )
    return replace(result, failure=named)


def _fails_alone(
    run: _Run, v: np.ndarray, seed: int, atol: float | None, rtol: float | None, kind: str
) -> CheckResult | None:
    """The check again with the upstream gradient ``v`` (one output's piece): its
    result where it fails the same way, else None."""
    again = _Run(run.tgt, run.xs, run.params, run.const, np.random.default_rng(seed), run.settings)
    again.v_given = v
    result = execute(again, atol, rtol)
    run.forward_calls += again.forward_calls
    run.backward_calls += again.backward_calls
    if result.failure is None or result.failure.kind != kind:
        return None
    result.forward_calls, result.backward_calls = run.forward_calls, run.backward_calls
    return result


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
