"""A target is resolved once, at the edge (gradcheck/search/resolved.py): one
``verify`` of an op reads its description, its framework, its signature and its name
once each, and builds the checker's Target once, however many examples it checks.

Each reading is counted where every module of gradcheck holds it (the functions are
imported by name, so each module's reference is wrapped).
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import numpy as np
import pytest

import gradcheck
import gradcheck.checking.checker
import gradcheck.checking.contiguity
import gradcheck.frontend.worker
import gradcheck.search.verifier
import gradcheck.strategies
from gradcheck.checking.target import Target
from gradcheck.frontend.jobs import Job
from gradcheck.search.results import LoadedTarget
from gradcheck.search.verifier import verify

try:  # the adapter's readings count too: loaded before the fixture wraps them
    import torch

    import gradcheck.checking.adapters._torch
    import gradcheck.checking.adapters._torch_vmap
except ImportError:  # pragma: no cover
    torch = None

READINGS = ("description_of", "op_signature", "framework_of", "qualname", "resolve_target")


@pytest.fixture
def readings(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often each reading of a target ran (``resolve_target`` of something that
    is not a Target yet: of a Target it returns it)."""
    counts: Counter[str] = Counter()
    originals: dict[str, Any] = {}
    for module in [m for name, m in sys.modules.items() if name.startswith("gradcheck")]:
        for name in READINGS:
            function = getattr(module, name, None)
            if not callable(function) or isinstance(function, type):
                continue
            original = originals.setdefault(name, function)
            if function is not original:
                continue

            def counted(*args: Any, __name: str = name, __f: Any = original, **kw: Any) -> Any:
                if not (__name == "resolve_target" and isinstance(args[0], Target)):
                    counts[__name] += 1
                return __f(*args, **kw)

            monkeypatch.setattr(module, name, counted)
    assert set(originals) == set(READINGS)
    return counts


def square(x):
    return x * x


class Cube(gradcheck.Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data**3

    def backward_var(self, grad, index, **kwargs):
        return grad * 3 * self.variables[0].data ** 2


ONCE = dict.fromkeys(READINGS, 1)


@pytest.mark.parametrize("op", [square, Cube], ids=["function", "Operation"])
def test_one_verify_reads_the_target_once(readings: Counter[str], op: Any) -> None:
    result = verify(op, max_examples=12, seed=0, shapes=["2,3"])
    assert result.passed and result.examples == 12
    assert dict(readings) == ONCE


def test_a_job_reads_its_target_once_for_its_settings_and_its_search(
    readings: Counter[str],
) -> None:
    # the worker tells the command the effective settings, then runs the search
    seen: list[dict[str, Any]] = []
    job = Job("tests:square", {"max_examples": 6, "seed": 1})
    target = LoadedTarget("tests:square", square)
    result = gradcheck.frontend.worker.run_job(
        job, target, started=lambda settings, names: seen.append({**settings, "names": names})
    )
    assert result.passed and seen and seen[0]["max_examples"] == 6
    assert seen[0]["names"] == ("x",)  # the inputs' names, for a report made without it
    assert dict(readings) == ONCE


def test_a_torch_op_is_resolved_once_and_its_checks_read_no_framework(
    readings: Counter[str],
) -> None:
    if torch is None:
        pytest.skip("torch is not installed")

    def torch_square(x):
        return torch.sin(x) * x

    # (the check of non-contiguous inputs asks each example which framework the op is of)
    result = verify(torch_square, max_examples=10, seed=0, shapes=["3,4"])
    assert result.passed
    assert dict(readings) == ONCE


def test_the_resolved_target_says_what_was_read() -> None:
    from gradcheck.search.resolved import ResolvedTarget, resolve

    described = gradcheck.describe(domain=(1.0, 2.0))(square)
    resolved = resolve(LoadedTarget("mod:square", described))
    assert isinstance(resolved, ResolvedTarget) and resolve(resolved) is resolved
    assert resolved.name == "mod:square" and resolved.obj is described
    assert resolved.input_names == ("x",) and resolved.framework is None
    assert resolved.qualname.endswith("square") and resolved.target.obj is described
    assert resolved.description is not None and resolved.description.domain == (1.0, 2.0)
    out = resolved.target.forward([np.array([2.0])])
    assert out.tolist() == [4.0]
