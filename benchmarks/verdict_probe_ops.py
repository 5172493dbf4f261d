"""The ops of ``benchmarks/verdict_probes.py`` (issue 34 items 7, 9, 10, 11): each
probe is a correct op and its buggy twin, a backward off by a relative 1e-3 (or, for
the shape probes, wrong only at one kind of shape).

Every op here is a target of ``gradcheck verify benchmarks/verdict_probe_ops.py``
(the ops are module attributes, each with its ``describe`` settings); ``PROBES``
lists them, with the fixed inputs ``gradcheck.check`` gets and what each twin's
verdict must be. The table is built by functions (one per family), so that each
family reads as a few lines.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from gradcheck import Operation, describe

#: The relative error of every numeric twin.
BUG = 1e-3
_HERE = globals()


@dataclass
class Probe:
    """One probe: ``correct`` and ``buggy`` are the names of two targets of this
    module; ``inputs`` the fixed inputs of ``check``; ``correct_ok`` the verdicts of
    ``check`` that are right for the correct op (the buggy one must fail)."""

    family: str
    name: str
    inputs: list[np.ndarray]
    correct_ok: tuple[str, ...] = ("passed",)
    params: dict[str, Any] = field(default_factory=dict)
    #: the buggy twin's fixed inputs, where they differ (a true kink's twin)
    buggy_inputs: list[np.ndarray] | None = None
    #: what tells rows of the same ops apart in the table
    tag: str = ""

    @property
    def correct(self) -> str:
        return self.name

    @property
    def buggy(self) -> str:
        return self.name + "_bug"


PROBES: list[Probe] = []


def _register(name: str, obj: Any, settings: dict[str, Any]) -> None:
    obj.__name__ = obj.__qualname__ = name
    _HERE[name] = describe(**settings)(obj) if settings else describe(obj)


def _elementwise(f: Callable[..., Any], df: Callable[..., Any], scale: float) -> type:
    """An Operation computing ``f`` of one or more inputs elementwise, whose gradient
    with respect to input ``i`` is ``scale * grad * df(*xs)[i]``."""

    def __call__(self: Any, *xs: Any) -> np.ndarray:
        self.variables = xs
        return np.asarray(f(*(x.data for x in xs)))

    def backward_var(self: Any, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        g = grad * df(*(x.data for x in self.variables))[index]
        g = _unbroadcast(g, self.variables[index].shape)
        return g * scale if scale != 1.0 else g

    return type("op", (Operation,), {"__call__": __call__, "backward_var": backward_var})


def _unbroadcast(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``g`` summed over the axes its input was broadcast along."""
    g = np.broadcast_to(g, np.broadcast_shapes(g.shape, shape))
    g = g.sum(axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
    axes = tuple(a for a, n in enumerate(shape) if n == 1 and g.shape[a] != 1)
    return np.asarray(g.sum(axis=axes, keepdims=True) if axes else g)


def _pair(
    name: str,
    f: Callable[..., Any],
    df: Callable[..., Any],
    settings: dict[str, Any],
    arity: int = 1,
) -> None:
    """The correct op ``name`` and its twin ``name_bug`` (a backward off by BUG)."""
    for suffix, scale in (("", 1.0), ("_bug", 1.0 + BUG)):
        op = _elementwise(f, df, scale)
        if arity == 1:
            # a one-input op's signature must say one input
            call = op.__call__
            op.__call__ = lambda self, x, _c=call: _c(self, x)  # type: ignore[method-assign]
        elif arity == 2:
            call = op.__call__
            op.__call__ = lambda self, x, y, _c=call: _c(self, x, y)  # type: ignore[method-assign]
        _register(name + suffix, op, settings)


# --- scale: a 1e-3 error at every input scale float64 resolves -------------------

SCALES = (1e-9, 1e-6, 1e-3, 1.0, 1e3, 1e6, 1e9)
_BASE = np.array([0.7, -1.3, 1.9, 0.45, -0.8])
_BASE2 = np.array([1.1, 0.6, -1.7, -0.35, 1.45])


def _scale_family() -> None:
    smooth: dict[str, tuple[Callable[..., Any], Callable[..., Any], int]] = {
        "square": (lambda x: x * x, lambda x: (2 * x,), 1),
        "mul": (lambda x, y: x * y, lambda x, y: (y, x), 2),
        "rational": (lambda x: x / (1 + x * x), lambda x: ((1 - x * x) / (1 + x * x) ** 2,), 1),
    }
    for s in SCALES:
        # a function that varies on the inputs' own scale: tanh(x / s) · s
        f, df = _own_scale_tanh(s)
        name = f"scale_tanh_{s:.0e}".replace("+", "").replace("-", "m")
        _pair(name, f, df, {"domain": (-2 * s, 2 * s)})
        PROBES.append(Probe("scale", name, [s * _BASE]))
    for label, (f, df, arity) in smooth.items():
        for s in SCALES:
            name = f"scale_{label}_{s:.0e}".replace("+", "").replace("-", "m")
            domain = [(-2 * s, 2 * s)] * arity
            _pair(name, f, df, {"domain": domain}, arity)
            inputs = [s * _BASE, s * _BASE2][:arity]
            PROBES.append(Probe("scale", name, inputs))


def _own_scale_tanh(s: float) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def f(x: np.ndarray) -> np.ndarray:
        return s * np.tanh(x / s)

    def df(x: np.ndarray) -> tuple[np.ndarray]:
        return (1 - np.tanh(x / s) ** 2,)

    return f, df


def _flat_family() -> None:
    """Functions flat beside their value: a derivative far below |f| / max(|x|, 1),
    which the ladder's steps resolved to a few percent (gradcheck.checking.longer_steps)."""
    flat = {
        "rsqrt1": (lambda x: 1 / np.sqrt(1 + x * x), lambda x: (-x / (1 + x * x) ** 1.5,), 1e-9),
        "cos": (np.cos, lambda x: (-np.sin(x),), 1e-9),
        "gauss": (lambda x: np.exp(-x * x), lambda x: (-2 * x * np.exp(-x * x),), 1e-8),
        "atan_tail": (np.arctan, lambda x: (1 / (1 + x * x),), 1e9),
    }
    for label, (f, df, s) in flat.items():
        name = f"flat_{label}"
        domain = (0.5 * s, 2 * s) if s > 1 else (-2 * s, 2 * s)
        _pair(name, f, df, {"domain": domain})
        PROBES.append(Probe("flat", name, [s * (np.abs(_BASE) if s > 1 else _BASE)]))


#: (a, b) of ``2**b f(2**-a x)`` at ``2**a x``: the same verdict as at (0, 0)
RESCALINGS = ((0, 0), (20, -20), (-20, 20), (40, 40), (-40, -40))


def _rescale_family() -> None:
    for a, b in RESCALINGS:
        name = f"units_tanh_{a}_{b}".replace("-", "m")

        def f(x: np.ndarray, a: int = a, b: int = b) -> np.ndarray:
            return 2.0**b * np.tanh(x * 2.0**-a)

        def df(x: np.ndarray, a: int = a, b: int = b) -> tuple[np.ndarray]:
            return (2.0 ** (b - a) * (1 - np.tanh(x * 2.0**-a) ** 2),)

        _pair(name, f, df, {"domain": (-3 * 2.0**a, 3 * 2.0**a)})
        PROBES.append(Probe("units", name, [2.0**a * _BASE]))


# --- smoothness: C1 functions whose second derivative jumps; true kinks ----------


def _smooth_clamp(x: np.ndarray) -> np.ndarray:
    t = np.clip(x, 0.0, 1.0)
    return t * t * (3 - 2 * t)


def _softclip(x: np.ndarray) -> np.ndarray:
    ax = np.maximum(np.abs(x), 1.0)
    return np.where(np.abs(x) <= 1, x, np.sign(x) * (2 - 1 / ax))


C1 = {
    # name: (f, f', the points of the second derivative's jumps)
    "x_abs_x": (lambda x: x * np.abs(x), lambda x: (2 * np.abs(x),), (0.0,)),
    "relu_squared": (
        lambda x: np.maximum(x, 0) ** 2,
        lambda x: (2 * np.maximum(x, 0),),
        (0.0,),
    ),
    "huber": (
        lambda x: np.where(np.abs(x) <= 1, 0.5 * x * x, np.abs(x) - 0.5),
        lambda x: (np.clip(x, -1.0, 1.0),),
        (-1.0, 1.0),
    ),
    "elu": (
        lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
        lambda x: (np.where(x > 0, 1.0, np.exp(np.minimum(x, 0))),),
        (0.0,),
    ),
    "smooth_clamp": (
        _smooth_clamp,
        lambda x: (np.where((x > 0) & (x < 1), 6 * x * (1 - x), 0.0),),
        (0.0, 1.0),
    ),
    "softclip": (
        _softclip,
        lambda x: (np.where(np.abs(x) <= 1, 1.0, 1 / np.maximum(x * x, 1.0)),),
        (-1.0, 1.0),
    ),
}
#: a kink's neighbourhood: the kink itself and points near it on both sides
_NEAR = np.array([0.0, 1e-12, -1e-12, 1e-8, -1e-8, 1e-5, -1e-5, 0.3, -0.45])


def _smooth_family() -> None:
    for label, (f, df, jumps) in C1.items():
        _pair(label, f, df, {"domain": (-2.5, 2.5)})
        x = np.concatenate([k + _NEAR for k in jumps])
        PROBES.append(Probe("smoothness", label, [x]))


KINKS = {
    "abs": (np.abs, lambda x: (np.sign(x),), 1),
    "relu": (lambda x: np.maximum(x, 0), lambda x: ((x > 0).astype(float),), 1),
    "maximum": (np.maximum, lambda x, y: ((x >= y).astype(float), (x < y).astype(float)), 2),
}


def _kink_family() -> None:
    for label, (f, df, arity) in KINKS.items():
        _pair("kink_" + label, f, df, {}, arity)
        at = [np.array([0.0, 0.5, -0.3, 1.2]), np.array([0.0, 0.9, -0.7, 0.2])][:arity]
        away = [np.array([0.25, 0.5, -0.3, 1.2]), np.array([0.1, 0.9, -0.7, 0.2])][:arity]
        PROBES.append(
            Probe("kink", "kink_" + label, at, ("not differentiable",), buggy_inputs=away)
        )


# --- singular sets -----------------------------------------------------------------


def _near_singular(d: float) -> np.ndarray:
    return np.array([[1.0, 1.0], [1.0, 1.0 + d]])


def _matrix_op(name: str, f: Callable[..., Any], vjp: Callable[..., Any], arity: int) -> None:
    for suffix, scale in (("", 1.0), ("_bug", 1.0 + BUG)):

        def __call__(self: Any, *xs: Any, _f: Any = f) -> np.ndarray:
            self.variables = xs
            return np.asarray(_f(*(x.data for x in xs)))

        def backward_var(
            self: Any, grad: np.ndarray, index: int, _s: float = scale, **kwargs: Any
        ) -> np.ndarray:
            return _s * vjp(grad, *(x.data for x in self.variables))[index]

        if arity == 1:
            call: Any = lambda self, a, _c=__call__: _c(self, a)  # noqa: E731
            shapes: list[str] = ["2,2"]
        else:
            call = lambda self, a, b, _c=__call__: _c(self, a, b)  # noqa: E731
            shapes = ["2,2", "2"]
        op = type("op", (Operation,), {"__call__": call, "backward_var": backward_var})
        _register(name + suffix, op, {"shapes": shapes})


def _logabsdet_vjp(g: np.ndarray, a: np.ndarray) -> tuple[np.ndarray]:
    return (g * np.linalg.inv(a).T,)


def _inv_vjp(g: np.ndarray, a: np.ndarray) -> tuple[np.ndarray]:
    ai = np.linalg.inv(a)
    return (-ai.T @ g @ ai.T,)


def _solve_vjp(g: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    gb = np.linalg.solve(a.T, g)
    return (-np.outer(gb, np.linalg.solve(a, b)), gb)


def _singular_family() -> None:
    _matrix_op("logabsdet", lambda a: np.linalg.slogdet(a)[1], _logabsdet_vjp, 1)
    _matrix_op("inverse", np.linalg.inv, _inv_vjp, 1)
    _matrix_op("solve", np.linalg.solve, _solve_vjp, 2)
    for d in (1e-4, 1e-6, 1e-8):
        PROBES.append(Probe("singular", "logabsdet", [_near_singular(d)], tag=f"d={d:g}"))
    for d in (1e-4, 1e-7):
        PROBES.append(Probe("singular", "inverse", [_near_singular(d)], tag=f"d={d:g}"))
        b = np.array([0.3, -1.1])
        PROBES.append(Probe("singular", "solve", [_near_singular(d), b], tag=f"d={d:g}"))
    near_zero = {
        "sqrt": (np.sqrt, lambda x: (0.5 / np.sqrt(x),), np.array([1e-20, 1e-12, 1e-6, 0.5])),
        "log": (np.log, lambda x: (1 / x,), np.array([1e-20, 1e-12, 1e-6, 0.5])),
        "reciprocal": (
            lambda x: 1 / x,
            lambda x: (-1 / (x * x),),
            np.array([1e-8, -1e-10, 1e-5, -0.5]),
        ),
    }
    for label, (f, df, x) in near_zero.items():
        _pair(label, f, df, {"domain": (0.0, 1e-3)})
        PROBES.append(Probe("singular", label, [x]))
    _pair("atan2", np.arctan2, _atan2_grad, {"domain": (-1e-6, 1e-6)}, 2)
    y = np.array([1e-9, -2e-9, 3e-12, 5e-10])
    x = np.array([-1e-9, 2e-9, 1e-12, 4e-10])
    PROBES.append(Probe("singular", "atan2", [y, x]))


def _atan2_grad(y: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # at the origin, where atan2 has no derivative, 0 (a finite choice, as the
    # engine's; a nan there is a nonfinite_gradient failure)
    r2 = x * x + y * y
    safe = np.where(r2 == 0, 1.0, r2)
    return (np.where(r2 == 0, 0.0, x / safe), np.where(r2 == 0, 0.0, -y / safe))


# --- cancellation: a tiny true gradient beside a forward that cancels --------------


def _cross_entropy(z: np.ndarray) -> np.ndarray:
    # label 0, as written by hand: log-sum-exp minus the label's logit
    m = z.max(axis=-1, keepdims=True)
    return (m + np.log(np.exp(z - m).sum(axis=-1, keepdims=True)))[..., 0] - z[..., 0]


def _cross_entropy_grad(z: np.ndarray) -> tuple[np.ndarray]:
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    p[..., 0] -= 1
    return (p,)


def _cancellation_family() -> None:
    # the cross-entropy's twin is off by 1e-6 absolute (its true gradient, 1e-13 at a
    # logit of 30, is below what float64 resolves: a relative error there is invisible)
    for suffix, off in (("", 0.0), ("_bug", 1e-6)):

        def __call__(self: Any, z: Any) -> np.ndarray:
            self.variables = (z,)
            return np.asarray(_cross_entropy(z.data))

        def backward_var(
            self: Any, grad: np.ndarray, index: int, _o: float = off, **kwargs: Any
        ) -> np.ndarray:
            return grad[..., None] * (_cross_entropy_grad(self.variables[0].data)[0] + _o)

        op = type("op", (Operation,), {"__call__": __call__, "backward_var": backward_var})
        _register("cross_entropy" + suffix, op, {"shapes": ["2,3"], "domain": (-40.0, 40.0)})
    PROBES.append(
        Probe("cancellation", "cross_entropy", [np.array([[30.0, 0.0, -1.0], [0.3, -0.2, 2.0]])])
    )
    _pair("x_minus_sin", lambda x: x - np.sin(x), lambda x: (1 - np.cos(x),), {})
    PROBES.append(Probe("cancellation", "x_minus_sin", [np.array([1e-3, -2e-3, 0.5, 1e-5])]))
    _pair(
        "shifted_identity",
        lambda x: (x + 1e6) - 1e6,
        lambda x: (np.ones_like(x),),
        {"domain": (-3.0, 3.0)},
    )
    PROBES.append(Probe("cancellation", "shifted_identity", [np.array([1.14136302, -3.7, 0.25])]))


# --- structural: torch ops whose backward rounds, several outputs, ZeroTensor ------


def _twisted(y: torch.Tensor) -> torch.Tensor:
    """``y`` with the same value and a gradient off by BUG (the forward's value is
    unchanged: ``e - e`` is exactly 0)."""
    e = y * BUG
    return y + (e - e.detach())


def logcumsumexp(x):
    return torch.logcumsumexp(x, dim=-1)


def logcumsumexp_bug(x):
    return _twisted(torch.logcumsumexp(x, dim=-1))


def matrix_exp(x):
    return torch.linalg.matrix_exp(x)


def matrix_exp_bug(x):
    return _twisted(torch.linalg.matrix_exp(x))


def scaled_pair(x, y):
    return (x * 2, y * 3)


def scaled_pair_bug(x, y):
    return (x * 2, _twisted(y * 3))


def broadcast_pair(x, y):
    return torch.broadcast_tensors(x, y)


def broadcast_pair_bug(x, y):
    a, b = torch.broadcast_tensors(x, y)
    return (a, _twisted(b))


def meshgrid_pair(x, y):
    return torch.meshgrid(x, y, indexing="ij")


def meshgrid_pair_bug(x, y):
    a, b = torch.meshgrid(x, y, indexing="ij")
    return (_twisted(a), b)


def atleast_2d_pair(x, y):
    return torch.atleast_2d(x, y)


def atleast_2d_pair_bug(x, y):
    a, b = torch.atleast_2d(x, y)
    return (a, _twisted(b))


def sgn(x):
    return torch.sgn(x)


def sgn_bug(x):
    # a zero gradient that is not zero: off by BUG in absolute terms
    return torch.sgn(x) + (x * BUG - (x * BUG).detach())


def _structural_family() -> None:
    rng = np.random.default_rng(34)
    shapes = {"matrix_exp": ["3,3"], "meshgrid_pair": ["3", "4"], "atleast_2d_pair": ["", "3"]}
    for label in (
        "logcumsumexp",
        "matrix_exp",
        "scaled_pair",
        "broadcast_pair",
        "meshgrid_pair",
        "atleast_2d_pair",
        "sgn",
    ):
        settings = {"shapes": shapes[label]} if label in shapes else {}
        for suffix in ("", "_bug"):
            fn = _HERE[label + suffix]
            _HERE[label + suffix] = describe(**settings)(fn) if settings else describe(fn)
        if label == "logcumsumexp":
            inputs = [rng.normal(size=8) * 30]
        elif label == "matrix_exp":
            inputs = [rng.normal(size=(3, 3)) * 2]
        elif label == "broadcast_pair":
            inputs = [rng.normal(size=(4, 1)), rng.normal(size=(3,))]
        elif label == "meshgrid_pair":
            inputs = [rng.normal(size=3), rng.normal(size=4)]
        elif label == "atleast_2d_pair":
            inputs = [np.array(0.7), rng.normal(size=3)]
        elif label == "scaled_pair":
            inputs = [rng.normal(size=5), rng.normal(size=3)]
        else:
            inputs = [rng.normal(size=6)]
        PROBES.append(Probe("structural", label, inputs))


# --- shapes: a reduction wrong only at a 3-d input with a size-1 middle axis -------


def _middle_mean(squeezes: bool) -> type:
    def __call__(self: Any, x: Any) -> np.ndarray:
        self.variables = (x,)
        return np.asarray(x.data.mean(axis=1))

    def backward_var(self: Any, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0].data
        # the bug: squeeze() meant to drop a batch axis of 1, and takes the middle
        n = np.squeeze(x).shape[1] if squeezes else x.shape[1]
        return np.broadcast_to(np.expand_dims(grad, 1) / n, x.shape).copy()

    return type("op", (Operation,), {"__call__": __call__, "backward_var": backward_var})


def _last_sum(squeezes: bool) -> type:
    def __call__(self: Any, x: Any) -> np.ndarray:
        self.variables = (x,)
        if x.ndim == 0:
            raise ValueError("sums over the last axis: needs an array")
        return np.asarray(x.data.sum(axis=-1))

    def backward_var(self: Any, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        x = self.variables[0].data
        g = np.squeeze(grad) if squeezes else grad
        return np.broadcast_to(g[..., None], x.shape).copy()

    return type("op", (Operation,), {"__call__": __call__, "backward_var": backward_var})


def _shape_family() -> None:
    x = np.random.default_rng(1).normal(size=(3, 1, 4))
    for label, make in (("middle_mean", _middle_mean), ("last_sum", _last_sum)):
        _register(label, make(False), {})
        _register(label + "_bug", make(True), {})
        PROBES.append(Probe("shapes", label, [x]))


# --- more of item 7: C1 and tiny-gradient ops at more scales; eigvalsh, norm ------


def _smooth_max(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # max(x, y) joined by a cubic piece within 1 of the tie: (1/6)·max(1 - |x - y|, 0)**3
    return np.maximum(x, y) + np.maximum(1 - np.abs(x - y), 0.0) ** 3 / 6


def _smooth_max_grad(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d = x - y
    h = np.maximum(1 - np.abs(d), 0.0)
    dx = 0.5 + 0.5 * np.sign(d) * (1 - h * h)
    return dx, 1 - dx


def _softplus_grad(x: np.ndarray) -> tuple[np.ndarray]:
    return (np.exp(-np.logaddexp(0.0, -x)),)


def _eigvalsh(a: np.ndarray) -> np.ndarray:
    return np.linalg.eigvalsh((a + a.T) / 2)


def _eigvalsh_vjp(g: np.ndarray, a: np.ndarray) -> tuple[np.ndarray]:
    _, v = np.linalg.eigh((a + a.T) / 2)
    return ((v * g) @ v.T,)


def _norm(x: np.ndarray) -> np.ndarray:
    # scaled by the largest element, so that x·x does not underflow at 1e-200
    m = np.max(np.abs(x))
    return m * np.sqrt(np.sum((x / m) ** 2)) if m > 0 else np.zeros(())


def _norm_grad(x: np.ndarray) -> tuple[np.ndarray]:
    n = _norm(x)
    return (x / n if n > 0 else np.zeros_like(x),)


def _more_family() -> None:
    more = {
        "x2_sign": (lambda x: x * x * np.sign(x), lambda x: (2 * np.abs(x),), (0.0,)),
        "relu_cubed": (
            lambda x: np.maximum(x, 0) ** 3,
            lambda x: (3 * np.maximum(x, 0) ** 2,),
            (0.0,),
        ),
    }
    for label, (f, df, jumps) in more.items():
        _pair(label, f, df, {"domain": (-2.5, 2.5)})
        PROBES.append(Probe("smoothness", label, [np.concatenate([k + _NEAR for k in jumps])]))
    _pair("smooth_max", _smooth_max, _smooth_max_grad, {"domain": (-2.5, 2.5)}, 2)
    y = np.array([0.0, 0.3, -0.2, 1.0, -1.0, 0.5, 1e-9])
    PROBES.append(Probe("smoothness", "smooth_max", [y + _NEAR[:7], y]))
    PROBES.append(Probe("smoothness", "smooth_max", [y + 1 + _NEAR[:7], y], tag="|x-y|=1"))
    _pair("softplus", lambda x: np.logaddexp(0.0, x), _softplus_grad, {"domain": (-45.0, 45.0)})
    for x in ([-40.0, -35.0, -30.0, -25.0], [25.0, 30.0, 40.0, 44.0]):
        PROBES.append(Probe("scale", "softplus", [np.array(x)], tag=f"x={x[0]:g}.."))
    x_abs_x = C1["x_abs_x"]
    for s in SCALES:
        name = f"scale_xabsx_{s:.0e}".replace("+", "").replace("-", "m")
        _pair(name, x_abs_x[0], x_abs_x[1], {"domain": (-2 * s, 2 * s)})
        PROBES.append(Probe("scale", name, [s * np.append(_BASE, 0.0)]))
    for a, b in RESCALINGS:
        name = f"units_xabsx_{a}_{b}".replace("-", "m")

        def f(x: np.ndarray, a: int = a, b: int = b) -> np.ndarray:
            return 2.0**b * (x * 2.0**-a) * np.abs(x * 2.0**-a)

        def df(x: np.ndarray, a: int = a, b: int = b) -> tuple[np.ndarray]:
            return (2.0 ** (b - a) * 2 * np.abs(x * 2.0**-a),)

        _pair(name, f, df, {"domain": (-3 * 2.0**a, 3 * 2.0**a)})
        PROBES.append(Probe("units", name, [2.0**a * np.append(_BASE, 0.0)]))
    _matrix_op("eigvalsh", _eigvalsh, _eigvalsh_vjp, 1)
    # (at a gap of 1e-10 and below the cone's tip is narrower than steps that resolve
    # s to 1e-3: beyond float64's finite differences)
    for gap in (1e-4, 1e-6, 1e-8):
        a = np.array([[1.0, 0.3 * gap], [0.3 * gap, 1.0 + gap]])
        PROBES.append(Probe("singular", "eigvalsh", [a], tag=f"gap={gap:g}"))
    _pair("norm", _norm, _norm_grad, {"shapes": ["3"]})
    PROBES.append(Probe("singular", "norm", [np.array([1e-10, -2e-10, 3e-11])], tag="near 0"))
    PROBES.append(Probe("singular", "norm", [np.array([1e-200, -2e-200, 3e-201])], tag="1e-200"))


_scale_family()
_flat_family()
_more_family()
_rescale_family()
_smooth_family()
_kink_family()
_singular_family()
_cancellation_family()
_structural_family()
_shape_family()
