"""Inputs that are trees of arrays (issue 38 item 5): a JAX function of a parameter
dict, list or dataclass, and a torch function of a dict of tensors, checked leaf by
leaf, a failure naming the leaf by its path."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gradcheck.checking.checker import check

X = np.random.default_rng(5).standard_normal((2, 3))


def params(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {
        "dense": {"w": rng.standard_normal((3, 4)), "b": rng.standard_normal(4)},
        "out": [rng.standard_normal(4)],
    }


@pytest.fixture
def jax_ops():
    pytest.importorskip("jax")
    from tests.support import jax_tree_ops

    return jax_tree_ops


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_wrong_leaf_of_a_parameter_dict_is_named_by_its_path(jax_ops, seed):
    failure = check(jax_ops.mlp_wrong_bias, params(seed), X, seed=seed).failure
    assert (failure.kind, failure.input) == ("mismatch", 1)
    assert "the gradient of input params['dense']['b'] differs" in failure.message
    assert check(jax_ops.mlp, params(seed), X, seed=seed).verdict == "passed"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_dataclass_of_arrays_at_order_2_and_in_forward_mode(jax_ops, seed):
    rng = np.random.default_rng(seed)
    layer = jax_ops.Dense(rng.standard_normal((3, 2)), rng.standard_normal(2))
    failure = check(jax_ops.dense_wrong_bias, layer, X, seed=seed).failure
    assert "input layer.b" in failure.message
    assert check(jax_ops.dense, layer, X, seed=seed, order=2).verdict == "passed"
    # (a custom_vjp has no forward mode in JAX: a function of JAX's own rules)
    import jax.numpy as jnp

    def plain(layer, x):
        return jnp.sin(x @ layer.w + layer.b)

    assert check(plain, layer, X, seed=seed, order=2, modes="rev,fwd").verdict == "passed"


def test_a_list_of_arrays_is_a_tree_and_a_list_of_numbers_an_array(jax_ops):
    import jax.numpy as jnp

    def weighted(xs, w):
        return jnp.sin(xs[0]) * w + xs[1] ** 2

    assert check(weighted, [np.ones(3), np.arange(3.0)], [0.5, 1.0, 2.0]).verdict == "passed"

    def layer(wb, x):
        return jnp.asarray(jax_ops.affine_half_bias(wb[0], wb[1], x))

    failure = check(layer, [np.ones((3, 4)), np.zeros(4)], X).failure
    assert "input wb[1]" in failure.message


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_torch_function_of_a_dict_of_tensors(seed):
    torch = pytest.importorskip("torch")

    class HalfGradient(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos() * 0.5

    def wrong(d):
        return d["scale"] * HalfGradient.apply(d["x"])

    def right(d):
        return d["scale"] * torch.sin(d["x"])

    rng = np.random.default_rng(seed)
    d = {"x": rng.standard_normal(3), "scale": rng.standard_normal(3)}
    failure = check(wrong, d, seed=seed).failure
    assert "input d['x']" in failure.message
    assert check(right, d, seed=seed).verdict == "passed"


def test_gradchecks_own_ops_take_no_trees():
    import gradcheck as mg
    from gradcheck.errors import CheckUsageError

    with pytest.raises(CheckUsageError, match="torch or JAX target"):
        check(lambda d: mg.sin(d["x"]), {"x": np.ones(2)})


def test_verify_draws_a_tree_from_shapes_per_leaf(jax_ops):
    from click.testing import CliRunner

    import gradcheck
    from gradcheck.cli import main

    shapes = [{"dense": {"w": "k,m", "b": "m"}, "out": ["m"]}, "n,k"]
    result = gradcheck.verify(jax_ops.mlp_wrong_bias, shapes=shapes, max_examples=5, seed=0)
    assert result.verdict == "failed"
    assert "params['dense']['b']" in result.failure.failure.message
    described = gradcheck.describe(shapes=shapes)(jax_ops.mlp)
    assert gradcheck.verify(described, max_examples=5, seed=0).verdict == "passed"
    out = CliRunner().invoke(
        main,
        [
            "verify",
            "tests.support.jax_tree_ops:mlp_wrong_bias",
            "--shape",
            json.dumps(shapes[0]),
            "--shape",
            "n,k",
            "--max-examples",
            "5",
            "--seed",
            "0",
            "--format",
            "json",
        ],
    )
    assert out.exit_code == 1, out.output
    assert "params['dense']['b']" in json.loads(out.stdout)["targets"][0]["failure"]["message"]
    bad = CliRunner().invoke(main, ["verify", "tests.support.jax_tree_ops:mlp", "--shape", "{w"])
    assert bad.exit_code == 2 and "not valid JSON" in bad.output
