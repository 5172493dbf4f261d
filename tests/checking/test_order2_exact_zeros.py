"""A backward whose outputs are exact zeros at x (not cancellations): a product at two
zero factors, at order 2 (bug_corpus3's ``BugProdTwoZerosOrder2``, after
https://github.com/pytorch/pytorch/issues/106789)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import check

torch = pytest.importorskip("torch")


def _others(x):
    n = x.shape[-1]
    cols = [torch.cat([x[..., :i], x[..., i + 1 :]], -1).prod(-1) for i in range(n)]
    return torch.stack(cols, -1)


def _prod_last(keeps_graph: bool):
    """prod over the last axis; ``keeps_graph=False``: where a row holds two zeros its
    gradient is a constant zero tensor, right in value, its own gradient lost."""

    class ProdLast(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.prod(-1)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            others = _others(x)
            if not keeps_graph:
                two = ((x == 0).sum(-1, keepdim=True) >= 2).expand_as(x)
                others = torch.where(two, torch.zeros_like(x), others)
            return grad[..., None] * others

    return ProdLast


POINTS = [[0.0, 0.0, 2.0], [[0.0, 0.0, 2.0], [1.0, 2.0, 3.0]], [0.0, 0.0], [0.0, 3.0, 0.0, -1.5]]


@pytest.mark.parametrize("x", POINTS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_double_backward_lost_at_two_zero_factors_fails(x, seed):
    # the backward v·x_others is 0 at x in every output, exactly, and a step of a zero
    # factor moves one output by exactly 2h·v·(the others): before, an output 0 at x
    # was read as a cancellation of share 1 (its quantum over |0|), every level's
    # difference as rounding, and the analytic 0 passed against a numeric 2v·u
    result = check(_prod_last(keeps_graph=False), np.array(x), order=2, seed=seed)
    assert result.verdict == "failed", result


@pytest.mark.parametrize("x", POINTS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_product_that_keeps_its_graph_passes_there(x, seed):
    result = check(_prod_last(keeps_graph=True), np.array(x), order=2, seed=seed)
    assert result.verdict == "passed", result
