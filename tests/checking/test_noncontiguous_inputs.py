"""Non-contiguous inputs (issue 38 item 3): in the checks of odd seeds, where the
check passed, the op runs once more on inputs laid out otherwise (gradcheck's engine:
Fortran order), and must give the same output and gradients
(``noncontiguous_input``). The torch side is in tests/checking/adapters/test_torch_layout.py."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck as mg
from gradcheck import Operation, check
from gradcheck.checking.layout import InputLayouts, noncontiguous_inputs
from gradcheck.checking.target import resolve_target

M = np.array([[0.3, -1.2, 2.0], [0.7, 1.1, -0.4]])


class RowWeighted(Operation):
    """x times its element's position in C order, computed right; its backward reads
    x's memory in its own order (``ravel(order="K")``) when ``memory_order``."""

    memory_order = True

    def __call__(self, a):
        self.variables = (a,)
        return a.data**2 * np.arange(a.data.size).reshape(a.shape)

    def backward_var(self, grad, index, **kw):
        x = self.variables[0].data
        flat = np.ravel(x, order="K" if self.memory_order else "C")
        weights = np.arange(x.size)
        return 2 * (flat * weights).reshape(x.shape) * grad


class RowWeightedRight(RowWeighted):
    memory_order = False


@pytest.mark.parametrize("seed", [1, 3, 5])
def test_a_backward_reading_memory_order_fails_on_a_fortran_input(seed):
    failure = check(RowWeighted, M, seed=seed).failure
    assert failure.kind == "noncontiguous_input" and failure.input == 0
    assert failure.message.startswith("input a: with input a (transposed: strides (1, 2)")
    assert "the gradient of input a differs" in failure.message
    assert check(RowWeightedRight, M, seed=seed).verdict == "passed"


def test_only_the_checks_of_odd_seeds_lay_inputs_out_otherwise():
    # (the same share as the non-contiguous upstream gradients)
    assert check(RowWeighted, M, seed=0).verdict == "passed"
    assert check(RowWeighted, M, seed=1).verdict == "failed"


def test_an_input_with_one_long_axis_is_not_run_again_for_the_engine():
    # (the engine's tensors copy a strided view into a contiguous array)
    x = np.array([0.3, -1.2, 2.0])
    odd, even = check(mg.sin, x, seed=1), check(mg.sin, x, seed=2)
    assert odd.forward_calls == even.forward_calls


def test_the_record_says_how_each_input_was_laid_out():
    layouts = InputLayouts(frozenset({0, 1, 2}))
    layouts.record(0, (2, 3), (1, 2))
    layouts.record(1, (4,), (2,))
    layouts.record(2, (2, 3), (3, 1))  # C order: not recorded
    assert layouts.used == {
        0: "transposed: strides (1, 2) in elements",
        1: "a strided view of a buffer twice as long: strides (2,) in elements",
    }


def test_engine_targets_get_fortran_ordered_tensors_within():
    seen = []

    def op(x):
        seen.append(x.data.flags.f_contiguous and not x.data.flags.c_contiguous)
        return mg.sin(x)

    tgt = resolve_target(op)
    with noncontiguous_inputs(frozenset({0})) as layouts:
        tgt.apply([M], {})
    tgt.apply([M], {})
    assert seen == [True, False] and 0 in layouts.used


@pytest.mark.parametrize("seed", range(8))
def test_builtin_ops_pass_on_fortran_inputs(seed):
    a = np.random.default_rng(seed).standard_normal((3, 4))
    b = np.random.default_rng(seed + 100).standard_normal((4, 2))
    for op, arrays in (
        (mg.matmul, (a, b)),
        (mg.transpose, (a,)),
        (mg.cumsum, (a,)),
        (lambda x: mg.einsum("ij,jk->ik", x, b), (a,)),
        (lambda x: mg.reshape(x, (4, 3)), (a,)),
    ):
        assert check(op, *arrays, seed=2 * seed + 1).verdict == "passed"


def test_only_frameworks_whose_ops_see_layouts_are_run_again():
    from gradcheck.checking.adapters import FRAMEWORKS, bridge_target
    from gradcheck.checking.contiguity import candidates

    assert {f.name for f in FRAMEWORKS if f.layouts} == {"torch"}

    def op(x):
        return x

    foreign = bridge_target(op, lambda arrays, constants, params: None, lambda a, p: a[0])
    assert candidates(foreign, [M]) == frozenset()
    assert candidates(resolve_target(lambda x: mg.sin(x)), [M, M[0]]) == {0}


def test_a_float16_reduction_summed_in_another_order_is_no_false_alarm():
    # The engine's softmax in float16 on a Fortran-ordered input sums in another order:
    # its gradient moves by a few ulps of its terms, which the check must allow (7 of
    # 120 such checks failed as noncontiguous_input before it measured that rounding).
    from gradcheck.builtin_targets import softmax

    rng = np.random.default_rng(0)
    failed = []
    for trial in range(20):
        x = rng.uniform(-10, 10, size=tuple(rng.integers(2, 6, size=2))).astype(np.float16)
        for seed in (1, 3):
            result = check(softmax, x, seed=seed)
            if not result.passed:
                failed.append((trial, seed, result.failure.kind))
    assert not failed


@pytest.mark.parametrize("seed", [1, 3])
def test_a_memory_order_bug_still_fails_in_float16(seed):
    failure = check(RowWeighted, M.astype(np.float16), seed=seed).failure
    assert failure is not None and failure.kind == "noncontiguous_input"
