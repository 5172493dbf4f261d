"""The one place op tests compare analytic gradients with numeric ones.

Every gradient test of the op library calls :func:`check_gradients`; to switch the
suite to the project's own checker, change the body of this function only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradcheck as mg
from tests.helpers import assert_grads_match


def check_gradients(
    f: Callable[..., mg.Tensor], *arrays: Any, **tolerances: Any
) -> list[mg.Tensor]:
    """Assert that backprop through ``f`` at ``arrays`` (float64) matches finite
    differences for every input; returns the input tensors with their gradients."""
    return assert_grads_match(f, *arrays, **tolerances)
