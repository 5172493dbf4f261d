"""Non-contiguous inputs for torch targets (issue 38 item 3): in the checks of odd
seeds, where the check passed, the op runs once more with each input of two elements
or more a transposed view (two long axes) or every other element of a buffer twice
as long; an op that assumes contiguous inputs (``.view``, ``as_strided``, a NumPy
ravel in memory order) fails with ``noncontiguous_input``, naming the input."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from gradcheck.checking.checker import check  # noqa: E402
from gradcheck.cli import main  # noqa: E402
from tests.support import torch_layout_ops as ops  # noqa: E402

A = np.random.default_rng(5).standard_normal((3, 4))
V = np.random.default_rng(6).standard_normal(5)
W = np.random.default_rng(7).standard_normal((2, 2))

PAIRS = [
    (ops.CubeViewInBackward, ops.CubeReshapeInBackward, (A,), "the backward raised RuntimeError"),
    (ops.softplus_of_flat_view, ops.softplus_of_flat_reshape, (A,), "the forward raised"),
    (ops.RunningSumAsStrided, ops.RunningSumContiguous, (A,), "the output differs"),
    (ops.RunningSumAsStrided, ops.RunningSumContiguous, (V,), "the output differs"),
    (ops.PositionWeightedRavelK, ops.PositionWeightedRavelC, (A,), "the output differs"),
]


@pytest.mark.parametrize("seed", [1, 3, 5])
@pytest.mark.parametrize("wrong, right, arrays, said", PAIRS)
def test_an_op_assuming_contiguous_inputs_fails_and_its_twin_passes(
    wrong, right, arrays, said, seed
):
    failure = check(wrong, *arrays, seed=seed).failure
    assert (failure.kind, failure.input) == ("noncontiguous_input", 0)
    assert said in failure.message
    how = "transposed: strides (1, 3)" if arrays[0].ndim == 2 else "strides (2,)"
    assert failure.message.startswith("input x: with input x (") and how in failure.message
    assert check(right, *arrays, seed=seed).verdict == "passed"


def test_the_input_that_alone_fails_is_named():
    failure = check(ops.scaled_rows_view, A, W, seed=1).failure
    assert (failure.kind, failure.input) == ("noncontiguous_input", 1)
    assert failure.message.startswith("input w: with input w (transposed")
    assert check(ops.scaled_rows_reshape, A, W, seed=1).verdict == "passed"


def test_even_seeds_hand_contiguous_inputs():
    assert check(ops.CubeViewInBackward, A, seed=0).verdict == "passed"


def test_a_view_at_order_2_on_a_non_contiguous_input():
    failure = check(ops.CubeViewInBackward, A, order=2, seed=1).failure
    # (found at order 1 already: orders are supersets)
    assert (failure.kind, failure.order) == ("noncontiguous_input", 1)


def test_a_module_with_non_contiguous_parameters():
    linear = torch.nn.Linear(3, 2).double()
    assert check(linear, np.random.default_rng(0).standard_normal((4, 3)), seed=1).passed


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_search_finds_it_at_every_seed(seed):
    result = CliRunner().invoke(
        main,
        [
            "verify",
            "tests.support.torch_layout_ops:CubeViewInBackward",
            "tests.support.torch_layout_ops:CubeReshapeInBackward",
            "--shape",
            "3,4",
            "--max-examples",
            "10",
            "--seed",
            str(seed),
            "--format",
            "json",
        ],
    )
    found = {t["target"].split(":")[1]: t for t in json.loads(result.stdout)["targets"]}
    assert found["CubeViewInBackward"]["failure"]["kind"] == "noncontiguous_input"
    assert found["CubeReshapeInBackward"]["verdict"] == "passed"


def test_complex_inputs_are_not_laid_out_otherwise():
    # (the op gets them joined from their real and imaginary parts: other indices)
    from gradcheck.checking.adapters.variants import Variant
    from gradcheck.checking.contiguity import candidates
    from gradcheck.checking.target import resolve_target

    tgt = resolve_target(ops.CubeViewInBackward)
    parts = [A, A]
    assert candidates(tgt, parts) == {0, 1}
    assert candidates(tgt.derive(Variant(complex_inputs=(True,))), parts) == frozenset()


#: 96 elements, two tiny ones beside 4.0s (bug_corpus3's FixProdZeroShape, seed 2):
#: torch's prod gives 3.34e-308 over the contiguous vector and 0 over a strided one,
#: where 2.9e-210·4·2.9e-155 underflows (the true product is 3.38e-308).
AT_THE_FLOOR = np.full(96, 4.0)
AT_THE_FLOOR[[0, 2]] = 2.940694067543295e-210, 2.9322888320577125e-155


@pytest.mark.parametrize("seed", [1, 3, 5])
def test_a_product_whose_orders_part_at_the_range_floor_is_no_layout_failure(seed):
    assert ops.Product.apply(torch.tensor(AT_THE_FLOOR)).item() > 0  # (the premise)
    result = check(ops.Product, AT_THE_FLOOR, seed=seed)
    assert result.verdict == "passed", str(result)


@pytest.mark.parametrize("seed", [1, 3, 5])
def test_a_product_reading_its_input_as_if_contiguous_still_fails(seed):
    x = np.random.default_rng(seed).uniform(0.5, 2.0, size=8)
    failure = check(ops.ProductAsStrided, x, seed=seed).failure
    assert (failure.kind, failure.input) == ("noncontiguous_input", 0)
    assert check(ops.Product, x, seed=seed).verdict == "passed"
