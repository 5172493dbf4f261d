"""The numbers ``gradcheck``'s options show in their help, in a module that imports
nothing: ``gradcheck --help`` and ``gradcheck --version`` must not import NumPy (the
modules that use these numbers do). Each is documented where it is used."""

from __future__ import annotations

__all__ = [
    "DEFAULT_EXAMPLE_TIMEOUT",
    "DEFAULT_REGRESSION_FACTOR",
    "MAX_EXAMPLES",
    "MAX_MIN_DIMS",
    "MAX_SECONDS",
    "MIN_MEMORY",
    "RATIO_FLOOR",
]

#: The most examples one target may ask for: far beyond any useful run (the default is
#: 100), and a bound, so that a typo (10**30) is an error rather than a run without end.
MAX_EXAMPLES = 1_000_000

#: Error ratios below this (a fraction of the tolerance) are treated as this value
#: when a growth factor is computed, so that noise near zero is not a regression.
RATIO_FLOOR = 0.05

#: How much a target's error ratio may grow against a baseline before it is a regression.
DEFAULT_REGRESSION_FACTOR = 1.5

#: The longest one example may take (seconds) unless ``--example-timeout`` says
#: otherwise: far above what a check takes (milliseconds to seconds), so that only a
#: hang reaches it, and a hung op costs a CI job minutes instead of hours.
DEFAULT_EXAMPLE_TIMEOUT = 300.0

#: The most dimensions ``min_dims`` may ask a drawn shape to have at least.
MAX_MIN_DIMS = 8

#: The longest time limit accepted (a year; ``--timeout``, ``--time-budget``...): a bound,
#: so that a typo (1e9) is an error before the run rather than an overflow in it.
MAX_SECONDS = 365 * 24 * 3600.0

#: The smallest memory limit accepted (``--max-memory``): less than a worker needs to
#: import NumPy.
MIN_MEMORY = 256 * 2**20
