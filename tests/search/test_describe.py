"""`gradcheck.describe`: declaring an op's inputs, validated up front."""

from __future__ import annotations

import pytest

from gradcheck.errors import InvalidDescription
from gradcheck.operation import Operation
from gradcheck.search.description import Description, describe, description_of


def test_bare_and_called_forms_on_functions_and_classes() -> None:
    @describe
    def f(x):
        return x

    @describe(shapes=["n,k", "k,m"], domain=[(0, 1), "1:2"], dtype="f4", kwargs={"a": 1})
    class Op(Operation):
        pass

    assert description_of(f) == Description()
    d = description_of(Op)
    assert d.shapes == ("n,k", "k,m")
    assert d.domain == ((0.0, 1.0), (1.0, 2.0))
    assert d.dtype == "float32"
    assert d.kwargs == {"a": 1}


def test_undescribed_is_none() -> None:
    assert description_of(lambda x: x) is None


def test_merged_overrides_only_given_values() -> None:
    d = Description(domain=(0.0, 1.0), dtype="float32")
    m = d.merged(dtype="float64", domain=None, atol=1e-3)
    assert m.domain == (0.0, 1.0) and m.dtype == "float64" and m.atol == 1e-3


def test_open_domain_bounds() -> None:
    assert description_of(describe(domain="0:")(lambda x: x)).domain == (0.0, float("inf"))
    assert description_of(describe(domain=(None, 1))(lambda x: x)).domain == (-float("inf"), 1.0)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"shapes": "n,k"}, "one shape per input"),
        ({"shapes": [1.5]}, "each shape"),
        ({"domain": (1, 0)}, "LO < HI"),
        ({"domain": "1:2:3"}, "LO:HI"),
        ({"domain": ("a", 1)}, "two numbers"),
        ({"dtype": "int32"}, "float64, float32 or float16"),
        ({"dtype": "nonsense"}, "not a NumPy dtype"),
        ({"kwargs": [1]}, "mapping"),
        ({"atol": -1}, "atol"),
        ({"max_examples": 0}, "max_examples"),
        ({"mode": "slow"}, "mode must be one of"),
    ],
)
def test_bad_values_raise_naming_the_argument(kwargs: dict, words: str) -> None:
    with pytest.raises(InvalidDescription, match=words):
        describe(**kwargs)


def test_none_is_no_bound_for_one_input_as_colon_is_on_the_command_line() -> None:
    import math

    import numpy as np

    import gradcheck

    @describe(domain=[None, (0.0, 1.0)])
    def f(x, p):
        return x * gradcheck.log(p)

    inf = math.inf
    assert description_of(f).domain == ((-inf, inf), (0.0, 1.0))

    def domain(value: object) -> object:
        return description_of(describe(domain=value)(lambda x: x)).domain

    assert domain([(0, 1), None]) == ((0, 1), (-inf, inf))
    assert domain([None]) == (-inf, inf)
    assert domain((None, 1)) == (-inf, 1.0)  # one pair, one bound open
    seen: list[np.ndarray] = []
    result = gradcheck.verify(
        f, max_examples=20, seed=0, on_example=lambda a, _: seen.append(np.array(a[1]))
    )
    assert result.passed, result
    assert seen and all(((p > 0) & (p < 1)).all() for p in seen)
    with pytest.raises(InvalidDescription, match="domain of input 1"):
        describe(domain=[None, (1.0, 0.0)])


def test_per_input_settings_take_their_natural_spellings() -> None:
    d = describe(shapes=[3, "n"], integers=[None, (0, 3)])(lambda x, y: x)
    assert description_of(d).shapes == ((3,), "n")
    assert description_of(d).integers == {1: (0, 3)}
    torch = pytest.importorskip("torch")
    assert description_of(describe(dtype=torch.float32)(lambda x: x)).dtype == "float32"
