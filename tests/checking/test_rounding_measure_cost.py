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


def test_the_residuals_projection_and_move_are_made_once(monkeypatch):
    # Each residual measurement factored two 10x5 and 10x7 Vandermonde matrices (QR)
    # and drew its move's pattern from a fresh generator again (on main: 2 QR and a
    # generator per measurement; a torch target's search measures ~110 times, 4% of
    # its CPU); the numbers are the same.
    import gradcheck.checking.forward_rounding as fr

    ev = Evaluator(_sin(narrow_only=True), [X], None, np.ones(X.size))
    first = ev._rounding_residual()
    fr._off_polynomials.cache_clear()
    counted = {"qr": 0, "rng": 0}
    qr, rng = np.linalg.qr, np.random.default_rng

    def counting(name, real):
        def call(*args, **kwargs):
            counted[name] += 1
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(np.linalg, "qr", counting("qr", qr))
    monkeypatch.setattr(np.random, "default_rng", counting("rng", rng))
    for _ in range(3):
        again = ev._rounding_residual()
        assert again is not None and first is not None
        np.testing.assert_array_equal(again, first)
    moved = [X + 0.25]
    ev._rounding_residual(moved, np.sin(moved[0]))
    assert counted == {"qr": 2, "rng": 0}
