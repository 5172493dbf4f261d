"""Every public name of the structural half of the op library exists, where MyGrad
users look for it."""

from __future__ import annotations

import importlib

import pytest

import gradcheck as mg

TOP_LEVEL = """
matmul multi_matmul einsum dot tensordot trace diagonal take sort logsumexp
reshape ravel flatten squeeze expand_dims broadcast_to atleast_1d atleast_2d atleast_3d
transpose moveaxis swapaxes roll concatenate stack repeat tile pad flip get_item set_item
""".split()

SUBMODULES = {
    "gradcheck.linalg": "norm inv det slogdet solve",
    "gradcheck.nnet.activations": (
        "elu glu hard_tanh leaky_relu logsoftmax relu selu sigmoid soft_sign softmax tanh"
    ),
    "gradcheck.nnet.losses": (
        "focal_loss softmax_focal_loss margin_ranking_loss multiclass_hinge "
        "negative_log_likelihood softmax_crossentropy"
    ),
    "gradcheck.nnet.layers": "conv_nd max_pool batchnorm",
    "gradcheck.nnet.initializers": (
        "glorot_normal glorot_uniform he_normal he_uniform normal uniform constant identity dirac"
    ),
}

TENSOR_METHODS = "reshape flatten ravel squeeze swapaxes moveaxis transpose T".split()


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_top_level_functions(name):
    assert callable(getattr(mg, name)), name
    assert name in mg.__all__


@pytest.mark.parametrize("module", sorted(SUBMODULES))
def test_submodule_functions(module):
    mod = importlib.import_module(module)
    missing = [n for n in SUBMODULES[module].split() if not callable(getattr(mod, n, None))]
    assert not missing, f"{module} lacks {missing}"
    assert set(SUBMODULES[module].split()) <= set(mod.__all__)


def test_tensor_methods_and_setitem():
    missing = [n for n in TENSOR_METHODS if not hasattr(mg.Tensor, n)]
    assert not missing
    assert hasattr(mg.Tensor, "__setitem__")


def test_public_functions_have_doctest_examples():
    names = [getattr(mg, n) for n in TOP_LEVEL]
    for module, listed in SUBMODULES.items():
        mod = importlib.import_module(module)
        names += [getattr(mod, n) for n in listed.split()]
    lacking = [f.__name__ for f in names if ">>>" not in (f.__doc__ or "")]
    assert not lacking, f"no doctest example in: {lacking}"
