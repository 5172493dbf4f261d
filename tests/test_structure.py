"""The structural checks' registry: one function per failure kind, named after it.

(Each kind's deliberately wrong op and its correct twin are in tests/test_check.py.)"""

from __future__ import annotations

import numpy as np

from gradcheck.checking.structure import STRUCTURAL_CHECKS, Evidence, Stage, first_failure
from gradcheck.checking.vocabulary import FAILURE_KINDS, Kind

#: Kinds decided outside the registry: the op raised, or the numbers disagree.
ELSEWHERE = {Kind.FORWARD_ERROR, Kind.BACKWARD_ERROR, Kind.MISSING_GRADIENT, Kind.MISMATCH}


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
