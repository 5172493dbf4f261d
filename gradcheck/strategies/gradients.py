"""Valid and invalid gradients: what :func:`gradcheck.is_invalid_gradient` accepts and
what it rejects, and ``everything_except``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.extra import numpy as hnp

from gradcheck.strategies._floats import default_elements
from gradcheck.strategies._validation import check_bool, check_shape

__all__ = ["gradients", "invalid_gradients", "everything_except"]


def gradients(
    shape: Any,
    *,
    dtype: Any = np.float64,
    elements: st.SearchStrategy[Any] | None = None,
    allow_scalars: bool = True,
) -> st.SearchStrategy[Any]:
    """Strategy for valid gradients of a tensor of ``shape``.

    Every value drawn is accepted by :func:`gradcheck.is_invalid_gradient` (it returns
    False) and has exactly ``shape``, so ``Operation.backward`` accepts it too.

    Parameters
    ----------
    shape : int or tuple of int
        The shape of the tensor the gradient belongs to.
    dtype : data-type, default numpy.float64
        A real (integer or floating-point) dtype for the arrays.
    elements : strategy, optional
        The values; by default finite, normal floats within +-10 (small integers for
        an integer dtype).
    allow_scalars : bool, default True
        For ``shape == ()``, also draw real scalars: Python ``float`` and ``int`` and
        NumPy scalars of ``dtype``.

    Examples
    --------
    >>> from hypothesis import find
    >>> from gradcheck import is_invalid_gradient
    >>> from gradcheck.strategies import gradients
    >>> g = find(gradients((2, 3)), lambda g: g.sum() > 1)
    >>> g.shape, is_invalid_gradient(g)
    ((2, 3), False)
    """
    shape = check_shape("shape", shape)
    if isinstance(shape, st.SearchStrategy):
        raise InvalidArgument("shape must be a tuple of ints here, not a strategy")
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise InvalidArgument(f"dtype={dtype!r} is not a NumPy dtype") from None
    if dtype.kind not in "iuf":
        raise InvalidArgument(
            f"dtype={dtype} cannot hold a gradient; pass an integer or floating-point dtype"
        )
    check_bool("allow_scalars", allow_scalars)
    if elements is None:
        elements = default_elements(dtype)
    elif not isinstance(elements, st.SearchStrategy):
        raise InvalidArgument(f"elements={elements!r} must be a strategy or None")
    strategy: st.SearchStrategy[Any] = hnp.arrays(dtype, shape, elements=elements)
    if allow_scalars and shape == ():
        python_number: Callable[[Any], float] = float if dtype.kind == "f" else int
        scalar = st.one_of(elements.map(dtype.type), elements.map(python_number))
        strategy = strategy | scalar
    return strategy


def invalid_gradients() -> st.SearchStrategy[Any]:
    """Strategy for values that are not gradients.

    Every value drawn makes :func:`gradcheck.is_invalid_gradient` return True, and so
    makes an ``Operation.backward`` whose ``backward_var`` returns it raise
    :class:`gradcheck.InvalidGradient`, and so does ``Tensor.backward(value)`` for all
    but ``None`` and the lists and tuples of numbers (array-likes, which it takes as
    the arrays they make, as MyGrad does): ``None``;
    booleans and complex numbers (Python and NumPy); strings and bytes; lists, tuples,
    sets and dicts of numbers; ``Fraction`` and ``Decimal``; arbitrary objects; and
    arrays of object, boolean, complex, string, bytes and datetime dtypes.

    Examples
    --------
    >>> from hypothesis import given
    >>> from gradcheck import is_invalid_gradient
    >>> from gradcheck.strategies import invalid_gradients
    >>> @given(invalid_gradients())
    ... def test(grad):
    ...     assert is_invalid_gradient(grad)
    >>> test()
    """
    numbers = st.floats(-10, 10)
    shapes = hnp.array_shapes(min_dims=0, max_dims=2, max_side=3)

    def arrays_of(dtype: Any, elements: st.SearchStrategy[Any] | None = None) -> Any:
        return hnp.arrays(np.dtype(dtype), shapes, elements=elements)

    return st.one_of(
        st.none(),
        st.booleans(),
        st.booleans().map(np.bool_),
        st.complex_numbers(max_magnitude=10, allow_nan=False),
        st.complex_numbers(max_magnitude=10, allow_nan=False).map(np.complex128),
        st.text(max_size=4),
        st.binary(max_size=4),
        st.lists(numbers, max_size=3),
        st.tuples(numbers),
        st.sets(numbers, max_size=3),
        st.dictionaries(st.text(max_size=2), numbers, max_size=2),
        st.fractions(max_denominator=10),
        st.decimals(allow_nan=False, allow_infinity=False, places=2),
        st.builds(object),
        arrays_of(object, numbers),
        arrays_of(bool),
        arrays_of(np.complex128, st.complex_numbers(max_magnitude=10, allow_nan=False)),
        arrays_of("U3"),
        arrays_of("S3"),
        arrays_of("datetime64[s]"),
    )


def everything_except(*excluded_types: type) -> st.SearchStrategy[Any]:
    """Strategy for values of any type Hypothesis can build, except instances of
    ``excluded_types``.

    Useful to check that a function rejects wrong types: draw a type, then a value of
    it, and keep the values that are not instances of the excluded types.

    Examples
    --------
    >>> from hypothesis import given, settings
    >>> from gradcheck.strategies import everything_except
    >>> @settings(max_examples=20)
    ... @given(everything_except(int, float))
    ... def test(x):
    ...     assert not isinstance(x, (int, float))
    >>> test()
    """
    if not excluded_types:
        raise InvalidArgument("everything_except() needs at least one type to exclude")
    for t in excluded_types:
        if not isinstance(t, type):
            raise InvalidArgument(f"everything_except({t!r}): every argument must be a type")
    return (
        st.from_type(type)
        .flatmap(st.from_type)
        .filter(lambda value: not isinstance(value, excluded_types))
    )
