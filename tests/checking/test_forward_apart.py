"""Issue 34 item 7, last clause: near a singular set, steps that cross it are no
evidence. Where the forward's value at x stands apart from its values a few ulps away
(trace(inv(A)) at a matrix whose LU pivot is a rounding error: 6.9e21 at A, -0.2 with
an entry moved by 1e-36), x lies on the set to within the forward's rounding, every
finite-difference step crosses it, and the backward's gradient, computed from that
forward, is rounding too: the example is skipped, not failed. A wrong backward stays a
failure wherever the forward is continuous, at any scale."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.checking.checker import check
from gradcheck.checking.numerical import Evaluator
from gradcheck.checking.vocabulary import Skip
from tests.support import domain_ops as ops

# Matrices where the bug corpus's trace(inv(A)) false-alarmed (seeds 0-2): a pivot
# of 8e-39 beside 10; two columns 1e-177 apart; two equal columns.
ON_THE_SET = {
    "pivot": [[8.035430577802775e-39, 10.0], [8.035430577802775e-39, 8.035430577802775e-39]],
    "columns": [[0.0, 9.0, 9.0], [9.0, 9.0, 9.0], [0.9921875, 1.4225811740603268e-177, 0.0]],
    "equal": [
        [1.0, 0.0, 0.0, 2.5],
        [0.0, 2.5, 2.5, 2.5],
        [2.5, 2.5, 2.5, 2.5],
        [2.5, 10.0, 10.0, 2.5],
    ],
}


@pytest.mark.parametrize("name", sorted(ON_THE_SET))
def test_a_forward_on_a_singular_set_within_its_rounding_is_skipped(name):
    # (what the forward does there depends on the LAPACK build: with NumPy 2.4.6's,
    # inv raises LinAlgError at some points a step away (a domain error, skipped) and
    # at "pivot" gives -0.1 at A and 1.1e20 a 1e-36 away, read as a kink, where an
    # older build gave 6.9e21 at A, standing apart; none of these may be a failure)
    result = check(ops.TraceInverse, np.array(ON_THE_SET[name]))
    assert result.verdict in ("inconclusive", "not differentiable"), result.failure
    if result.verdict == "inconclusive":
        assert result.note in (Skip.APART, Skip.DOMAIN_ERROR), result.note


@pytest.mark.parametrize("power", [0, -20, 20, -100, 100, -150, -200, 150])
def test_a_wrong_trace_inverse_gradient_fails_at_every_scale(power):
    # (at entries of 2**-150 every step of the levels, which stop 4**-40 below the
    # absolute step, crossed the singular set: "inconclusive" for right and wrong ops
    # alike; the element's own relative step resolves it)
    rng = np.random.default_rng(power + 1000)
    for n in (2, 3, 4):
        a = rng.uniform(-2.0, 2.0, (n, n)) * 2.0**power
        assert check(ops.TraceInverse, a).verdict == "passed"
        for wrong in (ops.TraceInverseTooLarge, ops.TraceInverseUntransposed):
            result = check(wrong, a)
            assert result.verdict == "failed" and result.failure.kind == "mismatch", wrong


def test_a_continuous_forward_does_not_stand_apart():
    # x² at 0 (its change shrinks like h²), |x| at 0 (like h), 1/(x - 1) 2**-30 from
    # its pole (steep but continuous), and a bump narrower than the usual step, which
    # the smaller moves resolve.
    def run(f, x):
        return Evaluator(lambda a, p: f(a[0]), [np.array(x)], {}, np.float64(1.0))

    assert not run(np.square, [0.0]).stands_apart(0, 0)
    assert not run(np.abs, [0.0]).stands_apart(0, 0)
    assert not run(lambda x: 1 / (x - 1), [1 + 2.0**-30]).stands_apart(0, 0)
    assert not run(lambda x: -np.exp(-((x / 1e-9) ** 2)), [0.0]).stands_apart(0, 0)
    a = np.array(ON_THE_SET["pivot"])
    ev = Evaluator(lambda m, p: np.trace(np.linalg.inv(m[0])), [a], {}, np.float64(1.0))
    assert any(ev.stands_apart(0, j) for j in range(4))


def test_a_torch_function_on_the_set_is_skipped():
    torch = pytest.importorskip("torch")

    class TraceInverse(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            inv = torch.linalg.inv(a)
            ctx.save_for_backward(inv)
            return torch.diagonal(inv, dim1=-2, dim2=-1).sum(-1)

        @staticmethod
        def backward(ctx, grad):
            (inv,) = ctx.saved_tensors
            return -grad[..., None, None] * (inv @ inv).mT

    # (torch's forward is measured in its own dtype: its levels read the jump, 6.9e21
    # at A against -0.2 beside it, as steps past the function's scale at every level,
    # and smaller steps as a kink: "not differentiable there", skipped as the numpy
    # twin's "not continuous there" is)
    for name in ("pivot",):
        result = check(TraceInverse, np.array(ON_THE_SET[name]))
        assert (result.verdict, result.note) in (
            ("inconclusive", Skip.APART),
            ("not differentiable", Skip.NOT_DIFFERENTIABLE),
        ), result.failure
