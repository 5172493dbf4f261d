"""Type aliases for annotating code that uses the engine (MyGrad's names).

``ArrayLike``: what the engine's functions take as data (tensors, arrays, numbers,
nested sequences); ``DTypeLike``/``DTypeLikeReals``: what names a dtype; ``Shape``: a
tuple of ints; ``Index``: what indexes a tensor; ``Mask``: a boolean ``where=``;
``Real``: a real number.

Static type checkers see unions. At run time ``ArrayLike``, ``DTypeLikeReals`` and
``Shape`` are classes of their own, as in MyGrad, so that a strategy can be
registered for each with Hypothesis' ``st.register_type_strategy`` (a union cannot
be registered): they are names for annotations and are never instantiated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, Union

import numpy as np
import numpy.typing as npt

__all__ = ["ArrayLike", "DTypeLike", "DTypeLikeReals", "Index", "Mask", "Real", "Shape"]

DTypeLike = npt.DTypeLike
Real = Union[int, float, np.integer, np.floating]  # noqa: UP007
Index = Any  # ints, slices, Ellipsis, None, arrays and tuples of them
Mask = TypeVar("Mask", bound=Union[bool, npt.ArrayLike])  # noqa: UP007

if TYPE_CHECKING:
    from gradcheck.engine.tensor_base import Tensor

    ArrayLike = Union[Tensor, npt.ArrayLike]  # noqa: UP007
    DTypeLikeReals = Union[type[bool], type[int], type[float], np.dtype, str, None]  # noqa: UP007
    Shape = tuple[int, ...]
else:

    class ArrayLike:
        """Tensors, arrays, numbers and nested sequences of them (annotation only)."""

    class DTypeLikeReals:
        """What names a real dtype: a NumPy dtype, ``bool``/``int``/``float``, a dtype's
        name, or None (annotation only)."""

    class Shape:
        """A tuple of ints (annotation only)."""
