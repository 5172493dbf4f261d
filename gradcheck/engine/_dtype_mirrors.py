"""NumPy's real dtypes under their NumPy names, so that ``mg.float32`` is
``numpy.float32`` (as in MyGrad)."""

from __future__ import annotations

from numpy import (
    bool_,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    intp,
    longdouble,
    single,
    uint8,
    uint16,
    uint32,
    uint64,
    uintp,
)

__all__ = [
    "bool_",
    "double",
    "float16",
    "float32",
    "float64",
    "half",
    "int8",
    "int16",
    "int32",
    "int64",
    "intp",
    "longdouble",
    "single",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uintp",
]
