"""The strategies drawn inside composite ones, built once: the same objects again, and
the same draws as the strategies built at each draw."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gradcheck.strategies._built_once import arrays_once, booleans_once, integers_once


def test_built_once_per_arguments() -> None:
    assert integers_once(0, 7) is integers_once(0, 7)
    assert integers_once(0, 7) is not integers_once(0, 8)
    assert integers_once(0, np.int64(7)) is not integers_once(0, 7)  # (as given)
    assert booleans_once(3) is booleans_once(3)
    elements = st.floats(-1, 1).map(float)  # (mapped: not one of Hypothesis's cached)
    assert arrays_once(np.float64, (2, 3), elements) is arrays_once("float64", (2, 3), elements)
    assert arrays_once(np.float64, (2, 3), elements) is not arrays_once(
        np.float64, (2, 3), st.floats(-1, 1).map(float)
    )
    assert arrays_once(np.float64, (3,), elements, unique=True) is not arrays_once(
        np.float64, (3,), elements
    )


def _drawn(once: bool) -> list[object]:
    elements = st.floats(-10, 10)

    @st.composite
    def example(draw: st.DrawFn) -> object:
        n = draw(integers_once(1, 6) if once else st.integers(1, 6))
        flags = draw(booleans_once(2) if once else st.lists(st.booleans(), min_size=2, max_size=2))
        array = draw(
            arrays_once(np.float64, (n,), elements)
            if once
            else hnp.arrays(np.float64, (n,), elements=elements)
        )
        return n, flags, array.tolist()

    seen: list[object] = []

    @settings(
        max_examples=60,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis_seed(3)
    @given(example())
    def collect(value: object) -> None:
        seen.append(value)

    collect()
    return seen


def test_the_same_draws() -> None:
    assert _drawn(once=True) == _drawn(once=False)
