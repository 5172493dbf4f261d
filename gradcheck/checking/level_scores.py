"""The differences of one element's refinement at every level of its ladder
(:class:`LevelScores`), and the rounding quanta of the outputs they moved; what
:func:`gradcheck.checking.levels._combine` makes an estimate of. Filled by
:meth:`gradcheck.checking.numerical.Evaluator.refine`."""

from __future__ import annotations

import math

import numpy as np

from gradcheck.checking.thresholds import LEVEL_RATIO, LOWEST_LEVEL, OUTPUT_ROUNDING_EPS

#: Up to this many output elements over all levels of one refinement, the levels'
#: arithmetic runs once for all of them (see
#: :meth:`~gradcheck.checking.numerical.Evaluator.refine`).
_BATCHED_LEVELS_MAX_SIZE = 1 << 16


class LevelScores:
    """One refinement's levels: per level the central difference ``d``, the jump ``J``,
    the modelled rounding noise and the step (nan, nan, 0, 1 where a level was not
    evaluated); and the buffers of outputs at x ± h not yet scored.

    The forward calls only copy their outputs into rows; the arithmetic on them
    (:meth:`Evaluator._score_levels`) runs once for all levels when their outputs are
    small (profiled: per level, ~20 NumPy calls on a small output cost more than its
    two forward calls), and after each level when they are large (then the calls' cost
    is nothing, and all levels at once would hold several arrays of n outputs).
    """

    def __init__(self, n: int, shape: tuple[int, ...]) -> None:
        self.shape = shape
        self.batch = n if n * math.prod(shape) <= _BATCHED_LEVELS_MAX_SIZE else 1
        self.plus = np.empty((self.batch, *shape))
        self.minus = np.empty((self.batch, *shape))
        self.pending: list[int] = []  # levels whose outputs are in the first rows
        self.d = np.full(n, np.nan)
        self.jump = np.full(n, np.nan)
        self.noise = np.zeros(n)
        self.hs = np.ones(n)
        #: Each level's resolution where ``s`` moves in quanta (:meth:`quantize_noise`):
        #: part of the error estimate, and of the noise that a kink's J stands out of
        #: (not of what a jump of s, D·h, stands out of: see :func:`_is_kink`).
        self.floor = np.zeros(n)
        #: Each level's step as a power of LEVEL_RATIO times the base step.
        self.powers = np.arange(n) + LOWEST_LEVEL
        #: Levels at which no output moved at all (the step was absorbed somewhere).
        self.still = np.zeros(n, dtype=bool)
        #: Whether the levels that stood still did so because ``s`` is flat there, not
        #: because it moves in quanta of rounding: the levels that moved moved by more
        #: than rounding could (see :meth:`quantize_noise`).
        self.flat = False
        #: The size of the intermediates a step of the moved element (or direction)
        #: may have been absorbed in, where no output moved: ``max(|x_j|, 1)``. The
        #: element itself is one (35 + 1e-15 - 35), and 1 is in most formulas (1 + δ,
        #: exp near 0); the steps are relative to it, so the noise it gives at a still
        #: level is eps**(2/3)·<|v|, 1> / 2 over the level's multiplier, at every scale.
        self.magnitude = 1.0
        #: Whether the moved input is one the forward is linear in (at order 2, ``v``;
        #: see :meth:`quantum_sizes`).
        self.along_linear = False
        #: Whether the modelled noise is a bound of the outputs' rounding, not a scale
        #: of it (:attr:`Evaluator.in_inner`): a pair's own error is then read from
        #: below only (see :func:`_pair_errors`).
        self.tight = False
        #: The rounding noise of every level where the forward is linear in the moved
        #: element (a backward in its upstream gradient: :meth:`Evaluator.linear_noise`).
        self.linear_noise = 0.0
        #: Per output, the rounding size measured around the largest step's points
        #: (:meth:`Evaluator._step_point_sizes`), where it was.
        self.point_sizes: np.ndarray | None = None
        #: Where ``s`` was a line at the smallest levels, the move by which a larger
        #: step first left it, within rounding (see :meth:`Evaluator._probe_line`).
        self.line_quantum = 0.0
        #: The largest step of the moved element that the forward's rounding of its
        #: inputs absorbs (half the element's ulp in the dtype it rounds them to, see
        #: :attr:`Evaluator.input_rounding`; 0 where none is known): a level of no
        #: larger a step that stood still shows no flatness (see :meth:`quantize_noise`).
        self.absorbed = 0.0
        #: Per output (flat), where it stood still at every level and moved by no
        #: more than rounding at a larger step of this element (see
        #: :meth:`Evaluator._probe_unmoved`): that move, else 0.
        self.probed: np.ndarray | None = None
        #: Per output (flat): the smallest step at which it stood still, the largest at
        #: which it moved, and the least it moved by there (see :meth:`note_outputs`).
        #: Each level's difference's share of the outputs' own precision, where they
        #: move in quanta far coarser than their rounding (see :meth:`Evaluator._score_levels`).
        self.precision = np.zeros(n)
        self.still_step = np.full(math.prod(shape), np.inf)
        self.moved_step = np.zeros(math.prod(shape))
        self.least_move = np.full(math.prod(shape), np.inf)

    def note_outputs(
        self, touched: np.ndarray, changes: tuple[np.ndarray, np.ndarray], hs: np.ndarray
    ) -> None:
        """Keep, per output, where it stood still and where it moved (``touched``, one
        row per level of steps ``hs``), and its least move (the larger of its changes
        up and down, ``changes``) at a level where it moved."""
        rows = len(hs)
        touched = touched.reshape(rows, -1)
        if rows == 1:  # (a large output's level: no array of its size made here)
            self._note_one(touched[0], changes, float(hs[0]))
            return
        step = np.asarray(hs, dtype=np.float64)[:, None]
        with np.errstate(invalid="ignore"):
            up, down = (np.abs(c.reshape(rows, -1)) for c in changes)
            move = np.where(touched, np.fmax(up, down), np.inf)
        np.minimum(
            self.still_step, np.where(touched, np.inf, step).min(axis=0), out=self.still_step
        )
        np.maximum(self.moved_step, np.where(touched, step, 0.0).max(axis=0), out=self.moved_step)
        np.fmin(self.least_move, move.min(axis=0), out=self.least_move)

    def _note_one(
        self, touched: np.ndarray, changes: tuple[np.ndarray, np.ndarray], step: float
    ) -> None:
        """:meth:`note_outputs` of one level, in place: ``changes`` (its own arrays,
        which this changes) become the moves."""
        up, down = (c.reshape(-1) for c in changes)
        with np.errstate(invalid="ignore"):
            np.abs(up, out=up)
            np.fmax(up, np.abs(down, out=down), out=up)
        still = ~touched
        np.minimum(self.still_step, step, out=self.still_step, where=still)
        # (moved_step is 0 or a step, never negative: as the maximum with 0 elsewhere)
        np.maximum(self.moved_step, step, out=self.moved_step, where=touched)
        # An output that moved by nan keeps its least move, as np.fmin keeps it.
        np.fmin(self.least_move, up, out=self.least_move, where=touched)

    def quantize_outputs(
        self,
        absv: np.ndarray,
        known: np.ndarray | None,
        ulps: np.ndarray,
        cap: float,
        seeded: np.ndarray | None = None,
    ) -> np.ndarray | None:
        """:meth:`quantize_noise` output by output: an output that stood still at some
        step and moved at a larger one depends on the element, and moves in quanta of
        its intermediates (at order 2, a cross-entropy's backward at logits [30, 0, -1]
        is softmax - onehot, whose first output p0 - 1 = -1.3e-13 rounds at the ulps of
        p0, 1e-16: it stands still at the smaller steps while the other outputs, of the
        same size, move smoothly, so no level stands still as a whole). At every level
        it resolves the element's effect on it only to about its least move (its
        quantum) over 2h: that, times |v| of it, over those outputs, is a floor of each
        level's resolution, as a level's quantum is.

        An output that did not move at any level here may still depend on the element,
        below its quantum (p0 - 1 and the smallest logit: its effect, 1e-29 per step,
        never shows): where another element's refinement at this point showed that
        output moving in quanta far coarser than its own rounding (``known``, against
        ``ulps``, eps of each output: intermediates far larger than the output, which is
        what a cancellation is), that quantum counts too. (Outputs of their own
        rounding's quanta are left out: an elementwise op's other outputs, which do not
        depend on the element, would blunt every element by theirs.)

        A least move above ``cap`` is no quantum of rounding but the function's own
        (a clip's bound that a large step crosses): such an output is left out.
        ``seeded``: the quanta the point's measured rounding shows (see
        :meth:`Evaluator._seed_quanta`), for the outputs none was seen of. The outputs
        the element's own probe moved (:attr:`probed`) count with their moves.

        Returns ``known`` with the quanta this refinement showed."""
        quantized = (self.still_step < self.moved_step) & (self.least_move <= cap)
        share = float(np.vdot(absv[quantized], self.least_move[quantized]))
        floor_known = known
        if seeded is not None:
            floor_known = seeded if known is None else np.where(known > 0, known, seeded)
        unmoved_share = np.zeros(absv.shape) if self.probed is None else self.probed
        if self.tight:
            # Each output is a number of the inner dtype at x ± h: one that stood still
            # at the smaller steps and moved at a larger one depends on the element,
            # and where it stood still its change was below its own ulp (``ulps``),
            # which the levels' noise (the touched outputs' ulps) leaves out.
            # softmax(x.half()) at [-8.8, 5.3]: p1 is 1 in float16 up to steps of 4
            # of x0, and x0's share in it, -p0·p1·v1 = 5e-7, is what they lose.
            dependent = self.still_step < self.moved_step
            unmoved_share = np.maximum(unmoved_share, np.where(dependent, ulps, 0.0))
        if floor_known is not None:
            unmoved = (self.moved_step == 0) & (floor_known > OUTPUT_ROUNDING_EPS * ulps)
            unmoved_share = np.maximum(unmoved_share, np.where(unmoved, floor_known, 0.0))
        # An output this element's own probe moved (``probed``) counts whatever its
        # quantum: it depends on the element, below the levels' reach. softmax(x.half())
        # at [-8.8, 5.3] has p1 = 1 in float16 at every level of x0, and the share of
        # x0 in it, -p0·p1·v1 = 5e-7, is what the levels lose; its quantum is float16's
        # own ulp of 1, which the rule for other elements' quanta leaves out.
        share += float(np.vdot(absv, unmoved_share))
        if share > 0:
            done = np.isfinite(self.d) & np.isfinite(self.jump)
            self.floor = np.maximum(self.floor, np.where(done, share / (2 * self.hs), 0.0))
        if not quantized.any():
            return known
        if known is None:
            known = np.zeros(self.least_move.shape)
        seen = np.where(quantized, self.least_move, 0.0)
        return np.where((known > 0) & (seen > 0), np.minimum(known, seen), known + seen)

    def floor_cancelled(self, zero: np.ndarray, absv: np.ndarray, eps: float, size: float) -> None:
        """Where the forward is a backward (order 2: ``B(x, w) = wᵀJ``, linear in its
        upstream gradient ``w``, whose largest |element| is ``size``), its outputs
        that are exactly 0 at x (``zero``, flat) and stood still at every level and
        probe of this element while ``w`` is not 0: each is a term multiplied by 0
        (relu's ``w·0``, whose true derivative is 0) or a cancellation of terms of the
        size of ``w`` (a saturated softmax's ``y·(w - Σ w·y)`` with y exactly 1, a
        cross-entropy's ``p·w - w`` with p exactly 1), which no step moves, no probe,
        and no measure of rounding shows (the cancellation is exact at every point
        they reach). Finite differences cannot tell the two apart: each such output's
        dependence on the element is resolved no finer than eps of terms of ``w``'s
        size (along ``w`` itself, of ``w`` moved by the step), over 2h, weighted by
        ``|v|`` of it: a floor of each level. softmax(x / 0.5) at the column [100, 0]
        has its double backward's elements of 1e-87, which the levels' own noise
        (1e-98, the rounding of the outputs that moved) took for resolved."""
        zero = zero.reshape(-1) & (self.moved_step == 0)
        if self.probed is not None:
            zero &= self.probed == 0
        if not zero.any() or not (size > 0 and math.isfinite(size)):
            return  # (at w = 0 the backward is an exact 0 wherever x is)
        share = eps * float(np.sum(absv.reshape(-1)[zero]))
        done = np.isfinite(self.d) & np.isfinite(self.jump)
        terms = np.maximum(size, self.hs) if self.along_linear else size
        with np.errstate(all="ignore"):
            self.floor = np.maximum(self.floor, np.where(done, share * terms / (2 * self.hs), 0.0))

    def quantize_noise(self, known: float | None = None, cap: float = math.inf) -> float | None:
        """Where some level's outputs did not move at all and a level of a larger step
        did, ``s`` moves in quanta (its forward's intermediates round far coarser than
        its outputs: a cross-entropy at a logit of 30 is log(1 + 1e-13), which moves
        only when the sum crosses an ulp of 1), and no level resolves a change below
        the smallest one seen: each level's noise is at least that quantum over 2h.
        Where the forward runs in a wider dtype its rounding measure shows this too;
        this needs no such dtype (torch and JAX targets in float64).

        A least move above ``cap`` (the most that the rounding of the outputs ``s``
        sums may move it by), where the one-sided quotients of the largest step that
        moved differ by at least their mean (|J| >= |D|), is no quantum of rounding but
        the function's own: s stood still at the smaller steps because it does not
        depend on the element there, and the larger ones reach where it does
        (maximum(x, y) with the element the smaller of two inputs 1e-6 apart: still up
        to steps of 5e-7, moving by 0.1 at 2e-6, on one side only). Such levels floor
        nothing; the levels that stood still are evidence (:attr:`flat`). Where both
        sides move alike, s is smooth at those steps and the smaller ones were absorbed
        in an intermediate whose rounding nothing measured ((x + 1e6) - 1e6 at 0, from
        a forward no wider dtype computes): the quantum floors the levels, as before.

        Where no level moved at all, the quantum ``known`` from another element of the
        same point (the outputs' quanta are the point's) applies. Returns the quantum
        found here, or None."""
        # Levels whose steps the rounding of the inputs absorbs (x ± h is x again)
        # stood still for that, and say nothing of s: not its flatness, nor a
        # quantum (1 - cos(x.half()) at 223, whose float16 ulp is 0.125, stands
        # still at steps up to 1/16 and moves on both sides, as cos does, at 1/4).
        # A step of half that ulp lands on a tie, which rounds to even: one side moves
        # by a whole ulp, the other not at all (1 - cos(x.half()) at 5.16015625, ulp
        # 2**-8: D twice the derivative at the step 2**-9), and says nothing either.
        lost = self.hs <= self.absorbed
        self.d[lost] = self.jump[lost] = np.nan
        done = np.isfinite(self.d) & np.isfinite(self.jump)
        still, moving = done & self.still, done & ~self.still
        quantum = None
        self.flat = False
        if still.any() and moving.any() and self.hs[still].min() < self.hs[moving].max():
            with np.errstate(all="ignore"):
                # s(x ± h) - s(x) = ±h·D + h·J/2
                up = self.hs * (self.d + self.jump / 2)
                down = self.hs * (self.jump / 2 - self.d)
                change = np.maximum(np.abs(up), np.abs(down))
            quantum = float(change[moving].min())
            top = int(np.flatnonzero(moving)[np.argmax(self.hs[moving])])
            # (one side of the largest moving step moves by far more than the other)
            lopsided = abs(self.jump[top]) >= abs(self.d[top])
            if self.absorbed > 0:
                # (a forward rounding its inputs to float16 rounds its intermediates
                # too, and where one side of a step crosses a quantum and the other
                # does not it looks lopsided: every step that moved must be so. 1 -
                # cos(x.half()) at 0.0625, whose cos rounds at 2**-11, is lopsided at
                # 2**-8 and at 0.25, past cos's minimum, but not at 2**-6)
                jumps = np.abs(self.jump[moving])
                lopsided = bool(np.all(jumps >= np.abs(self.d[moving])))
                # (nor where J grows with the step as s''·h does, from the second
                # largest step that moved to the largest: steps past a minimum nearer
                # than they are long, 1 - cos(x.half()) at 2**-6, moving only from
                # 2**-6 on, are lopsided by its curvature, where a hinge's J is the
                # one side's move, as steady as D)
                growing = jumps.size > 1 and jumps[-1] >= LEVEL_RATIO / 2 * jumps[-2]
                lopsided = lopsided and not growing
            self.flat = lopsided and not quantum <= cap
            if self.flat:
                return None
            self.floor = np.where(done, quantum / (2 * self.hs), 0.0)
        elif known is not None and still.any() and not moving.any():
            self.floor = np.where(done, known / (2 * self.hs), 0.0)
        return quantum

    def quantum_sizes(
        self, at: np.ndarray, plus: np.ndarray, minus: np.ndarray, linear: bool
    ) -> np.ndarray:
        """Per output (flat), the size its known quantum is a share of at one level:
        the largest of its sizes at x (``at``) and at the level's points (``plus``,
        ``minus``), or, where the forward is a backward (``linear``), its size at x.

        A backward's output rounds in proportion to ``v``: 0 at v = 0 at every point,
        and moved along ``v`` its share of the quantum stays whole there. One that is 0
        at x while v is not, moved along x, is an exact zero, not a cancellation (the
        backward of a product at two zero factors, v·x0·x2 at x0 = x1 = 0, which a step
        of x0 moves by exactly 2h·v·x2): it is known to its quantum over its size at
        the points, as at order 1. Its share at x alone (of 0: whole) took every
        level's difference for rounding, and a double backward that drops the term
        (0 for 2v) passed."""
        moved = np.fmax(np.abs(plus), np.abs(minus)).reshape(-1)
        if not linear:
            return np.fmax(moved, at)
        if self.along_linear:
            return at
        return np.where(at == 0, moved, at)

    def below(self, more: int) -> LevelScores:
        """These levels, scored, with ``more`` levels of smaller steps before them,
        not yet run (no level may be pending)."""
        new = LevelScores(len(self.d) + more, self.shape)
        for name in ("d", "jump", "noise", "hs", "still"):
            getattr(new, name)[more:] = getattr(self, name)
        new.floor[more:] = self.floor
        new.precision[more:] = self.precision
        new.magnitude = self.magnitude
        new.tight = self.tight
        new.linear_noise = self.linear_noise
        new.along_linear = self.along_linear
        new.point_sizes = self.point_sizes
        new.line_quantum = self.line_quantum
        new.absorbed = self.absorbed
        new.probed = self.probed
        new.flat = self.flat
        new.still_step, new.moved_step, new.least_move = (
            self.still_step,
            self.moved_step,
            self.least_move,
        )
        new.powers = np.concatenate([self.powers[0] - np.arange(more, 0, -1), self.powers])
        return new
