"""An output that is 0 at x and moves with the step is no output known only to its
quantum: a sort at a tie of 0 with 2e-308 (issue 34's bug corpus, a torch sort on a
draw shrunk towards 0) moved one of its values by 2e-308 when a larger step reordered
the tie, which was read as a quantum of rounding of an output of size 0, and floored
every level of the next element by that output's whole derivative: the kink there
was not seen and a correct sort failed as a mismatch."""

from __future__ import annotations

import numpy as np

from gradcheck import check
from tests.support.checker_ops import SortValues, WrongSortValues

TIE = np.array([0.0, 2.2250738585072014e-308, -1e-5, -1e-5])
V = np.array([0.1257302210933933, -0.1321048632913019, 0.6404226504432821, 0.10490012])


def test_a_sort_at_a_tie_with_a_tiny_value_is_no_mismatch():
    result = check(SortValues, TIE, upstream=V)
    assert result.verdict != "failed", result.failure
    assert result.note == "not differentiable there"


def test_a_wrong_sort_is_still_caught_away_from_ties():
    x = np.array([0.3, -1.2, 2.5, 0.9])
    assert check(SortValues, x, upstream=V).verdict == "passed"
    wrong = check(WrongSortValues, x, upstream=V)
    assert wrong.verdict == "failed" and wrong.failure.kind == "mismatch"
