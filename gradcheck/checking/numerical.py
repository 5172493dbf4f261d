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

#: Refinement steps, as powers of 4 times the base step: from 1/16 to 64 of it, and
#: further down for |x| > 1 (see ``Evaluator.refine``).
_LOWEST, _HIGHEST = -2, 3


#: Up to this many output elements over all levels of one refinement, the levels'
#: arithmetic runs once for all of them (see :meth:`Evaluator.refine`).
_BATCHED_LEVELS_MAX_SIZE = 1 << 16


def _levels(scale: float) -> tuple[np.ndarray, int]:
    """Step multipliers for an element of size ``scale`` (>= 1), and the index of 1.

    The base step is relative to |x|, right for x², log x...; but a function whose
    own scale is 1 at a large x (sin(x) at x = 1e6) needs steps that small in
    absolute terms, so the levels reach down to the absolute step eps**(1/3) / 16.
    """
    extra = max(0, int(np.ceil(np.log(scale) / np.log(4.0) - 1e-9)))
    powers = np.arange(_LOWEST - extra, _HIGHEST + 1)
    return 4.0**powers, extra - _LOWEST


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
    """Numeric gradient of one input: value, error estimate, where it is not
    differentiable, the second derivative of ``s`` along each element (a by-product:
    ``J / h``), which elements were refined, and the forward calls spent."""

    value: np.ndarray
    error: np.ndarray
    kink: np.ndarray
    curvature: np.ndarray
    refined: np.ndarray
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
    ) -> tuple[float, float, bool, float]:
        """Refined derivative of ``s`` along element ``along`` (a flat index) of input
        ``i``, or along the direction ``along`` (an array of the input's size):
        (value, error estimate, not differentiable, second derivative). ``h0`` is
        the base step; ``scale`` the size of the element (``max(|x|, 1)``) it was
        made relative to."""
        flat = self.work[i].reshape(-1)
        base = flat.copy()
        # The bound forward (tensors made once over `work`, which is changed in place
        # below), not `call`: per call, `call` wraps every input in a new Tensor and
        # enters no_autodiff, which profiled at about as much as a small forward.
        if self._fwd is None:
            self._fwd = self._bind(self.work, self.params)
        fwd = self._fwd
        multipliers, base_index = _levels(scale)
        n = len(multipliers)
        f0 = self.f0
        shape = f0.shape
        # The loop below makes the forward calls and copies their outputs into rows,
        # nothing else; the arithmetic on them (`_score_levels`) runs once for all
        # levels when their outputs are small (profiled: per level, ~20 NumPy calls on
        # a small output cost more than its two forward calls), and after each
        # level when they are large (then the calls' cost is nothing, and all levels
        # at once would hold several arrays of n outputs).
        batch = n if n * f0.size <= _BATCHED_LEVELS_MAX_SIZE else 1
        plus = np.empty((batch, *shape))
        minus = np.empty((batch, *shape))
        pending: list[int] = []  # levels whose outputs are in the first rows
        d = np.full(n, np.nan)
        jump = np.full(n, np.nan)
        noise = np.zeros(n)
        hs = np.ones(n)
        element = isinstance(along, (int, np.integer))
        calls = 0
        with np.errstate(all="ignore"), no_autodiff:
            for k, m in enumerate(multipliers):
                row = len(pending)
                if element:
                    old = base[along]
                    h = float(np.asarray(old + h0 * m, dtype=flat.dtype) - old)
                    if h == 0:
                        continue
                    flat[along] = old + h
                    up = fwd()
                    if up_ok := np.shape(up) == shape:
                        plus[row] = up  # (a copy now: `up` may be a view of the input)
                    flat[along] = old - h
                    down = fwd()
                    if down_ok := np.shape(down) == shape:
                        minus[row] = down
                    flat[along] = old
                else:
                    h = h0 * m
                    step = h * along
                    np.add(base, step, out=flat, casting="unsafe")
                    up = fwd()
                    if up_ok := np.shape(up) == shape:
                        plus[row] = up
                    np.subtract(base, step, out=flat, casting="unsafe")
                    down = fwd()
                    if down_ok := np.shape(down) == shape:
                        minus[row] = down
                    flat[:] = base
                calls += 2
                if not (up_ok and down_ok):
                    continue  # (its rows are taken by the next level)
                hs[k] = h
                pending.append(k)
                if len(pending) == batch:
                    self._score_levels(plus, minus, pending, hs, d, jump, noise)
                    pending = []
            if pending:
                self._score_levels(plus, minus, pending, hs, d, jump, noise)
        self.calls += calls
        return _combine(d, jump, noise, hs, self.eps, jump_threshold, base_index)

    def _score_levels(
        self,
        plus: np.ndarray,
        minus: np.ndarray,
        levels: list[int],
        hs: np.ndarray,
        d: np.ndarray,
        jump: np.ndarray,
        noise: np.ndarray,
    ) -> None:
        """Fill ``d``, ``jump`` and ``noise`` at ``levels`` from the outputs at x ± h
        in the first rows of ``plus`` and ``minus`` (row ``r`` is level
        ``levels[r]``): the central difference of ``s``, the jump J (the sum of the
        one-sided differences) and the modelled rounding noise of the difference."""
        used = len(levels)
        plus, minus = plus[:used], minus[:used]
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
        for row, k in enumerate(levels):
            h = float(hs[k])
            d[k] = float(vdot(v, spread[row])) / (2 * h)
            jump[k] = float(vdot(v, moved[row])) / h
            t = touched[row]
            if t.any():
                noise[k] = 4 * eps * float(vdot(absv[t], size[row][t])) / h
            else:
                # NOTE: no output moved, which is not proof that none depends on x:
                # each may have absorbed a change below its half ulp (1e-13·γ + 1,
                # batchnorm's gamma where a channel is constant). All that is known
                # is |s'| <= eps·<|v|, |f|> / 2h: that is the noise.
                noise[k] = eps * float(vdot(absv, np.abs(f0))) / (2 * h)

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


def _combine(
    d: np.ndarray,
    jump: np.ndarray,
    noise: np.ndarray,
    hs: np.ndarray,
    eps: float,
    jump_threshold: float,
    base_index: int,
) -> tuple[float, float, bool, float]:
    """Value, error, kink flag and second derivative from central differences ``d``
    at steps ``hs`` (nan where unavailable), jumps ``J`` and model rounding noise.

    Plain Python floats: a handful of values, where NumPy's per-call cost would
    dominate."""
    d_all, jump_all, hs_all, noise_all = d.tolist(), jump.tolist(), hs.tolist(), noise.tolist()
    isfinite = math.isfinite
    ok = [k for k in range(len(d_all)) if isfinite(d_all[k]) and isfinite(jump_all[k])]
    D = [d_all[k] for k in ok]
    Jv = [jump_all[k] for k in ok]
    H = [hs_all[k] for k in ok]
    N = [noise_all[k] for k in ok]
    n = len(ok)
    if n < 2:
        return (D[0] if n else float("nan")), float("inf"), True, 0.0
    # s'' = J / h: at the step nearest the base step for now, at the chosen step below.
    near = min(range(n), key=lambda a: abs(ok[a] - base_index))
    curvature = Jv[near] / H[near]
    # Function noise, measured: the second difference J·h is s''·h² plus noise; the
    # smooth part grows 16× per level, so what does not is noise. This catches noise
    # the output's size does not show, e.g. (x + 1e6) - 1e6 rounding at 1e6's ulp.
    # Likewise D(h) - D(4h) is c·h² for smooth s; its part that does not shrink 16×
    # per level, times h, measures noise that rounds x ± h symmetrically (J = 0).
    sigma = 0.0
    for a in range(min(3, n - 1)):
        sigma = max(sigma, abs(Jv[a] * H[a] - Jv[a + 1] * H[a + 1] / 16.0))
        if a + 2 < n:
            dd0, dd1 = D[a] - D[a + 1], D[a + 1] - D[a + 2]
            sigma = max(sigma, abs(dd0 - dd1 / 16.0) * H[a])
    level_noise = [max(N[a], sigma / H[a]) for a in range(n)]
    # Richardson pairs of neighbouring finite levels: (16 D(h) - D(4h)) / 15.
    pairs = [a for a in range(n - 1) if ok[a + 1] == ok[a] + 1]
    if not pairs:
        return D[0], float("inf"), True, curvature
    rich = [D[a] + (D[a] - D[a + 1]) / 15.0 for a in pairs]
    if len(rich) == 1:
        errs = [abs(D[pairs[0]] - D[pairs[0] + 1]) / 15.0]
    else:
        diffs = [abs(rich[q + 1] - rich[q]) for q in range(len(rich) - 1)]
        errs = [diffs[0], *(max(diffs[q - 1], diffs[q]) for q in range(1, len(diffs))), diffs[-1]]
    errs = [e + level_noise[a] for e, a in zip(errs, pairs)]
    best = min(range(len(errs)), key=errs.__getitem__)
    value = rich[best]
    curvature = Jv[pairs[best]] / H[pairs[best]]
    # x ± h rounds: the stencil's centre may sit up to eps·h off x (all of x, when
    # x is below h's ulp), which moves the estimate by s''·(that).
    shift = 2 * eps * H[pairs[best]] * abs(curvature)
    error = max(errs[best] + shift, 8 * eps * abs(value))

    # Kink: a jump J of constant sign and size (within 2× per level) over three
    # consecutive steps, larger than rounding and than what matters. Over the smallest
    # steps it is a kink at x itself; over larger ones a kink within their reach, which
    # spoils every central difference that straddles it (and the minimum-error choice
    # above would pick their consistent, wrong plateau): not differentiable *here*,
    # numerically, which is never a failure. (Measured noise is no guide: a jump's second difference
    # grows like h, which the noise measure above counts; and noise J ∝ 1/h changes
    # 4× per level, smooth J ∝ h likewise.)
    kink = False
    # (Which levels' D and J stand out, tested once per level rather than per window.)
    limit = [max(jump_threshold, 8 * N[a]) for a in range(n)]
    large_d = [abs(D[a]) > limit[a] for a in range(n)]
    large_j = [abs(Jv[a]) > limit[a] for a in range(n)]
    for a in range(n - 2):
        if ok[a + 2] != ok[a] + 2:
            continue
        # A jump of s itself within the steps' reach (arccot at 0, a step function):
        # every straddling D(h) is about jump / 2h, so D·h holds still across levels
        # (a smooth s keeps D still and D·h shrinks 4× per level; rounding noise keeps
        # D·h still but small and of random sign). The jump also inflates the measured
        # noise, so only the modelled rounding noise N is a guide here.
        if large_d[a] and large_d[a + 1] and large_d[a + 2]:
            dh = [D[a + q] * H[a + q] for q in range(3)]
            if all((x > 0) == (dh[0] > 0) for x in dh) and all(
                0.5 < abs(dh[q]) / abs(dh[q + 1]) < 2.0 for q in range(2)
            ):
                kink = True
                break
        if not (large_j[a] and large_j[a + 1] and large_j[a + 2]):
            continue
        js = Jv[a : a + 3]
        if all((j > 0) == (js[0] > 0) for j in js) and all(
            0.5 < abs(js[q]) / abs(js[q + 1]) < 2.0 for q in range(2)
        ):
            kink = True
            break
    return value, error, kink, curvature


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
    error = np.abs(first) * 8 * ev.eps
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
    done &= ~(np.abs(jumps) > max(threshold, 1e-3 * scale))
    x = ev.work[i].reshape(-1)
    for j in np.flatnonzero(~done):
        value[j], error[j], kink[j], curvature[j] = ev.refine(
            i, int(j), float(steps[j]), threshold, max(abs(float(x[j])), 1.0)
        )
    value, error, kink, curvature, done = (
        a.reshape(shape) for a in (value, error, kink, curvature, done)
    )
    return Estimate(value, error, kink, curvature, ~done, ev.calls - calls0)
