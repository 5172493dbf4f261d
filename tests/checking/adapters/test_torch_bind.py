"""A torch target's bound forward (the finite differences' inner loop, issue 40 item 4):
its tensors made once over the arrays, what it returns the same as ``Target.forward``."""

from __future__ import annotations

import dataclasses

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


@framework("torch")
def returns_its_input(x):
    return x


def _generic_forward(tgt, arrays, params=None):
    """Target.forward through the engine's tensors and the generic evaluate."""
    return dataclasses.replace(tgt, array_forward=None).forward(arrays, params)


def test_forward_on_arrays_is_one_call_of_the_bound_function() -> None:
    # Target.forward of a torch op takes the bound path (the rounding probes call it
    # thousands of times on new arrays): the same values as the generic path.
    tgt = resolve_target(scaled_sin)
    arrays = _arrays()
    assert tgt.array_forward is not None
    expected = _generic_forward(tgt, arrays)
    evaluated = []
    tgt = dataclasses.replace(tgt, _evaluate=lambda *a: evaluated.append(a))
    got = tgt.forward(arrays)
    assert evaluated == []
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape


@pytest.mark.parametrize(
    "inputs",
    [
        [np.float64(2.0), np.ones(4)],  # a NumPy scalar, as an element moved in place gives
        [np.array(2.0), np.ones(4)],  # 0-d
        [np.ones((3, 4), dtype=np.float32), np.ones(4, dtype=np.float32)],
    ],
)
def test_forward_on_arrays_takes_what_the_generic_forward_takes(inputs) -> None:
    tgt = resolve_target(scaled_sin)
    got = tgt.forward(inputs)
    expected = _generic_forward(tgt, inputs)
    np.testing.assert_array_equal(got, expected)
    assert type(got) is type(expected) and got.dtype == expected.dtype


def test_forward_on_arrays_hands_out_a_new_array_not_the_ops_buffer() -> None:
    # The op returns its input: the output tensor shares the input array's memory.
    tgt = resolve_target(returns_its_input)
    x = np.arange(4.0)
    out = tgt.forward([x])
    np.testing.assert_array_equal(out, x)
    assert not np.shares_memory(out, x)
    out[0] = 9.0
    assert x[0] == 0.0


def test_several_and_complex_outputs_on_arrays_are_the_generic_forward() -> None:
    x = _arrays()[0]
    for op in (two_outputs, complex_output):
        tgt = resolve_target(op)
        np.testing.assert_array_equal(tgt.forward([x]), _generic_forward(tgt, [x]))
