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
  ``h·4^k`` (k = -2..3, and lower for |x| > 1 down to an absolute eps**(1/3)/16),
  Richardson extrapolation of neighbouring pairs
  (``(16 D(h) - D(4h)) / 15`` cancels the h² term), and the pair whose value agrees
  best with its neighbours gives the value and its error estimate.
* **Kinks.** ``J(h) = (s(x+h) + s(x-h) - 2 s(x)) / h`` is the difference of the two
  one-sided quotients. Where ``s`` is smooth it shrinks like ``h`` (by 4 per level);
  where the one-sided derivatives differ (``abs`` at 0, ``relu`` at 0, ``max`` with a
  tie, ``clip`` at a bound) it stays at the jump; rounding noise grows like ``1/h``
  with random sign. A jump that is constant (same sign, within 2×) over the four
  smallest steps and larger than what matters marks the element not differentiable;
  so does an estimate that does not converge at all.
* **Complex step** (on request, for ops analytic in their inputs):
  ``Im s(x + i h e_j) / h`` has no subtractive cancellation, so h can be tiny.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from gradcheck.errors import ComplexStepUnsupported
from gradcheck.graph import no_autodiff

__all__ = [
    "ComplexStepUnsupported",
    "Evaluator",
    "Estimate",
    "full_estimate",
    "step_sizes",
]

#: Consecutive refinement steps differ by this factor.
LEVEL_RATIO = 4.0
#: A central difference errs by c·h² + O(h⁴): one level up, its error (and the
#: second difference J·h = s''·h², and D(h) - D(4h)) grows by LEVEL_RATIO² = 16.
TRUNCATION_GROWTH = LEVEL_RATIO**2
#: Refinement steps, as powers of LEVEL_RATIO times the base step: from 1/16 to 64 of
#: it, and further down for |x| > 1 (see :func:`_levels`).
_LOWEST, _HIGHEST = -2, 3
#: The measured noise looks at the differences of this many smallest levels.
NOISE_LEVELS = 3
#: A kink's signature must hold over this many consecutive levels.
KINK_WINDOW = 3
#: ... each level's jump within this factor of the next one's ("constant in size").
KINK_STEADINESS = 2.0
#: ... and each larger than this multiple of the level's modelled rounding noise.
KINK_NOISE_MARGIN = 8.0
#: No error estimate is below this many eps of the value.
VALUE_ROUNDING_EPS = 8.0
#: A first-pass jump J above this fraction of the gradient's scale sends the element to
#: refinement (maybe a kink; smooth functions give J = s''·h, far below it).
FIRST_JUMP_FRACTION = 1e-3
#: The modelled rounding noise of one difference: this many eps of the touched
#: outputs' size (both evaluations, each rounding its outputs and their sum).
OUTPUT_ROUNDING_EPS = 4.0


#: Up to this many output elements over all levels of one refinement, the levels'
#: arithmetic runs once for all of them (see :meth:`Evaluator.refine`).
_BATCHED_LEVELS_MAX_SIZE = 1 << 16


def _levels(scale: float) -> tuple[np.ndarray, int]:
    """Step multipliers for an element of size ``scale`` (>= 1), and the index of 1.

    The base step is relative to |x|, right for x², log x...; but a function whose
    own scale is 1 at a large x (sin(x) at x = 1e6) needs steps that small in
    absolute terms, so the levels reach down to the absolute step eps**(1/3) / 16.
    """
    extra = max(0, int(np.ceil(np.log(scale) / np.log(LEVEL_RATIO) - 1e-9)))
    powers = np.arange(_LOWEST - extra, _HIGHEST + 1)
    return LEVEL_RATIO**powers, extra - _LOWEST


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
    by-product: ``J / h``), whether it was refined, and the forward calls spent.

    :func:`full_estimate` gives one per input, each field an array of the input's
    shape; :meth:`Evaluator.refine` one per element or direction, each field a scalar.
    """

    value: Any
    error: Any
    kink: Any
    curvature: Any
    refined: Any = True
    calls: int = 0


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
            *[a.dtype for a in native if a.dtype.kind == "f"] or [np.float64]
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
        self.eps = float(np.finfo(self.eval_dtype).eps)
        self.v = np.asarray(v, dtype=np.float64)
        # Copies (np.array, not np.asarray), here and in `refine`: a forward may
        # return a view of its input (reshape, transpose, indexing), which the
        # perturbations below change in place.
        out0 = self.call(self.work)
        self.f0 = np.array(out0, dtype=np.float64)
        # A real output minus f0 (float64) is float64 by NumPy's promotion alone;
        # asking for dtype=float64 costs ~0.3 us per subtraction (measured).
        self._real_out = out0.dtype.kind in "biuf"
        self._fwd: Callable[[], np.ndarray] | None = None  # made by `refine` when needed

    def call(self, arrays: Sequence[np.ndarray]) -> np.ndarray:
        self.calls += 1
        return np.asarray(self._forward(arrays, self.params))

    def s_diff(self, out_a: np.ndarray, out_b: np.ndarray) -> float:
        """``<v, out_a - out_b>`` in float64."""
        return float(np.vdot(self.v, np.subtract(out_a, out_b, dtype=np.float64)))

    def first_pass(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One central difference per element of input ``i``: (values, jumps J at the
        same step, steps). Two forward calls per element, nothing else."""
        x = self.work[i]
        flat = x.reshape(-1)  # a view: `work` arrays are contiguous copies
        steps = step_sizes(flat, self.eps).astype(x.dtype)
        steps = (flat + steps) - flat  # exact in the evaluated dtype too
        # The loop below is the checker's inner loop (two forward calls per element):
        # everything else is done for all elements at once, and the perturbed values
        # are Python floats (exact: each is a value of the array's dtype).
        olds = flat.tolist()
        aboves = (flat + steps).tolist()
        belows = (flat - steps).tolist()
        ups = np.empty(flat.size)
        downs = np.empty(flat.size)
        fwd = self._bind(self.work, self.params)
        v = self.v
        f0 = self.f0
        sub = np.subtract if self._real_out else partial(np.subtract, dtype=np.float64)
        vdot = np.vdot
        # Outputs the perturbation does not reach give exact zeros in `up` and `down`,
        # so each dot product sums the touched outputs only.
        with np.errstate(all="ignore"), no_autodiff:
            for j in range(flat.size):
                flat[j] = aboves[j]
                ups[j] = vdot(v, sub(fwd(), f0))
                flat[j] = belows[j]
                downs[j] = vdot(v, sub(fwd(), f0))
                flat[j] = olds[j]
            values = (ups - downs) / (2 * steps)
            jumps = (ups + downs) / steps
        self.calls += 2 * flat.size
        return values.reshape(x.shape), jumps.reshape(x.shape), steps.reshape(x.shape)

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
        central differences at every level of :func:`_levels` (see :func:`_combine`).
        ``h0`` is the base step; ``scale`` the size of the element (``max(|x|, 1)``)
        it was made relative to."""
        flat = self.work[i].reshape(-1)
        base = flat.copy()
        # The bound forward (tensors made once over `work`, which is changed in place
        # below), not `call`: per call, `call` wraps every input in a new Tensor and
        # enters no_autodiff, which profiled at about as much as a small forward.
        if self._fwd is None:
            self._fwd = self._bind(self.work, self.params)
        multipliers, base_index = _levels(scale)
        levels = _LevelScores(len(multipliers), self.f0.shape)
        element = isinstance(along, (int, np.integer))
        calls = 0
        with np.errstate(all="ignore"), no_autodiff:
            for k, m in enumerate(multipliers):
                row = len(levels.pending)  # the first row not holding a pending level
                if element:
                    old = base[along]
                    h = float(np.asarray(old + h0 * m, dtype=flat.dtype) - old)
                    if h == 0:
                        continue
                    ok = self._element_outputs(flat, along, old, h, levels, row)
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
        return _combine(levels, self.eps, jump_threshold, base_index)

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
        # Rounding in the touched outputs, at their largest (at f0 or moved).
        touched = (plus != f0) | (minus != f0)
        size = np.maximum(np.maximum(np.abs(plus), np.abs(minus)), np.abs(f0))
        for row, k in enumerate(pending):
            h = float(hs[k])
            d[k] = float(vdot(v, spread[row])) / (2 * h)
            jump[k] = float(vdot(v, moved[row])) / h
            t = touched[row]
            if t.any():
                noise[k] = OUTPUT_ROUNDING_EPS * eps * float(vdot(absv[t], size[row][t])) / h
            else:
                # NOTE: no output moved, which is not proof that none depends on x:
                # each may have absorbed a change below its half ulp (1e-13·γ + 1,
                # batchnorm's gamma where a channel is constant). All that is known
                # is |s'| <= eps·<|v|, |f|> / 2h: that is the noise.
                noise[k] = eps * float(vdot(absv, np.abs(f0))) / (2 * h)
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
                    f"this one raised {type(exc).__name__}: {exc}"
                ) from exc
            flat[j] = old
            if out.dtype.kind != "c":
                raise ComplexStepUnsupported(
                    "complex_step=True needs a target that computes with complex input; "
                    f"this one returned {out.dtype}"
                )
            values[j] = np.vdot(self.v, out).imag / h
        return values.reshape(self.work[i].shape)


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


def _finite_levels(levels: _LevelScores) -> _Finite:
    d, jump, hs, noise = (
        levels.d.tolist(),
        levels.jump.tolist(),
        levels.hs.tolist(),
        levels.noise.tolist(),
    )
    isfinite = math.isfinite
    ok = [k for k in range(len(d)) if isfinite(d[k]) and isfinite(jump[k])]
    return _Finite(
        ok, [d[k] for k in ok], [jump[k] for k in ok], [hs[k] for k in ok], [noise[k] for k in ok]
    )


def _level_noise(f: _Finite) -> list[float]:
    """The rounding noise of each level's D: the modelled N, or the noise measured from
    the smallest levels where that is larger.

    The second difference J·h is s''·h² plus noise; the smooth part grows
    :data:`TRUNCATION_GROWTH` × per level, so what does not is noise. This catches
    noise the output's size does not show, e.g. (x + 1e6) - 1e6 rounding at 1e6's ulp.
    Likewise D(h) - D(4h) is c·h² for smooth s; its part that does not grow
    :data:`TRUNCATION_GROWTH` × per level, times h, measures noise that rounds x ± h
    symmetrically (J = 0).
    """
    D, J, H = f.D, f.J, f.H
    n = len(D)
    sigma = 0.0
    for a in range(min(NOISE_LEVELS, n - 1)):
        sigma = max(sigma, abs(J[a] * H[a] - J[a + 1] * H[a + 1] / TRUNCATION_GROWTH))
        if a + 2 < n:
            dd0, dd1 = D[a] - D[a + 1], D[a + 1] - D[a + 2]
            sigma = max(sigma, abs(dd0 - dd1 / TRUNCATION_GROWTH) * H[a])
    return [max(f.N[a], sigma / H[a]) for a in range(n)]


def _richardson(D: list[float], pairs: list[int]) -> list[float]:
    """``(16 D(h) - D(4h)) / 15`` for each pair of levels ``a``, ``a + 1``: cancels the
    h² term of the central difference."""
    gain = TRUNCATION_GROWTH - 1
    return [D[a] + (D[a] - D[a + 1]) / gain for a in pairs]


def _pair_errors(
    f: _Finite, pairs: list[int], rich: list[float], noise: list[float]
) -> list[float]:
    """The error estimate of each Richardson pair: how far it lies from its neighbour
    pairs (the larger gap), or for a lone pair its own correction, plus the noise of
    its smaller step."""
    if len(rich) == 1:
        a = pairs[0]
        errs = [abs(f.D[a] - f.D[a + 1]) / (TRUNCATION_GROWTH - 1)]
    else:
        diffs = [abs(rich[q + 1] - rich[q]) for q in range(len(rich) - 1)]
        errs = [diffs[0], *(max(diffs[q - 1], diffs[q]) for q in range(1, len(diffs))), diffs[-1]]
    return [e + noise[a] for e, a in zip(errs, pairs)]


def _steady(values: list[float]) -> bool:
    """Same sign, and each within :data:`KINK_STEADINESS` × of the next."""
    first = values[0] > 0
    return all((x > 0) == first for x in values) and all(
        1 / KINK_STEADINESS < abs(values[q]) / abs(values[q + 1]) < KINK_STEADINESS
        for q in range(len(values) - 1)
    )


def _is_kink(f: _Finite, jump_threshold: float) -> bool:
    """A jump J of constant sign and size over :data:`KINK_WINDOW` consecutive steps,
    larger than rounding and than what matters; or a jump of ``s`` itself.

    Over the smallest steps it is a kink at x itself; over larger ones a kink within
    their reach, which spoils every central difference that straddles it (and the
    minimum-error choice would pick their consistent, wrong plateau): not
    differentiable *here*, numerically, which is never a failure. (Measured noise is no
    guide: a jump's second difference grows like h, which the noise measure counts; and
    noise J ∝ 1/h changes 4× per level, smooth J ∝ h likewise.)

    A jump of ``s`` itself within the steps' reach (arccot at 0, a step function):
    every straddling D(h) is about jump / 2h, so D·h holds still across levels (a
    smooth s keeps D still and D·h shrinks 4× per level; rounding noise keeps D·h still
    but small and of random sign). The jump also inflates the measured noise, so only
    the modelled rounding noise N is a guide here.
    """
    D, J, H = f.D, f.J, f.H
    n = len(D)
    # (Which levels' D and J stand out, tested once per level rather than per window.)
    limit = [max(jump_threshold, KINK_NOISE_MARGIN * f.N[a]) for a in range(n)]
    large_d = [abs(D[a]) > limit[a] for a in range(n)]
    large_j = [abs(J[a]) > limit[a] for a in range(n)]
    k, span = f.k, KINK_WINDOW - 1
    for a in range(n - span):
        if k[a + span] != k[a] + span:  # not neighbours
            continue
        end = a + KINK_WINDOW
        if all(large_d[a:end]) and _steady([D[b] * H[b] for b in range(a, end)]):
            return True
        if all(large_j[a:end]) and _steady(J[a:end]):
            return True
    return False


def _combine(levels: _LevelScores, eps: float, jump_threshold: float, base_index: int) -> Estimate:
    """Value, error, kink flag and second derivative from the central differences of
    every level: the Richardson pair whose value agrees best with its neighbours."""
    f = _finite_levels(levels)
    D, J, H = f.D, f.J, f.H
    n = len(D)
    if n < 2:
        return Estimate((D[0] if n else float("nan")), float("inf"), True, 0.0)
    pairs = [a for a in range(n - 1) if f.k[a + 1] == f.k[a] + 1]  # neighbour levels
    if not pairs:
        # s'' = J / h at the step nearest the base step.
        near = min(range(n), key=lambda a: abs(f.k[a] - base_index))
        return Estimate(D[0], float("inf"), True, J[near] / H[near])
    rich = _richardson(D, pairs)
    errs = _pair_errors(f, pairs, rich, _level_noise(f))
    best = min(range(len(errs)), key=errs.__getitem__)
    value = rich[best]
    curvature = J[pairs[best]] / H[pairs[best]]
    # x ± h rounds: the stencil's centre may sit up to eps·h off x (all of x, when
    # x is below h's ulp), which moves the estimate by s''·(that).
    shift = 2 * eps * H[pairs[best]] * abs(curvature)
    error = max(errs[best] + shift, VALUE_ROUNDING_EPS * eps * abs(value))
    return Estimate(value, error, _is_kink(f, jump_threshold), curvature)


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
    x = ev.work[i].reshape(-1)
    for j in np.flatnonzero(~done):
        est = ev.refine(i, int(j), float(steps[j]), threshold, max(abs(float(x[j])), 1.0))
        value[j], error[j], kink[j], curvature[j] = est.value, est.error, est.kink, est.curvature
    value, error, kink, curvature, done = (
        a.reshape(shape) for a in (value, error, kink, curvature, done)
    )
    return Estimate(value, error, kink, curvature, ~done, ev.calls - calls0)
