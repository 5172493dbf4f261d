"""The structural checks' registry: one function per failure kind, named after it.

(Each kind's deliberately wrong op and its correct twin are in tests/checking/test_check.py.)"""

from __future__ import annotations

import numpy as np

from gradcheck.checking.structure import STRUCTURAL_CHECKS, Evidence, Stage, first_failure
from gradcheck.checking.vocabulary import FAILURE_KINDS, Kind

#: Kinds decided outside the registry: the op raised, or the numbers disagree (with
#: finite differences, a reference forward, the op compiled, the backward given None).
ELSEWHERE = {Kind.FORWARD_ERROR, Kind.BACKWARD_ERROR, Kind.MISSING_GRADIENT, Kind.MISMATCH}
ELSEWHERE |= {Kind.FORWARD_MISMATCH, Kind.COMPILED_MISMATCH, Kind.UNDEFINED_GRAD}
ELSEWHERE |= {Kind.BATCHED_FORWARD, Kind.BATCHED_GRAD}
ELSEWHERE |= {Kind.NONCONTIGUOUS_INPUT}


def test_every_structural_kind_has_one_check_named_after_it():
    names = {check.__name__ for _, check in STRUCTURAL_CHECKS}
    assert names == set(FAILURE_KINDS) - ELSEWHERE
    stages = {value for key, value in vars(Stage).items() if key.isupper()}
    assert {stage for stage, _ in STRUCTURAL_CHECKS} == stages


def test_a_check_reports_its_own_kind():
    # Each gradient check on a gradient wrong in its own way only.
    x = np.zeros(3)
    wrong = {
        "not_array": [0.0, 1.0, 2.0],
        "non_real_dtype": np.zeros(3, dtype=complex),
        "wrong_dtype": np.zeros(3, dtype=np.float32),
        "wrong_shape": np.zeros(4),
        "nonfinite_gradient": np.array([0.0, np.nan, 1.0]),
    }
    for kind, gradient in wrong.items():
        e = Evidence([x], set(), gradient=gradient)
        failure = first_failure(Stage.GRADIENT, e)
        assert failure is not None and failure.kind == kind, (kind, failure)
    assert first_failure(Stage.GRADIENT, Evidence([x], set(), gradient=np.ones(3))) is None


def test_wrong_dtype_looks_at_what_the_backward_returned_before_a_cast():
    # The engine (or torch) stores a gradient cast to its input's dtype; the dtype the
    # op's own code returned it in still decides.
    x, x32 = np.zeros(3), np.zeros(3, np.float32)
    f16, f32, f64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))

    def failure(x, returned, foreign=False):
        e = Evidence([x], set(), returned=[returned], foreign=foreign)
        return first_failure(Stage.RETURNED, e)

    # an Operation: less precision than its input fails, and so does more
    assert failure(x, f32).kind == "wrong_dtype" and "less precision" in failure(x, f32).message
    assert failure(x32, f16).kind == "wrong_dtype"
    assert failure(x32, f64).kind == "wrong_dtype" and "wider" in failure(x32, f64).message
    # a foreign op (torch): any other float dtype than its input's
    assert failure(x, f32, foreign=True).kind == "wrong_dtype"
    assert "float32" in failure(x32, f64, foreign=True).message
    # an integer zero gradient, the right dtype, or nothing known: fine
    assert failure(x, np.dtype(np.int64)) is None
    assert failure(x, f64, foreign=True) is None
    assert failure(x, None) is None


def test_a_gradient_left_in_the_broadcast_shape_says_what_to_do():
    # The search draws broadcast shapes by default: an op written as the protocol's
    # Mul (no reduction) fails there, and the message says how to fix it.
    import gradcheck

    class PlainMul(gradcheck.Operation):
        def __call__(self, a, b):
            self.variables = (a, b)
            return a.data * b.data

        def backward_var(self, grad, index, **kwargs):
            a, b = self.variables
            return grad * (b.data if index == 0 else a.data)

    failure = gradcheck.check(PlainMul, np.ones(3), np.array(2.0)).failure
    assert failure.kind == "wrong_shape" and failure.input == 1
    assert "the inputs broadcast, () and (3,): sum the gradient over the axes" in failure.message
    assert "describe(broadcast=False)" in failure.message
    assert gradcheck.check(PlainMul, np.ones(3), np.ones(3)).verdict == "passed"


def test_an_inner_op_s_unreduced_gradient_names_the_function_s_input():
    # User round 7: a described function calling an op of its own whose backward left
    # the target's gradient in the broadcast shape failed wrong_shape with the engine's
    # words alone ("`_Op.backward_var(<gradient>, index=1)` returned a gradient of
    # shape (1,) for an input of shape ()"): no input named, no hint.
    import gradcheck

    class PlainSub(gradcheck.Operation):
        def __call__(self, a, b):
            self.variables = (a, b)
            return a.data - b.data

        def backward_var(self, grad, index, **kwargs):
            return grad if index == 0 else -grad

    def residual(pred, target):
        return gradcheck.execute_op(PlainSub, pred, target)

    failure = gradcheck.check(residual, np.zeros(3), np.array(1.0)).failure
    assert failure.kind == "wrong_shape" and failure.input == 1, failure
    assert "the gradient of input target has shape (3,), its input ()" in failure.message
    assert "the inputs broadcast, () and (3,): sum the gradient over the axes" in failure.message
    assert "PlainSub.backward_var(<gradient>, index=1)" in failure.message
    report = str(gradcheck.check(residual, np.zeros(3), np.array(1.0)))
    assert "(input target)" in report and "the gradient of input target" in report


def test_a_backward_whose_terms_overflow_at_minus_2v_is_not_called_nonlinear():
    # sinh and cosh of x = -709.8 are -/+8.9e307: the gradient cosh·v1 + sinh·v2 is
    # -2.3e307 at v, but at -2v each term overflows and inf - inf is nan; it failed as
    # `nonlinear (max difference nan)` (gradcheck's ops, torch's and MyGrad's alike).
    import gradcheck

    def sinh_cosh(x):
        return gradcheck.sinh(x), gradcheck.cosh(x)

    x, v = np.array([-709.792712893384]), np.array([1.176374072921123, 1.4379247627892666])
    result = gradcheck.check(sinh_cosh, x, upstream=v)
    assert result.verdict == "passed", result


def test_a_backward_that_makes_nan_of_a_negative_v_still_fails():
    import gradcheck
    from gradcheck import Operation

    class RootOfV(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return 2 * x.data

        def backward_var(self, grad, index, **kwargs):
            with np.errstate(invalid="ignore"):
                return 2 * grad + 0 * np.sqrt(grad)

    result = gradcheck.check(RootOfV, np.array([0.5]))
    assert result.failure is not None and result.failure.kind == "nonlinear", result


def test_a_non_finite_gradient_says_where_and_what():
    # (issue 34, user round 6: "has 1 non-finite value(s)" alone left a reader to
    # find the element; a backward dividing by x is inf at x = 0)
    x = np.array([[0.5, 2.0], [0.0, 1.0]])
    gradient = np.array([[2.0, 0.5], [np.inf, np.nan]])
    failure = first_failure(Stage.GRADIENT, Evidence([x], set(), gradient=gradient))
    assert failure.kind == Kind.NONFINITE_GRADIENT
    assert failure.message == (
        "the gradient of input 0 has 2 non-finite value(s), the first inf at index (1, 0)"
    )
