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


class OutsideBall(Exception):
    pass


class MulWrongForB(Operation):
    """a * b whose gradient for b is b (it is a)."""

    def __call__(self, a, b):
        if float(abs(a.data).max()) > 5:
            raise OutsideBall("|a| > 5")
        self.variables = (a, b)
        return a.data * b.data

    def backward_var(self, grad, index, **kwargs):
        _, b = self.variables
        return grad * b.data


def test_check_takes_the_settings_the_op_describes() -> None:
    # check (and so the pytest plugin's `gradcheck` fixture) reads describe() as
    # verify does: the op's skip_on and constants apply where the call gives none.
    import numpy as np

    from gradcheck.checking.checker import check

    described = describe(skip_on=[f"{__name__}:OutsideBall"], constants=[1])(
        type("Described", (MulWrongForB,), {})
    )
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    assert check(MulWrongForB, a, b).verdict == "failed"  # b's gradient is wrong
    assert check(described, a, b).verdict == "passed"  # b is a constant there
    assert check(described, a, b, constants=[]).verdict == "failed"  # the call wins
    outside = check(described, np.array([6.0, 1.0]), b)
    assert outside.verdict == "inconclusive" and outside.settings["skip_on"]
    assert check(MulWrongForB, np.array([6.0, 1.0]), b).failure.kind == "forward_error"


def test_check_takes_the_order_the_op_describes() -> None:
    torch = pytest.importorskip("torch")
    import numpy as np

    from gradcheck.checking.checker import check

    @describe(order=2)
    class CubeWrongSecond(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x.detach()  # right at order 1, wrong at order 2

    x = np.array([0.5, -1.5])
    result = check(CubeWrongSecond, x)
    assert result.verdict == "failed" and result.failure.order == 2
    assert check(CubeWrongSecond, x, order=1).verdict == "passed"
