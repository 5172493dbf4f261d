"""Type aliases for annotating code that uses the engine (MyGrad's names).

``ArrayLike``: what the engine's functions take as data (tensors, arrays, numbers,
nested sequences); ``DTypeLike``/``DTypeLikeReals``: what names a dtype; ``Shape``: a
tuple of ints; ``Index``: what indexes a tensor; ``Mask``: a boolean ``where=``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from gradcheck.tensor_base import Tensor

__all__ = ["ArrayLike", "DTypeLike", "DTypeLikeReals", "Index", "Mask", "Real", "Shape"]

ArrayLike = Union["Tensor", npt.ArrayLike]
DTypeLike = npt.DTypeLike
DTypeLikeReals = type[bool] | type[int] | type[float] | np.dtype | str | None
Shape = tuple[int, ...]
Real = int | float | np.integer | np.floating
Index = Any  # ints, slices, Ellipsis, None, arrays and tuples of them
Mask = bool | npt.ArrayLike
