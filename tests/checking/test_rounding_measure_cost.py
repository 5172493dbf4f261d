"""What measuring a forward's rounding costs in forward calls (issue 40, items 1 and 4).

A forward that does not compute in a wider dtype (torch and JAX take no long double)
has its rounding measured in its own dtype (the residual along one small move); the
wider dtype is asked once, at x. On main it was asked at four moved points too, each
after a forward call there and a move of every element: for nothing, at every point a
refinement measures (4 of a torch target's forward calls each; on grid_sampler_3d's
samples of a million elements, seconds)."""

from __future__ import annotations

import numpy as np

from gradcheck.checking.numerical import Evaluator


def _sin(narrow_only: bool):
    def forward(arrays, params):
        (a,) = arrays
        if narrow_only and a.dtype != np.float64:
            raise TypeError("no long double here")
        return np.sin(a)

    return forward


X = np.linspace(-2.0, 2.0, 12)


def test_a_forward_without_a_wider_dtype_is_asked_for_it_once():
    ev = Evaluator(_sin(narrow_only=True), [X], None, np.ones(X.size))
    before = ev.calls
    ev.rounding_sizes()
    # the wider dtype asked once at x (the call raises), then the residual along its
    # move: one forward call per offset but the middle one (9); on main 18 (and at
    # each moved point a forward call and a wide one that raised)
    assert ev.calls - before == 1 + 9


def test_a_forward_with_a_wider_dtype_is_measured_at_every_point_as_before():
    ev = Evaluator(_sin(narrow_only=False), [X], None, np.ones(X.size))
    before = ev.calls
    sizes = ev.rounding_sizes()
    # at x (the wide call) and at four moved points (a narrow and a wide call each)
    assert ev.calls - before == 1 + 4 * 2
    assert sizes.shape == X.shape and np.all(np.isfinite(sizes))
