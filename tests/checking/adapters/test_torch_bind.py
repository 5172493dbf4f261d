"""A torch target's bound forward (the finite differences' inner loop, issue 40 item 4):
its tensors made once over the arrays, what it returns the same as ``Target.forward``."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gradcheck.checking.adapters import framework  # noqa: E402
from gradcheck.checking.checker import check  # noqa: E402
from gradcheck.checking.target import resolve_target  # noqa: E402


@framework("torch")
def scaled_sin(x, w):
    return torch.sin(x) * w


@framework("torch")
def two_outputs(x):
    return x * 2, torch.cos(x)


@framework("torch")
def complex_output(x):
    return torch.polar(torch.ones_like(x), x)


def _arrays() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal((3, 4)), rng.standard_normal(4)]


def test_a_bound_forward_makes_its_tensors_once(monkeypatch) -> None:
    arrays = _arrays()
    bound = resolve_target(scaled_sin).bind(arrays)
    made = []
    real = torch.from_numpy
    monkeypatch.setattr(torch, "from_numpy", lambda a: made.append(a) or real(a))
    for _ in range(5):
        bound()
    assert made == []  # (the generic path wrapped every array at every call)


def test_a_bound_forward_sees_the_arrays_as_they_are_at_call_time() -> None:
    arrays = _arrays()
    tgt = resolve_target(scaled_sin)
    bound = tgt.bind(arrays)
    first = np.array(bound())
    arrays[0][1, 2] += 0.5  # as the finite differences move an element in place
    moved = np.array(bound())
    np.testing.assert_array_equal(moved, tgt.forward(arrays))
    assert not np.array_equal(first, moved)
    assert torch.is_grad_enabled()  # grad mode as it was


def test_a_bound_forward_of_several_or_complex_outputs_is_the_forward() -> None:
    x = _arrays()[0]
    for op in (two_outputs, complex_output):
        tgt = resolve_target(op)
        tgt.forward([x])  # (the layout of the outputs, as the checker's first forward)
        np.testing.assert_array_equal(tgt.bind([x])(), tgt.forward([x]))


def test_checks_through_the_bound_forward_keep_their_verdicts() -> None:
    x, w = _arrays()
    assert check(scaled_sin, x, w).passed
    assert check(complex_output, x).passed

    @framework("torch")
    def wrong_sin(x):
        class Wrong(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return torch.sin(x)

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * torch.cos(x) * (1 + 1e-6)

        return Wrong.apply(x)

    result = check(wrong_sin, x)
    assert result.verdict == "failed" and result.failure.kind == "mismatch"


def test_the_inner_loop_calls_the_torch_bound_forward_itself() -> None:
    # No frame of the bridge's around it (a tenth of a small op's call, profiled): the
    # function the finite differences call is the one made over the tensors.
    tgt = resolve_target(scaled_sin)
    bound = tgt.bind(_arrays())
    assert bound.__qualname__ == "_TorchOp.bind.<locals>.bound"
