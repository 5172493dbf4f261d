"""The one place op tests compare analytic gradients with numeric ones.

Every gradient test of the op library calls :func:`check_gradients`, which runs the
project's own checker (:func:`gradcheck.check`: every structural check, then finite
differences with Richardson extrapolation) and fails with its report. The engine's core
tests use the independent helper in ``tests/support/helpers.py`` instead, so that the checker
and the engine never vouch only for each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import gradcheck as mg
from gradcheck.frontend.report import format_result


def check_gradients(f: Callable[..., mg.Tensor], *arrays: Any, **settings: Any) -> mg.CheckResult:
    """Assert that the gradients ``f``'s backward gives at ``arrays`` (float64 unless
    given otherwise) are right; returns the check's result.

    ``settings`` go to :func:`gradcheck.check` (``rtol``, ``atol``, ``mode``...). A point
    where ``f`` is not differentiable fails the test too: op tests choose their
    inputs away from kinks, and test kink policies with exact values.
    """
    __tracebackhide__ = True
    arrays = tuple(
        a if isinstance(a, np.ndarray) and a.dtype.kind == "f" else np.asarray(a, dtype=float)
        for a in arrays
    )
    result = mg.check(f, *arrays, **settings)
    # (Only empty arrays: nothing to compare, which the op tests draw on purpose.)
    empty = all(a.size == 0 for a in arrays) and result.note == "nothing to compare"
    assert result.verdict == "passed" or empty, format_result(result)
    return result
