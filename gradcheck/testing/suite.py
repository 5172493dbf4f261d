"""The mutation suite: every mutant of every built-in target, through the checker.

For each target of a module (by default :mod:`gradcheck.builtin_targets`, read with
:func:`gradcheck.frontend.loading.module_targets`, so the suite grows with that module):

1. Its inputs come from its own description (:func:`gradcheck.describe`: shapes,
   domain, kwargs, tolerances), drawn with :func:`gradcheck.strategies.op_inputs`:
   ``examples`` inputs per seed, reproducibly.
2. The op classes it is built from are found by running it once per example and
   walking the graph back from the output (a function target may use several).
3. For each op class and each applicable mutation (:mod:`gradcheck.testing.mutants`),
   and each seed, the mutant runs over the examples in turn. On each one, the
   target's observable behaviour under the mutant (the input gradients, the exception
   raised, whether the upstream gradient or the inputs were changed in place) is
   compared with the original's under the same upstream gradient (in float64 where the
   op takes it, so that a float32 sum taken in another order is no difference). Where
   they are the same (exactly, or to within :data:`INDISTINGUISHABLE` of the gradient's scale, far
   below what any finite-difference check resolves) the mutant is *equivalent on that
   example* and is not checked there. A mutant equivalent on every example is
   **equivalent** (excluded from the score: transposing a 1-d gradient, swapping two
   inputs' equal gradients, zeroing a 0). Otherwise :func:`gradcheck.check` (full mode)
   runs on the examples where it differs until one fails: **caught**; if none fails,
   it **survived**.
4. False alarms: the unmutated target is checked on every example of every seed.

The result is data (:class:`MutationReport`); ``benchmarks/mutation_report.py``
renders it as tables and JSON.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from gradcheck.checking.checker import DEFAULT_TOLERANCES, check
from gradcheck.checking.result import CheckResult, jsonable
from gradcheck.checking.target import Target
from gradcheck.checking.vocabulary import Mode, Verdict
from gradcheck.engine.operation import Operation
from gradcheck.errors import TargetRaised, UnsupportedDtype
from gradcheck.frontend.loading import load_module, module_targets
from gradcheck.search.draws import seed_alone_decides
from gradcheck.testing.mutants import MUTATIONS, Mutation, applicable, mutated

__all__ = [
    "FalseAlarms",
    "INDISTINGUISHABLE",
    "MutantResult",
    "MutationReport",
    "draw_examples",
    "run_suite",
]

#: Two gradients whose difference is at most this fraction of the larger one's largest
#: element are the same gradient for every purpose: central differences in float64,
#: Richardson-extrapolated or not, are at best accurate to ~1e-11 of the gradient's
#: scale, so no finite-difference checker could tell them apart.
INDISTINGUISHABLE = 1e-12
#: A gradient difference ``d`` at input element ``x`` is also invisible when the change
#: it predicts in ``s(x) = <v, f(x)>`` over a step as large as ``max(|x|, 1)`` is below
#: the rounding of ``s`` itself (``ROUNDING`` eps of ``sum |v * f(x)|``): then no
#: float64 evaluation of the forward can show it (``x ** 1e-66`` is exactly 1.0, and
#: its gradient with respect to ``x``, ~1e-66, is beyond any check).
ROUNDING = 4

CAUGHT, SURVIVED, EQUIVALENT, UNREACHED = "caught", "survived", "equivalent", "unreached"


@dataclass(frozen=True)
class MutantResult:
    """What became of one mutant (one target, op class, mutation and seed).

    ``status`` is ``"caught"``, ``"survived"``, ``"equivalent"`` or ``"unreached"`` (the
    mutated ``backward_var`` never ran: the target does not backpropagate through the
    op, or the op computes its gradient elsewhere; a defect of the suite's set-up).
    ``example`` is the index of the example that caught it (or, for a survivor, the
    first one it was live on); ``failure_kind`` the checker's failure kind there.
    ``checks`` and
    ``forward_calls`` count the checker's work on this mutant.
    """

    target: str
    op: str
    mutation: str
    seed: int
    status: str
    example: int | None = None
    failure_kind: str | None = None
    checks: int = 0
    forward_calls: int = 0
    detail: str = ""


@dataclass(frozen=True)
class FalseAlarms:
    """The unmutated target checked on every example of one seed."""

    target: str
    seed: int
    examples: int
    failed: int
    not_differentiable: int
    forward_calls: int
    failures: tuple[str, ...] = ()


@dataclass
class MutationReport:
    """Everything one suite run measured."""

    mutants: list[MutantResult] = field(default_factory=list)
    false_alarms: list[FalseAlarms] = field(default_factory=list)
    seeds: tuple[int, ...] = ()
    examples: int = 0
    seconds: float = 0.0
    #: Targets not run: the engine cannot compute them in the dtype asked for
    #: (NumPy's linalg has no float16), with the op's own message.
    unsupported: dict[str, str] = field(default_factory=dict)

    def count(self, status: str, results: Iterable[MutantResult] | None = None) -> int:
        return sum(r.status == status for r in (self.mutants if results is None else results))

    @property
    def caught(self) -> int:
        return self.count(CAUGHT)

    @property
    def total(self) -> int:
        """Mutants that are not equivalent (the denominator of the score)."""
        return self.count(CAUGHT) + self.count(SURVIVED)

    @property
    def equivalent(self) -> int:
        return self.count(EQUIVALENT)

    @property
    def survivors(self) -> list[MutantResult]:
        return [r for r in self.mutants if r.status == SURVIVED]

    @property
    def unreached(self) -> list[MutantResult]:
        return [r for r in self.mutants if r.status == UNREACHED]

    @property
    def false_alarm_count(self) -> int:
        return sum(f.failed for f in self.false_alarms)

    @property
    def forward_calls(self) -> int:
        return sum(r.forward_calls for r in self.mutants) + sum(
            f.forward_calls for f in self.false_alarms
        )

    def tally(self, key: Callable[[MutantResult], Any]) -> dict[Any, dict[str, int]]:
        """Counts of caught / survived / equivalent, grouped by ``key`` (in first-seen
        order)."""
        groups: dict[Any, dict[str, int]] = {}
        for r in self.mutants:
            counts = groups.setdefault(
                key(r), {CAUGHT: 0, SURVIVED: 0, EQUIVALENT: 0, UNREACHED: 0}
            )
            counts[r.status] += 1
        return groups

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "caught": self.caught,
                "total": self.total,
                "equivalent": self.equivalent,
                "survived": len(self.survivors),
                "unreached": len(self.unreached),
                "false_alarms": self.false_alarm_count,
                "checks_without_mutation": sum(f.examples for f in self.false_alarms),
                "forward_calls": self.forward_calls,
                "seconds": self.seconds,
                "seeds": list(self.seeds),
                "examples_per_seed": self.examples,
                "by_mutation": {k: v for k, v in self.tally(lambda r: r.mutation).items()},
                "by_op": {
                    f"{t} / {o}": v for (t, o), v in self.tally(lambda r: (r.target, r.op)).items()
                },
                "false_alarms_by_seed": {
                    str(s): sum(f.failed for f in self.false_alarms if f.seed == s)
                    for s in self.seeds
                },
                "mutants": [asdict(r) for r in self.mutants],
                "unmutated": [asdict(f) for f in self.false_alarms],
                "unsupported": dict(self.unsupported),
            }
        )


# --- inputs --------------------------------------------------------------------------


def draw_examples(strategy: Any, count: int, seed: int) -> list[Any]:
    """``count`` values of a Hypothesis strategy, the same ones for the same seed
    (outside any test: no database, the seed alone decides)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hypothesis_seed

    drawn: list[Any] = []

    @settings(
        max_examples=count,
        database=None,
        derandomize=False,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
    )
    @hypothesis_seed(seed)
    @given(strategy)
    def collect(value: Any) -> None:
        drawn.append(value)

    with seed_alone_decides():
        collect()
    return drawn[:count]


def _informative_first(examples: list[Any]) -> list[Any]:
    # Hypothesis starts from the simplest input (zeros, 0-d), where many mutants
    # change nothing; inputs with more distinct non-zero values go first.
    def distinct(arrays: Sequence[np.ndarray]) -> int:
        return sum(len(np.unique(a[a != 0])) for a in arrays)

    return sorted(examples, key=lambda arrays: -distinct(arrays))


@dataclass
class _Subject:
    """A target made ready: its options, its examples per seed, its op classes."""

    name: str
    target: Target
    options: dict[str, Any]
    examples: dict[int, list[tuple[np.ndarray, ...]]]
    op_classes: list[type[Operation]]
    #: The unmutated behaviour per (seed, example), computed once.
    originals: dict[tuple[int, int], _Behaviour] = field(default_factory=dict)
    #: The checks' mode: full (every element), or auto (whose screen may stand for it).
    mode: str = Mode.FULL

    def original(self, seed: int, i: int) -> _Behaviour:
        key = (seed, i)
        if key not in self.originals:
            self.originals[key] = _behaviour(self, self.examples[seed][i], _check_seed(seed, i))
        return self.originals[key]

    def check(self, arrays: Sequence[np.ndarray], seed: int) -> CheckResult:
        return check(
            self.target,
            *arrays,
            params=self.options.get("kwargs"),
            mode=self.mode,
            atol=self.options.get("atol"),
            rtol=self.options.get("rtol"),
            seed=seed,
        )


def _check_seed(seed: int, example: int) -> int:
    return seed * 1000 + example


def _op_classes(tgt: Target, examples: Iterable[Sequence[np.ndarray]], params: Any) -> list[type]:
    """The Operation classes in the target's graph, in the order first met."""
    found: dict[type, None] = {}
    for arrays in examples:
        graph = tgt.apply(arrays, params)
        stack, seen = [graph.output], set()
        while stack:
            op = getattr(stack.pop(), "creator", None)
            if op is None or id(op) in seen:
                continue
            seen.add(id(op))
            found.setdefault(type(op), None)
            stack.extend(op.variables)
    return list(found)


def _prepare(
    name: str, obj: Any, seeds: Sequence[int], count: int, dtype: str | None = None
) -> _Subject:
    # verify's own reading of a description, so that the suite checks each target
    # exactly as `gradcheck verify` would (`gradcheck verify --dtype` for `dtype`).
    from gradcheck.search.examples import inputs_strategy
    from gradcheck.search.verifier import resolved_options

    resolved, options = resolved_options(obj, {"dtype": dtype})
    strategy = inputs_strategy(resolved, options)
    examples = {s: _informative_first(draw_examples(strategy, count, s)) for s in seeds}
    tgt = resolved.target
    every = [a for s in seeds for a in examples[s]]
    return _Subject(name, tgt, options, examples, _op_classes(tgt, every, options.get("kwargs")))


# --- equivalence ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Behaviour:
    """What a checker can observe of one backward: the error raised, the gradients,
    and whether the upstream gradient or the inputs were changed in place."""

    error: str | None
    grads: tuple[Any, ...] = ()
    upstream_changed: bool = False
    inputs_changed: bool = False
    #: Per input, the largest gradient difference no float64 forward could show.
    invisible: tuple[Any, ...] = ()


def _behaviour(subject: _Subject, arrays: Sequence[np.ndarray], v_seed: int) -> _Behaviour:
    params = subject.options.get("kwargs")
    # In float64 where the op takes it: whether a mutant changes the gradient is a
    # question about its math, not about a float32 sum taken in another order.
    wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in arrays]
    try:
        graph = subject.target.apply(wide, params)
        arrays = wide
    except TargetRaised:
        try:
            graph = subject.target.apply(arrays, params)
        except TargetRaised as exc:
            return _Behaviour(error=f"forward: {type(exc.exception).__name__}")
    out = graph.output
    v = np.random.default_rng(v_seed).standard_normal(np.shape(out.data)).astype(out.dtype)
    given = v.copy()
    try:
        grads = subject.target.backward(graph, given)
    except TargetRaised as exc:
        return _Behaviour(error=f"backward: {type(exc.exception).__name__}")
    stored = getattr(out, "grad", None)
    rounding = ROUNDING * np.finfo(np.float64).eps * float(np.sum(np.abs(v * out.data)))
    return _Behaviour(
        error=None,
        grads=tuple(None if g is None else np.array(g, copy=True) for g in grads),
        upstream_changed=not np.array_equal(given, v)
        or (stored is not None and not np.array_equal(stored, v)),
        inputs_changed=any(not np.array_equal(t.data, a) for t, a in zip(graph.tensors, arrays)),
        invisible=tuple(rounding / np.maximum(np.abs(np.asarray(a, float)), 1.0) for a in arrays),
    )


def _same_gradient(a: Any, b: Any, invisible: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if type(a) is not type(b) or a.dtype != b.dtype or a.shape != b.shape:
        return False
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if not (np.all(np.isfinite(a64)) and np.all(np.isfinite(b64))):
        return bool(np.array_equal(a64, b64, equal_nan=True))
    scale = max(float(np.max(np.abs(a64), initial=0.0)), float(np.max(np.abs(b64), initial=0.0)))
    return bool(np.all(np.abs(a64 - b64) <= INDISTINGUISHABLE * scale + invisible))


def distinguishable(original: _Behaviour, mutant: _Behaviour) -> bool:
    """True when some observer of the target's inputs, output and gradients could tell
    the mutant from the original on this example."""
    if (original.error, original.upstream_changed, original.inputs_changed) != (
        mutant.error,
        mutant.upstream_changed,
        mutant.inputs_changed,
    ):
        return True
    if len(original.grads) != len(mutant.grads):
        return True
    return not all(
        _same_gradient(a, b, tol)
        for a, b, tol in zip(original.grads, mutant.grads, original.invisible)
    )


# --- the run -------------------------------------------------------------------------


def _run_mutant(
    subject: _Subject, op_class: type[Operation], mutation: Mutation, seed: int
) -> MutantResult:
    label: dict[str, Any] = dict(
        target=subject.name, op=op_class.__name__, mutation=mutation.name, seed=seed
    )
    checks = forward_calls = 0
    first_live: int | None = None
    last: CheckResult | None = None
    reached = 0
    for i, arrays in enumerate(subject.examples[seed]):
        cs = _check_seed(seed, i)
        original = subject.original(seed, i)
        with mutated(op_class, mutation) as calls:
            mutant = _behaviour(subject, arrays, cs)
            reached += calls.count
            if not distinguishable(original, mutant):
                continue
            result = subject.check(arrays, cs)
        first_live = i if first_live is None else first_live
        checks += 1
        forward_calls += result.forward_calls
        last = result
        if result.verdict == Verdict.FAILED:
            assert result.failure is not None
            return MutantResult(
                **label,
                status=CAUGHT,
                example=i,
                failure_kind=result.failure.kind,
                checks=checks,
                forward_calls=forward_calls,
            )
    if first_live is None:
        return MutantResult(**label, status=EQUIVALENT if reached else UNREACHED)
    assert last is not None
    inputs = subject.examples[seed][first_live]
    detail = (
        f"live on example {first_live} (check seed {_check_seed(seed, first_live)}), "
        f"last verdict {last.verdict!r}, error ratio {last.error_ratio:.3g}; inputs "
        + "; ".join(np.array2string(a, precision=17, separator=", ") for a in inputs)
    )
    return MutantResult(
        **label,
        status=SURVIVED,
        example=first_live,
        checks=checks,
        forward_calls=forward_calls,
        detail=detail,
    )


def _run_unmutated(subject: _Subject, seed: int) -> FalseAlarms:
    failed = not_differentiable = forward_calls = 0
    failures: list[str] = []
    examples = subject.examples[seed]
    for i, arrays in enumerate(examples):
        result = subject.check(arrays, _check_seed(seed, i))
        forward_calls += result.forward_calls
        if result.verdict == Verdict.FAILED:
            failed += 1
            assert result.failure is not None
            failures.append(f"example {i}: {result.failure.kind}: {result.failure.message}")
        elif result.verdict == Verdict.NOT_DIFFERENTIABLE:
            not_differentiable += 1
    return FalseAlarms(
        subject.name,
        seed,
        len(examples),
        failed,
        not_differentiable,
        forward_calls,
        tuple(failures),
    )


def _below_resolution(mutation: Mutation, subject: _Subject) -> bool:
    """A rescaling smaller than the target dtype's default relative tolerance (1e-6
    in float32, whose tolerance is 1e-4) is outside what the checker promises to
    resolve there: left out, by rule rather than by hand."""
    if mutation.relative is None:
        return False
    dtype = str(np.dtype(subject.options.get("dtype") or "float64"))
    return mutation.relative < DEFAULT_TOLERANCES.get(dtype, DEFAULT_TOLERANCES["float64"]).rtol


def run_suite(
    module: str | ModuleType = "gradcheck.builtin_targets",
    *,
    targets: Sequence[str] | None = None,
    mutations: Sequence[str] | None = None,
    seeds: Sequence[int] = (0, 1, 2),
    examples: int = 5,
    progress: Callable[[str], None] | None = None,
    dtype: str | None = None,
    mode: str = Mode.FULL,
) -> MutationReport:
    """Run every mutant of every target of ``module`` through the checker.

    Parameters
    ----------
    module : str or module
        Where the targets are (:func:`gradcheck.frontend.loading.module_targets`).
    targets : sequence of str, optional
        Only the targets with these names (the attribute names in the module).
    mutations : sequence of str, optional
        Only these mutations (keys of :data:`~gradcheck.testing.mutants.MUTATIONS`).
    seeds : sequence of int
        One set of ``examples`` inputs per seed; mutants and false alarms run on each.
    examples : int
        Inputs per target and seed (a mutant stops at the first that catches it).
    progress : callable, optional
        Called with each target's name before it runs.
    dtype : str, optional
        The inputs' dtype for every target (as ``gradcheck verify --dtype``); default:
        each target's own (float64 unless it declares another).
    mode : {"full", "auto"}
        The checks' mode: "auto" runs every check through auto mode's screen
        (:mod:`gradcheck.checking.screen`), which must find what full mode finds.

    Examples
    --------
    >>> report = run_suite(targets=["sin"], mutations=["sign_flip"], seeds=[0], examples=2)
    >>> report.caught, report.total, report.false_alarm_count
    (1, 1, 0)
    """
    start = time.perf_counter()
    mod = load_module(module) if isinstance(module, str) else module
    chosen = [MUTATIONS[m] for m in (mutations or MUTATIONS)]
    found = module_targets(mod)
    if targets is not None:
        unknown = sorted(set(targets) - {n for n, _ in found})
        if unknown:
            raise KeyError(f"{mod.__name__} has no target {', '.join(unknown)}")
        found = [(n, o) for n, o in found if n in targets]
    report = MutationReport(seeds=tuple(seeds), examples=examples)
    for name, obj in found:
        if progress is not None:
            progress(name)
        try:
            subject = _prepare(name, obj, seeds, examples, dtype)
            subject.mode = mode
        except TargetRaised as exc:
            if not isinstance(exc.exception, UnsupportedDtype):
                raise
            report.unsupported[name] = str(exc.exception)
            continue
        for seed in seeds:
            report.false_alarms.append(_run_unmutated(subject, seed))
        for op_class in subject.op_classes:
            for mutation in chosen:
                if not applicable(mutation, op_class) or _below_resolution(mutation, subject):
                    continue
                for seed in seeds:
                    report.mutants.append(_run_mutant(subject, op_class, mutation, seed))
    report.seconds = time.perf_counter() - start
    return report
