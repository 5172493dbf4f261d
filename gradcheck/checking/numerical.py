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
  modelled and measured from the levels themselves, enters each level's error.
* **Quanta.** An output that stands still at the smaller steps and moves at larger
  ones moves in quanta of its intermediates (p0 - 1 of a softmax at a logit of 30
  rounds at the ulps of p0), which no step resolves below: its quantum over 2h floors
  each level (:meth:`_LevelScores.quantize_outputs`), also for the elements where it
  never moved, once a larger step shows it depends on them at all
  (:meth:`Evaluator._probe_unmoved`).
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
  D·h) far below what larger ones show, the kink is nearby, not at x, and no larger
  window decides (maximum(x, y) at inputs of 1e-9, 1e-10 apart: the smaller input's
  s stands still at the steps below the tie, which is flatness, not rounding quanta).
* **Complex step** (on request, for ops analytic in their inputs):
  ``Im s(x + i h e_j) / h`` has no subtractive cancellation, so h can be tiny.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from gradcheck.checking.thresholds import (
    CONVERGED_FRACTION,
    EDGE_AGREEMENT,
    EDGE_LEVELS,
    EDGE_SHRINK,
    FIRST_JUMP_FRACTION,
    HIGHEST_LEVEL,
    KINK_NOISE_MARGIN,
    KINK_STEADINESS,
    KINK_WINDOW,
    LEVEL_RATIO,
    LOWEST_LEVEL,
    NOISE_LEVELS,
    ORDER_LEVELS,
    ORDER_RANGE,
    ORDER_STEADINESS,
    OUTPUT_ROUNDING_EPS,
    OWN_SCALE_BITS,
    OWN_SCALE_MIN_ULPS,
    PROBE_POWER,
    RESIDUAL_DEGREE,
    RESIDUAL_OFFSETS,
    ROUNDING_PROBE_SEED,
    ROUNDING_PROBE_SPREAD,
    SINGULAR_BLOWUP,
    SINGULAR_LEVELS,
    SMALL_X_LEVELS,
    TRUNCATION_GROWTH,
    VALUE_ROUNDING_EPS,
)
from gradcheck.engine.graph import no_autodiff
from gradcheck.errors import ComplexStepUnsupported, exception_text

__all__ = [
    "ComplexStepUnsupported",
    "Evaluator",
    "Estimate",
    "exact_in",
    "full_estimate",
    "refine_elements",
    "step_sizes",
]


#: Up to this many output elements over all levels of one refinement, the levels'
#: arithmetic runs once for all of them (see :meth:`Evaluator.refine`).
_BATCHED_LEVELS_MAX_SIZE = 1 << 16
#: :meth:`Evaluator.directional` scores its rows in batches of at most this many
#: output elements (each of its four buffers).
_DIRECTIONAL_ROWS_MAX_SIZE = 1 << 15


def _levels(size: float) -> tuple[np.ndarray, int]:
    """Step multipliers for an element of size ``size`` (|x|), and the index of 1.

    The base step is eps**(1/3) times ``max(|x|, 1)``: relative to |x| for |x| > 1,
    right for x², log x...; absolute below, right for sin x near 0. But a function's
    own scale may be the other one: sin(x) at x = 1e6 varies on a scale of 1, and
    log x, 1/x or a cosine similarity at x = 1e-5 on a scale of |x|. So the levels
    reach further down, to the other step (eps**(1/3) absolute for |x| > 1, relative
    for |x| < 1, by at most :data:`SMALL_X_LEVELS` levels), and the choice among them
    is the error estimate's (see :func:`_combine`).
    """
    extra = int(_extra_levels(np.array([size]))[0])
    powers = np.arange(LOWEST_LEVEL - extra, HIGHEST_LEVEL + 1)
    return LEVEL_RATIO**powers, extra - LOWEST_LEVEL


def _extra_levels(sizes: np.ndarray) -> np.ndarray:
    """Per element of size ``sizes`` (|x|), how many levels :func:`_levels` adds below
    the base ladder."""
    sizes = np.asarray(sizes, dtype=np.float64)
    with np.errstate(all="ignore"):
        extra = np.ceil(np.abs(np.log(sizes)) / np.log(LEVEL_RATIO) - 1e-9)
        extra = np.where((sizes > 0) & np.isfinite(sizes), np.maximum(extra, 0), 0)
        extra = np.where(sizes < 1, np.minimum(extra, SMALL_X_LEVELS), extra)
    return extra.astype(np.int64)


def _wider(dtype: np.dtype) -> np.dtype | None:
    """A float dtype finer than ``dtype`` to measure its rounding with, or None."""
    if dtype in (np.float16, np.float32):
        return np.dtype(np.float64)
    longdouble = np.dtype(np.longdouble)
    if dtype == np.float64 and np.finfo(longdouble).eps < np.finfo(np.float64).eps:
        return longdouble  # 80-bit extended on x86; the same as float64 elsewhere
    return None


def exact_in(a: np.ndarray, dtype: np.dtype) -> bool:
    """Whether every finite element of ``a`` is a number of ``dtype``."""
    a = np.asarray(a, dtype=np.float64)
    finite = a[np.isfinite(a)]
    with np.errstate(all="ignore"):
        return bool(np.array_equal(finite.astype(dtype).astype(np.float64), finite))


def step_sizes(x: np.ndarray, eps: float) -> np.ndarray:
    """Per-element central-difference steps for ``x``: ``eps**(1/3) * max(|x|, 1)``
    rounded to a power of two.

    A power-of-two step is a whole number of units in the last place of every
    intermediate at least as large as the step's own ulp: when an op rounds its
    intermediates coarsely (``(x + 1e6) - 1e6`` rounds to 1e6's ulp, 2**-33), both
    ``x + h`` and ``x - h`` round by the same amount and their difference stays exact.

    Examples
    --------
    >>> step_sizes(np.array([0.0, 1e6]), np.finfo(np.float64).eps)
    array([7.62939453e-06, 8.00000000e+00])
    """
    xf = np.asarray(x, dtype=np.float64)
    h = np.cbrt(eps) * np.maximum(np.abs(xf), 1.0)
    return np.exp2(np.round(np.log2(h)))


@dataclass
class Estimate:
    """Numeric derivative of ``s``: value, error estimate, whether ``s`` is not
    differentiable there (a kink), its second derivative along the same direction (a
    by-product: ``J / h``), whether it was refined, the forward calls spent, and the
    rounding noise within the error estimate.

    :func:`full_estimate` gives one per input, each field an array of the input's
    shape; :meth:`Evaluator.refine` one per element or direction, each field a scalar.
    """

    value: Any
    error: Any
    kink: Any
    curvature: Any
    refined: Any = True
    calls: int = 0
    #: The part of ``error`` that is the rounding noise of the differences: below it,
    #: finite differences resolve nothing (0 where the first pass settled an element).
    noise: Any = 0.0
    #: Where ``kink``: whether the derivative there is no finite number as far as the
    #: steps show (a pole, a log, a jump of ``s`` within every step's reach, or no two
    #: estimates agreeing), rather than two finite one-sided derivatives that differ.
    unbounded: Any = False
    #: The smaller step of the levels the value came from (0 where not refined).
    step: Any = 0.0
    #: Whether the value is extrapolated with an order below h² (see
    #: :func:`_convergence_ratio`): smaller steps, where there are any, may see s smooth.
    low_order: Any = False


class Evaluator:
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
    ) -> None:
        self._forward = forward
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
        inner = self._computes_in(out0)
        #: The dtype narrower than float64 that the forward computes in even when given
        #: float64 (``f(x.half())`` cast back), or None: a float64 check of the op sees
        #: these very numerics (see ``_Run.judged_as_float64`` in the checker).
        self.inner: np.dtype | None = inner
        if inner is not None:
            narrow = [a.astype(inner) if a.dtype.kind == "f" else a for a in self.work]
            try:  # (an op that rounds to float16 inside may refuse float16 inputs)
                out_narrow = self.call(narrow)
            except Exception:
                out_narrow = None
            if out_narrow is not None and np.shape(out_narrow) == np.shape(out0):
                self.work, self.eval_dtype, out0 = narrow, inner, out_narrow
        self.eps = float(np.finfo(self.eval_dtype).eps)
        self.f0 = np.array(out0, dtype=np.float64)
        # A real output minus f0 (float64) is float64 by NumPy's promotion alone;
        # asking for dtype=float64 costs ~0.3 us per subtraction (measured).
        self._real_out = out0.dtype.kind in "biuf"
        self._fwd: Callable[[], np.ndarray] | None = None  # made by `refine` when needed
        self._sizes: np.ndarray | None = None  # made by `refine` when needed
        #: The smallest quantum in which ``s`` moved at this point, once one showed
        #: (see :meth:`_LevelScores.quantize_noise`).
        self.quantum: float | None = None
        #: Per output (flat), the quantum it moved in where it stood still at smaller
        #: steps, once a refinement showed one (0: none known; see
        #: :meth:`_LevelScores.quantize_outputs`).
        self.output_quanta: np.ndarray | None = None
        self._rows: np.ndarray | None = None  # buffers of `directional`

    def _computes_in(self, out0: np.ndarray) -> np.dtype | None:
        """The dtype narrower than float64 that a forward given float64 computes in
        (``f(x.half())`` cast back), or None. Such a forward is ``F(round(x))``, so
        three evaluations tell it from one that computes in float64:

        * its output is a number of that dtype at x;
        * it is the very same output at x rounded to that dtype and moved a quarter of
          that dtype's ulp away from zero (which rounds back): a float64 forward moves
          there wherever it depends on x at all, ``exp`` at 0 included, where the
          output of ``exp(x.half())`` stays 1;
        * at x moved by that dtype's own finite-difference steps (every float element
          up) some output moved, and every output is a number of that dtype (a
          forward constant in x is not one); where every output at x is a whole
          number, at least half of them moved (a piecewise constant forward, such as
          ``floor``, ``sign`` or a cosine of one-element rows, ±1, is not one because
          a few of those steps cross its jumps; tanh(x.half()) at 2, 4, 4 is one,
          though only its output at 2 moved).

        These replaced "at least half the outputs moved by 1.5 ulps and stay numbers
        of that dtype", which missed ``exp(x.half())`` at inputs that are mostly 0
        (the move of 0 is below float16's smallest number) and ``tanh(x.half())`` at
        3 (its 1.5-ulp move is below half an ulp of its output), and so let float64's
        steps (1e-5), absorbed by the rounding of x, see a staircase of float16 ulps:
        numeric 0 against a right gradient, and any gradient passed below what they
        (did not) resolve. Steps for that dtype (in it: the forward rounds to it
        anyway) see the function."""
        if self.eval_dtype != np.float64 or out0.dtype != np.float64 or not out0.size:
            return None
        if not exact_in(out0, np.dtype(np.float32)):
            return None  # (nor in float16, whose numbers are float32's too)
        for narrow in (np.dtype(np.float16), np.dtype(np.float32)):
            if not exact_in(out0, narrow):
                continue
            with np.errstate(all="ignore"):
                rounded = [
                    a.astype(narrow).astype(np.float64) if a.dtype.kind == "f" else a
                    for a in self.work
                ]
                narrow_eps = float(np.finfo(narrow).eps)
                moved = [
                    (a + step_sizes(a, narrow_eps)).astype(narrow).astype(np.float64)
                    if a.dtype.kind == "f"
                    else a
                    for a in rounded
                ]
            unmoved = self._unmoved_by_a_quarter(rounded, out0, narrow)
            if unmoved is None:
                return None
            if not unmoved:
                continue
            try:
                out1 = np.asarray(self.call(moved))
            except Exception:
                return None
            if out1.shape != out0.shape or out1.dtype != np.float64:
                return None
            with np.errstate(invalid="ignore"):
                moved_out = out1 != out0
                whole = bool(np.all(out0[np.isfinite(out0)] % 1 == 0))
                changed = bool(np.any(moved_out)) and (np.mean(moved_out) >= 0.5 or not whole)
            if not (changed and exact_in(out1, narrow)):
                continue
            if self._unmoved_by_a_quarter(moved, out1, narrow):
                return narrow
        return None

    def _unmoved_by_a_quarter(
        self, at: list[np.ndarray], out: np.ndarray, narrow: Any
    ) -> bool | None:
        """Whether the forward at ``at`` (every float input a number of the dtype
        ``narrow``) moved up by a quarter of that dtype's ulp gives ``out`` again, as
        ``F(round(x))`` does; None where it raised there. At x = 0 alone the quarter ulp
        is a quarter of a subnormal, which a float64 forward that rounds coarsely there,
        (x + 1e6) - 1e6, does not see either; a step away it does (a quarter float32 ulp
        at 2**-8 is 1e6's ulp)."""
        with np.errstate(all="ignore"):
            quarter = [
                a + np.spacing(a.astype(narrow)).astype(np.float64) / LEVEL_RATIO
                if a.dtype.kind == "f"
                else a
                for a in at
            ]
        try:
            again = np.asarray(self.call(quarter))
        except Exception:
            return None
        return bool(again.shape == out.shape and np.array_equal(again, out, equal_nan=True))

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
        if wider is not None:
            errors = [
                self._rounding_error(wider, sign, scatter)
                for sign, scatter in (
                    (0.0, False),
                    (1.0, False),
                    (-1.0, False),
                    (1.0, True),
                    (-1.0, True),
                )
            ]
            known = [e for e in errors if e is not None]
            if known and errors[0] is not None:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # all-nan slices
                    stack = np.stack(known)
                    count = np.sum(np.isfinite(stack), axis=0)
                    spread = np.nanmax(stack, axis=0) - np.nanmin(stack, axis=0)
                    alone = 2 * np.abs(errors[0])
                    spread = np.where(count >= 2, spread, alone)
                sizes = np.maximum(sizes, np.where(np.isfinite(spread), spread, 0.0) / self.eps)
                self._sizes = sizes
                return sizes
        # No wider dtype computes this forward (torch and JAX take no long double; and
        # at order 2 the forward is a backward): its rounding is measured in its own
        # dtype instead (see _rounding_residual).
        residual = self._rounding_residual()
        if residual is not None:
            # At most the size of the inputs (and 1), as at a level where nothing moved
            # (_LevelScores.magnitude): where a function varies faster than the move
            # (log|a| at a = 8e-16), what no polynomial explains is no rounding, and a
            # noise of its size would make steps that never converge look converged.
            sizes = np.maximum(sizes, np.minimum(residual / self.eps, self._magnitude()))
        self._sizes = sizes
        return sizes

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

    def _rounding_residual(self) -> np.ndarray | None:
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
        shape along the move (the noise model then keeps the output's size)."""
        pattern = np.random.default_rng(ROUNDING_PROBE_SEED)
        moves: list[np.ndarray | None] = []
        for a in self.work:
            if a.dtype.kind != "f":
                moves.append(None)
                continue
            # the smallest levels' steps (times LEVEL_RATIO**2), which see a function
            # on the other scale too (sin at 1e9, whose base step is 6e3)
            low = LOWEST_LEVEL + 2 - _extra_levels(np.abs(a))
            move = step_sizes(a, self.eps) * LEVEL_RATIO**low
            move = move * pattern.choice([-1.0, 1.0], a.shape)
            move = move * np.exp2(-pattern.integers(0, ROUNDING_PROBE_SPREAD + 1, a.shape))
            # and three bits of mantissa, still exact: elements moved alike keep the
            # symmetries of the point (a softmax moved along (1, 1, ...) stands still)
            moves.append(move * (1 + pattern.integers(0, 8, a.shape) / 8))
        ts = np.array(RESIDUAL_OFFSETS) / LEVEL_RATIO**3
        rows = []
        try:
            with np.errstate(all="ignore"), no_autodiff:
                for t in ts:
                    if t == 0:
                        rows.append(np.zeros(self.f0.size))
                        continue
                    arrays = [
                        a if m is None else (a + t * m).astype(a.dtype)
                        for a, m in zip(self.work, moves)
                    ]
                    out = np.asarray(self.call(arrays))
                    if out.shape != self.f0.shape:
                        return None
                    rows.append(np.subtract(out, self.f0, dtype=np.float64).reshape(-1))
        except Exception:
            return None
        changes = np.stack(rows)
        if not np.all(np.isfinite(changes)):
            return None
        basis = np.vander(ts, RESIDUAL_DEGREE + 1, increasing=True)
        residual = changes - basis @ np.linalg.lstsq(basis, changes, rcond=None)[0]
        dof = len(ts) - (RESIDUAL_DEGREE + 1)
        sigma = np.sqrt(np.sum(residual**2, axis=0) / dof)
        return (np.sqrt(12) * sigma).reshape(self.f0.shape)

    def _rounding_error(
        self, wider: np.dtype, sign: float, scatter: bool = False
    ) -> np.ndarray | None:
        """f computed in ``wider`` minus f, at x + sign × the largest refinement step of
        every float input's elements (with ``scatter``, each element its own way: up or
        down, by a power of two); nan where either is not finite; None if the op does
        not compute in ``wider``."""
        arrays = list(self.work)
        if sign:
            pattern = np.random.default_rng(ROUNDING_PROBE_SEED)
            for i, a in enumerate(arrays):
                if a.dtype.kind == "f":
                    move = step_sizes(a, self.eps) * LEVEL_RATIO**HIGHEST_LEVEL
                    if scatter:
                        move = move * pattern.choice([-1.0, 1.0], a.shape)
                        move = move * np.exp2(
                            -pattern.integers(0, ROUNDING_PROBE_SPREAD + 1, a.shape)
                        )
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

    def call(self, arrays: Sequence[np.ndarray]) -> np.ndarray:
        self.calls += 1
        return np.asarray(self._forward(arrays, self.params))

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
    ) -> Estimate:
        """Refined derivative of ``s`` along element ``along`` (a flat index) of input
        ``i``, or along the direction ``along`` (an array of the input's size), from
        central differences at the levels of :func:`_levels` (see :func:`_combine`).
        ``h0`` is the base step; ``scale`` the size of the element (|x|; for a
        direction, the largest ``max(|x_j|, 1)``), which decides how far below ``h0``
        the levels reach. The levels of the base ladder come first; the ones below it
        only when those leave a kink or an error estimate above ``jump_threshold``
        (what matters), which is where the function may vary on the other scale."""
        # The bound forward (tensors made once over `work`, which is changed in place
        # below), not `call`: per call, `call` wraps every input in a new Tensor and
        # enters no_autodiff, which profiled at about as much as a small forward.
        if self._fwd is None:
            self._fwd = self._bind(self.work, self.params)
        self.rounding_sizes()  # (at x itself, before any level moves it)
        multipliers, base_index = _levels(scale)
        levels = _LevelScores(len(multipliers), self.f0.shape)
        levels.magnitude = max(1.0, scale) if math.isfinite(scale) else 1.0
        levels.powers = np.arange(len(multipliers)) - base_index
        ladder = base_index + LOWEST_LEVEL  # the first level of the base ladder
        self._run_levels(i, along, h0, multipliers[ladder:], ladder, levels)
        if isinstance(along, (int, np.integer)):
            self._probe_unmoved(i, int(along), h0, levels)
        self._quantize(levels)
        est = _combine(levels, self.eps, jump_threshold, base_index)
        if ladder > 0 and (est.kink or est.low_order or not est.error <= jump_threshold):
            self._run_levels(i, along, h0, multipliers[:ladder], 0, levels)
            self._quantize(levels)
            est = _combine(levels, self.eps, jump_threshold, base_index)
        if not est.kink and _blows_up_below(levels, est):
            # The value comes from steps that reach across a singular set (log|det| of
            # a nearly singular matrix): smaller steps than those see a derivative far
            # larger. Steps further down decide; where they do not, nothing is known.
            # (Where the levels already show no derivative, nothing is judged anyway.)
            levels = levels.below(SINGULAR_LEVELS)
            base_index += SINGULAR_LEVELS
            lowest = int(levels.powers[0])
            self._run_levels(
                i, along, h0, LEVEL_RATIO ** np.arange(lowest, lowest + SINGULAR_LEVELS), 0, levels
            )
            self._quantize(levels)
            est = _combine(levels, self.eps, jump_threshold, base_index)
            if _blows_up_below(levels, est):
                est.kink = est.unbounded = True
        return est

    def _probe_unmoved(self, i: int, j: int, h0: float, levels: _LevelScores) -> None:
        """Where some outputs moved at the levels and others never did, whether those
        others depend on element ``j`` at all, below their quanta: f at x ± steps
        above the levels', from LEVEL_RATIO**PROBE_POWER times ``h0`` (about 0.4 of
        the element's scale) down, while some output that moved at the first still
        moves. An output's least move there, where no more than a quantum of
        rounding may be (:meth:`_rounding_cap`), bounds its quantum, known from here on (see
        :meth:`_LevelScores.quantize_outputs`). At order 2 a cross-entropy's backward
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
        known = self.output_quanta
        if known is None:
            known = np.zeros(seen.shape)
        self.output_quanta = np.where(
            (known > 0) & (seen > 0), np.minimum(known, seen), known + seen
        )

    def _quantize(self, levels: _LevelScores) -> None:
        """:meth:`_LevelScores.quantize_noise`, with the smallest quantum this point's
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
        )
        levels.floor = np.maximum(levels.floor, levels.precision)

    def _run_levels(
        self,
        i: int,
        along: int | np.ndarray,
        h0: float,
        multipliers: np.ndarray,
        first: int,
        levels: _LevelScores,
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
                    if h == 0:
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
        self, flat: np.ndarray, j: int, old: Any, h: float, levels: _LevelScores, row: int
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
        self, flat: np.ndarray, base: np.ndarray, step: np.ndarray, levels: _LevelScores, row: int
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

    def _score_levels(self, levels: _LevelScores) -> None:
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
        eps = self.eps
        spread = plus - minus
        moved = (plus - f0) + (minus - f0)
        # Rounding in the touched outputs, at their largest (at f0 or moved), and at
        # least that of the op's intermediates (`rounding_sizes`).
        touched = (plus != f0) | (minus != f0)
        outputs = np.maximum(np.abs(plus), np.abs(minus))
        measured = self.rounding_sizes()
        for row, k in enumerate(pending):
            h = float(hs[k])
            d[k] = float(vdot(v, spread[row])) / (2 * h)
            jump[k] = float(vdot(v, moved[row])) / h
            t = touched[row]
            if t.any():
                size = np.maximum(outputs[row], measured)
                noise[k] = OUTPUT_ROUNDING_EPS * eps * float(vdot(absv[t], size[t])) / h
            else:
                # NOTE: no output moved, which is not proof that none depends on x:
                # each may have absorbed a change below half an ulp of an intermediate
                # (1e-13·γ + 1, batchnorm's gamma where a channel is constant; a
                # cross-entropy at a logit of 35, log(1 + 1e-15), whose output of
                # 1e-15 never moves). All that is known is |s'| <= eps·<|v|, m> / 2h,
                # m the size of those intermediates: at least the output's, and at
                # least the moved element's and 1 (see _LevelScores.magnitude).
                size = np.maximum(measured, levels.magnitude)
                noise[k] = eps * float(vdot(absv, size)) / (2 * h)
                levels.still[k] = True
        levels.note_outputs(touched, (plus - f0, minus - f0), hs[pending])
        if self.output_quanta is not None:
            # An output that moves in quanta far coarser than its own rounding is known
            # only to that quantum: where its rounding scales with it (at order 2, a
            # cross-entropy's backward is (p - onehot)·v, its p0 - 1 = -4e-13 carrying
            # the rounding of p0, 1e-16, and so does every derivative of it: with
            # respect to v it is that rounded p0 - 1 exactly, against the double
            # backward's own rounding of it), a difference of it is right to that
            # share of itself only, however exact.
            with np.errstate(all="ignore"):
                share = np.minimum(self.output_quanta / np.abs(f0.reshape(-1)), 1.0)
                share = np.where(self.output_quanta > 0, share, 0.0) * absv.reshape(-1)
            for row, k in enumerate(pending):
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


def _blows_up_below(levels: _LevelScores, est: Estimate) -> bool:
    """Whether two levels of steps smaller than the ones ``est`` took its value from
    see central differences :data:`SINGULAR_BLOWUP` times those steps' (and the value)
    or more, each far above its rounding noise: the chosen steps straddle a singular
    set. (A smooth function's smaller steps agree with its larger ones, or differ by
    less, its truncation shrinking like h²; noise stays within its bounds.)"""
    if not est.step or not math.isfinite(est.value):
        return False
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(levels.d)
        chosen = np.abs(levels.d[finite & (levels.hs >= est.step)])
        bound = SINGULAR_BLOWUP * max(float(chosen.max(initial=0.0)), abs(est.value))
        below = finite & (levels.hs < est.step)
        # (the noise of a level where s moves in quanta includes their floor)
        resolution = np.maximum(levels.noise, levels.floor)
        limit = KINK_NOISE_MARGIN * resolution
        loud = np.abs(levels.d) > np.maximum(bound, limit)
        # Steps smaller still that bound D far below the loud ones (s stands still there:
        # a clip's bound 7.7e-10 from x, whose straddling steps see D ~ 1/h): the set is
        # not at x but between those steps and the loud ones, and the chosen steps, which
        # agree with the smallest ones, reach across it from afar.
        quiet = finite & ~loud & (np.abs(levels.d) <= limit)
        loud_below = below & loud
        if loud_below.any() and quiet.any():
            smallest_loud = float(levels.hs[loud_below].min())
            under = quiet & (levels.hs < smallest_loud)
            if under.any() and SINGULAR_BLOWUP * float(limit[under].min()) < float(
                np.abs(levels.d[loud_below]).max()
            ):
                return False
    return int(np.sum(loud_below)) >= 2


class _LevelScores:
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
        step = np.asarray(hs, dtype=np.float64)[:, None]
        with np.errstate(invalid="ignore"):
            up, down = (np.abs(c.reshape(rows, -1)) for c in changes)
            move = np.where(touched, np.fmax(up, down), np.inf)
        np.minimum(
            self.still_step, np.where(touched, np.inf, step).min(axis=0), out=self.still_step
        )
        np.maximum(self.moved_step, np.where(touched, step, 0.0).max(axis=0), out=self.moved_step)
        np.fmin(self.least_move, move.min(axis=0), out=self.least_move)

    def quantize_outputs(
        self, absv: np.ndarray, known: np.ndarray | None, ulps: np.ndarray, cap: float
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

        Returns ``known`` with the quanta this refinement showed."""
        quantized = (self.still_step < self.moved_step) & (self.least_move <= cap)
        share = float(np.vdot(absv[quantized], self.least_move[quantized]))
        if known is not None:
            unmoved = (self.moved_step == 0) & (known > OUTPUT_ROUNDING_EPS * ulps)
            share += float(np.vdot(absv[unmoved], known[unmoved]))
        if share > 0:
            done = np.isfinite(self.d) & np.isfinite(self.jump)
            self.floor = np.maximum(self.floor, np.where(done, share / (2 * self.hs), 0.0))
        if not quantized.any():
            return known
        if known is None:
            known = np.zeros(self.least_move.shape)
        seen = np.where(quantized, self.least_move, 0.0)
        return np.where((known > 0) & (seen > 0), np.minimum(known, seen), known + seen)

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
            self.flat = lopsided and not quantum <= cap
            if self.flat:
                return None
            self.floor = np.where(done, quantum / (2 * self.hs), 0.0)
        elif known is not None and still.any() and not moving.any():
            self.floor = np.where(done, known / (2 * self.hs), 0.0)
        return quantum

    def below(self, more: int) -> _LevelScores:
        """These levels, scored, with ``more`` levels of smaller steps before them,
        not yet run (no level may be pending)."""
        new = _LevelScores(len(self.d) + more, self.shape)
        for name in ("d", "jump", "noise", "hs", "still"):
            getattr(new, name)[more:] = getattr(self, name)
        new.floor[more:] = self.floor
        new.precision[more:] = self.precision
        new.magnitude = self.magnitude
        new.flat = self.flat
        new.still_step, new.moved_step, new.least_move = (
            self.still_step,
            self.moved_step,
            self.least_move,
        )
        new.powers = np.concatenate([self.powers[0] - np.arange(more, 0, -1), self.powers])
        return new


@dataclass
class _Finite:
    """The levels of one refinement where both D and J are finite, smallest step first:
    their level numbers ``k``, central differences ``D``, jumps ``J``, steps ``H`` and
    modelled noise ``N``. Plain Python floats: a handful of values, where NumPy's
    per-call cost would dominate."""

    k: list[int]
    D: list[float]
    J: list[float]
    H: list[float]
    N: list[float]
    #: No output moved at the level: it says the derivative is below what the outputs
    #: resolve, unless an intermediate absorbed the step ((x + 1e6) - 1e6 at h < 1e-10).
    still: list[bool]
    #: The level's resolution where s moves in quanta (see _LevelScores.quantize_noise).
    floor: list[float]
    #: The levels that stood still did so because s is flat there (see _LevelScores.flat).
    flat: bool = False


def _finite_levels(levels: _LevelScores) -> _Finite:
    d, jump, hs, noise = (
        levels.d.tolist(),
        levels.jump.tolist(),
        levels.hs.tolist(),
        levels.noise.tolist(),
    )
    isfinite = math.isfinite
    ok = [k for k in range(len(d)) if isfinite(d[k]) and isfinite(jump[k])]
    still = levels.still.tolist()
    return _Finite(
        ok,
        [d[k] for k in ok],
        [jump[k] for k in ok],
        [hs[k] for k in ok],
        [noise[k] for k in ok],
        [still[k] for k in ok],
        [float(levels.floor[k]) for k in ok],
        levels.flat,
    )


def _level_noise(f: _Finite, growth: float = TRUNCATION_GROWTH) -> list[float]:
    """The rounding noise of each level's D: the modelled N, or the noise measured from
    the smallest levels where that is larger.

    The second difference J·h is s''·h² plus noise; the smooth part grows
    :data:`TRUNCATION_GROWTH` × per level, so what does not is noise. This catches
    noise the output's size does not show, e.g. (x + 1e6) - 1e6 rounding at 1e6's ulp.
    Likewise D(h) - D(4h) is c·h² for smooth s; its part that does not grow
    :data:`TRUNCATION_GROWTH` × per level, times h, measures noise that rounds x ± h
    symmetrically (J = 0). Noise so measured is about the same at each of the
    smallest windows; the median of theirs is taken, because a window where the steps
    leave the h² regime (they reach the scale the function varies on: log|x| near 0)
    shows truncation there that is no noise at all.
    """
    D, J, H = f.D, f.J, f.H
    n = len(D)
    sigmas = []
    for a in range(min(NOISE_LEVELS, n - 1)):
        sigma = abs(J[a] * H[a] - J[a + 1] * H[a + 1] / TRUNCATION_GROWTH)
        if a + 2 < n:
            dd0, dd1 = D[a] - D[a + 1], D[a + 1] - D[a + 2]
            sigma = max(sigma, abs(dd0 - dd1 / growth) * H[a])
        sigmas.append(sigma)
    sigma = sorted(sigmas)[(len(sigmas) - 1) // 2] if sigmas else 0.0
    return [max(f.N[a], sigma / H[a], f.floor[a]) for a in range(n)]


def _richardson(D: list[float], pairs: list[int], growth: float = TRUNCATION_GROWTH) -> list[float]:
    """``(16 D(h) - D(4h)) / 15`` for each pair of levels ``a``, ``a + 1``: cancels the
    h² term of the central difference (with ``growth`` ρ, ``(ρ D(h) - D(4h)) / (ρ - 1)``
    cancels a term that grows ρ× per level)."""
    gain = growth - 1
    return [D[a] + (D[a] - D[a + 1]) / gain for a in pairs]


def _convergence_ratio(f: _Finite, noise: list[float]) -> float | None:
    """The ratio ρ by which the central differences' changes grow per level, where
    the smallest :data:`ORDER_LEVELS` changes of neighbouring levels each stand far
    out of their noise, keep their sign and grow by one ratio in :data:`ORDER_RANGE`
    (within :data:`ORDER_STEADINESS`): D(h) = s' + c·h**p, p = log_4 ρ. None where
    they do not: the usual h² extrapolation, or no convergence, says it."""
    D, k = f.D, f.k
    for a in range(len(D) - ORDER_LEVELS):
        if k[a + ORDER_LEVELS] != k[a] + ORDER_LEVELS:
            continue
        changes = [D[b + 1] - D[b] for b in range(a, a + ORDER_LEVELS)]
        if not all(
            abs(c) > KINK_NOISE_MARGIN * (noise[b] + noise[b + 1])
            for b, c in zip(range(a, a + ORDER_LEVELS), changes)
        ):
            continue
        ratios = [changes[q + 1] / changes[q] for q in range(ORDER_LEVELS - 1)]
        if not all(r > 0 for r in ratios):
            return None
        if max(ratios) > ORDER_STEADINESS * min(ratios):
            return None
        rho = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        return rho if ORDER_RANGE[0] < rho < ORDER_RANGE[1] else None
    return None


def _pair_errors(
    f: _Finite, pairs: list[int], rich: list[float], noise: list[float]
) -> list[float]:
    """The error estimate of each Richardson pair: how far it lies from its neighbour
    pairs (the larger gap), or for a lone pair its own correction, plus the noise of
    its smaller step; and at least how far it lies outside the error bars of every
    pair of smaller steps.

    Truncation error grows with the step: where the estimates of smaller steps agree
    among themselves (their bars are small) and a larger step's estimate lies far
    from them, the larger step is not yet where the function looks smooth, however
    well it agrees with its own neighbours (log|x| at 3.5e-12: the smallest steps give
    2.83e11, each larger one 16 times less than the last, 1e-5 at the top, and those
    agree with each other to 1e-5)."""
    if len(rich) == 1:
        a = pairs[0]
        errs = [abs(f.D[a] - f.D[a + 1]) / (TRUNCATION_GROWTH - 1)]
    else:
        diffs = [abs(rich[q + 1] - rich[q]) for q in range(len(rich) - 1)]
        errs = [diffs[0], *(max(diffs[q - 1], diffs[q]) for q in range(1, len(diffs))), diffs[-1]]
    errs = [e + noise[a] for e, a in zip(errs, pairs)]
    # Outside the bars of the smaller steps (those where some output moved: a step
    # absorbed in an intermediate says nothing, unless s is known to be flat there, as
    # maximum(x, y) is in x where x < y), smallest steps first.
    moved = [f.flat or not (f.still[a] or f.still[a + 1]) for a in pairs]
    for q in range(1, len(rich)):
        bounds = [abs(rich[q] - rich[p]) - errs[p] for p in range(q) if moved[p]]
        if bounds:
            errs[q] = max(errs[q], *bounds)
    return errs


#: What :func:`_trend` sees in a signal over neighbouring levels.
STEADY, GROWING, SHRINKING = "steady", "growing", "shrinking"


def _trend(values: list[float]) -> str | None:
    """:data:`STEADY` when ``values`` (one per neighbouring level) keep their sign and
    size (each next within :data:`KINK_STEADINESS` × of the last), :data:`GROWING`
    when they keep their sign and grow like h (LEVEL_RATIO × per level, within the
    same factor), :data:`SHRINKING` when they keep their sign and shrink like 1/h;
    else None (sign changes, a change of regime)."""
    ratios = [values[q + 1] / values[q] for q in range(len(values) - 1)]
    if all(1 / KINK_STEADINESS < r < KINK_STEADINESS for r in ratios):
        return STEADY
    low, high = LEVEL_RATIO / KINK_STEADINESS, LEVEL_RATIO * KINK_STEADINESS
    if all(low < r < high for r in ratios):
        return GROWING
    if all(1 / high < r < 1 / low for r in ratios):
        return SHRINKING
    return None


def _kink_signature(
    signal: list[float],
    seen: list[float],
    f: _Finite,
    jump_threshold: float,
    upto: int | None = None,
    noise: list[float] | None = None,
    unit: list[float] | None = None,
) -> str | None:
    """Going up from the smallest step, the first windows of :data:`KINK_WINDOW`
    neighbouring levels where ``signal`` stands out of the modelled rounding noise
    (``noise``, by default ``f.N``; by :data:`KINK_NOISE_MARGIN` ×) decide: ``seen``
    (the signal or a multiple of it) steady there is a kink (if the signal is larger
    than ``jump_threshold``, what matters); growing like h is a smooth function (no
    kink); anything else, and the next window decides. Shrinking like 1/h far above
    the noise is a singularity within the steps' reach (a pole, a log, a jump of s:
    every step straddles it), a kink too, unless smaller steps already showed a
    smooth function: a window where the signal is within the noise while D is well
    above it (the one-sided quotients agree there; arccot at -6e-8, whose larger steps
    straddle its jump at 0).

    Nor is a window a kink where a level of smaller steps bounds ``seen`` (``signal``
    times ``unit``, by default 1) to far below the window's: a kink at x shows at every
    step, so one that smaller steps do not see lies between those steps and the
    window's (maximum(x, y) at x 1e-10 from y, or a clip's bound as near: s stands
    still at the smaller steps, J = 0, and is steady from there up): no larger window
    decides either.

    With ``upto``, no window starting above that level decides: the Richardson
    values converged there, and larger steps only straddle the function's scale
    (tanh(3x) in float16, whose smallest steps are noise and whose steps of 2 and 8
    see it saturate: J shrinks like 1/h there).

    Returns the trend that marks the kink (:data:`STEADY` or :data:`SHRINKING`), or
    None."""
    k, span = f.k, KINK_WINDOW - 1
    limit = [KINK_NOISE_MARGIN * n for n in (f.N if noise is None else noise)]
    above = [abs(signal[b]) > limit[b] for b in range(len(signal))]
    measured = [abs(f.D[b]) > limit[b] for b in range(len(signal))]
    smooth_below = False
    # The least bound on |seen| a quiet level below the window gives (its signal within
    # the noise), inf until one shows.
    quiet = math.inf
    for a in range(len(signal) - span):
        end = a + KINK_WINDOW
        if a > 0 and not above[a - 1]:
            quiet = min(quiet, limit[a - 1] * (1.0 if unit is None else unit[a - 1]))
        if upto is not None and a > upto:
            break
        if k[a + span] != k[a] + span:
            continue
        if not any(above[a:end]) and all(measured[a:end]):
            smooth_below = True
        if not all(above[a:end]):
            continue
        trend = _trend(seen[a:end])
        if KINK_NOISE_MARGIN * quiet < min(abs(seen[b]) for b in range(a, end)):
            # The smaller steps do not see it: it lies between theirs and these, and
            # every larger step straddles it too (J shrinking like 1/h above a clip's
            # bound at 7.7e-10) and decides nothing about x.
            return None
        if trend == STEADY or (trend == SHRINKING and not smooth_below):
            large = all(abs(signal[b]) > jump_threshold for b in range(a, end))
            return trend if large else None
        if trend == GROWING:
            return None
    return None


#: What :func:`_is_kink` finds: two finite one-sided derivatives that differ, or no
#: finite derivative at all.
KINK, UNBOUNDED = "kink", "unbounded"


def _is_kink(f: _Finite, jump_threshold: float, upto: int | None = None) -> str | None:
    """Whether ``s`` is not differentiable at x. A kink is a property of the limit
    h -> 0, so its signature is looked for at the smallest steps that show anything
    (:func:`_kink_signature`), never at larger ones alone:

    * a jump of the one-sided derivatives (``abs`` at 0, ``relu``, ``max`` with a tie,
      ``clip`` at a bound): J holds still in sign and size across levels, where a
      smooth s gives J = s''·h, growing 4× per level, and rounding noise J ∝ 1/h with
      random sign;
    * a jump of ``s`` itself within the steps' reach (a step function, arccot at 0):
      every straddling D(h) is about jump / 2h, so D·h holds still across levels, where
      a smooth s keeps D still and D·h grows 4× per level;
    * a singularity within every step's reach (log|x| at 1e-307, atan2 at 1e-13 from
      the origin): J, or D·h, shrinks like 1/h far above the noise.

    Larger steps say nothing about x itself: they may straddle a kink nearby or
    sample an oscillation (sin at 1e5: D·h holds still by chance over steps of 8, 32
    and 128), and a kink found there would call a smooth function "not
    differentiable" and hide a wrong gradient. The modelled rounding noise N, not the
    measured one (which a jump inflates), says what stands out.

    Returns :data:`KINK` for the first (finite one-sided derivatives),
    :data:`UNBOUNDED` for the others (no finite derivative), None where smooth.
    """
    D, H = f.D, f.H
    # Where s moves in quanta (see _LevelScores.quantize_noise), s(x) itself lies
    # anywhere within one: J·h = s(x+h) + s(x-h) - 2 s(x) of a few quanta is rounding,
    # which shrinks like 1/h as exactly as a pole does (a cross-entropy at a logit of
    # 30, whose log(1 + 1e-13) moves by ulps of 1). J must stand out of the quantum too.
    # (D·h of one quantum stays a jump of s: round(x) just below a half, whose
    # smaller steps stand still, moves by its jump, the only quantum it shows.)
    quantized = [max(n, q) for n, q in zip(f.N, f.floor)]
    jump = _kink_signature(f.J, f.J, f, jump_threshold, upto, quantized)
    if jump is not None:
        return KINK if jump == STEADY else UNBOUNDED
    if _kink_signature(D, [D[b] * H[b] for b in range(len(D))], f, jump_threshold, upto, unit=H):
        return UNBOUNDED
    return None


def _combine(levels: _LevelScores, eps: float, jump_threshold: float, base_index: int) -> Estimate:
    """Value, error, kink flag and second derivative from the central differences of
    every level: the Richardson pair whose value agrees best with its neighbours."""
    f = _finite_levels(levels)
    D, J, H = f.D, f.J, f.H
    n = len(D)
    if n < 2:
        return Estimate((D[0] if n else float("nan")), float("inf"), True, 0.0, unbounded=True)
    pairs = [a for a in range(n - 1) if f.k[a + 1] == f.k[a] + 1]  # neighbour levels
    if not pairs:
        # s'' = J / h at the step nearest the base step.
        near = min(range(n), key=lambda a: abs(f.k[a] - base_index))
        return Estimate(D[0], float("inf"), True, J[near] / H[near], unbounded=True)
    rich = _richardson(D, pairs)
    noise = _level_noise(f)
    value, error, best = _best_pair(f, pairs, rich, noise, eps)
    # Where no two neighbouring estimates agree, the steps never reached the scale the
    # function varies on (log|x| at x = 1e-15: every D is ~x/h², 16 times the next):
    # not differentiable *here*, numerically, which is never a failure.
    converged = _converged(rich, [f.N[a] for a in pairs])
    found = _is_kink(f, jump_threshold, pairs[best] if converged and len(rich) > 1 else None)
    low_order = False
    if not converged:
        found = UNBOUNDED
        rho = _convergence_ratio(f, f.N)
        if rho is not None:
            low_order = True
            # The usual extrapolation assumed h²; this one converges like h**p.
            rich = _richardson(D, pairs, rho)
            if _converged(rich, [f.N[a] for a in pairs]):
                noise = _level_noise(f, rho)
                value, error, best = _best_pair(f, pairs, rich, noise, eps)
                found = _is_kink(f, jump_threshold)
                a = pairs[best]
                if max(abs(J[a]), abs(J[a + 1])) > KINK_NOISE_MARGIN * (f.N[a] + f.N[a + 1]):
                    # The one-sided quotients differ, by J: at these steps, the
                    # derivative is known no better (x·|x| at 1e-16, every step
                    # straddling 0: D ~ h, J = 4x). Only where they agree (x·|x| at 0,
                    # J = 0) does the extrapolation give the derivative.
                    found = UNBOUNDED
    return Estimate(
        value,
        error,
        found is not None,
        J[pairs[best]] / H[pairs[best]],
        noise=noise[pairs[best]],
        unbounded=found == UNBOUNDED,
        step=H[pairs[best]],
        low_order=low_order,
    )


def _best_pair(
    f: _Finite, pairs: list[int], rich: list[float], noise: list[float], eps: float
) -> tuple[float, float, int]:
    """(value, error, index into ``pairs``) of the Richardson pair with the smallest
    error estimate (:func:`_pair_errors`)."""
    errs = _pair_errors(f, pairs, rich, noise)
    best = min(range(len(errs)), key=errs.__getitem__)
    value = rich[best]
    curvature = f.J[pairs[best]] / f.H[pairs[best]]
    # x ± h rounds: the stencil's centre may sit up to eps·h off x (all of x, when
    # x is below h's ulp), which moves the estimate by s''·(that).
    shift = 2 * eps * f.H[pairs[best]] * abs(curvature)
    return value, max(errs[best] + shift, VALUE_ROUNDING_EPS * eps * abs(value)), best


def _converged(rich: list[float], noise: list[float]) -> bool:
    """Some two neighbouring Richardson values agree to within half their size (or
    their modelled rounding noise: the measured one is inflated by the very behaviour
    this looks for): the levels reached the scale where the function is smooth."""
    if len(rich) < 2:
        return True  # one pair: its own correction is the error estimate
    return any(
        abs(rich[q + 1] - rich[q])
        <= CONVERGED_FRACTION * max(abs(rich[q]), abs(rich[q + 1])) + noise[q] + noise[q + 1]
        for q in range(len(rich) - 1)
    )


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
        refine_elements(ev, i, est, which, threshold, steps[which])
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
) -> None:
    """Refine elements ``which`` (flat indices) of input ``i`` (base steps ``steps``,
    by default :func:`step_sizes`), in place of their values in ``est`` (whose arrays
    may have any shape: they are read flat)."""
    x = ev.work[i].reshape(-1)
    if steps is None:
        steps = step_sizes(x[which], ev.eps)
    flat = {name: getattr(est, name).reshape(-1) for name in ("value", "error", "kink")}
    curvature, refined, noise = (
        getattr(est, name).reshape(-1) for name in ("curvature", "refined", "noise")
    )
    known: list[np.ndarray | None] = []
    for j, h in zip(which, steps):
        known.append(None if ev.output_quanta is None else ev.output_quanta.copy())
        one = ev.refine(i, int(j), float(h), jump_threshold, abs(float(x[j])))
        flat["value"][j], flat["error"][j], flat["kink"][j] = one.value, one.error, one.kink
        curvature[j], refined[j], noise[j] = one.curvature, True, one.noise
    # An element refined before another showed an output's quanta (see
    # Evaluator._probe_unmoved) is refined again, with them: the quanta are the point's.
    final = ev.output_quanta
    for j, h, before in zip(which, steps, known):
        if final is None or (before is not None and np.array_equal(before, final)):
            continue
        one = ev.refine(i, int(j), float(h), jump_threshold, abs(float(x[j])))
        flat["value"][j], flat["error"][j], flat["kink"][j] = one.value, one.error, one.kink
        curvature[j], noise[j] = one.curvature, one.noise
