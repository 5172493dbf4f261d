"""`tensors()`: strategies for :class:`gradcheck.Tensor`."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.extra import numpy as hnp

from gradcheck.engine.tensor_base import Tensor
from gradcheck.strategies._floats import default_elements
from gradcheck.strategies._validation import check_bool, check_shape
from gradcheck.strategies.gradients import gradients

__all__ = ["tensors"]

_SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=5)


def _check_dtype(dtype: Any) -> st.SearchStrategy[np.dtype]:
    if isinstance(dtype, st.SearchStrategy):
        return dtype.map(np.dtype)
    try:
        result = np.dtype(dtype)
    except TypeError:
        raise InvalidArgument(
            f"dtype={dtype!r} is not a NumPy dtype; pass e.g. numpy.float64"
        ) from None
    if result.kind not in "biuf":
        raise InvalidArgument(
            f"dtype={dtype!r}: a Tensor holds real numbers or booleans; pass a bool, "
            f"integer or floating-point dtype"
        )
    return st.just(result)


def tensors(
    *,
    dtype: Any = np.float64,
    shape: Any = _SHAPES,
    elements: st.SearchStrategy[Any] | None = None,
    constant: bool | None = None,
    include_grad: bool = False,
) -> st.SearchStrategy[Tensor]:
    """Strategy for :class:`gradcheck.Tensor`.

    The data is drawn with :func:`hypothesis.extra.numpy.arrays`.

    Parameters
    ----------
    dtype : data-type or strategy, default numpy.float64
        A bool, integer or floating-point dtype, or a strategy for one.
    shape : int, tuple of int, or strategy
        The shape, or a strategy for it; by default 0 to 3 dimensions of 1 to 5.
    elements : strategy, optional
        The values. By default well-conditioned ones: finite, normal (no subnormals)
        floats within +-10; integers within -10..10; booleans.
    constant : bool, optional
        ``True`` or ``False`` to fix :attr:`Tensor.constant`; ``None`` draws it.
        Integer and boolean tensors are always constant: ``constant=False`` with such
        a dtype is an error, and with a dtype strategy it applies to the float draws
        only.
    include_grad : bool, default False
        Give every non-constant tensor a ``.grad``: a draw of :func:`gradients` for its
        shape and dtype, set through the public API as ``t.backward(grad)`` (on a leaf
        tensor that stores the gradient as its ``.grad``).

    Examples
    --------
    >>> import numpy as np
    >>> from hypothesis import find
    >>> from gradcheck.strategies import tensors
    >>> t = find(tensors(dtype=np.float32), lambda t: t.size > 1 and not t.constant)
    >>> t
    Tensor([0., 0.], dtype=float32)
    >>> t = find(tensors(include_grad=True), lambda t: t.grad is not None and t.grad.sum() > 0)
    >>> t.grad.shape == t.shape
    True
    """
    dtypes = _check_dtype(dtype)
    shape = check_shape("shape", shape)
    if constant is not None:
        check_bool("constant", constant)
        if constant is False and not isinstance(dtype, st.SearchStrategy):
            if np.dtype(dtype).kind != "f":
                raise InvalidArgument(
                    f"constant=False with dtype={dtype!r}: only floating-point tensors can "
                    f"have gradients; pass a float dtype or constant=None"
                )
    check_bool("include_grad", include_grad)
    if elements is not None and not isinstance(elements, st.SearchStrategy):
        raise InvalidArgument(f"elements={elements!r} must be a strategy or None")
    return _tensors(dtypes, shape, elements, constant, include_grad)


@st.composite
def _tensors(
    draw: st.DrawFn,
    dtypes: st.SearchStrategy[np.dtype],
    shape: Any,
    elements: st.SearchStrategy[Any] | None,
    constant: bool | None,
    include_grad: bool,
) -> Tensor:
    dtype = draw(dtypes)
    data = draw(
        hnp.arrays(dtype, shape, elements=default_elements(dtype) if elements is None else elements)
    )
    if dtype.kind != "f":
        constant = True
    elif constant is None:
        constant = draw(st.booleans(), label="constant")
    t = Tensor(data, constant=constant, copy=False)
    if include_grad and not constant:
        t.backward(draw(gradients(data.shape, dtype=dtype, allow_scalars=False), label="grad"))
    return t
