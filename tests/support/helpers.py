"""Test helpers independent of the package's own checker.

``central_difference`` is deliberately the plainest possible finite-difference
gradient, so that tests of the engine do not trust the code they are testing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import gradcheck as mg


def central_difference(
    f: Callable[..., Any], arrays: list[np.ndarray], index: int, *, h: float = 1e-6
) -> np.ndarray:
    """d(sum of f(*arrays) * 1)/d(arrays[index]) by central differences, in float64.

    ``f`` takes arrays (or tensors) and returns something ``np.asarray`` accepts.
    """
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    x = arrays[index]
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + h
        plus = np.sum(np.asarray(_plain(f(*arrays))))
        x[i] = old - h
        minus = np.sum(np.asarray(_plain(f(*arrays))))
        x[i] = old
        grad[i] = (plus - minus) / (2 * h)
    return grad


def _plain(x: Any) -> Any:
    return x.data if isinstance(x, mg.Tensor) else x


def assert_grads_match(
    f: Callable[..., mg.Tensor],
    *arrays: Any,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
) -> list[mg.Tensor]:
    """Run ``f`` on float64 tensors made from ``arrays``, backprop a random upstream
    gradient, and compare every input's ``.grad`` with central differences of
    ``<v, f(x)>``. Returns the tensors (with their gradients)."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    tensors = [mg.Tensor(a) for a in arrays]
    out = f(*tensors)
    v = np.random.default_rng(seed).standard_normal(out.shape)
    out.backward(v)

    def weighted(*xs: np.ndarray) -> float:
        with mg.no_autodiff:
            return float(np.sum(np.asarray(_plain(f(*[mg.Tensor(x) for x in xs]))) * v))

    for i, t in enumerate(tensors):
        expected = central_difference(weighted, arrays, i)
        assert t.grad is not None, f"input {i} got no gradient"
        assert t.grad.shape == t.shape, (i, t.grad.shape, t.shape)
        np.testing.assert_allclose(t.grad, expected, rtol=rtol, atol=atol, err_msg=f"input {i}")
    return tensors


def load_example(name: str) -> Any:
    """The module ``examples/<name>.py``, loaded from its file (examples/ is no package)."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
