"""The evaluator's probes at single points, beside its levels: ``s`` at the point with
one element moved (:meth:`PointProbes.s_moved`), a one-sided derivative at the edge of
the op's domain (:meth:`PointProbes.edge_derivative`), and the derivative at the scale
an analytic gradient implies (:meth:`PointProbes.at_own_scale`).

:class:`PointProbes` is a base of :class:`gradcheck.checking.numerical.Evaluator`: it
reads the evaluator's working inputs, ``v``, the output at the point and its forward.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Container, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from gradcheck.checking.levels import _blows_up_below, _extra_levels, step_sizes, unresolved
from gradcheck.checking.thresholds import (
    APART_ELEMENTS_PROBED,
    APART_LEVEL_BITS,
    APART_LEVELS,
    APART_MAX_LEVELS,
    APART_RESOLVED_BITS,
    APART_STEADINESS,
    APART_STILL_BITS,
    CURVATURE_GROWTH,
    EDGE_AGREEMENT,
    EDGE_LEVELS,
    EDGE_SHRINK,
    HIGHEST_LEVEL,
    KINK_PERSIST_NOISE,
    KINK_PERSISTS,
    KINK_ROUNDS,
    LEVEL_RATIO,
    LOWEST_LEVEL,
    OUTPUT_ROUNDING_EPS,
    OWN_SCALE_BITS,
    OWN_SCALE_MIN_ULPS,
    PROBE_POWER,
    SINGULAR_LEVELS,
    SMALL_X_LEVELS,
    SMALL_X_RESOLVED,
    STEEP_LEVEL_BITS,
    STEEP_RESOLVED_BITS,
)
from gradcheck.engine.graph import no_autodiff

if TYPE_CHECKING:
    from gradcheck.checking.level_scores import LevelScores
    from gradcheck.checking.levels import Estimate


class PointProbes:
    """The probes at single points of :class:`~gradcheck.checking.numerical.Evaluator`."""

    # (set by the Evaluator: its working inputs, the upstream gradient, the output at
    # the point in float64 and the working dtype's eps)
    work: list[np.ndarray]
    v: np.ndarray
    f0: np.ndarray
    eps: float
    input_rounding: np.dtype | None
    _own_dtype_rounding: bool
    #: Whether :meth:`at_one_ulp` is refining on its half-step ladder now.
    _halved = False

    def call(self, arrays: Sequence[np.ndarray]) -> np.ndarray:
        raise NotImplementedError  # (the Evaluator's)

    def _rounding_cap(self) -> float:
        raise NotImplementedError  # (ForwardRounding's)

    def _moved_outputs(
        self, i: int, steps: np.ndarray, plus: np.ndarray, minus: np.ndarray
    ) -> np.ndarray:
        raise NotImplementedError  # (the Evaluator's)

    def rounding_sizes(self) -> np.ndarray:
        raise NotImplementedError  # (ForwardRounding's)

    def refine(
        self, i: int, along: int | np.ndarray, h0: float, jump_threshold: float, scale: float = 1.0
    ) -> Estimate:
        raise NotImplementedError  # (the Evaluator's)

    def below_small_x_levels(
        self, i: int, along: int | np.ndarray, est: Estimate, jump_threshold: float, scale: float
    ) -> Estimate:
        """An element's refinement ``est`` again at its own relative step
        (eps**(1/3)·|x|), where |x| is below LEVEL_RATIO**-:data:`SMALL_X_LEVELS` (8e-25)
        and the levels, which stop that far below the absolute step, left a kink, a low
        order or an error above ``jump_threshold``: the levels at the relative step
        decide where they resolve ``s`` as smooth, its error within ``jump_threshold``
        or :data:`SMALL_X_RESOLVED` of the value (trace(inv(A)) at entries of 2**-150,
        whose every usual step crosses the singular set; the same function as at
        entries of 1 in other units). Else ``est`` as it was (arctan(1/x) at 1e-45,
        which no step below its jump at 0 resolves)."""
        if not (isinstance(along, (int, np.integer)) and 0 < scale < LEVEL_RATIO**-SMALL_X_LEVELS):
            return est
        if not unresolved(est, jump_threshold, scale):
            return est
        with np.errstate(divide="ignore"):  # (0 where |x| is subnormal: no step)
            h = float(np.exp2(np.round(np.log2(np.cbrt(self.eps) * scale))))
        if not h > OWN_SCALE_MIN_ULPS * float(np.spacing(scale)):
            return est  # (x ± h would round to x's few neighbours: nothing to resolve)
        if self._resolves_nothing(i, int(along), h * LEVEL_RATIO**HIGHEST_LEVEL, jump_threshold):
            return est
        own = self.refine(i, int(along), h, jump_threshold, 1.0)
        resolved = max(jump_threshold, SMALL_X_RESOLVED * abs(float(own.value)))
        return own if not own.kink and own.error <= resolved else est

    def _resolves_nothing(self, i: int, j: int, step: float, jump_threshold: float) -> bool:
        """Whether a ladder of steps up to ``step`` along element ``j`` of input ``i``
        resolves nothing within ``jump_threshold`` (2 forward calls): f at x ± ``step``
        is f at x, every output bitwise, and the rounding of the outputs over that step
        (:data:`OUTPUT_ROUNDING_EPS` eps of |f|, as :meth:`reaching`) is above the
        threshold. At the relative step of an element beyond the levels' reach beside
        elements of 1 (x = 2.2e-308, steps of 1.7e-313: var, norm, sinc in the library)
        every level stood still and the ladder (12 to 126 forward calls) resolved
        nothing, an error of 1e296, at each of 533. (A flat element whose outputs are of
        its own size, clip at 2**-150, stands still too, and is resolved as flat.)"""
        f0, absv = self.f0.reshape(-1), np.abs(self.v.reshape(-1))
        with np.errstate(all="ignore"):
            rounding = OUTPUT_ROUNDING_EPS * self.eps * float(absv @ np.abs(f0)) / step
        if not rounding > jump_threshold:
            return False
        plus, minus = np.empty((1, f0.size)), np.empty((1, f0.size))
        row = np.zeros((1, self.work[i].size))
        row[0, j] = step
        if not self._moved_outputs(i, row, plus, minus)[0]:
            return False
        return np.array_equal(plus[0], f0) and np.array_equal(minus[0], f0)

    def go_deeper(
        self, i: int, along: int | np.ndarray, levels: LevelScores, est: Estimate, deeper: int
    ) -> bool:
        """Whether the refinement ``est`` from ``levels`` runs a round of smaller steps
        (:data:`SINGULAR_LEVELS` of them; this is round ``deeper``): where its steps
        blow up below the chosen ones, at an unbounded kink, and for
        :data:`KINK_ROUNDS` rounds at a bounded one, unless the jump J at the smallest
        steps of that round is the jump at the smallest level within
        :data:`KINK_PERSISTS` of it, resolved (a kink at x is one at every step: abs at
        0; a sort at ties, 1 call in 20 more per element). The smoothed tip of a cone
        looks like a kink at steps longer than its width: eigvalsh of a matrix whose
        eigenvalues are 1e-8 apart, at steps down to 3.7e-7 (smooth below 6e-9). An
        element's refinement left unresolved with such a kink above its smallest steps
        (``est.kink_above``: eigenvalues 1e-6 apart, the tip 1e-6 away) runs one round
        too: the levels below the tip were too few to tell truncation from noise."""
        if not est.kink:
            return _blows_up_below(levels, est) or (
                est.kink_above and deeper < KINK_ROUNDS and isinstance(along, (int, np.integer))
            )
        if est.unbounded:
            return True
        if deeper >= KINK_ROUNDS or not isinstance(along, (int, np.integer)):
            return False  # (a direction's kink is bisected down to its elements)
        done = np.flatnonzero(np.isfinite(levels.d) & np.isfinite(levels.jump))
        if not done.size:
            return True
        k = done[np.argmin(levels.hs[done])]
        h, jump = float(levels.hs[k]), float(levels.jump[k])
        small = h * LEVEL_RATIO**-SINGULAR_LEVELS
        there = (self.s_moved(i, int(along), small) + self.s_moved(i, int(along), -small)) / small
        noise = float(levels.noise[k]) * h / small
        persists = abs(there - jump) <= KINK_PERSISTS * abs(jump) + noise
        return not (persists and noise <= KINK_PERSIST_NOISE * abs(jump))

    def tiny_kinks(
        self,
        i: int,
        est: Estimate,
        which: np.ndarray,
        threshold: float,
        jump_threshold: Callable[[np.ndarray], float] | float,
    ) -> tuple[float, np.ndarray]:
        """The jump threshold of the refined gradient (kinks left out) and the
        elements of ``which`` to refine again with it: those below
        LEVEL_RATIO**-:data:`SMALL_X_LEVELS` left a kink where it is larger than
        ``threshold``, the first pass's. Every first-pass step crosses what lies within
        |x| of such an element, and its threshold is of the quotients those steps see,
        not of the gradient: clip(2**150·x, -1, 1) at x of 2**-150 had a threshold of
        0.017 beside gradients of 2**150, and its flat elements, whose own relative
        steps resolve s to 4e33 (a rounding of 3e-12 of the gradient's scale, as at
        x of 1), were taken for kinks (flat arrays of ``est``, as refined)."""
        if not callable(jump_threshold):
            return threshold, which[:0]
        size = np.abs(self.work[i].reshape(-1)[which])
        tiny = which[est.kink[which] & (size > 0) & (size < LEVEL_RATIO**-SMALL_X_LEVELS)]
        if not tiny.size:
            return threshold, tiny
        again = jump_threshold(np.where(est.kink, 0.0, est.value))
        return (again, tiny) if again > threshold else (threshold, tiny[:0])

    def resolved_elsewhere(
        self,
        i: int,
        along: int | np.ndarray,
        est: Estimate,
        h0: float,
        jump_threshold: float,
        scale: float,
    ) -> Estimate:
        """An element's refinement ``est`` (base step ``h0``, size ``scale``) where it is
        unresolved, again on the ladder with a level at one ulp (:meth:`at_one_ulp`), then
        at its own relative step (:meth:`below_small_x_levels`)."""
        est = self.at_one_ulp(i, along, est, h0, jump_threshold)
        return self.below_small_x_levels(i, along, est, jump_threshold, scale)

    def at_one_ulp(
        self, i: int, along: int | np.ndarray, est: Estimate, h0: float, jump_threshold: float
    ) -> Estimate:
        """An element's refinement ``est`` again on the ladder of half the base step
        ``h0``, where ``est`` is unresolved (:func:`unresolved`) and the element's ulp in
        its working dtype lies within the ladder's reach but between two of its levels:
        the half-step ladder has a level of exactly one ulp, the smallest step there is,
        where the ladder of ``h0`` starts at two (its level of half an ulp rounds to 0 or
        to one ulp, and is not used). Its estimate stands where it resolves ``s`` as
        smooth. 1 - cos(x.half()) at |x| of 256 to 300 (float16's ulp 0.25, the base step
        32): the steps 0.5 and 2 alone, 2 already past the cosine's scale, resolved
        nothing, and half of such elements were read as not differentiable."""
        if self._halved or not isinstance(along, (int, np.integer)):
            return est
        x_j = self.work[i].reshape(-1)[int(along)]
        scale = abs(float(x_j))
        # (in the dtype the forward rounds its inputs to, where it does: x is one of its
        # numbers, and a step of its ulp lands on the next)
        ulp = float(np.spacing(np.abs(x_j).astype(self.input_rounding or x_j.dtype)))
        if not (math.isfinite(scale) and ulp > 0) or not unresolved(est, jump_threshold, scale):
            return est
        lowest = h0 * LEVEL_RATIO ** float(LOWEST_LEVEL - _extra_levels(np.array([scale]))[0])
        if ulp < lowest or ulp >= h0 or round(math.log2(h0 / ulp)) % 2 == 0:
            return est  # (below the ladder, at its base or above, or at one of its levels)
        self._halved = True  # (not again inside: its own-step refinements recompute h)
        try:
            half = self.refine(i, int(along), h0 / 2, jump_threshold, scale)
        finally:
            self._halved = False
        return half if not half.kink else est

    def _probe_line(self, i: int, j: int, h0: float, levels: LevelScores) -> None:
        """Where ``s`` is a line at the smallest levels (each within its rounding of
        the smallest one's slope, and J within it too), whether it is a line or the
        flat tread of a staircase: the first level above them off that line by more
        than its rounding, or where every level is on it, the first of the steps
        above the levels' (LEVEL_RATIO times the largest up to
        LEVEL_RATIO**PROBE_POWER times ``h0``), shows a move no smaller step resolves;
        one of no more than rounding may be (:meth:`_rounding_cap` times sum|v|) is a
        quantum, which floors every level (:attr:`LevelScores.line_quantum`). The
        probes run only where no wider dtype computes the forward (where one does,
        :meth:`rounding_sizes` measured the intermediates' rounding already). A move
        of more than that (a kink the steps reach) says nothing.

        0.5·x·(1 + tanh(u)) at x = -7 has q = 1 + tanh(u) a few ulps of 1, the same
        number up to steps of 0.05: every level sees 0.5·q·x, whose derivative is
        0.5·q (the true one is 500 times it), and the quantum, 0.5·|x|·eps, shows at
        the steps that move q; at x = -6.5, q moves at the levels of 3e-5 and up, a
        quantum, and the four levels below see the tread. A smooth function leaves
        the line where its curvature outgrows the rounding: by about the rounding,
        which the noise has already."""
        done = np.flatnonzero(np.isfinite(levels.d) & np.isfinite(levels.jump))
        if done.size < 2 or levels.still[done].any():
            return
        hs, d, jump = levels.hs[done], levels.d[done], levels.jump[done]
        slope = float(d[0])
        with np.errstate(all="ignore"):
            off = hs * (np.abs(d - slope) + np.abs(jump) / 2)
            on = off <= levels.noise[done] * hs
        first_off = int(np.argmin(on)) if not on.all() else done.size
        if first_off < 2:
            return
        cap = self._rounding_cap() * float(np.sum(np.abs(self.v)))
        if first_off < done.size:
            move = float(off[first_off])
            if move <= cap and not _curves_away(off, done, first_off):
                levels.line_quantum = max(levels.line_quantum, move)
            return
        if levels.line_quantum > 0 or not self._own_dtype_rounding:
            # (probed already, at this point's larger levels; or a wider dtype measured
            # the intermediates' rounding at x ± the largest step: rounding_sizes)
            return
        rounding = float(levels.noise[done[-1]] * hs[-1])
        flat = self.work[i].reshape(-1)
        old = flat[j]
        s0 = float(np.vdot(self.v, self.f0))
        absv = np.abs(self.v)
        size0 = float(np.vdot(absv, np.abs(self.f0)))
        for power in range(HIGHEST_LEVEL + 1, PROBE_POWER + 1):
            step = float(np.asarray(old + h0 * LEVEL_RATIO**power, dtype=flat.dtype) - old)
            moved, arithmetic = 0.0, rounding
            try:
                with np.errstate(all="ignore"), no_autodiff:
                    for sign in (1.0, -1.0):
                        flat[j] = old + sign * step
                        out = np.asarray(self.call(self.work), dtype=np.float64)
                        if out.shape != self.f0.shape:
                            return
                        change = float(np.vdot(self.v, out)) - s0 - sign * step * slope
                        moved = max(moved, abs(change))
                        # (the sums and the line round too: eps of their terms)
                        terms = float(np.vdot(absv, np.abs(out))) + size0 + abs(step * slope)
                        arithmetic = max(arithmetic, OUTPUT_ROUNDING_EPS * self.eps * terms)
            except Exception:
                return
            finally:
                flat[j] = old
            if not moved <= cap:
                return
            if moved > arithmetic:
                levels.line_quantum = moved
                return

    def reaching(self, i: int, rows: np.ndarray, h: float) -> np.ndarray:
        """One central difference of ``s`` along each of ``rows`` (each the size of
        input ``i``) at the step ``h``, as rows of (D, J, rounding): J the difference
        of the one-sided quotients, and the rounding that of the outputs the step
        reaches only (:data:`OUTPUT_ROUNDING_EPS` eps of the largest of |f| at x and
        at x ± the step, over h, at the outputs that moved; one that did not move adds
        nothing to the difference), not the forward's measured rounding sizes, which
        are of the neighbourhood the largest refinement steps reach (a median of zeros
        beside a -1 whose output stands still: eps·1 over steps of 1e-21 hid every
        level). Rounding of intermediates larger than the outputs, where it were
        present, moves like 1/h from step to step: its callers ask for steady
        differences. nan where an output has the wrong shape."""
        f0, v = self.f0.reshape(-1), self.v.reshape(-1)
        absv, at = np.abs(v), np.abs(f0)
        plus, minus = np.empty((1, f0.size)), np.empty((1, f0.size))
        found = np.full((len(rows), 3), np.nan)
        for r, row in enumerate(np.asarray(rows, dtype=np.float64)):
            if not self._moved_outputs(i, h * row.reshape(1, -1), plus, minus)[0]:
                continue
            up, down = plus[0], minus[0]
            with np.errstate(all="ignore"):
                touched = (up != f0) | (down != f0)
                size = np.maximum(np.maximum(np.abs(up), np.abs(down)), at)
                rounding = OUTPUT_ROUNDING_EPS * self.eps * float(absv[touched] @ size[touched])
                found[r] = (
                    float((up - down) @ v) / (2 * h),
                    float(((up - f0) + (down - f0)) @ v) / h,
                    rounding / h,
                )
        return found

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

    def stands_apart(self, i: int, j: int, absorbed: float = 0.0) -> bool:
        """Whether ``s`` at x stands apart from its neighbours along element ``j`` (flat)
        of input ``i``: moves of the element from its ulp up to its usual step (by
        2**:data:`APART_LEVEL_BITS` each) find :data:`APART_LEVELS` consecutive ones at
        which ``s`` moves the same way up and down, by amounts within a factor of 2 of
        each other, far beyond its rounding (2**:data:`APART_RESOLVED_BITS` of it) and
        holding still (within :data:`APART_STEADINESS` x), while at every smaller move
        it moves by as much at least on one side. Then the forward's value at x is not
        the limit of its values around it, however small the move: x lies on a singular
        set to within the forward's rounding (trace(inv(A)) at a matrix whose LU pivot
        is a rounding error: 6.9e21 at A, -0.2 with an entry moved by 1e-36, and
        anything of that size at moves of a few ulps), and every finite-difference step
        crosses that set. A smooth function's change shrinks with the move (like h², as
        x² at 0, or h), a kink's too, and a narrow bump that larger moves step over is
        smooth at the smaller ones, which bound its change.

        ``absorbed``: below it, a move at which ``s`` stood exactly still both ways
        was absorbed by the forward's rounding, and is passed over (no sign of
        continuity), with the next move 2**:data:`APART_STILL_BITS` times as large."""
        size = float(np.vdot(np.abs(self.v), np.abs(self.rounding_sizes())))
        floor = math.ldexp(self.eps * size, APART_RESOLVED_BITS)
        flat = self.work[i].reshape(-1)
        h = float(np.spacing(np.abs(flat[j])))
        top = float(step_sizes(flat[[j]], self.eps)[0])
        below, run = math.inf, 0
        for _ in range(APART_MAX_LEVELS):
            if h > top:
                break
            up, down = self.s_moved(i, j, h), self.s_moved(i, j, -h)
            if up == down == 0 and h < absorbed:
                h = math.ldexp(h, APART_STILL_BITS)
                continue
            small, large = sorted((abs(up), abs(down)))
            if not math.isfinite(large):
                return False
            apart = up * down > 0 and 2 * small >= large and small > floor
            if apart and large <= APART_STEADINESS * below:
                run += 1
                if run >= APART_LEVELS:
                    return True
            else:
                run = 0
            below = min(below, large)
            if below <= floor:
                return False  # (continuous at these moves: no jump above stands apart)
            h = math.ldexp(h, APART_LEVEL_BITS)
        return False

    def unbounded_along(self, i: int, elements: Sequence[int] | np.ndarray) -> bool:
        """Whether the refined derivative along each of ``elements`` (flat indices) of
        input ``i`` is unbounded, with no finite one-sided derivative from inside the
        op's domain either (:meth:`edge_derivative`)."""
        flat = self.work[i].reshape(-1)
        for j, h in zip(elements, step_sizes(flat[elements], self.eps)):
            est = self.refine(i, int(j), float(h), 0.0, abs(float(flat[j])))
            if not est.unbounded or self.edge_derivative(i, int(j), float(h)) is not None:
                return False
        return True

    def apart_somewhere(
        self, i: int, first: Iterable[int], const: Container[int], resolved: bool = False
    ) -> bool:
        """Whether ``s`` at x stands apart from its neighbours (:meth:`stands_apart`)
        along some element: the flat indices ``first`` of input ``i`` first, then that
        input's others, then the other float inputs' that are not in ``const``, at
        most :data:`APART_ELEMENTS_PROBED` of them.

        ``resolved``: moves at which ``s`` stands exactly still, below
        2**:data:`APART_RESOLVED_BITS` eps of the inputs' largest |element| (at least
        1), are passed over: eigh of diag(-2, -2, 0) takes an off-diagonal entry
        below 2e-16 for 0 (its vectors stand still), and rotates its degenerate pair
        by 45 degrees at 1.8e-15 and at every move above; from the element's ulp at 0
        (5e-324) the moves stood still first, which read as continuity. Moves the
        forward resolves still count (log|det| 1e-300 from singular is continuous
        at moves below 1e-300)."""
        absorbed = 0.0
        if resolved:
            floats = [np.abs(a[np.isfinite(a)]) for a in self.work if a.dtype.kind == "f"]
            size = max([1.0, *(float(a.max()) for a in floats if a.size)])
            absorbed = math.ldexp(self.eps * size, APART_RESOLVED_BITS)
        order = [(i, int(j)) for j in first] + [(i, j) for j in range(self.work[i].size)]
        order += [
            (k, j)
            for k, x in enumerate(self.work)
            if k != i and k not in const and x.dtype.kind == "f"
            for j in range(x.size)
        ]
        seen: set[tuple[int, int]] = set()
        for k, j in order:
            if (k, j) in seen:
                continue
            seen.add((k, j))
            if len(seen) > APART_ELEMENTS_PROBED:
                break
            if self.stands_apart(k, j, absorbed):
                return True
        return False

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

    def steep_beyond(self, i: int, elements: Sequence[int] | np.ndarray, top: float) -> bool:
        """Whether the forward's own central differences along one of ``elements``
        (flat indices) of input ``i`` settle, at steps from the usual one down (by
        2**:data:`STEEP_LEVEL_BITS` each) to the smallest the dtype has, on a slope of
        more than ``2**top``: two consecutive steps resolve ``s`` (a move of
        2**:data:`STEEP_RESOLVED_BITS` times its rounding) and agree within a factor
        of 2. log|det| at [[1, 0], [10, 2.2e-308]] has the slope -10/det = -4.5e308
        along a01 once the steps are below det/10: its gradient is not a float64
        there. A jump (s moves by J at every step: a slope of J/2h) doubles its slope
        at each halving."""
        size = float(np.vdot(np.abs(self.v), np.abs(self.f0)))
        floor = math.log2(self.eps * max(size, float(np.finfo(np.float64).tiny)))
        floor += STEEP_RESOLVED_BITS
        flat = self.work[i].reshape(-1)
        for j, h in zip(elements, step_sizes(flat[np.asarray(elements, int)], self.eps)):
            last, h = None, float(h)
            while h > 0:
                moved = abs(self.s_moved(i, int(j), h) - self.s_moved(i, int(j), -h))
                if not (math.isfinite(moved) and moved > 0 and math.log2(moved) > floor):
                    last = None
                else:
                    slope = math.log2(moved) - math.log2(2 * h)
                    if last is not None and abs(slope - last) <= 1 and min(slope, last) > top:
                        return True
                    last = slope
                h = math.ldexp(h, -STEEP_LEVEL_BITS)
        return False


def _curves_away(off: np.ndarray, done: np.ndarray, first: int) -> bool:
    """Whether the departure of ``s`` from the smallest levels' line, ``off`` (one per
    level of ``done``), grows from the first level off it (``first``) to the next by
    at least :data:`CURVATURE_GROWTH`: the function's own curvature (s''·h²/2, 16 times
    per level), not the tread of a staircase, whose departure grows with the step
    (4 times per level) or stays one quantum. sigmoid(x.half()) at 1.9375 leaves its
    line at the step 0.25 by s''·h²/2 = 0.0029, eleven half-ulps of float16 there and
    below the rounding cap: read as a quantum, it floored every level by it, and the
    pair of steps 4 and 16, agreeing by chance with the one below where sigmoid
    saturates, gave 0.1159 against the derivative 0.1101."""
    nxt = first + 1
    if nxt >= done.size or done[nxt] != done[first] + 1:
        return False
    return bool(off[nxt] >= CURVATURE_GROWTH * off[first])
