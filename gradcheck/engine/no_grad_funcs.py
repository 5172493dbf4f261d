"""NumPy functions that have no gradient to compute, under their NumPy names (as in
MyGrad): ``mg.isnan`` is ``numpy.isnan``. Applied to tensors they work on the tensors'
data (NumPy's ``__array__``/``__array_function__`` protocols) and return arrays, bools
or dtypes, never tensors; the comparisons and rounding ufuncs among them are the
ones whose derivative is zero wherever it exists. ``mod`` is ``numpy.remainder``.
"""

from __future__ import annotations

from numpy import (
    allclose,
    bincount,
    can_cast,
    ceil,
    copyto,
    divmod,  # noqa: A004  (NumPy's, as MyGrad exports it)
    equal,
    floor,
    floor_divide,
    fmod,
    greater,
    greater_equal,
    isclose,
    isfinite,
    isinf,
    isnan,
    isnat,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    may_share_memory,
    min_scalar_type,
    not_equal,
    remainder,
    result_type,
    rint,
    shape,
    shares_memory,
    sign,
    signbit,
    trunc,
)

mod = remainder

__all__ = [
    "allclose",
    "bincount",
    "can_cast",
    "ceil",
    "copyto",
    "divmod",
    "equal",
    "floor",
    "floor_divide",
    "fmod",
    "greater",
    "greater_equal",
    "isclose",
    "isfinite",
    "isinf",
    "isnan",
    "isnat",
    "less",
    "less_equal",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "may_share_memory",
    "min_scalar_type",
    "mod",
    "not_equal",
    "remainder",
    "result_type",
    "rint",
    "shape",
    "shares_memory",
    "sign",
    "signbit",
    "trunc",
]
