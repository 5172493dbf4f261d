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

import math
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcheck.checking.result import CheckResult, jsonable
from gradcheck.checking.signature import op_signature
from gradcheck.checking.trees import of_specs, rebuild
from gradcheck.checking.vocabulary import COMPARISON_KINDS, Kind, Mode, Skip, Verdict
from gradcheck.errors import GradcheckError, InvalidDescription, printable
from gradcheck.search.description import Description, description_of, normalize_setting
from gradcheck.search.domain import ShapeDomain
from gradcheck.search.draws import seed_alone_decides
from gradcheck.search.precedence import layered
from gradcheck.search.settings import SETTINGS, UNSET, VERIFY, names_taken_by

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


def target_label(obj: Callable[..., Any]) -> str:
    """A ``module:QualName`` label for an object given directly (not by a spec)."""
    module = getattr(obj, "__module__", None) or "?"
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", repr(obj))
    return printable(f"{module}:{qualname}")


@dataclass(frozen=True)
class LoadedTarget:
    """An op named by the user.

    Attributes
    ----------
    name : str
        How to name it again on the command line (``mymodule:MyOp``,
        ``ops/my_ops.py:MyOp``); used in reports and replay commands.
    obj : type[Operation] or callable
        The ``Operation`` subclass or the function.
    """

    name: str
    obj: Any


@dataclass
class VerifyResult:
    """The outcome of :func:`verify` for one target.

    Attributes
    ----------
    target : str
        The target's name (``module:Name``).
    passed : bool
        True when every checked example passed (and at least one was checked).
    verdict : str
        ``"passed"``, ``"failed"``, or ``"inconclusive"`` (no example could be judged:
        every one drawn was skipped, see ``skipped``).
    examples : int
        Examples checked up to and including the first failure (rejected ones not
        counted).
    rejected : int
        Examples skipped (never failed): at a point where the op is not
        differentiable, where its output is not finite, or with nothing to compare.
    skipped : dict
        ``rejected`` by reason (:class:`~gradcheck.checking.vocabulary.Skip`):
        ``{"not differentiable there": 3, "output not finite there": 1}``.
    failure : CheckResult or None
        The check of the shrunk failing example (its ``inputs`` are the shrunk
        inputs).
    max_abs_error, max_rel_error : float
        The largest absolute and relative gradient errors seen (over every example
        checked, the failing ones and those met while shrinking included); ``nan``
        when none was measured. A relative error is the error over the gradient's
        scale, the one the tolerance uses (:attr:`CheckResult.max_rel_error`).
    error_ratio : float
        The largest error relative to its tolerance (< 1 passes); ``nan`` when none was
        measured.
    seconds : float
        Wall time of the run.
    seed : int
        The seed that replays the run.
    settings : dict
        The effective settings (shapes, domain, dtype, kwargs, mode, tolerances...).
    shrink_steps : int
        Examples run while shrinking a failure.
    found : str
        Where the search found the failure, when its input is one of the search's
        reaches: ``"at a large input (66 elements)"``, ``"at the domain bound 0"``,
        ``"just inside the domain bound 1"``, ``"at a large magnitude (|x| = 23.5)"``,
        ``"at a near-tie (two values 3.1e-05 apart)"``; else which example of the
        search first failed (``"at example 4 of 100, then shrunk in 12 steps"``);
        empty when nothing failed.
    worst : CheckResult or None
        Of the failing examples the search saw (while searching and while shrinking),
        the one with the largest relative gradient error: shrinking keeps an input
        that fails, not the size of the error, so a gross bug can shrink to an
        example where it is small. None when no failing example compared gradients.
    budget_spent : bool
        The search stopped before its last example, its ``time_budget`` spent:
        ``note`` says after how many (never when it found a failure).
    worst_example : str
        Which example ``worst`` was: ``"example 4 of the search"``, ``"shrink step
        7"``. The run's seed replays it (the run goes the same way), and so does
        ``gradcheck.check(target, *worst.inputs, seed=worst.seed)`` with the settings.
    shapes : str
        For an op of several inputs whose shapes were drawn, whether they broadcast:
        ``"inputs drawn with broadcasting: 23 of 100 examples"``, or why every input
        had the same shape (the op rejected broadcast shapes, broadcasting was turned
        off, none was drawn); empty otherwise.
    """

    target: str
    passed: bool
    verdict: str
    examples: int
    rejected: int
    failure: CheckResult | None
    max_abs_error: float
    max_rel_error: float
    error_ratio: float
    seconds: float
    seed: int
    settings: dict[str, Any] = field(default_factory=dict)
    shrink_steps: int = 0
    note: str = ""
    skipped: dict[str, int] = field(default_factory=dict)
    found: str = ""
    shapes: str = ""
    worst: CheckResult | None = None
    worst_example: str = ""
    #: The search stopped early, its ``time_budget`` spent (``note`` says where).
    budget_spent: bool = False

    def __str__(self) -> str:
        """The report the command line prints for this target (:func:`gradcheck.report`)."""
        from gradcheck.frontend.report import report

        return report(self)

    @property
    def skip_lines(self) -> list[str]:
        """``"3 examples skipped: not differentiable there"``, one per reason."""
        return [
            f"{n} example{'s' * (n != 1)} skipped: {reason}" for reason, n in self.skipped.items()
        ]

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form (the schema is in :mod:`gradcheck.frontend.render`); floats that
        are not finite become the strings ``"nan"``, ``"inf"``, ``"-inf"``, as in
        :meth:`CheckResult.to_dict`."""
        document: dict[str, Any] = jsonable(
            {
                "target": self.target,
                "passed": self.passed,
                "verdict": self.verdict,
                "examples": self.examples,
                "rejected": self.rejected,
                "skipped": self.skipped,
                "failure": None if self.failure is None else _failure_dict(self.failure),
                "max_abs_error": self.max_abs_error,
                "max_rel_error": self.max_rel_error,
                "error_ratio": self.error_ratio,
                "seconds": self.seconds,
                "seed": self.seed,
                "settings": self.settings,
                "shrink_steps": self.shrink_steps,
                "note": self.note or None,
                "found": self.found or None,
                "worst_seen": None
                if self.worst is None
                else {"example": self.worst_example, **_failure_dict(self.worst)},
                "shapes": self.shapes or None,
            }
        )
        return document


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
    obj = target.obj if isinstance(target, LoadedTarget) else target
    if name is None:
        name = target.name if isinstance(target, LoadedTarget) else target_label(obj)
    options = effective_options(obj, **{k: given[k] for k in VERIFY_SETTINGS if k != "seed"})
    seed = secrets.randbits(32) if seed is None else normalize_setting("seed", seed)
    return _run(obj, name, options, int(seed), progress, on_example)


#: The settings :func:`verify` takes: the settings table's ``verify`` column, which is
#: its keyword parameters but those that say how to report (``name``, ``progress``,
#: ``on_example``: tests/test_settings_table.py checks it); the configuration file
#: (``[tool.gradcheck]``'s keys), the pytest plugin's marker and ``gradcheck_verify``
#: fixture take each one; :func:`gradcheck.describe` each but ``seed`` (a run's).
VERIFY_SETTINGS: tuple[str, ...] = names_taken_by(VERIFY)


# --- settings ----------------------------------------------------------------------


def effective_options(obj: Any, **given_options: Any) -> dict[str, Any]:
    """The given values over the op's description over :data:`DEFAULTS` (the order of
    :mod:`gradcheck.search.precedence`); validated and checked against the op's
    signature."""
    declared = description_of(obj) or Description()
    options = layered(defaults=DEFAULTS, described=declared.as_dict(), call=given_options)
    # (an infinite or NaN tolerance would pass every example, comparing nothing)
    for key in names_taken_by(VERIFY):
        if options.get(key) is not None:
            options[key] = normalize_setting(key, options[key])
    _check_against_signature(obj, options)
    return options


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

    obj = getattr(target, "obj", target)
    chosen = effective_options(obj, **options)
    drawn: list[list[np.ndarray]] = []

    @settings(
        max_examples=_DRAWS,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis_seed(seed)
    @given(arrays=inputs_strategy(obj, chosen))
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


def _with_field(exc: InvalidDescription, key: str) -> InvalidDescription:
    exc.field = key
    return exc


def _invalid(message: str, key: str) -> InvalidDescription:
    return _with_field(InvalidDescription(message), key)


def _brought(obj: Any) -> int:
    """How many inputs the op brings along (an ``nn.Module``'s parameters)."""
    from gradcheck.checking.resolve import resolve_target

    return len(resolve_target(obj).fixed)


def _check_against_signature(obj: Any, options: dict[str, Any]) -> None:
    kwargs = options.get("kwargs") or {}
    sig = op_signature(obj).given(kwargs)
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
        limit = n_inputs + (_brought(obj) if key == "constants" else 0)
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


#: The share of a search's examples drawn at large inputs (when shapes are drawn):
#: ``max_examples // LARGE_SHARE`` of them, of :data:`LARGE_SIZE` elements.
LARGE_SHARE = 10
LARGE_SIZE = (65, 128)


def large_examples(options: Mapping[str, Any]) -> int:
    """How many of the examples the large-input search takes: none when the shapes are
    given, or with fewer than :data:`LARGE_SHARE` examples in all."""
    if options.get("shapes") is not None:
        return 0
    return int(options["max_examples"]) // LARGE_SHARE


#: The share of a search's examples drawn with broadcast shapes (by default, for an
#: op of several inputs whose shapes are drawn): ``max_examples // BROADCAST_SHARE``.
BROADCAST_SHARE = 4


def broadcast_examples(options: Mapping[str, Any], arity: int) -> int:
    """How many of the examples the broadcast search takes: none when the shapes are
    given, the op has one input, or ``broadcast`` is set (then every example, or none,
    broadcasts)."""
    if options.get("shapes") is not None or arity < 2 or options.get("broadcast") is not None:
        return 0
    return int(options["max_examples"]) // BROADCAST_SHARE


#: The most examples at each shape of :func:`size_one_shapes` (a tenth of the
#: search's examples in all).
SIZE_ONE_EXAMPLES = 3


def size_one_shapes(options: Mapping[str, Any], seed: int) -> tuple[list[tuple[int, ...]], int]:
    """The shapes a search checks besides those Hypothesis draws (which repeats a few
    shapes many times, and may never draw one with a size-1 axis), and how many
    examples at each: when shapes are drawn, one shape of ``max(3, min_dims)``
    dimensions per axis, that axis of size 1 and the others 2 to 4 (from ``seed``),
    where a reduction or a broadcast inside the op meets a size-1 axis that is not
    its last; up to :data:`SIZE_ONE_EXAMPLES` examples at each, a tenth of
    ``max_examples`` in all (none below 30 examples)."""
    ndim = max(3, int(options.get("min_dims") or 0))
    each = min(SIZE_ONE_EXAMPLES, int(options["max_examples"]) // (LARGE_SHARE * ndim))
    if options.get("shapes") is not None or each < 1:
        return [], 0
    rng = np.random.default_rng(seed)
    shapes = []
    for axis in range(ndim):
        sides = [int(n) for n in rng.integers(2, 5, size=ndim)]
        sides[axis] = 1
        shapes.append(tuple(sides))
    return shapes, each


def inputs_strategy(
    obj: Any, options: dict[str, Any], *, large: bool = False, broadcast: bool = False
) -> Any:
    """The search's inputs for ``obj``: with ``large``, shapes of :data:`LARGE_SIZE`
    elements; with ``broadcast`` (or the ``broadcast`` setting), shapes that
    broadcast against each other."""
    from hypothesis.errors import InvalidArgument

    from gradcheck.strategies import op_inputs

    shapes = options.get("shapes")
    if shapes is not None:
        shapes = of_specs(shapes)[0]  # a tree input's leaves are drawn as inputs
    # A variadic op takes as many inputs as shapes are given.
    kwargs = options.get("kwargs") or {}
    arity = len(shapes) if shapes is not None else op_signature(obj).given(kwargs).arity
    dtype = options["dtype"]
    drawn = _DRAWN_AS.get(dtype, dtype)
    try:
        strategy = op_inputs(
            arity,
            shapes=shapes,
            domain=options.get("domain"),
            dtype=drawn,
            broadcast=broadcast or bool(options.get("broadcast")),
            avoid=options.get("avoid"),
            unique=bool(options.get("unique", False)),
            integers=options.get("integers"),
            booleans=options.get("booleans") or (),
            min_dims=options.get("min_dims", 0),
            max_dims=max(3, options.get("min_dims", 0)),
            reach=True,
            reduces=_reduces(obj, kwargs),
            total_size=LARGE_SIZE if large else None,
        )
    except InvalidArgument as exc:
        key = next((k for k in ("avoid", "domain", "dtype") if k in str(exc)), "shapes")
        raise _invalid(str(exc), key) from None
    if dtype in ("complex128", "complex64"):
        return _with_imaginary_parts(strategy, dtype, options.get("domain"))
    return strategy


#: Parameter names that say an op reduces over an axis (NumPy's, torch's, JAX's).
_AXIS_PARAMETERS = frozenset({"axis", "axes", "dim", "dims", "keepdims", "keepdim"})


def _reduces(obj: Any, kwargs: Mapping[str, Any]) -> bool:
    """Whether the op takes an axis to reduce over (a parameter or a given keyword
    argument of that name): a 0-d input shows little of such an op."""
    try:
        names = set(op_signature(obj).parameters)
    except TypeError:
        names = set()
    return bool(_AXIS_PARAMETERS & (names | set(kwargs)))


#: The real dtype the search draws a dtype in that is not a real NumPy float: complex
#: inputs get an imaginary part drawn the same way (:func:`_with_imaginary_parts`);
#: bfloat16 inputs are float32 draws the check rounds to bfloat16.
_DRAWN_AS = {"complex128": "float64", "complex64": "float32", "bfloat16": "float32"}


def _with_imaginary_parts(strategy: Any, dtype: str, domain: Any) -> Any:
    """Each float array ``strategy`` draws made complex, with an imaginary part drawn
    from the same interval as its real part (the input's domain)."""
    from hypothesis import strategies as st

    from gradcheck.strategies._floats import interval_floats, representable_intervals
    from gradcheck.strategies.inputs import draw_array

    real = np.dtype(_DRAWN_AS[dtype])

    def bounds(i: int) -> tuple[float, float]:
        per_input = isinstance(domain, tuple) and domain and isinstance(domain[0], tuple)
        lo, hi = (domain[i] if per_input else domain) or (None, None)
        return (-math.inf if lo is None else lo), (math.inf if hi is None else hi)

    @st.composite
    def draw(data: Any) -> tuple[np.ndarray, ...]:
        arrays = list(data(strategy))
        for i, a in enumerate(arrays):
            if a.dtype == real:
                lo, hi = bounds(i)
                spread = representable_intervals(real, lo, hi)
                im = draw_array(data, real, a.shape, interval_floats(real, lo, hi), spread)
                arrays[i] = (a + 1j * im).astype(dtype)
        return tuple(arrays)

    return draw()


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
    :data:`SCREEN_ABOVE` elements is screened first; while ``shrinking``, a screen that
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
            screened = run(mode=Mode.FAST, group_size=SCREEN_GROUP_SIZE)
            if screened.verdict == Verdict.PASSED or (shrinking and screened_failure(screened)):
                return screened
    return run(mode=options["mode"])


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


def constant_inputs(options: Mapping[str, Any]) -> list[int]:
    """The inputs a check treats as constants: those declared ``constants``, and the
    integer and boolean inputs."""
    found = {*(options.get("constants") or ()), *(options.get("integers") or ())}
    return sorted(found | set(options.get("booleans") or ()))


def _errors(result: Any) -> tuple[float, float, float]:
    """Max absolute, relative error and error ratio of a check; nan when it compared
    no gradient (the op raised before, or a structural check failed first), and for a
    check that failed other than in the comparison (which passed, then a structural
    check or a re-run failed: its errors are not the failure's)."""
    if not result.per_input or not _compared(result):
        return math.nan, math.nan, math.nan
    return result.max_abs_error, result.max_rel_error, result.error_ratio


def _compared(result: Any) -> bool:
    """Whether a check passed, or failed in the gradient comparison itself."""
    return result.failure is None or result.failure.kind in COMPARISON_KINDS


def _nanmax(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return max(a, b)


class _Rejected(BaseException):
    """Ends a search whose every draw the op is known to reject: broadcast shapes of
    an op that takes equal shapes only, or the one shape of a search of fixed shapes
    (a BaseException: Hypothesis lets it through rather than shrinking it)."""


class _OutOfTime(BaseException):
    """Ends a search whose time budget is spent, at the next new example it would
    draw (a BaseException: Hypothesis lets it through; it is never raised while a
    failure shrinks)."""


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
        # A usage error met while checking (the op rejects its parameters...) ends
        # the run: it is re-raised after the search, which must not shrink it.
        self.fatal: GradcheckError | None = None

    def example(self, arrays: Any, check_seed: int, data: Any = None) -> None:
        from hypothesis import reject
        from hypothesis import target as hypothesis_target

        if self.fatal is not None:
            raise self.fatal
        key = tuple(np.shape(a) for a in arrays)
        broadcast = len(set(key)) > 1
        if broadcast and self.domain.refuses_broadcast:
            raise _Rejected  # learnt: the op takes equal shapes only
        if self.fixed and key in self.domain.rejected:
            raise _Rejected
        searching = self.first_failure is None
        if self.deadline is None:
            self.deadline = time.perf_counter() + self.options["time_budget"]
        elif searching and time.perf_counter() > self.deadline:
            self.out_of_time = True
            raise _OutOfTime
        if not searching:
            self.shrink_steps += 1
        if self.on_example is not None:
            self.on_example(arrays, check_seed)
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
        if result.verdict in (Verdict.NOT_DIFFERENTIABLE, Verdict.INCONCLUSIVE):
            if searching:
                self.rejected += 1
                reason = result.note or Skip.NOT_DIFFERENTIABLE
                if self.domain.raises_at_shapes(arrays, result):
                    reason = Skip.SHAPE
                self.skipped[reason] = self.skipped.get(reason, 0) + 1
            reject()
        if self.domain.outside(arrays, result):
            if searching:
                self.rejected += 1
                self.skipped[Skip.SHAPE] = self.skipped.get(Skip.SHAPE, 0) + 1
            reject()
        if stepped_out_of_domain(arrays, result, self.options):
            if searching:
                self.rejected += 1
                self.skipped[Skip.RAISED_NEAR] = self.skipped.get(Skip.RAISED_NEAR, 0) + 1
            reject()
        if searching:
            self.examples += 1
            self.broadcast_examples += broadcast
            if self.progress is not None:
                self.progress(self.examples, self.options["max_examples"])
        abs_err, rel_err, ratio = _errors(result)
        self.max_abs = _nanmax(self.max_abs, abs_err)
        self.max_rel = _nanmax(self.max_rel, rel_err)
        self.max_ratio = _nanmax(self.max_ratio, ratio)
        if not result.passed:
            if searching:
                self.first_failure = result
                self.failed_at = self.examples
            self.keep_if_worst(result, rel_err, ratio, searching)
            raise _ExampleFailed(result)
        if math.isfinite(ratio):
            # Steer the search towards the inputs where the gradient is least accurate.
            hypothesis_target(ratio, label="error / tolerance")

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
        self.worst_example = (
            f"example {self.examples} of the search"
            if searching
            else f"shrink step {self.shrink_steps}"
        )


def _nan_low(x: float) -> float:
    return -math.inf if math.isnan(x) else x


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


def _run(
    obj: Any,
    name: str,
    options: dict[str, Any],
    seed: int,
    progress: Callable[[int, int], None] | None,
    on_example: Callable[[Sequence[np.ndarray], int], None] | None,
) -> VerifyResult:
    # Hypothesis is imported in _phase, not at module level: `import gradcheck` (which
    # exports verify) stays as light as the engine.
    from gradcheck.checking.resolve import resolve_target

    search = _Search(resolve_target(obj), options, progress, on_example)
    search.arity = op_signature(obj).given(options.get("kwargs") or {}).arity
    start = time.perf_counter()
    n_large = large_examples(options)
    n_broadcast = broadcast_examples(options, search.arity)
    fixed_shapes, each = size_one_shapes(options, seed)
    n_main = options["max_examples"] - n_large - n_broadcast - each * len(fixed_shapes)
    outcome = _phase(search, inputs_strategy(obj, options), n_main, seed)
    failure, verdict, note = outcome
    for k, shape in enumerate(fixed_shapes):
        if not search.going_on(verdict):
            break
        search.fixed = True
        fixed = {**options, "shapes": (shape,) * search.arity}
        outcome = _phase(search, inputs_strategy(obj, fixed), each, seed + 4 + k)
        search.fixed = False
        if outcome[1] != Verdict.INCONCLUSIVE:  # (the op does not take the shape)
            failure, verdict, note = outcome
    if n_broadcast and search.going_on(verdict):
        # A search of its own, so that its share does not depend on which shapes
        # Hypothesis happens to repeat; ended early where the op rejects them.
        strategy = inputs_strategy(obj, options, broadcast=True)
        before = search.examples
        outcome = _phase(search, strategy, n_broadcast, seed + 2)
        if outcome[1] != Verdict.INCONCLUSIVE:
            failure, verdict, note = outcome
        elif search.domain.refuses_broadcast:  # the rest of its share in equal shapes
            left = n_broadcast - (search.examples - before)
            outcome = _phase(search, inputs_strategy(obj, options), left, seed + 3)
            if outcome[1] != Verdict.INCONCLUSIVE:
                failure, verdict, note = outcome
    if n_large and search.going_on(verdict):
        search.large = True
        outcome = _phase(search, inputs_strategy(obj, options, large=True), n_large, seed + 1)
        if outcome[1] != Verdict.INCONCLUSIVE:  # (every large draw skipped: no news)
            failure, verdict, note = outcome
    seconds = time.perf_counter() - start
    return _result(search, name, options, seed, seconds, failure, verdict, note)


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
        with seed_alone_decides():
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
        note = "the failure did not repeat when the same input was checked again"
        return search.first_failure, Verdict.FAILED, note
    except GradcheckError:
        if search.fatal is not None:
            raise search.fatal from None
        raise
    return None, Verdict.PASSED, ""


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
    # The worst seen, over every example (a failure shrinks to a small input, where
    # the bug may be small; the size of the bug is what the search saw).
    abs_err, rel_err, ratio = search.max_abs, search.max_rel, search.max_ratio
    if failure is not None:
        abs_err, rel_err, ratio = (
            _nanmax(a, b) for a, b in zip((abs_err, rel_err, ratio), _errors(failure))
        )
    worst = search.worst if failure is not None else None
    if worst is not None and _errors(failure)[1] >= _errors(worst)[1]:
        worst, worst_example = failure, "the reported example"
    else:
        worst_example = search.worst_example if worst is not None else ""
    if failure is not None and not _compared(failure) and worst is None:
        # The gradients agreed wherever they were compared; what failed is another
        # check: its row shows no error ("-"), not the passing comparisons' 0.00e+00.
        abs_err = rel_err = ratio = math.nan
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
        shapes=_shapes_line(search, options),
        budget_spent=search.out_of_time and failure is None,
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
        Skip.RAISED_NEAR: "keep the declared domain a step inside where the op raises",
        Skip.OVERFLOW: "declare a domain where the gradient fits the dtype",
        Skip.NOTHING: "give shapes with at least one element",
        Skip.SHAPE: "the shapes are below",
    }
    reasons = "; ".join(f"{reason} ({n})" for reason, n in skipped.items())
    hints = "; ".join(advice[reason] for reason in skipped if reason in advice)
    return f"every example drawn was skipped: {reasons}; {hints}"


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
    message = f"the op raised {text}{how}, which would have ended the run"
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
        params=dict(options.get("kwargs") or {}),
        seed=seed,
    )


# --- JSON ---------------------------------------------------------------------------


def _failure_dict(result: Any) -> dict[str, Any]:
    """The failing check's dict with its failure's fields (kind, message, input,
    worst...) lifted to the top level, as the JSON schema promises; its errors "nan"
    where the failure was not the gradient comparison's (:func:`_errors`)."""
    data = result.to_dict()
    failure = data.pop("failure") or {}
    if not _compared(result):
        data.update(zip(("max_abs_error", "max_rel_error", "error_ratio"), ("nan",) * 3))
    return {**data, **failure}
