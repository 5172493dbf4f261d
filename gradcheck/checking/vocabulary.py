"""The words gradcheck's results are made of: verdicts, failure kinds, modes.

Each is a plain ``str`` (``Verdict.PASSED == "passed"``), because JSON output,
baselines and users' code compare them as strings; the classes here only name them,
once, so that no module spells them out again. They are never instantiated.
"""

from __future__ import annotations

__all__ = [
    "Verdict",
    "Skip",
    "Kind",
    "Mode",
    "FAILURE_KINDS",
    "RUN_FAILURE_KINDS",
    "MODES",
    "MAX_ORDER",
]


class Verdict:
    """The verdict of a check (:attr:`gradcheck.CheckResult.verdict`: passed, failed, not
    differentiable or inconclusive) and of a search (:attr:`gradcheck.VerifyResult.verdict`:
    passed, failed or inconclusive; and timed out or not run in ``gradcheck verify``).
    Neither passes without comparing something."""

    PASSED = "passed"
    FAILED = "failed"
    #: check: some elements sit where the op is not differentiable (a kink); the
    #: others were compared and agree
    NOT_DIFFERENTIABLE = "not differentiable"
    #: check: nothing was compared (:class:`Skip` says why); verify: no example could
    #: be judged (every one skipped, or none drawn)
    INCONCLUSIVE = "inconclusive"
    #: ``gradcheck verify``: the target ran past its time limit (``--timeout``,
    #: ``--example-timeout``); its ``failure`` holds the example it was on
    TIMED_OUT = "timed_out"
    #: ``gradcheck verify``: the run was stopped (SIGINT, SIGTERM) before this target
    #: finished
    NOT_RUN = "not_run"


class Skip:
    """Why an example was not judged (:attr:`gradcheck.CheckResult.note` of a check that
    is not differentiable or inconclusive): a search skips it and counts it under
    this reason, never fails it."""

    #: at a kink: the one-sided derivatives differ
    NOT_DIFFERENTIABLE = "not differentiable there"
    #: the output has inf or nan: the example is outside the op's domain
    UNDEFINED = "output not finite there"
    #: the forward raised a domain error (a singular matrix's LinAlgError, or an
    #: exception named with ``skip_on``): the example is outside the op's domain
    DOMAIN_ERROR = "forward raised a domain error there"
    #: the forward ran but the backward raised a domain error: a solve with a matrix
    #: that the forward's own solve still took, singular to the backward's rounding
    BACKWARD_DOMAIN_ERROR = "backward raised a domain error there"
    #: the gradient is beyond the dtype's range (a float32 exp near 88.7, where v·e**x
    #: overflows): right or wrong, it cannot be compared
    OVERFLOW = "gradient overflows the dtype there"
    #: the forward's value at the input stands apart from its values a few ulps away
    #: (a singular set within its rounding: a matrix whose LU pivot is a rounding
    #: error); every finite-difference step crosses the set, and says nothing
    APART = "the forward is not continuous there (a singular set within its rounding)"
    #: the forward raised at a point a finite-difference step away from the drawn
    #: input, which lies within a step of a bound of the declared domain: the steps
    #: left the domain
    RAISED_NEAR = "the forward raised near the drawn input"
    #: no non-constant float input, or only empty ones
    NOTHING = "nothing to compare"
    #: the forward raised at these shapes whatever the values (a search learns it)
    SHAPE = "the op does not run at the shape"


class Kind:
    """Why a check failed (:attr:`gradcheck.Failure.kind`); :data:`FAILURE_KINDS` and
    :data:`RUN_FAILURE_KINDS` say what each means. Short stable ids: front ends and CI
    baselines key on them."""

    FORWARD_ERROR = "forward_error"
    BACKWARD_ERROR = "backward_error"
    INVALID_OUTPUT = "invalid_output"
    LOW_PRECISION_OUTPUT = "low_precision_output"
    MISSING_GRADIENT = "missing_gradient"
    EXTRA_GRADIENT = "extra_gradient"
    NOT_ARRAY = "not_array"
    NON_REAL_DTYPE = "non_real_dtype"
    WRONG_DTYPE = "wrong_dtype"
    WRONG_SHAPE = "wrong_shape"
    NONFINITE_GRADIENT = "nonfinite_gradient"
    MUTATED_INPUT = "mutated_input"
    MUTATED_UPSTREAM = "mutated_upstream"
    ALIASED_GRADIENT = "aliased_gradient"
    NONDETERMINISTIC = "nondeterministic"
    NOT_REENTRANT = "not_reentrant"
    NONLINEAR = "nonlinear"
    MISMATCH = "mismatch"
    FORWARD_MISMATCH = "forward_mismatch"
    UNDEFINED_GRAD = "undefined_grad"
    COMPILED_MISMATCH = "compiled_mismatch"
    BATCHED_FORWARD = "batched_forward"
    BATCHED_GRAD = "batched_grad"
    NONCONTIGUOUS_INPUT = "noncontiguous_input"
    EXITED = "exited"
    WORKER_DIED = "worker_died"
    TIMED_OUT = "timed_out"
    INTERNAL_ERROR = "internal_error"


#: Every failure kind, with what it means.
FAILURE_KINDS: dict[str, str] = {
    Kind.FORWARD_ERROR: "the forward raised",
    Kind.BACKWARD_ERROR: "the backward raised",
    Kind.INVALID_OUTPUT: "the output is not a real floating-point Tensor/array",
    Kind.LOW_PRECISION_OUTPUT: "a floating output has less precision than the float inputs",
    Kind.MISSING_GRADIENT: "a non-constant input received no gradient",
    Kind.EXTRA_GRADIENT: "a constant input received a gradient",
    Kind.NOT_ARRAY: "a gradient is not an array or a real number",
    Kind.NON_REAL_DTYPE: "a gradient is complex, boolean or not numeric",
    Kind.WRONG_DTYPE: "a gradient's dtype is not its input's",
    Kind.WRONG_SHAPE: "a gradient's shape is not its input's",
    Kind.NONFINITE_GRADIENT: "a gradient has inf or nan",
    Kind.MUTATED_INPUT: "an input was changed in place",
    Kind.MUTATED_UPSTREAM: "the upstream gradient was changed in place",
    Kind.ALIASED_GRADIENT: "a gradient shares memory with the upstream gradient or another",
    Kind.NONDETERMINISTIC: "a second run on a fresh graph gave other gradients",
    Kind.NOT_REENTRANT: "a second backward on the same graph gave other gradients",
    Kind.NONLINEAR: "backward(-2v) is not -2 * backward(v)",
    Kind.MISMATCH: "the gradient differs from finite differences",
    Kind.FORWARD_MISMATCH: "the forward differs from the reference forward (reference_forward)",
    Kind.UNDEFINED_GRAD: "with no (None) upstream gradient for some outputs of a torch op, the "
    "backward raised or gave other gradients than with zeros there",
    Kind.BATCHED_FORWARD: "under torch.func.vmap, the op's output for a batch element differs "
    "from a plain call on that element (its vmap rule)",
    Kind.BATCHED_GRAD: "under torch.func.vmap, the backward's (or the jvp's) gradient for a "
    "batch element differs from a plain call on that element",
    Kind.COMPILED_MISMATCH: "the compiled op (torch.compile, jax.jit) gave another output or "
    "gradient than the eager one",
    Kind.NONCONTIGUOUS_INPUT: "with an input a non-contiguous view of the same values, the op "
    "raised or gave another output or gradient",
}

#: The failure kinds decided by the gradient comparison itself (analytic against
#: numeric): their errors are the bug's size. Every other kind failed before the
#: comparison or after one that passed (a structural check, a re-run: batched_*,
#: noncontiguous_input, compiled_mismatch...), and the errors measured there are not
#: the failure's: reports show none ("-", "nan" in JSON).
COMPARISON_KINDS = frozenset({Kind.MISMATCH, Kind.MISSING_GRADIENT})

#: The failure kinds of a run around the checks, each with what it means: a check lets
#: SystemExit and KeyboardInterrupt through (they are not errors of one example), the
#: search (:func:`gradcheck.verify`) makes them the op's failure, and ``gradcheck
#: verify``'s worker processes add the two a process around the search can see.
RUN_FAILURE_KINDS: dict[str, str] = {
    Kind.EXITED: "the op raised SystemExit or KeyboardInterrupt (sys.exit...), which would "
    "have ended the run",
    Kind.WORKER_DIED: "the process checking the op died (os._exit, a crash in native code, "
    "killed by a signal)",
    Kind.TIMED_OUT: "the op did not finish within its time limit",
    Kind.INTERNAL_ERROR: "gradcheck itself failed while checking the op (out of memory, or "
    "a bug in gradcheck: please report it)",
}


class Mode:
    """How a check compares the gradient with finite differences."""

    #: full up to :data:`gradcheck.checking.checker.FULL_MODE_MAX_SIZE` elements, else fast
    AUTO = "auto"
    #: every element
    FULL = "full"
    #: a few random directions (directional derivatives)
    FAST = "fast"


#: The modes, in the order options and errors list them.
MODES: tuple[str, ...] = (Mode.AUTO, Mode.FULL, Mode.FAST)


#: The highest derivative order a check takes (``--order``): order ``k`` compares the
#: gradient of the order ``k - 1`` backward with its finite differences.
MAX_ORDER = 4
