"""Testing the tester: deliberately wrong backwards, to measure what the checker catches.

:mod:`gradcheck.testing.mutants` holds the mutations (the ways real gradient bugs look)
and the one mechanism that applies them to an op class; :mod:`gradcheck.testing.suite`
runs every mutant of every built-in target through :func:`gradcheck.check` and counts
what is caught, what is equivalent to the original, and the false alarms on the
unmutated ops.
"""

from __future__ import annotations

from gradcheck.testing.mutants import MUTATIONS, Mutation, applicable, mutated
from gradcheck.testing.suite import MutantResult, MutationReport, run_suite

__all__ = [
    "MUTATIONS",
    "Mutation",
    "MutantResult",
    "MutationReport",
    "applicable",
    "mutated",
    "run_suite",
]
