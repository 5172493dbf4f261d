"""One input's tolerances, as one object: ``atol``, ``rtol``, and what ``atol`` is.

A gradient element passes where ``|analytic - numeric| <= atol' + rtol·|numeric|``
(plus the error estimate's share, :mod:`gradcheck.checking.compare`), and ``atol'`` is
either ``atol`` itself or ``atol`` times the gradient's scale (the largest |numeric|
of the input). The defaults per dtype (:data:`DEFAULT_TOLERANCES`) scale, so that they
mean the same at every magnitude; an ``atol=`` given to :func:`gradcheck.check` is
absolute, what the caller accepts. :attr:`Tolerance.atol_scaled` says which it is.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["DEFAULT_TOLERANCES", "Tolerance", "tolerance_for"]


@dataclass(frozen=True)
class Tolerance:
    """The tolerances one gradient is judged with, in the API's order (atol, rtol)."""

    atol: float
    rtol: float
    #: Whether ``atol`` is a fraction of the gradient's scale (the default tolerances)
    #: rather than an absolute bound (an ``atol`` the caller gave).
    atol_scaled: bool

    def absolute(self, scale: float) -> float:
        """The absolute part of the bound for a gradient whose largest |element| is
        ``scale``."""
        return self.atol * scale if self.atol_scaled else self.atol

    def allowed(self, expected: np.ndarray, scale: float) -> Any:
        """The bound on ``|got - expected|`` per element: the absolute part plus
        ``rtol·|expected|``."""
        return self.absolute(scale) + self.rtol * np.abs(expected)


#: The default tolerances per gradient dtype. Their ``atol`` is relative to the
#: input's gradient scale (the largest |numeric| of that input), so that it means the
#: same at every magnitude, and a few eps of max|v| are added (see
#: :meth:`gradcheck.checking.compare.Comparison.abs_tol`); an ``atol=`` passed to
#: :func:`gradcheck.check` is absolute.
DEFAULT_TOLERANCES: dict[str, Tolerance] = {
    "float64": Tolerance(atol=1e-9, rtol=1e-7, atol_scaled=True),
    "float32": Tolerance(atol=1e-5, rtol=1e-4, atol_scaled=True),
    "float16": Tolerance(atol=1e-2, rtol=1e-2, atol_scaled=True),
    # bfloat16 has 8 bits of mantissa (eps 2**-7): about 6 eps, as float16's 10 eps
    "bfloat16": Tolerance(atol=5e-2, rtol=5e-2, atol_scaled=True),
}


@functools.lru_cache(maxsize=64)
def _dtype_name(dt: Any) -> str:
    """``str(dt)``, which NumPy computes in Python on every call (profiled: a tenth of
    a small fast-mode check's own time)."""
    return str(dt)


def tolerance_for(dt: Any, atol: float | None, rtol: float | None) -> Tolerance:
    """The tolerances of a gradient of dtype ``dt`` (a dtype, or "bfloat16"): the ones
    given, each default where None. The ``atol`` scales with the gradient unless it
    was given."""
    default = DEFAULT_TOLERANCES.get(_dtype_name(dt), DEFAULT_TOLERANCES["float64"])
    return Tolerance(
        atol=default.atol if atol is None else atol,
        rtol=default.rtol if rtol is None else rtol,
        atol_scaled=atol is None,
    )
