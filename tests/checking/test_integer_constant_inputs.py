"""Integer, boolean and constant inputs; distinct values for large inputs; shapes of at
least min_dims dimensions (issue 19, item 1)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import gradcheck
import gradcheck as mg
from gradcheck import Operation
from gradcheck.cli import main
from gradcheck.errors import InvalidDescription
from gradcheck.search.description import description_of
from gradcheck.search.verifier import draw_example


class PickLabel(Operation):
    """x[i, labels[i]] for x of shape (n, k): labels are class indices."""

    def __call__(self, x, labels):
        self.variables = (x, labels)
        self.rows = np.arange(x.shape[0])
        return x.data[self.rows, labels.data]

    def backward_var(self, grad, index, **kwargs):
        x, labels = self.variables
        out = np.zeros(x.shape)
        np.add.at(out, (self.rows, labels.data), grad)
        return out


class WrongPickLabel(PickLabel):
    def backward_var(self, grad, index, **kwargs):
        x, labels = self.variables
        out = np.zeros(x.shape)
        out[self.rows, labels.data] = grad  # drops repeated contributions: fine here
        return out * 1.01


def masked(x, mask):
    return mg.where(mask, x * x, 0.0 * x)


class HalfWrongProduct(Operation):
    """a * b whose gradient for b is wrong: right when b is a constant."""

    def __call__(self, a, b):
        self.variables = (a, b)
        return a.data * b.data

    def backward_var(self, grad, index, **kwargs):
        a, b = self.variables
        return grad * b.data if index == 0 else grad * a.data * 2


def matrix_rows(x):
    if x.ndim < 2:
        raise ValueError(f"x must have 2 dimensions or more, got {x.ndim}")
    return mg.sum(x * x, axis=-1)


def test_integer_inputs_are_drawn_in_range_as_int64_constants():
    arrays, _ = draw_example(
        PickLabel, seed=3, shapes=["n,3", "n"], integers={1: (0, 3)}, domain=(-1, 1)
    )
    x, labels = arrays
    assert labels.dtype == np.int64 and x.dtype == np.float64
    assert labels.shape == x.shape[:1] and set(np.unique(labels)) <= {0, 1, 2}
    result = gradcheck.verify(
        PickLabel, shapes=["n,3", "n"], integers={1: (0, 3)}, max_examples=15, seed=0
    )
    assert result.verdict == "passed", result.note
    assert result.failure is None and result.settings["integers"] == {1: (0, 3)}
    wrong = gradcheck.verify(
        WrongPickLabel, shapes=["n,3", "n"], integers={1: (0, 3)}, max_examples=15, seed=0
    )
    assert wrong.verdict == "failed" and wrong.failure.failure.input == 0


def test_boolean_inputs_are_masks():
    arrays, _ = draw_example(masked, seed=1, shapes=["4", "4"], booleans=[1])
    assert arrays[1].dtype == np.bool_
    result = gradcheck.verify(masked, booleans=[1], max_examples=10, seed=0)
    assert result.verdict == "passed", result.note


def test_constants_need_no_gradient():
    # (equal shapes: the op does not sum its gradients over broadcast axes)
    options = {"max_examples": 10, "seed": 0, "broadcast": False}
    assert gradcheck.verify(HalfWrongProduct, **options).verdict == "failed"
    result = gradcheck.verify(HalfWrongProduct, constants=[1], **options)
    assert result.verdict == "passed", result.note


def test_describe_declares_them():
    @gradcheck.describe(shapes=["n,3", "n"], integers={1: (0, 3)}, constants=[1], min_dims=1)
    def pick(x, labels):
        return mg.sum(x) * 0 + x[np.arange(x.shape[0]), labels.data]

    d = description_of(pick)
    assert (d.integers, d.constants, d.min_dims) == ({1: (0, 3)}, (1,), 1)
    assert gradcheck.verify(pick, max_examples=10, seed=0).verdict == "passed"


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"integers": {1: (3, 3)}}, "LO < HI"),
        ({"integers": ["1:0"]}, "I:LO:HI"),
        ({"constants": [5]}, "constants names input 5"),
        ({"booleans": [-1]}, "booleans must be a list of input indices"),
        ({"integers": {0: (0, 2)}, "booleans": [0]}, "both integers and booleans"),
        ({"min_dims": 9}, "min_dims must be at most 8"),
    ],
)
def test_invalid_declarations_name_the_setting(settings, words):
    with pytest.raises(InvalidDescription, match=words):
        gradcheck.verify(HalfWrongProduct, max_examples=2, seed=0, **settings)


def test_unique_yields_examples_for_inputs_of_64_elements():
    # MyGrad's MaxPoolND came back "inconclusive" (no example drawn) with unique=True
    result = gradcheck.verify(lambda x: mg.max(x), shapes=["8,8"], unique=True, seed=0)
    assert result.verdict == "passed" and result.examples == 100, result.note
    arrays, _ = draw_example(lambda x: mg.max(x), shapes=["16,16"], unique=True, seed=2)
    gaps = np.diff(np.sort(arrays[0], axis=None))
    # distinct, a margin apart but for at most one near-tie (the search draws one in a
    # few examples: a relative gap of 1e-5.5 to 1e-3)
    assert gaps.min() > 0 and np.sum(gaps < 1e-2) <= 1


def test_min_dims_draws_shapes_with_enough_dimensions():
    result = gradcheck.verify(matrix_rows, min_dims=2, max_examples=20, seed=0)
    assert result.verdict == "passed", result.note


def test_the_cli_options(tmp_path, monkeypatch):
    (tmp_path / "label_ops.py").write_text(
        "import numpy as np\nimport gradcheck as mg\n"
        "from tests.checking.test_integer_constant_inputs"
        " import PickLabel, HalfWrongProduct, masked, matrix_rows\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    runs = {
        "PickLabel": ["--shape", "n,3", "--shape", "n", "--integers", "1:0:3"],
        "HalfWrongProduct": ["--constant", "1"],
        "masked": ["--boolean", "1"],
        "matrix_rows": ["--min-dims", "2", "--unique"],
    }
    for name, flags in runs.items():
        out = CliRunner().invoke(
            main,
            [
                "verify",
                f"label_ops:{name}",
                *flags,
                "--max-examples",
                "5",
                "--seed",
                "0",
                "--format",
                "json",
            ],
        )
        assert out.exit_code == 0, out.output
        (target,) = json.loads(out.stdout)["targets"]
        for flag in flags:
            assert flag in target["replay"]
    bad = CliRunner().invoke(main, ["verify", "label_ops:PickLabel", "--integers", "1:3:0"])
    assert bad.exit_code == 2
    assert "--integers" in bad.output and "LO < HI" in bad.output


def test_settings_that_draw_nothing_say_so():
    # 1,600 distinct values a margin (0.01) apart do not fit in (0, 1)
    result = gradcheck.verify(
        lambda x: mg.max(x), shapes=["40,40"], domain=(0, 1), unique=True, seed=0
    )
    assert result.verdict == "inconclusive"
    assert result.note.startswith("no example could be drawn")
