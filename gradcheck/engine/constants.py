"""NumPy's constants under their NumPy names (``mg.pi`` is ``numpy.pi``, as in MyGrad)."""

from __future__ import annotations

from numpy import e, euler_gamma, inf, nan, newaxis, pi

__all__ = ["e", "euler_gamma", "inf", "nan", "newaxis", "pi"]
