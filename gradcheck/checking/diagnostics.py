"""The numbers behind ``gradcheck plot``: finite-difference error against the step size,
and the Taylor remainder test, for one example. Data only; drawing is
:mod:`gradcheck.frontend.plot`'s job.

Both look at ``s(x) = <v, f(x)>`` (a random upstream gradient ``v``, as in a check)
along one random unit direction ``d`` through all float inputs, and at the analytic
directional derivative ``<g, d>`` from the target's backward.

* **Step curve.** The central difference ``D(h) = (s(x+hd) - s(x-hd)) / 2h`` errs by
  the truncation ``O(h²)`` at large steps and by rounding ``O(eps·|s| / h)`` at small
  ones: on log-log axes, ``|D(h) - <g, d>|`` is a V whose bottom is near the step the
  checker uses (``eps**(1/3)`` times the size of ``x``). When the gradient is wrong, the
  curve cannot go below the gradient's error: the V's bottom is a flat floor.
* **Taylor test.** ``r(h) = |s(x+hd) - s(x) - h<g, d>|`` is ``O(h²)`` when ``g`` is the
  gradient and ``O(h)`` when it is not (the error ``h<g_true - g, d>`` dominates), so
  the slope of ``log r`` against ``log h`` is 2 or 1 (:func:`loglog_slope`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.checking.numerical import step_sizes
from gradcheck.checking.resolve import resolve_target
from gradcheck.checking.target import Target
from gradcheck.engine.graph import no_autodiff

__all__ = ["Diagnosis", "diagnose", "element_gradients", "loglog_slope"]


@dataclass
class Diagnosis:
    """Step curve and Taylor test of one target at one example.

    Attributes
    ----------
    target : str
        The target's name.
    inputs : list of ndarray
        The example.
    steps, errors : ndarray
        Step sizes and ``|D(h) - <g, d>|`` (the step curve).
    chosen_step : float
        The checker's step along ``d`` (see :func:`gradcheck.checking.numerical.step_sizes`).
    taylor_steps, remainders : ndarray
        Step sizes and ``|s(x+hd) - s(x) - h<g, d>|``.
    slope : float
        The fitted log-log slope of the remainders (about 2: right; about 1: wrong);
        nan when too few remainders rise above rounding noise (``s`` is linear along d).
    noise : float
        The rounding level of ``s``; remainders below it are left out of the fit.
    directional : float
        ``<g, d>``, the analytic directional derivative.
    """

    target: str
    inputs: list[np.ndarray]
    steps: np.ndarray
    errors: np.ndarray
    chosen_step: float
    taylor_steps: np.ndarray
    remainders: np.ndarray
    slope: float
    noise: float
    directional: float

    @property
    def gradient_right(self) -> bool | None:
        """True for a slope near 2, False near 1, None when the slope is undecided."""
        if math.isnan(self.slope):
            return None
        return self.slope > 1.5


def loglog_slope(
    h: np.ndarray, r: np.ndarray, floor: float = 0.0, *, count: int | None = None
) -> float:
    """Least-squares slope of ``log r`` against ``log h`` over the points where ``r``
    exceeds ``floor`` (only the ``count`` smallest such steps, when given: the
    asymptotic regime ``h -> 0``); nan with fewer than three such points.

    >>> h = np.logspace(-6, -2, 9)
    >>> round(loglog_slope(h, 3 * h**2), 6), round(loglog_slope(h, 0.5 * h), 6)
    (2.0, 1.0)
    """
    h, r = np.asarray(h, dtype=np.float64), np.asarray(r, dtype=np.float64)
    keep = np.flatnonzero(np.isfinite(r) & (r > floor) & (r > 0))
    keep = keep[np.argsort(h[keep])][:count]
    if keep.size < 3:
        return math.nan
    slope, _ = np.polyfit(np.log(h[keep]), np.log(r[keep]), 1)
    return float(slope)


#: Remainders this many times the rounding level of ``s`` enter the slope fit.
_ABOVE_NOISE = 100.0
#: The fit uses this many of the smallest steps above that level.
_FIT_POINTS = 8


def diagnose(
    target: Any,
    *arrays: Any,
    params: Mapping[str, Any] | None = None,
    seed: int = 0,
    constants: Sequence[int] = (),
    points: int = 41,
) -> Diagnosis:
    """Step curve and Taylor test of ``target`` at ``arrays`` (see the module docstring).

    Parameters
    ----------
    target : op, function or Target
        Anything :func:`gradcheck.resolve_target` accepts.
    *arrays : array_like
        The example; float inputs are evaluated in float64.
    params : mapping, optional
        The op's keyword parameters.
    seed : int
        Seeds the upstream gradient and the direction.
    constants : sequence of int
        Inputs held fixed (non-float inputs always are).
    points : int
        Steps per curve.

    Examples
    --------
    >>> import gradcheck as mg
    >>> d = diagnose(lambda x: mg.sin(x) * x, np.linspace(-1, 1, 5))
    >>> round(d.slope, 1), d.gradient_right
    (2.0, True)
    """
    tgt: Target = resolve_target(target)
    xs = [
        np.array(a, dtype=np.float64) if np.asarray(a).dtype.kind == "f" else np.array(a)
        for a in arrays
    ]
    free = [i for i, x in enumerate(xs) if x.dtype.kind == "f" and i not in constants]
    if not free:
        raise ValueError("diagnose needs at least one float input that is not a constant")
    rng = np.random.default_rng(seed)
    f0 = np.asarray(tgt.forward(xs, params))
    v = rng.standard_normal(f0.shape).astype(f0.dtype)
    _, grads = tgt.run(xs, params, v, constants=[i for i in range(len(xs)) if i not in free])
    direction = [rng.standard_normal(xs[i].shape) for i in free]
    norm = math.sqrt(sum(float(np.vdot(d, d)) for d in direction)) or 1.0
    direction = [d / norm for d in direction]
    directional = sum(
        float(np.vdot(np.asarray(grads[i], dtype=np.float64), d))
        for i, d in zip(free, direction)
        if grads[i] is not None
    )

    def s(h: float) -> float:
        moved = list(xs)
        for i, d in zip(free, direction):
            moved[i] = xs[i] + h * d
        with no_autodiff:
            return float(np.vdot(v, np.asarray(tgt.forward(moved, params), dtype=np.float64)))

    eps = float(np.finfo(np.float64).eps)
    s0 = float(np.vdot(v, f0.astype(np.float64)))
    noise = eps * float(np.sum(np.abs(v) * np.abs(f0))) + np.finfo(np.float64).tiny
    scale = max(1.0, *(float(np.max(np.abs(xs[i]), initial=0.0)) for i in free))
    chosen = float(step_sizes(np.array(scale), eps))

    steps = scale * np.logspace(-14, 0, points)
    errors = np.array([abs((s(h) - s(-h)) / (2 * h) - directional) for h in steps])
    taylor_steps = scale * np.logspace(-9, -1, points)
    remainders = np.array([abs(s(h) - s0 - h * directional) for h in taylor_steps])
    slope = loglog_slope(taylor_steps, remainders, _ABOVE_NOISE * noise, count=_FIT_POINTS)
    return Diagnosis(
        target=tgt.name,
        inputs=xs,
        steps=steps,
        errors=errors,
        chosen_step=chosen,
        taylor_steps=taylor_steps,
        remainders=remainders,
        slope=slope,
        noise=noise,
        directional=directional,
    )


def element_gradients(
    target: Any,
    *arrays: Any,
    wrt: int,
    params: Mapping[str, Any] | None = None,
    seed: int = 0,
    constants: Sequence[int] = (),
    upstream: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The analytic gradient (the target's backward) and the numeric one (refined
    central differences, :func:`~gradcheck.checking.checker.numerical_gradient`) of
    ``<v, f(arrays)>`` with respect to input ``wrt``, element by element (flat, in
    float64), for the upstream gradient ``v``: ``upstream`` (the one a check used), else
    a random one seeded by ``seed``: what the HTML report plots side by side for a
    failing input.

    >>> import gradcheck as mg
    >>> a, n = element_gradients(lambda x: x * x, np.array([1.0, 3.0]), wrt=0)
    >>> bool(np.allclose(a, n))
    True
    """
    from gradcheck.checking.checker import numerical_gradient

    tgt: Target = resolve_target(target)
    xs = [np.asarray(a) for a in arrays]
    out = np.asarray(tgt.forward(xs, params))
    if upstream is not None and np.shape(upstream) == out.shape:
        v = np.asarray(upstream).astype(out.dtype)
    else:
        v = np.random.default_rng(seed).standard_normal(out.shape).astype(out.dtype)
    held = [i for i in constants if i != wrt]
    _, grads = tgt.run(xs, params, v, constants=held)
    numeric = numerical_gradient(tgt, *xs, v=v, params=params, inputs=[wrt])[wrt]
    grad = grads[wrt]
    analytic = np.zeros(xs[wrt].shape) if grad is None else np.asarray(grad)
    flat = [np.asarray(g, dtype=np.float64).reshape(-1) for g in (analytic, numeric)]
    return flat[0], flat[1]
