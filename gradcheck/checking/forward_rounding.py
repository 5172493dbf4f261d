"""The forward's own rounding, as the finite differences need it: how finely the
outputs that a step moves are resolved (:meth:`ForwardRounding.rounding_sizes`), and
the narrower dtype a forward given float64 computes in (:meth:`ForwardRounding._computes_in`).

:class:`ForwardRounding` is a part of :class:`gradcheck.checking.numerical.Evaluator`
(its base): it reads the evaluator's working inputs, its forward (``call``) and the
output at the point. Where a wider dtype computes the forward, its rounding is
measured against it; where none does, in its own dtype
(:meth:`ForwardRounding._rounding_residual`).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from gradcheck.checking.computed_in import ComputedIn, _wider
from gradcheck.checking.level_scores import LevelScores
from gradcheck.checking.levels import _extra_levels, step_sizes
from gradcheck.checking.thresholds import (
    HIGHEST_LEVEL,
    LEVEL_RATIO,
    LOWEST_LEVEL,
    OUTPUT_ROUNDING_EPS,
    RESIDUAL_DEGREE,
    RESIDUAL_OFFSETS,
    RESIDUAL_RANDOM_SHARE,
    RESIDUAL_SMOOTH_SHARE,
    RESIDUAL_STEADINESS,
    RESIDUAL_WIDER_LEVELS,
    ROUNDING_PROBE_SEED,
    ROUNDING_PROBE_SPREAD,
)
from gradcheck.engine.graph import no_autodiff

#: Outputs per block of :meth:`ForwardRounding._rounding_residual`'s projection: its
#: temporaries (10 rows of the block) stay in cache; at 2**15 they did not, and the
#: projection of a million outputs took 3-4x as long (the same numbers: each column's
#: arithmetic is its own).
_RESIDUAL_BLOCK = 1 << 12


@functools.lru_cache(maxsize=8)
def _off_polynomials(ts: tuple[float, ...], degree: int) -> np.ndarray:
    """The projection off the polynomials of ``degree`` in ``t`` over the offsets ``ts``
    (I - QQᵀ, Q an orthonormal basis of their span): made once, where each measurement
    made it again (two QR factorisations a measurement, 2% of a torch target's search;
    the same numbers)."""
    t = np.array(ts)
    q = np.linalg.qr(np.vander(t, degree + 1, increasing=True))[0]
    projection = np.eye(len(t)) - q @ q.T
    projection.flags.writeable = False
    return projection


@functools.lru_cache(maxsize=8)
def _scatter_pattern(
    shapes: tuple[tuple[int, ...] | None, ...],
) -> tuple[tuple[np.ndarray, np.ndarray] | None, ...]:
    """The random part of :meth:`ForwardRounding._rounding_error`'s scattered move of
    each float input (None: not a float input) of these shapes, in the order it draws
    them: (signs, powers of two), from the fixed seed :data:`ROUNDING_PROBE_SEED`. A
    function of the shapes alone, made once (read-only), where each measurement drew it
    again: a fresh generator and 2 draws per element, 90 us at 2,000 elements, twice a
    measurement (x·tanh(x) at 40x50: ~1.5% of a search; the same numbers)."""
    pattern = np.random.default_rng(ROUNDING_PROBE_SEED)
    drawn: list[tuple[np.ndarray, np.ndarray] | None] = []
    for shape in shapes:
        if shape is None:
            drawn.append(None)
            continue
        # (np.array: a 0-d array where the shape is (), of the same number)
        sign = np.array(pattern.choice([-1.0, 1.0], shape))
        power = np.array(np.exp2(-pattern.integers(0, ROUNDING_PROBE_SPREAD + 1, shape)))
        sign.flags.writeable = power.flags.writeable = False
        drawn.append((sign, power))
    return tuple(drawn)


def _move_pattern(
    shapes: tuple[tuple[int, ...] | None, ...],
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray] | None]:
    """The random part of :meth:`ForwardRounding._rounding_residual`'s move of each
    float input (None: not a float input) of these shapes, in the order it draws them:
    (signs, powers of two, three bits of mantissa), from the fixed seed
    :data:`ROUNDING_PROBE_SEED`."""
    pattern = np.random.default_rng(ROUNDING_PROBE_SEED)
    drawn: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = []
    for shape in shapes:
        if shape is None:
            drawn.append(None)
            continue
        sign = pattern.choice([-1.0, 1.0], shape)
        power = np.exp2(-pattern.integers(0, ROUNDING_PROBE_SPREAD + 1, shape))
        mantissa = 1 + pattern.integers(0, 8, shape) / 8
        drawn.append((sign, power, mantissa))
    return drawn


class ForwardRounding(ComputedIn):
    """The measures of the forward's rounding, a base of
    :class:`~gradcheck.checking.numerical.Evaluator`."""

    #: The rows of :meth:`_rounding_residual`, kept between its measurements.
    _residual_rows: np.ndarray | None = None
    #: (the inputs' shapes, :func:`_move_pattern` of them), kept from one measurement to
    #: the next at the same shapes (a refinement's step points measure twice).
    _residual_pattern: tuple[Any, list[Any]] | None = None
    #: Per output, whether the last such measure is rounding (see :meth:`_residual_sizes`).
    _residual_rounding: np.ndarray | None = None
    #: The rounding at the step points of several elements, measured once for all of
    #: them (:meth:`shared_step_points`); while set, it stands for each one's.
    _shared_point_sizes: np.ndarray | None = None

    # (set by the Evaluator: its working inputs and their dtype, that dtype's eps, the
    # output at the point in float64, and the outputs' sizes once measured)
    work: list[np.ndarray]
    eval_dtype: np.dtype
    eps: float
    f0: np.ndarray
    _sizes: np.ndarray | None
    _own_dtype_rounding: bool
    # (and the inputs the forward is linear in, the quanta its outputs move in, and the
    # measures made once: see the Evaluator's __init__)
    linear: tuple[int, ...]
    output_quanta: np.ndarray | None
    _unit_sizes: np.ndarray | None
    _seeded_quanta: np.ndarray | None
    quantum: float | None
    v: np.ndarray

    def call(self, arrays: Sequence[np.ndarray]) -> np.ndarray:
        raise NotImplementedError  # (the Evaluator's)

    def _step_point_sizes(
        self, i: int, j: int | np.ndarray, step: float | np.ndarray
    ) -> np.ndarray | None:
        """Per output, the rounding size (over eps, as :meth:`rounding_sizes`) measured
        around the points the largest step of element ``j`` of input ``i`` reaches, x_j ±
        ``step`` (:meth:`_rounding_residual` there), at most the inputs' size; None where
        neither point measures. ``j`` and ``step`` may be arrays: the elements moved
        together, each by its own step (see :meth:`shared_step_points`); while that
        holds a measure, it is the answer for each of them.

        A forward rounds at eps of the terms it cancels *at the points it is evaluated
        at*, which x alone need not show: x - sin(x) at x = 2.2e-308 is exactly 0 there,
        and around it, while at x ± h it is h - sin(h), an output of h³/6 made of terms
        of size h, rounding at eps·h; its central differences are that rounding over h
        (-4.7e-18·v against a derivative of 0), below which nothing is resolved."""
        if self._shared_point_sizes is not None:
            return self._shared_point_sizes
        flat = self.work[i].reshape(-1)
        old = flat[j]
        found: np.ndarray | None = None
        for sign in (1.0, -1.0):
            at = list(self.work)
            moved = at[i].copy()
            moved.reshape(-1)[j] = np.asarray(old + sign * step, dtype=moved.dtype)
            at[i] = moved
            try:
                with np.errstate(all="ignore"), no_autodiff:
                    out = np.asarray(self.call(at), dtype=np.float64)
            except Exception:
                continue
            if out.shape != self.f0.shape or not np.all(np.isfinite(out)):
                continue
            residual = self._rounding_residual(at, out)
            if residual is None:
                continue
            found = (
                self._residual_sizes(residual)
                if found is None
                else np.maximum(found, self._residual_sizes(residual))
            )
        return found

    @contextmanager
    def shared_step_points(self, i: int, js: np.ndarray, steps: np.ndarray) -> Iterator[None]:
        """Within: the rounding at the step points of elements ``js`` of input ``i``
        (their largest steps ``steps``) measured once, all of them moved together
        (2 points, where one element's measure is 2 points each), and taken for each
        one's (:meth:`_step_point_sizes`). Fast mode's located elements
        (:meth:`_FastMode.judge_located`): grid_sampler_3d's sample 28 located two
        elements at 559,020 and measured 19 forward calls at each of 4 points, 76 of
        its 358. The elements' points differ from one element's in the other
        elements' moves: where their outputs are their own, the same measure; where
        the joint points measure nothing (an output not finite), each element measures
        its own, as before. Where the rounding is not measured in the forward's own
        dtype, nothing is measured."""
        self.rounding_sizes()  # (whether the rounding is measured in its own dtype)
        if self._own_dtype_rounding and len(js) > 1:
            self._shared_point_sizes = self._step_point_sizes(i, js, steps)
        try:
            yield
        finally:
            self._shared_point_sizes = None

    def rounding_sizes(self) -> np.ndarray:
        """Per output, the size whose rounding (eps of it) the noise model assumes:
        at least the largest output, and the measured variation of its rounding error
        over the neighbourhood the steps reach, / eps.

        A forward rounds its intermediates, which may be far larger than its output
        (0.5·x·(1 + tanh(u)) at x = -7: an output of 2e-15 made of 3.5 × a sum that
        rounds at 1e-16), so eps·|f| under-states the rounding of the touched outputs.
        Two measures: the op's other outputs (the same formula elsewhere: intermediates
        at least of their size), and, where the forward runs in a wider dtype (float64
        for a float32 or float16 evaluation, NumPy's extended long double for
        float64), the difference it makes, which is each output's rounding error, at
        x and at x ± the largest refinement step. A central difference sees the
        error's *variation* over its step, not its size: (x + 1e6) - 1e6 rounds by
        1e-10, but by the same amount at x ± h for a power-of-two h, and its finite
        differences are exact; so the spread of the three signed errors is what
        counts (where only x's is known, twice its size).

        Two moves: every element by its largest step, and every element its own way,
        up or down at random by its largest step over a random power of two
        (:data:`ROUNDING_PROBE_SPREAD`; the same pattern for every check,
        :data:`ROUNDING_PROBE_SEED`). A difference moves one element, which breaks
        whatever symmetry the point has, and a move of every element by the same step
        keeps many: KL(softmax(a) || softmax(b)) at a = b is exactly 0 in every
        precision, at x and at x ± a common step, while each one-element step sees the
        rounding of its log-sum-exps (eps·10 at logits of 10); likewise ties, and the
        shift invariance of a softmax. Powers of two keep the moves exact, as the steps
        are (see :func:`step_sizes`). The spread of the five signed errors counts.

        A moved point's error within :data:`OUTPUT_ROUNDING_EPS` eps of its own output
        is that output's rounding, which the noise of a level counts where its steps
        reach such outputs (:meth:`_score_levels`), and is left out here: the largest
        move may reach outputs far larger than anywhere a small step goes (x·|x| at
        1e-10: 1e-20, and 2e-7 at x ± 5e-4), and a noise of their size would drown the
        small steps' evidence (a smooth function there, a bug of 1e-3).
        """
        if self._sizes is not None:
            return self._sizes
        finite = np.abs(self.f0[np.isfinite(self.f0)])
        sizes = np.full(self.f0.shape, float(finite.max()) if finite.size else 0.0)
        wider = _wider(self.eval_dtype)
        # At x first (no forward call of its own): where the forward does not compute
        # in ``wider`` there (torch, JAX), the moved points are not asked either (each
        # was a forward call and a move of every element, then a failed wide call).
        at_x = None if wider is None else self._rounding_error(wider, 0.0)
        if wider is not None and at_x is not None:
            plain, scattered = self._probe_moves()
            points = ((1.0, plain), (-1.0, plain), (1.0, scattered), (-1.0, scattered))
            errors = [at_x] + [self._rounding_error(wider, sign, moves) for sign, moves in points]
            known = [e for e in errors if e is not None]  # (at_x among them)
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-nan slices
                stack = np.stack(known)
                count = np.sum(np.isfinite(stack), axis=0)
                spread = np.nanmax(stack, axis=0) - np.nanmin(stack, axis=0)
                spread = np.where(count >= 2, spread, 2 * np.abs(at_x))
            sizes = np.maximum(sizes, np.where(np.isfinite(spread), spread, 0.0) / self.eps)
            self._sizes = sizes
            return sizes
        # No wider dtype computes this forward (torch and JAX take no long double; and
        # at order 2 the forward is a backward): its rounding is measured in its own
        # dtype instead (see _rounding_residual).
        self._own_dtype_rounding = True
        residual = self._rounding_residual()
        if residual is not None:
            # At most the size of the inputs (and 1), as at a level where nothing moved
            # (LevelScores.magnitude): where a function varies faster than the move
            # (log|a| at a = 8e-16), what no polynomial explains is no rounding, and a
            # noise of its size would make steps that never converge look converged.
            measured = self._residual_sizes(residual)
            sizes = np.maximum(sizes, measured)
            if self.linear:
                self._seed_quanta(measured)
        self._sizes = sizes
        return sizes

    def _seed_quanta(self, measured: np.ndarray) -> None:
        """Where the forward is a backward (:attr:`linear`), the outputs whose measured
        rounding (``measured``, over eps) is far above their own ulps round at the
        terms they cancel, and move in quanta of those: known from the start, for every
        element refined (see :meth:`LevelScores.quantize_outputs`), not only for the
        ones refined after a level showed them. At logits [38, -2, 16] a
        cross-entropy's backward has p0 - 1 = -2.8e-10, which rounds at the ulps of
        p0: the logit 16 moves it by many of them, the logit -2 by 1e-18 per unit,
        below one, and finite differences along -2 lose that share of the double
        backward's value, while those along 16 show the quantum."""
        flat = measured.reshape(-1)
        with np.errstate(invalid="ignore"):
            cancelled = flat > OUTPUT_ROUNDING_EPS * np.abs(self.f0.reshape(-1))
        if not cancelled.any():
            return
        self._seeded_quanta = np.where(cancelled, self.eps * flat, 0.0)

    def known_quanta(self) -> np.ndarray | None:
        """Per output (flat), its quantum where the levels or probes showed one
        (:attr:`output_quanta`), else where the point's measured rounding shows one
        (:meth:`_seed_quanta`: a measure along small moves, which can miss a rounding
        that stays the same over them, so it never lowers a quantum seen); None where
        neither is known."""
        found, seeded = self.output_quanta, self._seeded_quanta
        if seeded is None:
            return found
        if found is None:
            return seeded
        return np.where(found > 0, found, seeded)

    def _rounding_cap(self) -> float:
        """The most a move of an output may be and still be read as one quantum of
        its rounding: :data:`OUTPUT_ROUNDING_EPS` eps of the inputs' size (at least 1)
        or of the outputs' rounding size, whichever is larger. More is a move of the
        function (a clip's bound that a large step crosses)."""
        sizes = self.rounding_sizes()
        largest = float(np.max(sizes, initial=0.0)) if np.isfinite(sizes).all() else 0.0
        return OUTPUT_ROUNDING_EPS * self.eps * max(self._magnitude(), largest)

    def _magnitude(self) -> float:
        """The largest finite |element| of the float inputs, at least 1: the size of
        intermediates a forward is assumed to round at where nothing shows more."""
        floats = [np.abs(a[np.isfinite(a)]) for a in self.work if a.dtype.kind == "f"]
        return max([1.0, *(float(a.max()) for a in floats if a.size)])

    def _quantize(self, levels: LevelScores) -> None:
        """:meth:`LevelScores.quantize_noise`, with the smallest quantum this point's
        outputs showed so far (kept for the elements refined next)."""
        cap = self._rounding_cap()
        found = levels.quantize_noise(self.quantum, cap * float(np.sum(np.abs(self.v))))
        if found is not None and found > 0:
            self.quantum = found if self.quantum is None else min(self.quantum, found)
        self.output_quanta = levels.quantize_outputs(
            np.abs(self.v).reshape(-1),
            self.output_quanta,
            self.eps * np.abs(self.f0).reshape(-1),
            cap,
            self._seeded_quanta,
        )
        levels.floor = np.maximum(levels.floor, levels.precision)
        if self.linear:  # (the backward's outputs that a cancellation holds at 0)
            levels.floor_cancelled(self.f0 == 0, np.abs(self.v), self.eps, self.linear_size())
        if levels.line_quantum > 0:
            done = np.isfinite(levels.d) & np.isfinite(levels.jump)
            line = np.where(done, levels.line_quantum / (2 * levels.hs), 0.0)
            levels.floor = np.maximum(levels.floor, line)

    def linear_size(self) -> float:
        """The largest |element| of the inputs the forward is linear in (0: none)."""
        sizes = (float(np.max(np.abs(self.work[k]), initial=0.0)) for k in self.linear)
        return max(sizes, default=0.0)

    def unit_rounding(self) -> np.ndarray:
        """Per output (flat), the rounding size (as :meth:`rounding_sizes`: its rounding
        over eps) of a forward linear in its inputs :attr:`linear` (a backward in its
        upstream gradient), per unit of their size; zeros where it has none.

        A backward ``B(x, w)`` sums terms of the size of ``w`` times its partial
        derivatives, and rounds at eps of them, whatever the sum: a cross-entropy's
        backward ``(p - onehot)·w`` at logits [24, 0, 0] is -7.5e-11·w, made of
        ``p0·w - w``, which rounds at eps·|w|. Its finite differences along ``w`` are
        ``B(x, w ± h e_j)``, whose rounding is eps·|w ± h e_j| of those terms: at
        ``w = 0`` it shrinks with the step, and the power-of-two steps, which keep
        every quotient ``B(x, h e_j) / h`` the same bits, show none of it. So it is
        measured where the upstream gradient is not small: the residual of
        :meth:`_rounding_residual` around x with each linear input replaced by
        random numbers of its size (at least 1, every bit of the mantissa used), over
        that size."""
        if self._unit_sizes is not None:
            return self._unit_sizes
        sizes = np.zeros(self.f0.size)
        if self.linear:
            pattern = np.random.default_rng(ROUNDING_PROBE_SEED + 1)
            base = list(self.work)
            scale = 1.0
            for i in self.linear:
                a = base[i]
                size = float(np.max(np.abs(a), initial=0.0))
                scale = max(scale, size) if math.isfinite(size) else scale
            for i in self.linear:
                a = base[i]
                # full mantissas: a product w·p with p = 1 - 2**-48 is exact for a w of
                # a few bits (±1, or the moves' own), and shows no rounding at all
                signs = pattern.choice([-1.0, 1.0], a.shape)
                base[i] = (signs * pattern.uniform(1.0, 2.0, a.shape) * scale).astype(a.dtype)
            try:
                with np.errstate(all="ignore"), no_autodiff:
                    out = np.asarray(self.call(base), dtype=np.float64)
            except Exception:
                out = None
            if out is not None and out.shape == self.f0.shape and np.all(np.isfinite(out)):
                residual = self._rounding_residual(base, out)
                if residual is not None:
                    sizes = residual.reshape(-1) / (self.eps * scale)
        self._unit_sizes = sizes
        return sizes

    def linear_noise(self, i: int, absv: np.ndarray) -> float:
        """The rounding noise of a central difference along an element of input ``i``
        that the forward is linear in (else 0): :data:`OUTPUT_ROUNDING_EPS` eps of
        ``<|v|, unit rounding sizes>`` times the step, over the step. The same at every
        step: the outputs' rounding grows with the step as the difference does (see
        :meth:`unit_rounding`)."""
        if i not in self.linear:
            return 0.0
        unit = self.unit_rounding()
        return OUTPUT_ROUNDING_EPS * self.eps * float(np.vdot(absv.reshape(-1), unit))

    def _rounding_residual(
        self, at: Sequence[np.ndarray] | None = None, out0: np.ndarray | None = None
    ) -> np.ndarray | None:
        """Per output, the spread of its rounding error along one small move, measured
        in the forward's own dtype: f at x + t·d for t in -1..1
        (:data:`RESIDUAL_OFFSETS`), d each float element's step of the levels second
        from the bottom (up or down, over a power of two, as the scattered move of
        :meth:`rounding_sizes`), and the part of each output that no polynomial of
        degree :data:`RESIDUAL_DEGREE` in t explains. Over so small a move a smooth
        output is that polynomial to far below its rounding (its next term is of
        order (eps**(1/3)/LEVEL_RATIO)**(RESIDUAL_DEGREE + 1) of its scale), so what is
        left is rounding: a cross-entropy at logits [29, 10, -6] is log(1 + 5.6e-9),
        an output of 5.6e-9 that moves in ulps of 1 (its sum of exponentials), and its
        finite differences are a staircase of them, whose steps may be symmetric about
        x (J = 0 at every level: the levels' own noise measure sees nothing). The
        residuals' standard deviation times sqrt(12) is the spread of a rounding error
        uniform over a quantum. None where an output is not finite or has the wrong
        shape along the move (the noise model then keeps the output's size).

        Where a residual is too large a share of its output's change to be read as
        rounding there (:meth:`_residual_spread`), the move is made
        LEVEL_RATIO**:data:`RESIDUAL_WIDER_LEVELS` times as long, still within the
        largest steps' reach: rounding leaves the same residual at both (within
        :data:`RESIDUAL_STEADINESS` x), a small share of the longer move's change,
        and is taken as measured; a function varying on the move's scale leaves one
        that grows like the move to the power :data:`RESIDUAL_DEGREE` + 1. A
        log-determinant through a Cholesky factor of a matrix of condition 2e5
        rounds at 2.4e5 eps of its output, 2.6e-5 of its change along the short move.

        ``at`` and ``out0``: around this point and its output instead of x's."""
        work = self.work if at is None else list(at)
        f0 = self.f0 if out0 is None else out0
        moves = self._residual_moves(work)
        short = self._residual_spread(work, f0, moves)
        if short is None:
            return None
        sigma, rounding = short
        if not rounding.all():
            longer = [None if m is None else m * LEVEL_RATIO**RESIDUAL_WIDER_LEVELS for m in moves]
            wide = self._residual_spread(work, f0, longer)
            if wide is not None:
                with np.errstate(all="ignore"):
                    steady = (
                        ~rounding
                        & wide[1]
                        & (wide[0] <= RESIDUAL_STEADINESS * sigma)
                        & (sigma <= RESIDUAL_STEADINESS * wide[0])
                    )
                sigma = np.where(steady, np.maximum(sigma, wide[0]), sigma)
                rounding = rounding | steady
        self._residual_rounding = rounding.reshape(f0.shape)
        return (np.sqrt(12) * sigma).reshape(f0.shape)

    def _residual_moves(self, work: Sequence[np.ndarray]) -> list[np.ndarray | None]:
        """The move ``d`` of :meth:`_rounding_residual`, per input (None for one that is
        not float)."""
        shapes = tuple(a.shape if a.dtype.kind == "f" else None for a in work)
        if self._residual_pattern is None or self._residual_pattern[0] != shapes:
            self._residual_pattern = (shapes, _move_pattern(shapes))
        moves: list[np.ndarray | None] = []
        for a, drawn in zip(work, self._residual_pattern[1]):
            if drawn is None:
                moves.append(None)
                continue
            sign, power, mantissa = drawn
            # the smallest levels' steps (times LEVEL_RATIO**2), which see a function
            # on the other scale too (sin at 1e9, whose base step is 6e3)
            low = LOWEST_LEVEL + 2 - _extra_levels(np.abs(a))
            move = step_sizes(a, self.eps) * LEVEL_RATIO**low
            move = move * sign * power
            # and three bits of mantissa, still exact: elements moved alike keep the
            # symmetries of the point (a softmax moved along (1, 1, ...) stands still)
            moves.append(move * mantissa)
        return moves

    def _residual_spread(
        self, work: Sequence[np.ndarray], f0: np.ndarray, moves: list[np.ndarray | None]
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """Along ``moves`` from ``work`` (whose output is ``f0``): per output (flat), the
        residuals' standard deviation, and whether it is rounding (see
        :data:`RESIDUAL_SMOOTH_SHARE`); None where an output is not finite or has the
        wrong shape along the move."""
        ts = np.array(RESIDUAL_OFFSETS) / LEVEL_RATIO**3
        # One row per offset, written in place (on a large output each row is an
        # array of its size, and so would a stack of them be again), into a buffer kept
        # from one measurement to the next (a refinement's step points measure twice).
        kept = self._residual_rows
        if kept is None or kept.shape != (len(ts), f0.size):
            kept = self._residual_rows = np.empty((len(ts), f0.size))
        changes = kept
        try:
            with np.errstate(all="ignore"), no_autodiff:
                for row, t in zip(changes, ts):
                    if t == 0:
                        row[:] = 0.0
                        continue
                    arrays = [
                        a if m is None else (a + t * m).astype(a.dtype) for a, m in zip(work, moves)
                    ]
                    out = np.asarray(self.call(arrays))
                    if out.shape != f0.shape:
                        return None
                    np.subtract(out, f0, dtype=np.float64, out=row.reshape(f0.shape))
        except Exception:
            return None
        return _residual_stats(ts, changes)

    def _residual_sizes(self, residual: np.ndarray) -> np.ndarray:
        """A measured residual (:meth:`_rounding_residual`) as rounding sizes (over
        eps), at most the inputs' size (see :meth:`rounding_sizes`), except at outputs
        where it is rounding: a small share of the output's change along the move
        (:data:`RESIDUAL_SMOOTH_SHARE`: the output is smooth there), which a polynomial
        of two degrees more does not explain either (:data:`RESIDUAL_RANDOM_SHARE`),
        taken whole (matrix_exp's squarings at a norm of 1300 round at 5000 eps of its
        outputs)."""
        cap = np.full(residual.shape, self._magnitude())
        rounding = self._residual_rounding
        if rounding is not None and rounding.shape == residual.shape:
            cap = np.where(rounding, np.inf, cap)
        return np.minimum(residual / self.eps, cap)

    def _probe_moves(self) -> tuple[list[np.ndarray | None], list[np.ndarray | None]]:
        """Per input (None: not a float input), the moves of :meth:`rounding_sizes`:
        every element by its largest refinement step, and (second) each element its
        own way, up or down by a power of two (:func:`_scatter_pattern`); made once
        for its four moved points."""
        shapes = tuple(a.shape if a.dtype.kind == "f" else None for a in self.work)
        plain: list[np.ndarray | None] = []
        scattered: list[np.ndarray | None] = []
        for a, drawn in zip(self.work, _scatter_pattern(shapes)):
            if drawn is None:
                plain.append(None)
                scattered.append(None)
                continue
            move = step_sizes(a, self.eps) * LEVEL_RATIO**HIGHEST_LEVEL
            sign, power = drawn
            plain.append(move)
            scattered.append(move * sign * power)
        return plain, scattered

    def _rounding_error(
        self, wider: np.dtype, sign: float, moves: Sequence[np.ndarray | None] = ()
    ) -> np.ndarray | None:
        """f computed in ``wider`` minus f, at x + sign × ``moves`` (per input, from
        :meth:`_probe_moves`: every float input's elements by their largest refinement
        step, or each element its own way); nan where either is not finite; None if
        the op does not compute in ``wider``."""
        arrays = list(self.work)
        if sign:
            for i, (a, move) in enumerate(zip(arrays, moves)):
                if move is not None:
                    arrays[i] = (a + sign * move).astype(a.dtype)
        try:
            with np.errstate(all="ignore"):
                narrow = self.f0 if not sign else np.asarray(self.call(arrays), dtype=np.float64)
                wide = self.call([a.astype(wider) if a.dtype.kind == "f" else a for a in arrays])
        except Exception:
            return None
        if wide.dtype != wider or wide.shape != self.f0.shape:
            return None
        with np.errstate(all="ignore"):
            error = (wide - narrow.astype(wider)).astype(np.float64)
            if sign:  # (see rounding_sizes: a moved output's own rounding is left out)
                own = np.abs(error) <= OUTPUT_ROUNDING_EPS * self.eps * np.abs(narrow)
                error = np.where(own, 0.0, error)
        return np.where(np.isfinite(error), error, np.nan)


def _residual_stats(ts: np.ndarray, changes: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Per column of ``changes`` (the outputs' changes at the offsets ``ts``, one row
    each), the standard deviation of the part that no polynomial of degree
    :data:`RESIDUAL_DEGREE` in t explains, and whether it is rounding: a small share
    of the change (:data:`RESIDUAL_SMOOTH_SHARE`) that two more powers of t do not
    explain either (:data:`RESIDUAL_RANDOM_SHARE`). None where a change is not finite."""
    # The part of each column that the basis does not explain: the projection off
    # its span (I - QQᵀ, Q an orthonormal basis of it), a 10x10 product over the
    # outputs, where a least-squares solve with a right-hand side per output cost
    # seconds on a million outputs (grid_sampler_3d; profiled: 40% of the check).
    # Both are exact to eps of the changes, far below the rounding measured here.
    # In blocks of columns: a fresh array of the changes' size (and the mask of
    # their finiteness) cost a page fault per 4 KiB, more than the arithmetic.
    offsets = tuple(float(t) for t in ts)
    projection = _off_polynomials(offsets, RESIDUAL_DEGREE)
    beyond = _off_polynomials(offsets, RESIDUAL_DEGREE + 2)
    # Each column over its largest change (a power of two: exact), whose squares
    # stay in range: outputs of 1e287 (matrix_exp at eigenvalue 661) move by 1e281
    # and round at 1e275, whose square overflowed to an infinite rounding.
    norms, higher = np.empty(changes.shape[1]), np.empty(changes.shape[1])
    changed = np.empty(changes.shape[1])
    for start in range(0, changes.shape[1], _RESIDUAL_BLOCK):
        block = changes[:, start : start + _RESIDUAL_BLOCK]
        if not np.isfinite(block).all():
            return None
        top = changed[start : start + _RESIDUAL_BLOCK] = np.max(np.abs(block), axis=0)
        unit = np.exp2(np.ceil(np.log2(np.where(top > 0, top, 1.0))))
        for out, p in ((norms, projection), (higher, beyond)):
            residual = p @ (block / unit)
            squares = np.sum(np.square(residual, out=residual), axis=0)
            out[start : start + _RESIDUAL_BLOCK] = np.sqrt(squares) * unit
    sigma = norms / math.sqrt(len(ts) - (RESIDUAL_DEGREE + 1))
    sigma_higher = higher / math.sqrt(len(ts) - (RESIDUAL_DEGREE + 3))
    # (rounding: a small share of the change, which two more powers of t do not
    # explain; a function varying on a scale near the move's leaves a residual
    # that they do: log|det| 1e-6 from singular, moved by 2e-8)
    with np.errstate(all="ignore"):
        rounding = (sigma <= RESIDUAL_SMOOTH_SHARE * changed) & (
            sigma_higher >= RESIDUAL_RANDOM_SHARE * sigma
        )
    return sigma, rounding
