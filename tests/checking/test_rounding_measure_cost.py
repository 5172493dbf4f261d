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


def _rounding_error_as_drawn(ev, wider, sign, scatter):
    """The moved point's rounding error as main drew it: the scatter pattern from a
    fresh generator of the fixed seed, per input in order (a sign, then a power of
    two), the step sizes made for each point."""
    from gradcheck.checking.levels import step_sizes
    from gradcheck.checking.thresholds import (
        HIGHEST_LEVEL,
        LEVEL_RATIO,
        ROUNDING_PROBE_SEED,
        ROUNDING_PROBE_SPREAD,
    )

    pattern = np.random.default_rng(ROUNDING_PROBE_SEED)
    arrays = list(ev.work)
    for i, a in enumerate(arrays):
        if a.dtype.kind == "f":
            move = step_sizes(a, ev.eps) * LEVEL_RATIO**HIGHEST_LEVEL
            if scatter:
                move = move * pattern.choice([-1.0, 1.0], a.shape)
                move = move * np.exp2(-pattern.integers(0, ROUNDING_PROBE_SPREAD + 1, a.shape))
            arrays[i] = (a + sign * move).astype(a.dtype)
    narrow = np.asarray(ev.call(arrays), dtype=np.float64)
    wide = ev.call([a.astype(wider) if a.dtype.kind == "f" else a for a in arrays])
    return (wide - narrow.astype(wider)).astype(np.float64)


def test_the_scattered_moves_pattern_is_drawn_once_per_shapes(monkeypatch):
    # rounding_sizes moves every element by its largest step (twice) and each element
    # its own way (twice): on main each scattered point drew its pattern of signs and
    # powers of two from a fresh generator of the fixed seed (90 us at 2,000 elements,
    # two per measurement: ~1.5% of verify of x·tanh(x) at 40x50, which measures at
    # each screen's second step). A function of the shapes alone, it is drawn once;
    # the moved points are the same numbers.
    import gradcheck.checking.forward_rounding as fr

    def product(arrays, params):
        a, k, b, c = arrays
        return np.tanh(a) * a + b.sum() * k[0] + np.sin(c)

    # (an integer input, moved by nothing, and a 0-d one: its pattern a 0-d array)
    xs = [
        np.linspace(-2.0, 2.0, 12).reshape(3, 4),
        np.array([2]),
        np.linspace(0.5, 1.0, 5),
        np.array(0.7),
    ]
    ev = Evaluator(product, xs, None, np.ones((3, 4)))
    wider = np.dtype(np.longdouble)
    plain, scattered = ev._probe_moves()
    for sign, moves, scatter in ((1.0, plain, False), (-1.0, scattered, True)):
        got = ev._rounding_error(wider, sign, moves)
        expected = _rounding_error_as_drawn(ev, wider, sign, scatter)
        own = np.abs(expected) <= fr.OUTPUT_ROUNDING_EPS * ev.eps * np.abs(ev.f0)
        np.testing.assert_array_equal(got, np.where(own, 0.0, expected))
    drawn = {"rng": 0}
    rng = np.random.default_rng

    def counting(*args, **kwargs):
        drawn["rng"] += 1
        return rng(*args, **kwargs)

    monkeypatch.setattr(np.random, "default_rng", counting)
    for _ in range(3):
        again = Evaluator(product, xs, None, np.ones((3, 4)))
        np.testing.assert_array_equal(again.rounding_sizes(), ev.rounding_sizes())
    assert drawn["rng"] == 0
