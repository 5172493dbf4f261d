"""The scripts in examples/ run, in-process, and do what they say."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mlp_classifier_loss_falls(capsys):
    losses = _load("mlp_classifier").train(steps=60, verbose=True)
    assert "loss" in capsys.readouterr().out
    assert losses[-1] < 0.25 * losses[0]
    # it keeps falling: the last stretch is below the middle one on average
    assert np.mean(losses[-10:]) < np.mean(losses[20:30])


def test_conv_pool_forward_backward_matches_finite_differences(capsys):
    result = _load("conv_pool").run(verbose=True)
    assert "pool" in capsys.readouterr().out
    np.testing.assert_allclose(result["analytic"], result["numeric"], rtol=1e-6)
