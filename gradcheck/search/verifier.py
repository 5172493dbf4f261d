"""`verify`: check an op on many generated inputs, and shrink a failure.

This is the search layer between one check (:func:`gradcheck.check`) and the front ends
(the CLI, the pytest plugin). Hypothesis draws the op's inputs from
:func:`gradcheck.strategies.op_inputs`; each example is checked; an example at a point
where the op is not differentiable is rejected and counted, never failed; the first
failing example is shrunk by Hypothesis to the smallest input that still fails, and
that input is checked once more to produce the reported :class:`~gradcheck.CheckResult`.

The run is reproducible: everything drawn comes from ``seed`` (no example database, no
clock). Nothing is printed: the result is data (:class:`VerifyResult`), rendered by
whoever called. Hypothesis's own output is silenced and there is no deadline.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from gradcheck.checking.target import own_error_state
from gradcheck.checking.trees import of_specs
from gradcheck.checking.vocabulary import Verdict
from gradcheck.errors import GradcheckError
from gradcheck.search.description import Description
from gradcheck.search.draws import seed_alone_decides
from gradcheck.search.example_check import SCREEN_GROUP_SIZE as SCREEN_GROUP_SIZE  # (tests)
from gradcheck.search.example_check import (
    _ExampleFailed,
    _in_full,
    _Kinked,
    _OutOfMemory,
    _OutOfTime,
    _Rejected,
    _Search,
    is_ctrl_c,
)
from gradcheck.search.examples import (
    KINKED_DRAWS,
    _invalid,
    broadcast_examples,
    distinct_after_kinks,
    inputs_strategy,
    large_examples,
    size_one_shapes,
)
from gradcheck.search.global_random import seeded_per_example
from gradcheck.search.precedence import layered
from gradcheck.search.reporting import _result, _unsatisfied
from gradcheck.search.reporting import found_at as found_at  # (tests)
from gradcheck.search.reporting import stepped_out_of_domain as stepped_out_of_domain
from gradcheck.search.resolved import ResolvedTarget, description_and_name, resolve
from gradcheck.search.results import LoadedTarget, VerifyResult
from gradcheck.search.settings import SETTINGS, UNSET, VERIFY, names_taken_by
from gradcheck.search.validators import normalize_setting

__all__ = [
    "VerifyResult",
    "LoadedTarget",
    "verify",
    "draw_example",
    "is_ctrl_c",
    "DEFAULTS",
    "VERIFY_SETTINGS",
]

#: Settings used where neither the caller nor the op's description gives one: the
#: defaults of the settings table (:mod:`gradcheck.search.settings`): dtype float64, 100
#: examples, mode auto. No "broadcast": unset, a share of the examples of an op of
#: several inputs broadcast (BROADCAST_SHARE below).
DEFAULTS: dict[str, Any] = {row.name: row.default for row in SETTINGS if row.default is not UNSET}


@own_error_state
def verify(
    target: Any,
    *,
    shapes: Sequence[str | Sequence[int | str]] | None = None,
    domain: Any = None,
    dtype: Any = None,
    kwargs: Mapping[str, Any] | None = None,
    max_examples: int | None = None,
    seed: int | None = None,
    mode: str | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    broadcast: bool | None = None,
    avoid: Sequence[float] | None = None,
    unique: bool | None = None,
    integers: Mapping[int, tuple[int, int]] | None = None,
    booleans: Sequence[int] | None = None,
    constants: Sequence[int] | None = None,
    min_dims: int | None = None,
    order: int | None = None,
    modes: Sequence[str] | None = None,
    device: str | None = None,
    nondet_tol: float | None = None,
    skip_on: Any = None,
    reference_forward: Any = None,
    compiled: Any = None,
    batched: bool | None = None,
    time_budget: float | None = None,
    name: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_example: Callable[[Sequence[np.ndarray], int], None] | None = None,
) -> VerifyResult:
    """Check ``target``'s gradient on generated inputs; shrink and report a failure.

    Every argument left as ``None`` takes the value the op declared with
    :func:`gradcheck.describe`, else the default in :data:`DEFAULTS` (or the checker's
    default tolerances for the dtype).

    Parameters
    ----------
    target : Operation subclass, function of tensors, or LoadedTarget
    shapes : sequence of shape specs, optional
        One per input: ``"n,k"``, ``"3"``, ``""`` (0-d); names shared between inputs.
        Without it, shapes are drawn.
    domain : (lo, hi) or sequence of (lo, hi), optional
        Where values are drawn: for all inputs, or one interval per input.
    dtype : str or dtype, optional
        The inputs' floating dtype (default float64).
    kwargs : mapping, optional
        The op's keyword parameters.
    max_examples : int, optional
        How many (differentiable) examples to check (default 100).
    seed : int, optional
        Seed of the whole run; ``None`` draws one (reported in the result).
    mode : {"auto", "full", "fast"}, optional
        Numeric comparison mode of each check.
    atol, rtol : float, optional
        Tolerances of each check.
    broadcast : bool, optional
        Draw broadcastable shapes for every example (``True``) or none (``False``),
        when ``shapes`` is not given. Default: for an op of several inputs, one example
        in four has broadcast shapes; where the op rejects them (its forward raises at
        them whatever the values), the search learns it and draws equal shapes only.
        :attr:`VerifyResult.shapes` says which.
    avoid : sequence of float, optional
        Points where the op is not differentiable; values keep a margin from them.
    unique : bool, optional
        Draw distinct values across all inputs (for ops not differentiable at ties).
    integers : mapping of int to (lo, hi), optional
        Tensor inputs drawn as int64 in ``range(lo, hi)`` (labels, indices): constants.
    booleans : sequence of int, optional
        Tensor inputs drawn as boolean masks: constants.
    constants : sequence of int, optional
        Tensor inputs that need no gradient (they must receive none).
    min_dims : int, optional
        The fewest dimensions of a drawn shape.
    order, modes, device, nondet_tol : optional
        As for :func:`gradcheck.check`: the gradient of the backward too (``order=2``),
        forward mode (``modes=("rev", "fwd")``), a torch device, the tolerance of
        repeated backwards.
    skip_on : exception class or str, or a sequence of them, optional
        Exceptions that say an input is outside the op's domain (``"module:Name"`` or
        a builtin's name): examples where the forward raises one are skipped and
        counted ("forward raised a domain error there"), as NumPy's and torch's
        ``LinAlgError`` always are.
    reference_forward : callable or str, optional
        As for :func:`gradcheck.check`: a NumPy function (or ``"module:function"``)
        the op's forward must agree with on every drawn example (``forward_mismatch``).
    compiled : {"aot_eager", "eager", "inductor"} or True, optional
        As for :func:`gradcheck.check`: the op compiled (``torch.compile``,
        ``jax.jit``) must agree with the eager op on every example
        (``compiled_mismatch``).
    batched : bool, optional
        As for :func:`gradcheck.check`: a torch op under ``torch.func.vmap`` must
        agree with a loop over the batch on every example (``batched_forward``,
        ``batched_grad``); default: on for Functions that declare a vmap rule.
    name : str, optional
        The name to report (default: from the target).
    progress : callable, optional
        Called as ``progress(examples_so_far, max_examples)`` after each example.
    on_example : callable, optional
        Called as ``on_example(arrays, check_seed)`` before every example is checked,
        while searching and while shrinking (a watchdog learns from it which example
        a hang or a crash was on).

    Returns
    -------
    VerifyResult

    Raises
    ------
    InvalidDescription
        A setting is invalid or does not fit the op (e.g. the number of shapes is not
        its number of inputs). ``exc.field`` names the setting.

    An op that raises ``SystemExit`` (``sys.exit``) fails with kind ``exited``, at the
    example where it did, and so does one that raises ``KeyboardInterrupt``, unless
    Python's own SIGINT handler is installed (then it is a Ctrl-C and stops the search:
    :func:`is_ctrl_c`).

    Examples
    --------
    >>> import gradcheck
    >>> result = gradcheck.verify(lambda x: x * x, max_examples=5, seed=0)
    >>> result.verdict, result.examples
    ('passed', 5)
    """
    given = locals()  # the keywords: one per row of the table that verify() takes
    # The target is resolved here, once: everything below uses `resolved`.
    resolved, options = resolved_options(
        target, {k: given[k] for k in VERIFY_SETTINGS if k != "seed"}
    )
    seed = secrets.randbits(32) if seed is None else normalize_setting("seed", seed)
    return _run(
        resolved, resolved.name if name is None else name, options, int(seed), progress, on_example
    )


#: The settings :func:`verify` takes: the settings table's ``verify`` column, which is
#: its keyword parameters but those that say how to report (``name``, ``progress``,
#: ``on_example``: tests/search/test_settings_table.py checks it); the configuration file
#: (``[tool.gradcheck]``'s keys), the pytest plugin's marker and ``gradcheck_verify``
#: fixture take each one; :func:`gradcheck.describe` each but ``seed`` (a run's).
VERIFY_SETTINGS: tuple[str, ...] = names_taken_by(VERIFY)


# --- settings ----------------------------------------------------------------------


def effective_options(obj: Any, **given_options: Any) -> dict[str, Any]:
    """The given values over the op's description over :data:`DEFAULTS` (the order of
    :mod:`gradcheck.search.precedence`); validated and checked against the op's
    signature. ``obj``: an op, a :class:`LoadedTarget` or a
    :class:`~gradcheck.search.resolved.ResolvedTarget`."""
    return resolved_options(obj, given_options)[1]


def resolved_options(
    target: Any, given: Mapping[str, Any]
) -> tuple[ResolvedTarget, dict[str, Any]]:
    """``target`` resolved (:func:`~gradcheck.search.resolved.resolve`: once, here, at
    the edge; a :class:`~gradcheck.search.resolved.ResolvedTarget` as it is) and the
    settings of its search: the ``given`` values over its description over
    :data:`DEFAULTS`, validated, then checked against its signature. A bad value is
    reported before a target that is not an op."""
    first = description_and_name(target)
    declared = first[1] or Description()
    options = layered(defaults=DEFAULTS, described=declared.as_dict(), call=dict(given))
    # (an infinite or NaN tolerance would pass every example, comparing nothing)
    for key in names_taken_by(VERIFY):
        if options.get(key) is not None:
            options[key] = normalize_setting(key, options[key])
    resolved = resolve(target, first)
    _check_against_signature(resolved, options)
    return resolved, options


def draw_example(
    target: Any, *, seed: int = 0, **options: Any
) -> tuple[list[np.ndarray], dict[str, Any]]:
    """One example for ``target``, drawn as :func:`gradcheck.verify` draws them (from
    the op's :func:`gradcheck.describe` description, overridden by ``options``:
    ``shapes``, ``domain``, ``dtype``, ``kwargs``...): (the arrays, the op's keyword
    parameters). The same seed draws the same example.

    Of the first few examples Hypothesis draws, the one with the most distinct values
    is taken (Hypothesis starts from the simplest inputs, zeros, which show little).

    >>> import gradcheck as mg
    >>> arrays, params = draw_example(lambda x: mg.exp(x), seed=3, shapes=["2,3"])
    >>> arrays[0].shape, params
    ((2, 3), {})
    """
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    resolved, chosen = resolved_options(target, options)
    drawn: list[list[np.ndarray]] = []

    @settings(
        max_examples=_DRAWS,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis_seed(seed)
    @given(arrays=inputs_strategy(resolved, chosen))
    def draw(arrays: Any) -> None:
        drawn.append([np.array(a) for a in arrays])

    with seed_alone_decides():
        draw()
    best = max(drawn, key=_variety)
    return best, dict(chosen.get("kwargs") or {})


def _variety(arrays: Sequence[np.ndarray]) -> tuple[int, int]:
    values = np.concatenate([np.ravel(a) for a in arrays]) if arrays else np.zeros(0)
    return int(np.unique(values).size), int(values.size)


#: Examples drawn by :func:`draw_example` to pick one from.
_DRAWS = 8


def _check_against_signature(resolved: ResolvedTarget, options: dict[str, Any]) -> None:
    kwargs = options.get("kwargs") or {}
    sig = resolved.signature.given(kwargs)
    inputs = ", ".join(sig.input_names) or "none"
    expected = f"{sig.arity}{' or more' if sig.variadic else ''}"
    shapes = options.get("shapes")
    leaves = None if shapes is None else of_specs(shapes)[0]
    if shapes is not None:
        count = len(shapes)
        if count < sig.arity or (count > sig.arity and not sig.variadic):
            hint = ""
            if count < sig.arity:
                example = ", ".join(f'"{name}": ...' for name in sig.input_names[count:])
                hint = (
                    f"; a positional parameter that is not a tensor is given in kwargs "
                    f"({{{example}}}) and is then not an input"
                )
            raise _invalid(
                f"got {count} shape{'s' * (count != 1)} for an op with {expected} "
                f"input{'s' * (sig.arity != 1)} ({inputs}); give one shape per input{hint}",
                "shapes",
            )
    domain = options.get("domain")
    n_inputs = len(leaves) if leaves is not None else sig.arity  # a tree's leaves count
    if domain is not None and isinstance(domain[0], tuple):
        count = len(domain)
        if count != n_inputs:
            raise _invalid(
                f"got {count} domains for an op with {n_inputs} inputs ({inputs}); give "
                f"one domain for all inputs or one per input",
                "domain",
            )
    for key in ("integers", "booleans", "constants"):
        # a constant may also be an input the op brings along (a module's parameter)
        # (the inputs the op brings along: an nn.Module's parameters)
        limit = n_inputs + (len(resolved.target.fixed) if key == "constants" else 0)
        beyond = [i for i in options.get(key) or () if i >= limit]
        if beyond:
            raise _invalid(
                f"{key} names input {beyond[0]}, but the op has {n_inputs} tensor "
                f"input{'s' * (n_inputs != 1)} ({inputs}), counted from 0",
                key,
            )
    both = set(options.get("integers") or ()) & set(options.get("booleans") or ())
    if both:
        raise _invalid(f"input {min(both)} is in both integers and booleans", "booleans")
    unknown = sorted(set(kwargs) - set(sig.parameters))
    if unknown and not sig.any_keyword:
        known = ", ".join(sig.parameters) or "none"
        raise _invalid(
            f"the op has no parameter {', '.join(map(repr, unknown))} (its parameters: {known})",
            "kwargs",
        )
    missing = [name for name in sig.required if name not in kwargs]
    if missing:
        example = ", ".join(f'"{name}": ...' for name in missing)
        raise _invalid(
            f"the op needs its parameter{'s' * (len(missing) > 1)} "
            f"{', '.join(map(repr, missing))}: give {{{example}}}",
            "kwargs",
        )


# --- the search --------------------------------------------------------------------


def _run(
    resolved: ResolvedTarget,
    name: str,
    options: dict[str, Any],
    seed: int,
    progress: Callable[[int, int], None] | None,
    on_example: Callable[[Sequence[np.ndarray], int], None] | None,
) -> VerifyResult:
    # Hypothesis is imported in _phase, not at module level: `import gradcheck` (which
    # exports verify) stays as light as the engine.
    search = _Search(resolved.target, options, progress, on_example)
    search.arity = resolved.signature.given(options.get("kwargs") or {}).arity
    start = time.perf_counter()
    n_large = large_examples(options)
    n_broadcast = broadcast_examples(options, search.arity)
    fixed_shapes, each = size_one_shapes(options, seed)
    n_main = options["max_examples"] - n_large - n_broadcast - each * len(fixed_shapes)
    outcome = _phase(search, inputs_strategy(resolved, options), n_main, seed)
    failure, verdict, note = outcome
    distinct_after_kinks(search, options)
    for k, shape in enumerate(fixed_shapes):
        if not search.going_on(verdict):
            break
        search.fixed = True
        fixed = {**options, "shapes": (shape,) * search.arity}
        outcome = _later_phase(search, resolved, fixed, each, seed + 4 + k)
        search.fixed = False
        if outcome[1] != Verdict.INCONCLUSIVE:  # (the op does not take the shape)
            failure, verdict, note = outcome
    if n_broadcast and search.going_on(verdict):
        # A search of its own, so that its share does not depend on which shapes
        # Hypothesis happens to repeat; ended early where the op rejects them.
        before = search.examples
        outcome = _later_phase(search, resolved, options, n_broadcast, seed + 2, broadcast=True)
        if outcome[1] != Verdict.INCONCLUSIVE:
            failure, verdict, note = outcome
        elif search.domain.refuses_broadcast:  # the rest of its share in equal shapes
            left = n_broadcast - (search.examples - before)
            outcome = _later_phase(search, resolved, options, left, seed + 3)
            if outcome[1] != Verdict.INCONCLUSIVE:
                failure, verdict, note = outcome
    if n_large and search.going_on(verdict):
        search.large = True
        outcome = _later_phase(search, resolved, options, n_large, seed + 1, large=True)
        if outcome[1] != Verdict.INCONCLUSIVE:  # (every large draw skipped: no news)
            failure, verdict, note = outcome
    seconds = time.perf_counter() - start
    return _result(search, name, options, seed, seconds, failure, verdict, note)


def _later_phase(
    search: _Search,
    resolved: ResolvedTarget,
    options: dict[str, Any],
    max_examples: int,
    seed: int,
    **how: bool,
) -> tuple[Any, str, str]:
    """A later part of the search (``how``: ``large`` or ``broadcast``, of
    :func:`inputs_strategy`), of distinct values where the search draws them (see
    :func:`distinct_after_kinks`); one whose draws are not differentiable more than
    :data:`KINKED_DRAWS` times its examples goes on with distinct values."""
    if search.distinct_from is not None:
        options = {**options, "unique": True}
    before = search.examples
    search.phase_kinks, search.kink_limit = 0, KINKED_DRAWS * max(max_examples, 1)
    try:
        return _phase(search, inputs_strategy(resolved, options, **how), max_examples, seed)
    except _Kinked:
        pass
    finally:
        search.kink_limit = None
    search.distinct_from = search.examples
    left = max_examples - (search.examples - before)
    if left <= 0:
        return None, Verdict.PASSED, ""
    distinct = {**options, "unique": True}
    return _phase(search, inputs_strategy(resolved, distinct, **how), left, seed)


def _phase(search: _Search, strategy: Any, max_examples: int, seed: int) -> tuple[Any, str, str]:
    """One Hypothesis search of ``max_examples`` examples from ``strategy``:
    (the shrunk failing check or None, the verdict, a note)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st
    from hypothesis.errors import Flaky, Unsatisfiable

    drawn = {"arrays": strategy, "check_seed": st.integers(0, 2**32 - 1)}
    if search.options.get("order", 1) >= 2:
        # v is drawn inside the test (Search.upstream); st.data() draws nothing but
        # costs 0.09 ms an example where nothing uses it (4% of a 40x50 example)
        drawn["data"] = st.data()

        def test(arrays: Any, check_seed: int, data: Any) -> None:
            search.example(arrays, check_seed, data)

    else:

        def test(arrays: Any, check_seed: int) -> None:  # type: ignore[misc]
            search.example(arrays, check_seed)

    test = settings(
        max_examples=max(1, max_examples),
        deadline=None,
        database=None,  # nothing written to disk, nothing replayed from it
        derandomize=False,  # the seed below decides
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
        phases=(Phase.generate, Phase.target, Phase.shrink),
    )(hypothesis_seed(seed)(given(**drawn)(test)))

    # No example database (database=None): without a key of its own, Hypothesis would
    # read and parse the test's source file to make one, for every part of every
    # search (a few ms each: 1-3% of the built-in library's run).
    test._hypothesis_internal_database_key = None  # type: ignore[attr-defined]

    try:
        with seed_alone_decides(), seeded_per_example():
            test()
    except _ExampleFailed as exc:  # the final replay of the shrunk example
        return _in_full(search, exc.result), Verdict.FAILED, ""
    except _OutOfMemory as exc:
        note = "the op ran out of memory: the first example where it did, not shrunk"
        return exc.result, Verdict.FAILED, note
    except Unsatisfiable:
        return None, Verdict.INCONCLUSIVE, _unsatisfied(search.skipped, drawn=False)
    except _OutOfTime:
        return None, Verdict.PASSED, ""
    except _Rejected:
        if search.fixed:
            return None, Verdict.INCONCLUSIVE, ""
        note = (
            f"the op rejects broadcast shapes ({search.domain.broadcast_error()}): draw "
            f"equal ones (no --broadcast, describe(broadcast=False))"
        )
        return None, Verdict.INCONCLUSIVE, note
    except Flaky:
        if search.fatal is not None:  # (a usage error Hypothesis took for a flaky failure)
            raise search.fatal from None
        note = "the failure did not repeat when the same input was checked again"
        return search.first_failure, Verdict.FAILED, note
    except GradcheckError:
        if search.fatal is not None:
            raise search.fatal from None
        raise
    return None, Verdict.PASSED, ""


# --- JSON ---------------------------------------------------------------------------
