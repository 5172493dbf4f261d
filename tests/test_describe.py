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
