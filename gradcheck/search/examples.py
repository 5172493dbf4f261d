"""The examples a search draws: the strategy of an op's inputs
(:func:`inputs_strategy`, from :func:`gradcheck.strategies.op_inputs`), and the shares
of the examples drawn large, broadcast or with a size-one shape.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.checking.signature import OpSignature
from gradcheck.checking.trees import of_specs
from gradcheck.checking.vocabulary import Skip
from gradcheck.errors import InvalidDescription

if TYPE_CHECKING:
    from gradcheck.search.resolved import ResolvedTarget

#: The share of a search's examples drawn at large inputs (when shapes are drawn):
#: ``max_examples // LARGE_SHARE`` of them, of :data:`LARGE_SIZE` elements.
LARGE_SHARE = 10


LARGE_SIZE = (65, 128)


def large_examples(options: Mapping[str, Any]) -> int:
    """How many of the examples the large-input search takes: none when the shapes are
    given, or with fewer than :data:`LARGE_SHARE` examples in all."""
    if options.get("shapes") is not None:
        return 0
    return int(options["max_examples"]) // LARGE_SHARE


#: The share of a search's examples drawn with broadcast shapes (by default, for an
#: op of several inputs whose shapes are drawn): ``max_examples // BROADCAST_SHARE``.
BROADCAST_SHARE = 4


def broadcast_examples(options: Mapping[str, Any], arity: int) -> int:
    """How many of the examples the broadcast search takes: none when the shapes are
    given, the op has one input, or ``broadcast`` is set (then every example, or none,
    broadcasts)."""
    if options.get("shapes") is not None or arity < 2 or options.get("broadcast") is not None:
        return 0
    return int(options["max_examples"]) // BROADCAST_SHARE


#: The most examples at each shape of :func:`size_one_shapes` (a tenth of the
#: search's examples in all).
SIZE_ONE_EXAMPLES = 3


def size_one_shapes(options: Mapping[str, Any], seed: int) -> tuple[list[tuple[int, ...]], int]:
    """The shapes a search checks besides those Hypothesis draws (which repeats a few
    shapes many times, and may never draw one with a size-1 axis), and how many
    examples at each: when shapes are drawn, one shape of ``max(3, min_dims)``
    dimensions per axis, that axis of size 1 and the others 2 to 4 (from ``seed``),
    where a reduction or a broadcast inside the op meets a size-1 axis that is not
    its last; up to :data:`SIZE_ONE_EXAMPLES` examples at each, a tenth of
    ``max_examples`` in all (none below 30 examples)."""
    ndim = max(3, int(options.get("min_dims") or 0))
    each = min(SIZE_ONE_EXAMPLES, int(options["max_examples"]) // (LARGE_SHARE * ndim))
    if options.get("shapes") is not None or each < 1:
        return [], 0
    rng = np.random.default_rng(seed)
    shapes = []
    for axis in range(ndim):
        sides = [int(n) for n in rng.integers(2, 5, size=ndim)]
        sides[axis] = 1
        shapes.append(tuple(sides))
    return shapes, each


#: Where at least this share of the main search's draws was skipped as not
#: differentiable, the search's later parts draw distinct values (see
#: :func:`distinct_after_kinks`); and a later part that skips more than this many
#: times its examples' draws so goes on with distinct values.
KINKED_SHARE = 0.25
KINKED_DRAWS = 2


def distinct_after_kinks(search: Any, options: Mapping[str, Any]) -> None:
    """After the main part of a search: whether its later parts (fixed shapes,
    broadcast, large inputs) draw distinct values (as ``unique``), because the op
    was not differentiable at :data:`KINKED_SHARE` or more of its draws; then
    ``search.distinct_from`` is the examples before them (the report names it).

    Hypothesis fills most of an array with one value, and an op whose kinks are ties
    (sort, max, median, top-k) is not differentiable at any of them: each such draw
    is checked in full, every tied element refined to its kink, and then rejected.
    A correct sort's large-input part (65 to 128 elements) drew 759 such draws for
    its 10 examples on seed 1 (3 million forward calls, 17 minutes; its main part
    skipped 23% of its draws), so a later part also goes on with distinct values
    once it skipped :data:`KINKED_DRAWS` times its examples. Distinct values check
    the op where it has a derivative; the main part met the ties, where a wrong
    gradient of a differentiable op beside them fails."""
    if options.get("unique") or search.first_failure is not None:
        return
    kinked = search.skipped.get(Skip.NOT_DIFFERENTIABLE, 0)
    if kinked and kinked >= KINKED_SHARE * (search.examples + search.rejected):
        search.distinct_from = search.examples


def inputs_strategy(
    resolved: ResolvedTarget,
    options: dict[str, Any],
    *,
    large: bool = False,
    broadcast: bool = False,
) -> Any:
    """The search's inputs for the op ``resolved``: with ``large``, shapes of :data:`LARGE_SIZE`
    elements; with ``broadcast`` (or the ``broadcast`` setting), shapes that
    broadcast against each other."""
    from hypothesis.errors import InvalidArgument

    from gradcheck.strategies import op_inputs

    shapes = options.get("shapes")
    if shapes is not None:
        shapes = of_specs(shapes)[0]  # a tree input's leaves are drawn as inputs
    # A variadic op takes as many inputs as shapes are given.
    kwargs = options.get("kwargs") or {}
    arity = len(shapes) if shapes is not None else resolved.signature.given(kwargs).arity
    dtype = options["dtype"]
    drawn = _DRAWN_AS.get(dtype, dtype)
    try:
        strategy = op_inputs(
            arity,
            shapes=shapes,
            domain=options.get("domain"),
            dtype=drawn,
            broadcast=broadcast or bool(options.get("broadcast")),
            avoid=options.get("avoid"),
            unique=bool(options.get("unique", False)),
            integers=options.get("integers"),
            booleans=options.get("booleans") or (),
            min_dims=options.get("min_dims", 0),
            max_dims=max(3, options.get("min_dims", 0)),
            reach=True,
            reduces=_reduces(resolved.signature, kwargs),
            total_size=LARGE_SIZE if large else None,
        )
    except InvalidArgument as exc:
        key = next((k for k in ("avoid", "domain", "dtype") if k in str(exc)), "shapes")
        raise _invalid(str(exc), key) from None
    if dtype in ("complex128", "complex64"):
        return _with_imaginary_parts(strategy, dtype, options.get("domain"))
    return strategy


#: Parameter names that say an op reduces over an axis (NumPy's, torch's, JAX's).
_AXIS_PARAMETERS = frozenset({"axis", "axes", "dim", "dims", "keepdims", "keepdim"})


def _reduces(signature: OpSignature, kwargs: Mapping[str, Any]) -> bool:
    """Whether the op takes an axis to reduce over (a parameter or a given keyword
    argument of that name): a 0-d input shows little of such an op."""
    return bool(_AXIS_PARAMETERS & (set(signature.parameters) | set(kwargs)))


#: The real dtype the search draws a dtype in that is not a real NumPy float: complex
#: inputs get an imaginary part drawn the same way (:func:`_with_imaginary_parts`);
#: bfloat16 inputs are float32 draws the check rounds to bfloat16.
_DRAWN_AS = {"complex128": "float64", "complex64": "float32", "bfloat16": "float32"}


def _with_imaginary_parts(strategy: Any, dtype: str, domain: Any) -> Any:
    """Each float array ``strategy`` draws made complex, with an imaginary part drawn
    from the same interval as its real part (the input's domain)."""
    from hypothesis import strategies as st

    from gradcheck.strategies._floats import interval_floats, representable_intervals
    from gradcheck.strategies.inputs import draw_array

    real = np.dtype(_DRAWN_AS[dtype])

    def bounds(i: int) -> tuple[float, float]:
        per_input = isinstance(domain, tuple) and domain and isinstance(domain[0], tuple)
        lo, hi = (domain[i] if per_input else domain) or (None, None)
        return (-math.inf if lo is None else lo), (math.inf if hi is None else hi)

    @st.composite
    def draw(data: Any) -> tuple[np.ndarray, ...]:
        arrays = list(data(strategy))
        for i, a in enumerate(arrays):
            if a.dtype == real:
                lo, hi = bounds(i)
                spread = representable_intervals(real, lo, hi)
                im = draw_array(data, real, a.shape, interval_floats(real, lo, hi), spread)
                arrays[i] = (a + 1j * im).astype(dtype)
        return tuple(arrays)

    return draw()


def constant_inputs(options: Mapping[str, Any]) -> list[int]:
    """The inputs a check treats as constants: those declared ``constants``, and the
    integer and boolean inputs."""
    found = {*(options.get("constants") or ()), *(options.get("integers") or ())}
    return sorted(found | set(options.get("booleans") or ()))


def _with_field(exc: InvalidDescription, key: str) -> InvalidDescription:
    exc.field = key
    return exc


def _invalid(message: str, key: str) -> InvalidDescription:
    return _with_field(InvalidDescription(message), key)
