"""Per-example shortcuts of the check (issue 40 item 2, branch i40-search4): each gives
the answer the long way gives, at less cost: a narrow dtype's "no" from one element
(:func:`~gradcheck.checking.computed_in.exact_in`), a non-contiguous run that
gave the same numbers judged without its tolerances
(:mod:`gradcheck.checking.contiguity`)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.checking import contiguity
from gradcheck.checking.computed_in import exact_in, narrow_numbers

F16, F32, F64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
SPECIALS = [
    0.0,
    -0.0,
    np.inf,
    -np.inf,
    np.nan,
    65504.0,
    65519.0,
    65520.0,
    3.4e38,
    3.5e38,
    2.0**-24,
    2.0**-25,
    1.4e-45,
    1e-46,
    5e-324,
    1.0,
    0.5,
    1 / 3,
    1e300,
    -1e300,
]


def _reference(a: np.ndarray, dtype: np.dtype) -> bool:
    """exact_in written plainly: every finite element comes back from the dtype."""
    finite = np.asarray(a, np.float64)
    finite = finite[np.isfinite(finite)]
    with np.errstate(all="ignore"):
        return bool(np.array_equal(finite.astype(dtype).astype(np.float64), finite))


def _arrays(rng: np.random.Generator) -> list[np.ndarray]:
    found = []
    for _ in range(400):
        size = int(rng.integers(1, 30))
        with np.errstate(all="ignore"):
            found += [
                rng.normal(size=size) * 10.0 ** float(rng.integers(-30, 30)),
                rng.choice(SPECIALS, size),
                rng.normal(size=size).astype(np.float16).astype(np.float64),
                rng.normal(size=size).astype(np.float32).astype(np.float64)
                * 2.0 ** float(rng.integers(-140, 130)),
                np.concatenate([rng.choice(SPECIALS, 1), rng.normal(size=size).astype(np.float16)]),
            ]
    return found


def test_exact_in_answers_as_every_element_would() -> None:
    rng = np.random.default_rng(0)
    with np.errstate(all="raise"):  # (the shortcut is no NumPy cast: nothing to raise)
        for a in _arrays(rng):
            for dtype in (F16, F32, F64):
                assert exact_in(a, dtype) == _reference(a, dtype), (a, dtype)


def test_a_narrow_dtype_s_no_from_the_first_element_makes_no_numpy_cast(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A float64 gradient is a number of neither float16 nor float32 at its first
    element: said before any NumPy call (twice a structural check, once a comparison)."""
    entered = []
    errstate = np.errstate

    def counted(**kwargs: str) -> object:
        entered.append(kwargs)
        return errstate(**kwargs)

    gradient = np.random.default_rng(1).normal(size=(40, 50))
    monkeypatch.setattr(np, "errstate", counted)
    assert not exact_in(gradient, F16)
    assert not exact_in(gradient, F32)
    assert narrow_numbers(gradient, -2 * gradient) is None
    small = np.array([0.1, -2.7, 3.3])  # (a small gradient too: most of the library's)
    assert not exact_in(small, F16)
    assert narrow_numbers(small, -2 * small) is None
    assert entered == []


def _must_not_judge(*args: object) -> float | None:
    raise AssertionError("the same numbers were judged against tolerances")


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_the_same_numbers_on_non_contiguous_inputs_need_no_tolerances(dtype: type) -> None:
    a = np.arange(12, dtype=dtype).reshape(3, 4)
    b = np.asfortranarray(a)
    assert contiguity._off(_must_not_judge, a, b, a, None) is None


def test_numbers_that_differ_or_are_nan_are_still_judged() -> None:
    a = np.array([[1.0, np.nan], [2.0, 3.0]])
    judged = []

    def off(expected: object, got: object, like: object, which: object) -> float | None:
        judged.append(which)
        return None

    contiguity._off(off, a, a.copy(), a, 0)  # (NaN is never the same number)
    contiguity._off(off, a[1], a[1] + np.array([0.0, 1e-12]), a[1], 1)
    assert judged == [0, 1]
