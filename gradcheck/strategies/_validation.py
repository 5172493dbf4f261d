"""Up-front argument checks shared by every strategy.

Each check raises :class:`hypothesis.errors.InvalidArgument` with a message that names
the argument, shows the value it got, and says what to pass instead, the way
``hypothesis.extra.numpy`` does.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

__all__ = [
    "check_bool",
    "check_int",
    "check_real",
    "check_float_dtype",
    "check_domain",
    "check_points",
    "check_shape",
]


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidArgument(f"{name}={value!r} must be True or False")
    return value


def check_int(name: str, value: Any, *, min_value: int = 0, max_value: int | None = None) -> int:
    """``value`` as an int in ``[min_value, max_value]``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InvalidArgument(f"{name}={value!r} must be an integer")
    number = int(value)
    if number < min_value:
        raise InvalidArgument(f"{name}={number} must be at least {min_value}")
    if max_value is not None and number > max_value:
        raise InvalidArgument(f"{name}={number} must be at most {max_value}")
    return number


def check_real(name: str, value: Any, *, positive: bool = False) -> float:
    """``value`` as a finite float (positive when asked)."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise InvalidArgument(f"{name}={value!r} must be a finite real number")
    if positive and value <= 0:
        raise InvalidArgument(f"{name}={value!r} must be greater than 0")
    return float(value)


def check_float_dtype(name: str, dtype: Any) -> np.dtype[Any]:
    """``dtype`` as a real floating-point NumPy dtype."""
    try:
        result: np.dtype[Any] = np.dtype(dtype)
    except TypeError:
        raise InvalidArgument(
            f"{name}={dtype!r} is not a NumPy dtype; pass e.g. numpy.float64"
        ) from None
    if result.kind != "f":
        raise InvalidArgument(
            f"{name}={dtype!r} is not a real floating-point dtype; pass numpy.float16, "
            f"numpy.float32 or numpy.float64"
        )
    return result


def check_domain(name: str, domain: Any) -> tuple[float, float]:
    """A ``(lo, hi)`` pair of reals with ``lo < hi``; ``None`` or an infinite bound is
    kept as ``-inf``/``inf`` (the caller clips it)."""
    if not isinstance(domain, (tuple, list)) or len(domain) != 2:
        raise InvalidArgument(f"{name}={domain!r} must be a pair (lo, hi), e.g. (0.0, None)")
    lo, hi = (
        (-math.inf if domain[0] is None else domain[0]),
        (math.inf if domain[1] is None else domain[1]),
    )
    for bound in (lo, hi):
        if isinstance(bound, bool) or not isinstance(bound, Real) or math.isnan(bound):
            raise InvalidArgument(f"{name}={domain!r}: each bound must be a real number or None")
    if not lo < hi:
        raise InvalidArgument(f"{name}={domain!r}: the lower bound must be below the upper bound")
    return float(lo), float(hi)


def check_points(name: str, points: Any) -> tuple[float, ...]:
    """A sequence of finite reals (``None`` means none)."""
    if points is None:
        return ()
    if isinstance(points, Real) and not isinstance(points, bool):
        points = (points,)
    if not isinstance(points, (tuple, list)):
        raise InvalidArgument(f"{name}={points!r} must be a list of numbers, e.g. [0.0]")
    return tuple(check_real(f"{name}[{i}]", p) for i, p in enumerate(points))


def check_shape(name: str, shape: Any) -> Any:
    """``shape`` as Hypothesis's ``arrays`` takes it: an int, a tuple of ints >= 0, or
    a strategy (left to Hypothesis)."""
    if isinstance(shape, st.SearchStrategy):
        return shape
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, tuple) or not all(
        isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in shape
    ):
        raise InvalidArgument(
            f"{name}={shape!r} must be a tuple of non-negative ints (or a strategy of them)"
        )
    return tuple(int(n) for n in shape)
