"""The evaluator's probes at single points, beside its levels: ``s`` at the point with
one element moved (:meth:`PointProbes.s_moved`), a one-sided derivative at the edge of
the op's domain (:meth:`PointProbes.edge_derivative`), and the derivative at the scale
an analytic gradient implies (:meth:`PointProbes.at_own_scale`).

:class:`PointProbes` is a base of :class:`gradcheck.checking.numerical.Evaluator`: it
reads the evaluator's working inputs, ``v``, the output at the point and its forward.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from gradcheck.checking.thresholds import (
    EDGE_AGREEMENT,
    EDGE_LEVELS,
    EDGE_SHRINK,
    LEVEL_RATIO,
    OWN_SCALE_BITS,
    OWN_SCALE_MIN_ULPS,
)


class PointProbes:
    """The probes at single points of :class:`~gradcheck.checking.numerical.Evaluator`."""

    # (set by the Evaluator: its working inputs, the upstream gradient, the output at
    # the point in float64 and the working dtype's eps)
    work: list[np.ndarray]
    v: np.ndarray
    f0: np.ndarray
    eps: float

    def call(self, arrays: Sequence[np.ndarray]) -> np.ndarray:
        raise NotImplementedError  # (the Evaluator's)

    def edge_derivative(self, i: int, j: int, h: float) -> float | None:
        """At the edge of the op's domain: the one-sided derivative of ``s`` along
        element ``j`` of input ``i``, when the output is not finite a step to one side
        at every one of :data:`EDGE_LEVELS` steps (``h``, ``h/4``...), and is to the
        other, where Richardson's first-order differences agree to
        :data:`EDGE_AGREEMENT`; else None (a kink, a pole, or no edge: the central
        estimate said it all). ``x**1.5`` at 0 has the right-hand derivative 0, which
        a backward giving NaN there misses."""
        hs = [h / LEVEL_RATIO**k for k in range(EDGE_LEVELS)]

        def s_at(step: float) -> float:
            return self.s_moved(i, j, step)

        for side in (1.0, -1.0):
            if any(math.isfinite(s_at(-side * step)) for step in hs):
                continue
            q = [s_at(side * step) / (side * step) for step in hs]
            if not all(math.isfinite(value) for value in q):
                continue
            # The quotients converge (to a finite limit) when their changes shrink
            # level after level (like h: a smooth edge; like sqrt(h): x**1.5 at 0), or
            # are already below EDGE_AGREEMENT of them; an infinite derivative (sqrt
            # at 0: q ~ h**-0.5) makes them grow.
            d = [abs(q[k + 1] - q[k]) for k in range(len(q) - 1)]
            shrinking = all(d[k + 1] <= EDGE_SHRINK * d[k] for k in range(len(d) - 2, len(d) - 1))
            settled = max(d[-2:]) <= EDGE_AGREEMENT * abs(q[-1]) + self.eps * abs(q[0])
            if settled or (shrinking and d[-2] <= EDGE_SHRINK * d[-3]):
                return q[-1]
        return None

    def at_own_scale(self, i: int, j: int, predicted: float) -> tuple[float, float] | None:
        """The derivative of ``s`` along element ``j`` of input ``i`` from central
        differences at steps far below the usual ones, where a gradient of size
        ``predicted`` says ``s`` varies: 2**-:data:`OWN_SCALE_BITS` of |s| / |predicted|
        (and a quarter of that), as (value, the two steps' difference); None where such
        steps are below the element's ulps or the outputs are not finite.

        The usual steps (eps**(1/3) of max(|x|, 1)) may cross a singular set that lies
        closer (a solve with a 4×4 matrix of entries 2e-48 beside ones, whose solution
        moves by its own size when an entry moves by 1e-48): there they measure another
        function than the one at x, and say nothing against the gradient."""
        x0 = self.work[i].reshape(-1)[j]
        size = float(np.sum(np.abs(self.v) * np.abs(self.f0)))
        if not (size > 0 and math.isfinite(size) and predicted and math.isfinite(predicted)):
            return None
        values = []
        for k in (0, 2):
            h = float(np.exp2(np.round(np.log2(size / abs(predicted)) - OWN_SCALE_BITS - k)))
            if not h > OWN_SCALE_MIN_ULPS * float(np.spacing(np.abs(x0))):
                return None
            value = (self.s_moved(i, j, h) - self.s_moved(i, j, -h)) / (2 * h)
            if not math.isfinite(value):
                return None
            values.append(value)
        return values[1], abs(values[1] - values[0])

    def s_moved(self, i: int, j: int, step: float) -> float:
        """``s`` at element ``j`` of input ``i`` moved by ``step``, less ``s`` at x:
        ``<v, f(x + step·e_j) - f(x)>``; nan where the forward raised there or an
        output is not finite."""
        flat = self.work[i].reshape(-1)  # (a view: `work` arrays are contiguous copies)
        x0 = flat[j].copy()
        flat[j] = x0 + flat.dtype.type(step)
        try:
            out = np.asarray(self.call(self.work), dtype=np.float64)
        except Exception:
            return math.nan
        finally:
            flat[j] = x0
        if out.shape != self.f0.shape or not np.all(np.isfinite(out)):
            return math.nan
        return float(np.vdot(self.v, out - self.f0))
