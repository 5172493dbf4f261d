"""Finite differences: the numeric gradient of ``s(x) = <v, f(x)>``.

The numbers, and why:

* **Reference precision.** Float inputs are evaluated in float64 when the target
  accepts it (its output then is float64), so that a float32 or float16 op is compared
  against a float64 reference; otherwise in the op's own dtype, with that dtype's eps.
* **Step.** Element ``x_j`` gets ``h_j = eps**(1/3) * max(|x_j|, 1)``, the step that
  balances the O(h²) truncation error of a central difference against the O(eps/h)
  rounding error, rounded to a power of two (see :func:`step_sizes`).
* **Exact differences.** ``<v, f(x+h e_j) - f(x-h e_j)>`` rather than a difference of
  two sums: outputs the perturbation does not reach cancel exactly, so the rounding
  error is that of the touched outputs only.
* **Two stages.** Every element first gets one central difference (two forward calls).
  The caller says which elements are clearly fine (the checker: within tolerance of the
  analytic gradient); only the others are *refined*: central differences at steps
  ``h·4^k`` (k = -2..3, the base ladder), Richardson extrapolation of neighbouring
  pairs (``(16 D(h) - D(4h)) / 15`` cancels the h² term), and the pair whose value
  agrees best with its neighbours gives the value and its error estimate. Where the
  base ladder leaves a kink or an error above what matters, levels below it follow:
  down to the absolute step eps**(1/3)/16 for |x| > 1 (sin at 1e6 varies on a scale
  of 1) and to the relative step eps**(1/3)·|x| for |x| < 1 (a cosine of vectors of
  size 1e-5 varies on their scale).
* **Rounding noise.** A difference of ``s`` at x ± h is resolved to the rounding of
  the outputs it touches, over h: eps times their size, where the size is at least
  the largest output of the op and the rounding error measured by evaluating the
  forward in a wider dtype (NumPy's extended long double for float64) at x and at
  x ± the largest step, all elements one way and each its own way
  (:meth:`Evaluator.rounding_sizes`). An op's intermediates can be
  far larger than its output: 0.5·z·(1 + tanh(u)) at z = -7 is 2e-15, made of 3.5 × a
  sum that rounds at 1e-16, and within 1e-3 of z it is a staircase whose flat steps
  finite differences would take for the derivative. Where no wider dtype computes
  the forward (torch and JAX targets; at order 2 the forward is a backward), the
  rounding is measured in its own dtype: what no low polynomial explains of the
  outputs along one small move (:meth:`Evaluator._rounding_residual`). The noise,
  modelled and measured from the levels themselves, enters each level's error. A
  forward that computes in float16 inside (``f(x.half())`` cast back, evaluated in
  float16: :attr:`Evaluator.in_inner`) rounds each output once, to a float16 number:
  its differences are resolved to half an ulp of each output they touch, over h, and
  a Richardson pair's error is read from the smaller steps only (:func:`_pair_errors`).
* **A backward differenced** (order 2 and above: the forward is ``B(x, v) = vᵀJ``).
  Its outputs round at eps of terms of the size of ``v`` (a cross-entropy's
  ``(p - onehot)·v`` at logits 24 apart is -7.5e-11·v, made of ``p0·v - v``). Along
  ``v``, in which it is linear, that rounding grows with the step as the difference
  does, and power-of-two steps keep every quotient the same bits at v = 0: its size
  per unit of ``v`` is measured where ``v`` is not small (:meth:`Evaluator.unit_rounding`)
  and is the noise of every level along ``v``. Along ``x``, the outputs whose measured
  rounding is far above their own ulps are known to move in quanta of it, for every
  element from the start (:meth:`Evaluator._seed_quanta`). Its outputs that are exact
  zeros no step moves (``p·v - v`` at p exactly 1) are resolved no finer than eps of
  terms of ``v``'s size (:meth:`LevelScores.floor_cancelled`).
* **Quanta.** An output that stands still at the smaller steps and moves at larger
  ones moves in quanta of its intermediates (p0 - 1 of a softmax at a logit of 30
  rounds at the ulps of p0), which no step resolves below: its quantum over 2h floors
  each level (:meth:`LevelScores.quantize_outputs`), also for the elements where it
  never moved, once a larger step shows it depends on them at all
  (:meth:`Evaluator._probe_unmoved`). Likewise an ``s`` that is a line at the
  smallest levels and leaves it, by no more than rounding, at a larger step: a
  staircase's tread (1 + tanh(u) at x = -7, a few ulps of 1, is the same number
  over every level's steps; probes.py, ``_probe_line``). Where no wider dtype
  computes the forward, its rounding is measured around x ± the largest step too
  (forward_rounding.py, ``_step_point_sizes``: x - sin(x) at 2.2e-308 is 0 around
  x, and h - sin(h), rounding at eps·h, at the steps).
* **Kinks.** ``J(h) = (s(x+h) + s(x-h) - 2 s(x)) / h`` is the difference of the two
  one-sided quotients. Where ``s`` is smooth it grows like ``h`` (by 4 per level);
  where the one-sided derivatives differ (``abs`` at 0, ``relu`` at 0, ``max`` with a
  tie, ``clip`` at a bound) it stays at the jump; rounding noise grows like ``1/h``
  with random sign. Going up from the smallest step, the first three neighbouring
  levels where J stands out of the noise decide: J constant there (same sign, within
  2×) and larger than what matters marks the element not differentiable, J growing
  like h marks it smooth, anything else is noise and the next levels decide. Likewise
  D·h constant (a jump of ``s`` itself). Larger steps alone decide nothing: they may
  straddle a kink nearby or sample an oscillation; where smaller steps bound J (or
  D·h) far below what larger ones show, the kink is nearby, not at x, no larger
  window decides, and only the steps below it estimate the derivative (maximum(x, y)
  at inputs of 1e-9, 1e-10 apart: the smaller input's s stands still at the steps
  below the tie, which is flatness, not rounding quanta).
* **Complex step** (on request, for ops analytic in their inputs):
  ``Im s(x + i h e_j) / h`` has no subtractive cancellation, so h can be tiny.

Where each part is: this module's :class:`Evaluator` moves the inputs and calls the
forward (the first pass, the refinement's levels, directions, the complex step), and
:func:`full_estimate` and :func:`refine_elements` drive it element by element;
:mod:`gradcheck.checking.levels` holds the steps and what the levels' differences say
(Richardson, noise, quanta, kinks: an :class:`Estimate`);
:mod:`gradcheck.checking.forward_rounding` (the forward's rounding) and ``computed_in``
(its dtype) are the Evaluator's bases; every number is in ``thresholds``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np

from gradcheck.checking.computed_in import exact_in
from gradcheck.checking.forward_rounding import ForwardRounding
from gradcheck.checking.level_scores import LevelScores
from gradcheck.checking.levels import (
    Estimate,
    _blows_up_below,
    _combine,
    _levels,
    lower_levels_needed,
    noise_dtype,
    output_ulps,
    step_sizes,
)
from gradcheck.checking.probes import PointProbes
from gradcheck.checking.thresholds import (
    FIRST_JUMP_FRACTION,
    HIGHEST_LEVEL,
    LEVEL_RATIO,
    LOWEST_LEVEL,
    OUTPUT_ROUNDING_EPS,
    PROBE_POWER,
    SINGULAR_LEVELS,
    SINGULAR_ROUNDS,
    VALUE_ROUNDING_EPS,
)
from gradcheck.engine.graph import no_autodiff
from gradcheck.errors import ComplexStepUnsupported, exception_text

__all__ = ["ComplexStepUnsupported", "Evaluator", "Estimate", "full_estimate"]
__all__ += ["refine_elements", "step_sizes"]


#: :meth:`Evaluator.directional`'s batches of rows: at most this many outputs a buffer.
_DIRECTIONAL_ROWS_MAX_SIZE = 1 << 15


class Evaluator(ForwardRounding, PointProbes):
    """Evaluates ``f`` around a point with one input element perturbed.

    Holds working copies of the inputs (float64 when the target accepts it), the
    upstream gradient ``v`` in that dtype, the output at the point, and a count of
    forward calls. ``forward`` is any ``forward(arrays, params) -> ndarray``, such
    as :meth:`gradcheck.checking.target.Target.forward`; ``bind``, optionally, makes a
    fast no-argument forward over arrays changed in place
    (:meth:`~gradcheck.checking.target.Target.bind`).
    """

    def __init__(
        self,
        forward: Callable[[Sequence[np.ndarray], Mapping[str, Any]], np.ndarray],
        arrays: Sequence[np.ndarray],
        params: Mapping[str, Any] | None,
        v: np.ndarray,
        *,
        reference: str = "float64",
        bind: Callable[..., Callable[[], np.ndarray]] | None = None,
        linear: Sequence[int] = (),
        computes_in: np.dtype | None = None,
    ) -> None:
        self._forward = forward
        #: The inputs the forward is linear in (at order 2 and above the forward is a
        #: backward, linear in its upstream gradient, its last input): its rounding
        #: there scales with their size (see :meth:`linear_noise`).
        self.linear = tuple(linear)
        self._unit_sizes: np.ndarray | None = None
        self._seeded_quanta: np.ndarray | None = None
        self._bind = bind or (lambda arrays, params: lambda: forward(arrays, params))
        self.params = dict(params or {})
        self.calls = 0
        native = [np.array(a, order="C") for a in arrays]
        self.work = native
        self.eval_dtype = np.result_type(
            *[a.dtype for a in native if a.dtype.kind == "f"] or [np.float64]  # type: ignore[list-item]
        )
        if reference == "float64" and any(
            a.dtype.kind == "f" and a.dtype != np.float64 for a in native
        ):
            wide = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in native]
            try:
                out = self.call(wide)
            except Exception:
                out = None
            if out is not None and out.dtype == np.float64 and out.shape == np.shape(v):
                self.work = wide
                self.eval_dtype = np.dtype(np.float64)
        self.v = np.asarray(v, dtype=np.float64)
        # Copies (np.array, not np.asarray), here and in `refine`: a forward may
        # return a view of its input (reshape, transpose, indexing), which the
        # perturbations below change in place.
        out0 = self.call(self.work)
        inner = computes_in or self._computes_in(out0)  # (known: see rounds_to_half)
        #: The dtype narrower than float64 that the forward computes in even when given
        #: float64 (``f(x.half())`` cast back), or None: a float64 check of the op sees
        #: these very numerics (see ``low_precision.judged_as_float64``).
        self.inner: np.dtype | None = inner
        #: The dtype the forward rounds its inputs to: ``inner``, or one narrower
        #: (``1 - cos(x.half())``: float16 inside, float32 outputs); None for neither.
        self.input_rounding = self._rounds_inputs_to(inner, out0) or inner
        if self.input_rounding is not None and self.input_rounding != inner:
            # (differenced where the forward computes: at x rounded to that dtype, as
            # where it is ``inner``: the analytic gradient is the one there)
            self.work = [
                a.astype(self.input_rounding).astype(a.dtype) if a.dtype.kind == "f" else a
                for a in self.work
            ]
            out0 = self.call(self.work)
        if inner is not None:
            narrow = [a.astype(inner) if a.dtype.kind == "f" else a for a in self.work]
            try:  # (an op that rounds to float16 inside may refuse float16 inputs)
                out_narrow = self.call(narrow)
            except Exception:
                out_narrow = None
            if out_narrow is not None and np.shape(out_narrow) == np.shape(out0):
                self.work, self.eval_dtype, out0 = narrow, inner, out_narrow
        #: Whether the differences run in :attr:`inner` itself: then x ± h are numbers of
        #: it (exact steps, no rounding of the inputs), each output is one of its numbers
        #: too, and the rounding noise of a level is what those outputs' own ulps allow
        #: (see :meth:`_score_levels`), not eps of the op's largest output.
        #: (Not where the outputs are numbers of float16 while the inner dtype found is
        #: float32: softmax(x.half()), moved along float16's steps, all of one size
        #: there, stands still by its shift invariance and is taken for float32; it
        #: rounds x ± h to float16 inside, and float32's ulps would be 8192 times too
        #: fine a bound. The modelled noise stays, as before.)
        self.in_inner = (
            inner is not None
            and self.eval_dtype == inner
            and not (inner == np.float32 and exact_in(out0, np.dtype(np.float16)))
        )
        self.eps = float(np.finfo(self.eval_dtype).eps)  # (the noise's: noise_dtype)
        self.noise_dtype = noise_dtype(self.eval_dtype, self.input_rounding)
        self.f0 = np.array(out0, dtype=np.float64)
        # A real output minus f0 (float64) is float64 by NumPy's promotion alone;
        # asking for dtype=float64 costs ~0.3 us per subtraction (measured).
        self._real_out = out0.dtype.kind in "biuf"
        self._fwd: Callable[[], np.ndarray] | None = None  # made by `refine` when needed
        self._sizes: np.ndarray | None = None  # made by `refine` when needed
        #: Whether :meth:`rounding_sizes` measured in the forward's own dtype (no wider
        #: one computes it): then the rounding at each refinement's step points is
        #: measured too (see :meth:`_step_point_sizes`).
        self._own_dtype_rounding = False
        #: The smallest quantum in which ``s`` moved at this point, once one showed
        #: (see :meth:`LevelScores.quantize_noise`).
        self.quantum: float | None = None
        #: Per output (flat), the quantum it moved in where it stood still at smaller
        #: steps, once a refinement showed one (0: none known; see
        #: :meth:`LevelScores.quantize_outputs`).
        self.output_quanta: np.ndarray | None = None
        self._rows: np.ndarray | None = None  # buffers of `directional`
        self._scores: list[np.ndarray] | None = None  # buffers of `_score_levels`

    def call(self, arrays: Sequence[np.ndarray]) -> np.ndarray:
        self.calls += 1
        return np.asarray(self._forward(arrays, self.params))

    def first_pass(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One central difference per element of input ``i``: (values, jumps J at the
        same step, steps). Two forward calls per element, nothing else."""
        x = self.work[i]
        flat = x.reshape(-1)  # a view: `work` arrays are contiguous copies
        steps = step_sizes(flat, self.eps).astype(x.dtype)
        steps = (flat + steps) - flat  # exact in the evaluated dtype too
        # The loop below is the checker's inner loop (two forward calls per element):
        # each output is copied into a row of a buffer, and everything else is done for
        # a batch of rows at once (a subtraction and a dot product per call were a tenth
        # of a small torch op's call); the perturbed values are Python floats (exact:
        # each is a value of the array's dtype).
        olds = flat.tolist()
        aboves = (flat + steps).tolist()
        belows = (flat - steps).tolist()
        ups = np.empty(flat.size)
        downs = np.empty(flat.size)
        fwd = self._bind(self.work, self.params)
        if not self._real_out:  # (a complex output raises here, as it always did)
            fwd = partial(lambda call: np.subtract(call(), 0.0, dtype=np.float64), fwd)
        v, f0 = self.v.reshape(-1), self.f0.reshape(-1)
        rows = max(1, min(_DIRECTIONAL_ROWS_MAX_SIZE // max(f0.size, 1), flat.size))
        plus, minus = np.empty((2, rows, f0.size))
        # (rows of the output's shape: an output is broadcast into its row as it was
        # against f0 before, a 1-element output to all of f0)
        above, below = (rows_of.reshape(rows, *self.f0.shape) for rows_of in (plus, minus))
        # Outputs the perturbation does not reach give exact zeros in `plus - f0` and
        # `minus - f0`, so each dot product sums the touched outputs only.
        with np.errstate(all="ignore"), no_autodiff:
            for start in range(0, flat.size, rows):
                end = min(start + rows, flat.size)
                for r, j in enumerate(range(start, end)):
                    flat[j] = aboves[j]
                    above[r] = fwd()
                    flat[j] = belows[j]
                    below[r] = fwd()
                    flat[j] = olds[j]
                used = end - start
                ups[start:end] = np.subtract(plus[:used], f0, out=plus[:used]) @ v
                downs[start:end] = np.subtract(minus[:used], f0, out=minus[:used]) @ v
            values = (ups - downs) / (2 * steps)
            jumps = (ups + downs) / steps
        self.calls += 2 * flat.size
        return values.reshape(x.shape), jumps.reshape(x.shape), steps.reshape(x.shape)

    def directional(
        self, i: int, directions: np.ndarray, h: float, *, noise: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One central difference of ``s`` along each row of ``directions`` (each the
        size of input ``i``), at the step ``h``: (D, J, N) per row, as one level of
        :meth:`refine` computes them, N the modelled rounding noise of D (with
        ``noise``; zeros without); nan where an output has the wrong shape. Two
        forward calls per row and nothing else in the loop: the arithmetic runs once
        for a batch of rows, in buffers kept from one call to the next (profiled:
        fresh arrays of a batch's size cost a page fault per 4 KiB, more than the
        arithmetic)."""
        steps = h * np.asarray(directions, dtype=np.float64).reshape(len(directions), -1)
        v, f0 = self.v.reshape(-1), self.f0.reshape(-1)
        sizes = self.rounding_sizes().reshape(-1) if noise else None
        rows = max(1, min(_DIRECTIONAL_ROWS_MAX_SIZE // max(f0.size, 1), len(steps)))
        if self._rows is None or self._rows.shape[1] < rows:
            self._rows = np.empty((4, rows, f0.size))
        d, jump, rounding = (np.zeros(len(steps)) for _ in range(3))
        for start in range(0, len(steps), self._rows.shape[1]):
            end = min(start + self._rows.shape[1], len(steps))
            plus, minus, a, b = self._rows[:, : end - start]
            ok = self._moved_outputs(i, steps[start:end], plus, minus)
            with np.errstate(all="ignore"):
                d[start:end] = (np.subtract(plus, minus, out=a) @ v) / (2 * h)
                np.subtract(plus, f0, out=a)
                jump[start:end] = (np.add(a, np.subtract(minus, f0, out=b), out=a) @ v) / h
                if sizes is not None:  # as _score_levels, over every output
                    np.maximum(np.abs(plus, out=a), np.abs(minus, out=b), out=a)
                    np.maximum(a, sizes, out=a)
                    rounding[start:end] = OUTPUT_ROUNDING_EPS * self.eps * (a @ np.abs(v)) / h
            if not ok.all():
                for out in (d, jump, rounding):
                    out[start:end][~ok] = np.nan
        return d, jump, rounding

    def _moved_outputs(
        self, i: int, steps: np.ndarray, plus: np.ndarray, minus: np.ndarray
    ) -> np.ndarray:
        """f at x ± each row of ``steps`` (moves of input ``i``) into the rows of
        ``plus`` and ``minus``, flat; whether each row's outputs had the right shape."""
        if self._fwd is None:
            self._fwd = self._bind(self.work, self.params)
        fwd, shape = self._fwd, self.f0.shape
        flat = self.work[i].reshape(-1)
        base = flat.copy()
        ok = np.ones(len(steps), dtype=bool)
        with np.errstate(all="ignore"), no_autodiff:
            try:
                for r, step in enumerate(steps):
                    # Each output copied before the next move: it may be a view.
                    np.add(base, step, out=flat, casting="unsafe")
                    up = fwd()
                    if up_ok := np.shape(up) == shape:
                        plus[r] = up.reshape(-1)
                    np.subtract(base, step, out=flat, casting="unsafe")
                    down = fwd()
                    if down_ok := np.shape(down) == shape:
                        minus[r] = down.reshape(-1)
                    ok[r] = up_ok and down_ok
                    self.calls += 2
            finally:
                flat[:] = base
        return ok

    def refine(
        self,
        i: int,
        along: int | np.ndarray,
        h0: float,
        jump_threshold: float,
        scale: float = 1.0,
        step_points: bool = True,
        upper: int = 0,
    ) -> Estimate:
        """Refined derivative of ``s`` along element ``along`` (a flat index) of input
        ``i``, or along the direction ``along`` (an array of the input's size), from
        central differences at the levels of :func:`_levels` (see :func:`_combine`).
        ``h0`` is the base step; ``scale`` the size of the element (|x|; for a
        direction, the largest ``max(|x_j|, 1)``), which decides how far below ``h0``
        the levels reach. The levels of the base ladder come first; the ones below it
        only when those leave a kink or an error estimate above ``jump_threshold``
        (what matters), which is where the function may vary on the other scale.
        ``step_points=False`` leaves out the rounding measured at the step points
        (:meth:`_step_point_sizes`; see :func:`refine_elements` for when); ``upper``
        levels more above the ladder's highest (see :mod:`.longer_steps`)."""
        # The bound forward (tensors made once over `work`, which is changed in place
        # below), not `call`: per call, `call` wraps every input in a new Tensor and
        # enters no_autodiff, which profiled at about as much as a small forward.
        if self._fwd is None:
            self._fwd = self._bind(self.work, self.params)
        self.rounding_sizes()  # (at x itself, before any level moves it)
        multipliers, base_index = _levels(scale)
        above = multipliers[-1] * LEVEL_RATIO ** np.arange(1, upper + 1)
        multipliers = np.append(multipliers, above)
        levels = LevelScores(len(multipliers), self.f0.shape)
        levels.magnitude = max(1.0, scale) if math.isfinite(scale) else 1.0
        # (along an element only: x ± h is then exact; a direction's x ± h·d rounds each
        # element to the inner dtype, a noise of |s'|·its ulp that no output shows)
        levels.tight = self.in_inner and isinstance(along, (int, np.integer))
        levels.linear_noise = self.linear_noise(i, np.abs(self.v))
        levels.along_linear = i in self.linear
        levels.powers = np.arange(len(multipliers)) - base_index
        if self.input_rounding is not None and isinstance(along, (int, np.integer)):
            x_j = self.work[i].reshape(-1)[along].astype(self.input_rounding)
            levels.absorbed = float(np.spacing(np.abs(x_j))) / 2
        if step_points and self._own_dtype_rounding and isinstance(along, (int, np.integer)):
            levels.point_sizes = self._step_point_sizes(i, int(along), h0 * float(multipliers[-1]))
        ladder = base_index + LOWEST_LEVEL  # the first level of the base ladder
        self._run_levels(i, along, h0, multipliers[ladder:], ladder, levels)
        if isinstance(along, (int, np.integer)):
            self._probe_unmoved(i, int(along), h0, levels)
            self._probe_line(i, int(along), h0, levels)
        self._quantize(levels)
        est = _combine(levels, self.eps, jump_threshold, base_index)
        if ladder > 0 and lower_levels_needed(est, jump_threshold, scale, h0 * multipliers[0]):
            self._run_levels(i, along, h0, multipliers[:ladder], 0, levels)
            if isinstance(along, (int, np.integer)):
                self._probe_line(i, int(along), h0, levels)
            self._quantize(levels)
            est = _combine(levels, self.eps, jump_threshold, base_index)
        for deeper in range(SINGULAR_ROUNDS):
            if not self.go_deeper(i, along, levels, est, deeper):
                break
            # The value comes from steps that reach across a singular set (log|det| of
            # a nearly singular matrix): smaller steps than those see a derivative far
            # larger, or, where every step crosses it, none agree (the matrix 1e-6 from
            # singular, whose entries' smallest steps are 5e-7). Steps further down
            # decide; where they do not, nothing is known.
            levels = levels.below(SINGULAR_LEVELS)
            base_index += SINGULAR_LEVELS
            lowest = int(levels.powers[0])
            self._run_levels(
                i, along, h0, LEVEL_RATIO ** np.arange(lowest, lowest + SINGULAR_LEVELS), 0, levels
            )
            self._quantize(levels)
            est = _combine(levels, self.eps, jump_threshold, base_index)
        if not est.kink and _blows_up_below(levels, est):
            est.kink = est.unbounded = True
        return self.resolved_elsewhere(i, along, est, h0, jump_threshold, scale)

    def _probe_unmoved(self, i: int, j: int, h0: float, levels: LevelScores) -> None:
        """Where some outputs moved at the levels and others never did, whether those
        others depend on element ``j`` at all, below their quanta: f at x ± steps
        above the levels', from LEVEL_RATIO**PROBE_POWER times ``h0`` (about 0.4 of
        the element's scale) down, while some output that moved at the first still
        moves. An output's least move there, where no more than a quantum of
        rounding may be (:meth:`_rounding_cap`), bounds its quantum, known from here on (see
        :meth:`LevelScores.quantize_outputs`). At order 2 a cross-entropy's backward
        at logits [35, 0, -1] has p0 - 1 = -8.6e-16, which rounds at the ulps of p0
        (1e-16) and stands still at every step, while the other logits' effect on it
        (-p0·p1, 6e-16 per unit) is what the double backward says. A move of more than
        rounding (a clamp or a hinge the probe reaches) says nothing; outputs that do
        not move at the first step (an elementwise op's others) cost nothing more."""
        unmoved = levels.moved_step == 0
        if not unmoved.any() or unmoved.all():
            return
        flat = self.work[i].reshape(-1)
        old = flat[j]
        cap = self._rounding_cap()
        seen = np.zeros(unmoved.shape)
        for power in range(PROBE_POWER, HIGHEST_LEVEL, -1):
            with np.errstate(over="ignore"):  # (float16 overflows at 4**8 steps)
                step = float(np.asarray(old + h0 * LEVEL_RATIO**power, dtype=flat.dtype) - old)
            moves = []
            try:
                with np.errstate(all="ignore"), no_autodiff:
                    for sign in (1.0, -1.0):
                        flat[j] = old + sign * step
                        out = np.asarray(self.call(self.work), dtype=np.float64)
                        if out.shape != self.f0.shape:
                            return
                        moves.append(np.abs(out - self.f0).reshape(-1))
            except Exception:
                break
            finally:
                flat[j] = old
            with np.errstate(invalid="ignore"):
                move = np.fmax(*moves)
                unmoved = unmoved & (move > 0)  # (still here: still below, too)
                small = unmoved & (move <= cap)
            seen = np.where(small, move, seen)
            if not (unmoved & ~small).any():
                break  # what moves by more than rounding here may not, a step below
        if not seen.any():
            return
        levels.probed = seen
        known = self.output_quanta
        if known is None:
            known = np.zeros(seen.shape)
        self.output_quanta = np.where(
            (known > 0) & (seen > 0), np.minimum(known, seen), known + seen
        )

    def _run_levels(
        self,
        i: int,
        along: int | np.ndarray,
        h0: float,
        multipliers: np.ndarray,
        first: int,
        levels: LevelScores,
    ) -> None:
        """Central differences of ``s`` at steps ``h0 × multipliers``, levels ``first``
        on, into ``levels``."""
        flat = self.work[i].reshape(-1)
        base = flat.copy()
        element = isinstance(along, (int, np.integer))
        calls = 0
        with np.errstate(all="ignore"), no_autodiff:
            for k, m in enumerate(multipliers, start=first):
                row = len(levels.pending)  # the first row not holding a pending level
                if element:
                    old = base[along]
                    h = float(np.asarray(old + h0 * m, dtype=flat.dtype) - old)
                    if h == 0 or abs(h - h0 * m) > h0 * m / 16:
                        continue
                    ok = self._element_outputs(flat, along, old, h, levels, row)  # type: ignore[arg-type]
                else:
                    h = h0 * m
                    ok = self._direction_outputs(flat, base, h * along, levels, row)
                calls += 2
                if ok:
                    levels.hs[k] = h
                    levels.pending.append(k)
                    if len(levels.pending) == levels.batch:
                        self._score_levels(levels)
            if levels.pending:
                self._score_levels(levels)
        self.calls += calls

    def _element_outputs(
        self, flat: np.ndarray, j: int, old: Any, h: float, levels: LevelScores, row: int
    ) -> bool:
        """f at x ± h e_j into ``row`` of the level buffers; False when an output has
        the wrong shape (then the level is not used)."""
        fwd = self._fwd
        assert fwd is not None
        flat[j] = old + h
        up = fwd()
        if up_ok := np.shape(up) == levels.shape:
            levels.plus[row] = up  # (a copy now: `up` may be a view of the input)
        flat[j] = old - h
        down = fwd()
        if down_ok := np.shape(down) == levels.shape:
            levels.minus[row] = down
        flat[j] = old
        return up_ok and down_ok

    def _direction_outputs(
        self, flat: np.ndarray, base: np.ndarray, step: np.ndarray, levels: LevelScores, row: int
    ) -> bool:
        """f at x ± step into ``row`` of the level buffers (as :meth:`_element_outputs`)."""
        fwd = self._fwd
        assert fwd is not None
        np.add(base, step, out=flat, casting="unsafe")
        up = fwd()
        if up_ok := np.shape(up) == levels.shape:
            levels.plus[row] = up
        np.subtract(base, step, out=flat, casting="unsafe")
        down = fwd()
        if down_ok := np.shape(down) == levels.shape:
            levels.minus[row] = down
        flat[:] = base
        return up_ok and down_ok

    def _score_buffers(self, shape: tuple[int, ...]) -> list[np.ndarray]:
        """Six float64 and two bool arrays of ``shape`` for :meth:`_score_levels` (the
        same ones for every level of this point's refinements)."""
        if self._scores is None or self._scores[0].shape != shape:
            floats = [np.empty(shape) for _ in range(6)]
            self._scores = [*floats, np.empty(shape, dtype=bool), np.empty(shape, dtype=bool)]
        return self._scores

    def _score_levels(self, levels: LevelScores) -> None:
        """Score the pending levels from the outputs at x ± h in the first rows of
        ``levels.plus`` and ``levels.minus`` (row ``r`` is level ``levels.pending[r]``):
        the central difference of ``s``, the jump J (the sum of the one-sided
        differences) and the modelled rounding noise of the difference."""
        pending = levels.pending
        used = len(pending)
        plus, minus = levels.plus[:used], levels.minus[:used]
        d, jump, noise, hs = levels.d, levels.jump, levels.noise, levels.hs
        f0 = self.f0
        v = self.v
        absv = np.abs(v)
        vdot = np.vdot
        eps = float(np.finfo(self.noise_dtype).eps)
        # Into buffers kept from one call to the next (on a large output, a level is a
        # few arrays of its size, and fresh ones cost a page fault per 4 KiB: profiled,
        # more than the arithmetic).
        spread, up, down, moved, outputs, other, touched, also = self._score_buffers(plus.shape)
        np.subtract(plus, minus, out=spread)
        np.subtract(plus, f0, out=up)
        np.subtract(minus, f0, out=down)
        np.add(up, down, out=moved)
        # Rounding in the touched outputs, at their largest (at f0 or moved), and at
        # least that of the op's intermediates (`rounding_sizes`).
        np.not_equal(plus, f0, out=touched)
        touched |= np.not_equal(minus, f0, out=also)
        np.maximum(np.abs(plus, out=outputs), np.abs(minus, out=other), out=outputs)
        measured = self.rounding_sizes()
        if levels.point_sizes is not None:
            measured = np.maximum(measured, levels.point_sizes)
        if levels.tight:
            # Each output at x ± h (numbers of the inner dtype) is F(x ± h) rounded to the
            # inner (or noise) dtype: a difference of two is off by at most the ulp of the
            # larger, whatever the op's other outputs (exp at [2, 0.3]: 4 eps of e² is
            # 230% of the derivative at 0.3 over its base step, and a backward 5% off
            # passed). Intermediates far larger than the output show in the levels' own
            # noise (_level_noise) and quanta (LevelScores.quantize_noise).
            ulps = output_ulps(outputs, self.eval_dtype, self.noise_dtype)
        # A level at which only outputs of no weight in v moved is still (sin x beside
        # cos x at 2e-253, v = [0, 1]: sin's rounding, weighted 0, was the noise taken).
        weightless = None if absv.all() else absv == 0
        for row, k in enumerate(pending):
            h = float(hs[k])
            d[k] = float(vdot(v, spread[row])) / (2 * h)
            jump[k] = float(vdot(v, moved[row])) / h
            t = touched[row] if weightless is None else touched[row] & ~weightless
            if t.any() and levels.tight:
                noise[k] = float(vdot(absv[t], ulps[row][t])) / (2 * h) + levels.linear_noise
            elif t.any():
                size = np.maximum(outputs[row, ...], measured, out=outputs[row, ...])
                # (where every output moved: the same sum, without the copies)
                total = vdot(absv, size) if t.all() else vdot(absv[t], size[t])
                noise[k] = OUTPUT_ROUNDING_EPS * eps * float(total) / h
                noise[k] += levels.linear_noise
            else:
                # NOTE: no output moved, which is not proof that none depends on x:
                # each may have absorbed a change below half an ulp of an intermediate
                # (1e-13·γ + 1, batchnorm's gamma where a channel is constant; a
                # cross-entropy at a logit of 35, log(1 + 1e-15), whose output of
                # 1e-15 never moves). All that is known is |s'| <= eps·<|v|, m> / 2h,
                # m the size of those intermediates: at least the output's, and at
                # least the moved element's and 1 (see LevelScores.magnitude).
                size = np.maximum(measured, levels.magnitude)
                noise[k] = eps * float(vdot(absv, size)) / (2 * h) + levels.linear_noise
                levels.still[k] = True
        levels.note_outputs(touched, (up, down), hs[pending])
        quanta = self.known_quanta()
        if quanta is not None:
            # An output that moves in quanta far coarser than its own rounding is known
            # only to that quantum: where its rounding scales with it (at order 2, a
            # cross-entropy's backward is (p - onehot)·v, its p0 - 1 = -4e-13 carrying
            # the rounding of p0, 1e-16, and so does every derivative of it: with
            # respect to v it is that rounded p0 - 1 exactly, against the double
            # backward's own rounding of it), a difference of it is right to that
            # share of itself only, however exact.
            # Where the forward is linear in no input (order 1), the share is of the
            # output's size over the level's points, not at x alone: one that is 0 at
            # x and moves by the step (a sort's value at a tie of 0 with 2e-308, whose
            # reordering by a larger step moved it by that "quantum") is known to its
            # quantum over that size, as a difference of it is. (A backward's output
            # is 0 at v = 0 and rounds in proportion to v: its share stays whole.)
            quantized = quanta > 0
            at = np.abs(f0.reshape(-1))
            for row, k in enumerate(pending):
                size = levels.quantum_sizes(at, plus[row], minus[row], bool(self.linear))
                with np.errstate(all="ignore"):
                    share = np.where(quantized, np.minimum(quanta / size, 1.0), 0.0)
                share *= absv.reshape(-1)
                rate = np.abs(spread[row].reshape(-1)) / (2 * float(hs[k]))
                levels.precision[k] = float(np.vdot(share, np.where(np.isfinite(rate), rate, 0.0)))
        levels.pending = []

    def complex_step(self, i: int) -> np.ndarray:
        """``Im s(x + i h e_j) / h`` for every element of input ``i``."""
        arrays = [a.astype(np.complex128) if a.dtype.kind == "f" else a for a in self.work]
        flat = arrays[i].reshape(-1)
        values = np.empty(flat.size)
        for j in range(flat.size):
            old = flat[j]
            h = 1e-20 * max(abs(old.real), 1.0)
            flat[j] = old + 1j * h
            try:
                out = self.call(arrays)
            except Exception as exc:
                raise ComplexStepUnsupported(
                    f"complex_step=True needs a target that computes with complex input; "
                    f"this one raised {exception_text(exc)}"
                ) from exc
            flat[j] = old
            if out.dtype.kind != "c":
                raise ComplexStepUnsupported(
                    "complex_step=True needs a target that computes with complex input; "
                    f"this one returned {out.dtype}"
                )
            values[j] = np.vdot(self.v, out).imag / h
        return values.reshape(self.work[i].shape)


def full_estimate(
    ev: Evaluator,
    i: int,
    *,
    settled: Callable[[np.ndarray], np.ndarray] | None = None,
    jump_threshold: Callable[[np.ndarray], float] | float = 0.0,
) -> Estimate:
    """The numeric gradient of input ``i``, element by element.

    ``settled(first)`` receives the first-pass central differences and returns a
    boolean mask of the elements that need no refinement (default: none). The
    ``jump_threshold`` (or a function of the first pass giving it) is the size
    below which a difference of one-sided derivatives does not matter.
    """
    calls0 = ev.calls
    first, jumps, steps = ev.first_pass(i)
    shape = first.shape
    # Flat float arrays throughout (0-d arithmetic would give NumPy scalars).
    first, jumps, steps = (
        np.asarray(a, dtype=np.float64).reshape(-1) for a in (first, jumps, steps)
    )
    value = first.copy()
    error = np.abs(first) * VALUE_ROUNDING_EPS * ev.eps
    kink = np.zeros(first.size, dtype=bool)
    noise = np.zeros(first.size)
    with np.errstate(all="ignore"):
        curvature = jumps / steps
    done = (
        np.zeros(first.size, dtype=bool)
        if settled is None
        else np.asarray(settled(first.reshape(shape))).reshape(-1)
    )
    done &= np.isfinite(first)
    threshold = jump_threshold(first) if callable(jump_threshold) else jump_threshold
    # One-sided quotients that already differ at the first step: maybe a kink, even
    # where the central difference agrees (abs at 0 with the subgradient 0). Smooth
    # functions give J = s''·h, below 1e-3 of the gradient's scale unless very curved.
    finite = np.abs(first[np.isfinite(first)])
    scale = float(finite.max()) if finite.size else 0.0
    done &= ~(np.abs(jumps) > max(threshold, FIRST_JUMP_FRACTION * scale))
    est = Estimate(value, error, kink, curvature, ~done, 0, noise)
    which = np.flatnonzero(~done)
    if which.size:
        jumped = np.abs(jumps[which]) > max(threshold, FIRST_JUMP_FRACTION * scale)
        refine_elements(ev, i, est, which, threshold, steps[which], jumped)
        again, tiny = ev.tiny_kinks(i, est, which, threshold, jump_threshold)
        if tiny.size:
            refine_elements(ev, i, est, tiny, again, steps[tiny])
    for name in ("value", "error", "kink", "curvature", "refined", "noise"):
        setattr(est, name, getattr(est, name).reshape(shape))
    est.calls = ev.calls - calls0
    return est


def refine_elements(
    ev: Evaluator,
    i: int,
    est: Estimate,
    which: np.ndarray,
    jump_threshold: float,
    steps: np.ndarray | None = None,
    jumped: np.ndarray | None = None,
) -> None:
    """Refine elements ``which`` (flat indices) of input ``i`` (base steps ``steps``,
    by default :func:`step_sizes`), in place of their values in ``est`` (whose arrays
    may have any shape: they are read flat).

    ``jumped`` (per element: its first pass jumped): refined without the rounding at
    its step points first (20 calls; it raises only a compared element's noise, and a
    kink is not compared), again with it where no kink shows (a sort at 38 ties of 40)."""
    x = ev.work[i].reshape(-1)
    steps = step_sizes(x[which], ev.eps) if steps is None else steps
    jumped = np.zeros(len(which), dtype=bool) if jumped is None else jumped
    flat = {name: getattr(est, name).reshape(-1) for name in ("value", "error", "kink")}
    curvature, refined, noise = (
        getattr(est, name).reshape(-1) for name in ("curvature", "refined", "noise")
    )

    def refine(j: int, h: float, kink_first: bool) -> Estimate:
        size = abs(float(x[j]))
        one = ev.refine(i, j, h, jump_threshold, size, step_points=not kink_first)
        one = one if one.kink or not kink_first else ev.refine(i, j, h, jump_threshold, size)
        flat["value"][j], flat["error"][j], flat["kink"][j] = one.value, one.error, one.kink
        curvature[j], refined[j], noise[j] = one.curvature, True, one.noise
        return one

    known: list[np.ndarray | None] = []
    for j, h, first_kink in zip(which, steps, jumped):
        known.append(None if ev.output_quanta is None else ev.output_quanta.copy())
        refine(int(j), float(h), bool(first_kink))
    # An element refined before another showed an output's quanta (see
    # Evaluator._probe_unmoved) is refined again, with them: the quanta are the point's.
    final = ev.output_quanta
    for j, h, before, first_kink in zip(which, steps, known, jumped):
        if final is None or (before is not None and np.array_equal(before, final)):
            continue
        refine(int(j), float(h), bool(first_kink))
