"""Issue 34 items 9 and 11: forwards that round their inputs to float16 (complex32)
inside, written as torch Functions whose backwards take the gradient at the
unrounded input (tests/support/torch_rounded_input_ops.py).

* A float32 or complex64 op with several outputs (a complex output is two) had its
  float64 reference cast back to float32 by the layout of its last run's outputs:
  differenced in float32 around a forward that computes in float16, z·z computed
  in complex32 false-alarmed (analytic 5.7713 against 5.7738).
* A backward at x where the forward computes at x rounded to float16 differs from
  the finite differences by the gradient's move under that rounding: 1 - z·z in
  complex32 at z = 1.9i (float16's 1.900390625), 0.50200 against 0.50210.
* 1 - cos(x.half()) at |x| = 223: its steps 256 and 1024 agreed by chance near 0
  (a bounded function's differences stop growing past its scale); main said
  inconclusive, and a backward with the wrong sign passed there unseen.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck import check, verify

torch = pytest.importorskip("torch")

from tests.support.torch_rounded_input_ops import (  # noqa: E402
    chalf_square,
    half_square_parts,
    one_minus_cos16,
)

V2 = np.array([0.12573022, -0.13210486], dtype=np.float32)


def test_a_complex32_square_passes_where_its_float64_reference_was_cast_away():
    z = np.array([4.5058594j, 4.5058594j], dtype=np.complex64)
    v = np.array([0.12573022, -0.13210486, 0.64042264, 0.104900114], dtype=np.float32)
    result = check(chalf_square(), z, upstream=v, seed=2)
    assert result.verdict == "passed", str(result)


def test_two_float16_outputs_of_float32_inputs_pass():
    x, y = np.array([0.0], dtype=np.float32), np.array([4.5058594], dtype=np.float32)
    v = np.array([0.12573022, 0.64042264], dtype=np.float32)
    result = check(half_square_parts(), x, y, upstream=v, seed=2)
    assert result.verdict == "passed", str(result)


@pytest.mark.parametrize("z", [1.9j, 0.3 + 1.9j])
def test_a_backward_at_the_unrounded_input_passes(z):
    result = check(chalf_square(one_minus=True), np.array([z], np.complex64), upstream=V2, seed=0)
    assert result.verdict == "passed", str(result)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("one_minus", [False, True])
@pytest.mark.parametrize(("factor", "conj_bug"), [(1.1, False), (1.0, True)])
def test_the_wrong_twins_of_complex32_squares_fail(seed, one_minus, factor, conj_bug):
    op = chalf_square(factor, conj_bug, one_minus)
    assert verify(op, seed=seed, dtype="complex64").verdict == "failed"


@pytest.mark.parametrize("seed", [0, 1])
def test_the_wrong_twin_of_two_float16_outputs_fails(seed):
    assert verify(half_square_parts(1.1), seed=seed, dtype="float32").verdict == "failed"


@pytest.mark.parametrize("x", [-223.0, -53.375])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_sign_flip_of_one_minus_cos_in_float16_at_large_inputs_fails(x, seed):
    result = check(one_minus_cos16(flip=True), np.array([x]), seed=seed)
    assert result.verdict == "failed", str(result)


@pytest.mark.parametrize("x", [223.0, -223.0, 53.375, 59.75])
@pytest.mark.parametrize("seed", [0, 1])
def test_one_minus_cos_in_float16_at_large_inputs_passes(x, seed):
    result = check(one_minus_cos16(), np.array([x]), seed=seed)
    assert result.verdict == "passed", str(result)


V_PAIR = np.array([0.1257302210933933, -0.1321048632913019])


@pytest.mark.parametrize(
    ("x", "v"),
    [
        # (the levels that stood still below cos's float16 quantum near 1 were read
        # as flat: one side of the first step that moved crossed a quantum, and the
        # steps past the minimum at 0 are lopsided by the curvature)
        ([2.0, 0.125], V_PAIR),
        ([2.0, 0.0625], V_PAIR),
        ([2.0, 0.015625], V_PAIR),
    ],
)
def test_one_minus_cos_in_float16_near_its_quanta_passes(x, v):
    result = check(one_minus_cos16(), np.array(x), upstream=v, seed=0)
    assert result.verdict == "passed", str(result)


def test_a_step_of_half_a_float16_ulp_is_no_evidence():
    # (it lands on a tie, which rounds to even: one side moves a whole ulp, and D was
    # twice the derivative, -1.87 against -0.90; a kink is read there now, not judged)
    x = np.array([5.16015625])
    result = check(one_minus_cos16(), x, upstream=np.ones(1), seed=0)
    assert result.verdict in ("passed", "inconclusive"), str(result)


@pytest.mark.parametrize("x", [[-2.0, 0.125], [-0.0625], [-30.0]])
def test_a_sign_flip_of_one_minus_cos_in_float16_near_its_quanta_fails(x):
    assert check(one_minus_cos16(flip=True), np.array(x), seed=0).verdict == "failed"


@pytest.mark.parametrize(
    "x",
    [
        # (the subtraction in float32 leaves outputs of float32 numbers, or float16
        # numbers by chance, while cos rounds at float16's ulps: the noise was modelled
        # at float32's eps, 8192 times too fine; numeric 0.12506 against 0.12512)
        [-42.32151412963867, 111.12215423583984],
        [69.83027648925781, -280.7511901855469, 184.45367431640625],
    ],
)
def test_one_minus_cos_in_float16_of_float32_inputs_passes(x):
    result = check(one_minus_cos16(), np.array(x, dtype=np.float32), seed=0)
    assert result.verdict == "passed", str(result)


@pytest.mark.parametrize(
    "x", [[-243.84788513183594], [-241.37060546875, 144.56666564941406], [-42.32151412963867]]
)
def test_a_sign_flip_of_one_minus_cos_in_float16_of_float32_inputs_fails(x):
    result = check(one_minus_cos16(flip=True), np.array(x, dtype=np.float32), seed=0)
    assert result.verdict == "failed", str(result)


@pytest.mark.parametrize(
    "z",
    [
        # (every output a whole number, -953 beside 8625: read as a staircase of whole
        # numbers, differenced with float64's steps that the rounding to complex32
        # absorbs: numeric 0 against an analytic -120)
        [5.125904560089111 + 92.99354553222656j, -70.19039154052734 - 19.672754287719727j],
        [17.303665161132812 + 45.29472351074219j, 67.93692016601562 - 26.998546600341797j],
    ],
)
def test_a_complex32_square_with_whole_outputs_passes(z):
    result = check(chalf_square(one_minus=True), np.array(z, np.complex64), seed=0)
    assert result.verdict == "passed", str(result)


@pytest.mark.parametrize("factor", [1.1, 0.9])
def test_the_wrong_twin_of_a_complex32_square_with_whole_outputs_fails(factor):
    z = [5.125904560089111 + 92.99354553222656j, -70.19039154052734 - 19.672754287719727j]
    result = check(chalf_square(factor, one_minus=True), np.array(z, np.complex64), seed=0)
    assert result.verdict == "failed", str(result)


@pytest.mark.parametrize("x", [[177.5], [177.5, 3.0]])
def test_one_minus_cos_in_float16_whose_outputs_are_no_float32_numbers_passes(x):
    # (cos(177.5) in float16 is the subnormal -1.5e-5, and 1 - it in float64 no float32
    # number: read as a float64 forward, differenced with float64's steps that the
    # rounding to float16 absorbs; numeric 0 against 0.126; gradcheck verify seed 0.
    # Told now where the check would fail, and its inputs are float32 or narrower)
    result = check(one_minus_cos16(), np.array(x, dtype=np.float32), seed=0)
    assert result.verdict == "passed", str(result)


def test_a_sign_flip_of_one_minus_cos_in_float16_whose_outputs_are_no_float32_numbers_fails():
    result = check(one_minus_cos16(flip=True), np.array([-177.5], dtype=np.float32), seed=0)
    assert result.verdict == "failed", str(result)


class _Round4(torch.autograd.Function):
    """round(4x): a staircase whose tread, 0.25, is finer than float16's ulp at |x| of 512
    to 1024; its gradient is 0 (torch's own for round)."""

    @staticmethod
    def forward(ctx, x):
        return torch.round(4 * x)

    @staticmethod
    def backward(ctx, g):
        return torch.zeros_like(g)


@pytest.mark.parametrize(
    "x",
    [
        [-778.697509765625, -993.16650390625, -305.3894958496094],
        [-346.725158, 961.538391, -602.206726],
    ],
)
def test_a_staircase_finer_than_float16_s_ulp_is_not_taken_for_a_float16_forward(x):
    # It moves at every whole float16 ulp of its inputs, as a forward computing in
    # float16 does, and its zero gradient was judged against the slope 4 of the steps it
    # climbs (failed: mismatch). Inside a float16 rounding cell it moves; F(round(x))
    # cannot.
    result = check(_Round4, np.array(x, dtype=np.float32), seed=0)
    assert result.verdict != "failed", str(result)


@pytest.mark.parametrize(
    "x",
    [
        # (float16's levels of half an ulp round to one: at 5.93 the steps of 1 and 2
        # ulps, in ratio 2, were read as a pair in ratio 4 that had crossed the
        # function's scale: "not differentiable" where cos is smooth)
        5.9321794509887695,
        140.3369598388672,
        223.65904235839844,
        # (float16's ulp 0.25, the base step 32: the steps 0.5 and 2 alone, 2 past the
        # cosine's scale; now the ladder of half that step, with a level at one ulp)
        278.98065185546875,
        293.18890380859375,
        -283.7947998046875,
    ],
)
def test_one_minus_cos_in_float16_is_differentiable_at_large_inputs(x):
    result = check(one_minus_cos16(), np.array([x], dtype=np.float32), seed=0)
    assert result.verdict == "passed", str(result)


@pytest.mark.parametrize("x", [5.9321794509887695, 140.3369598388672, 223.65904235839844])
def test_one_minus_cos_in_float16_off_by_5_percent_fails_where_it_was_a_kink(x):
    result = check(one_minus_cos16(1.05), np.array([x], dtype=np.float32), seed=0)
    assert result.verdict == "failed", str(result)


@pytest.mark.parametrize("x", [-283.7947998046875, -288.23974609375])
def test_a_sign_flip_of_one_minus_cos_in_float16_fails_where_it_was_a_kink(x):
    result = check(one_minus_cos16(flip=True), np.array([x], dtype=np.float32), seed=0)
    assert result.verdict == "failed", str(result)


@pytest.mark.parametrize(
    "z",
    [
        # (Re and Im of opposite signs: every element moved one float16 ulp up moves
        # Im z² by 2(y·dx + x·dy), which cancels below its ulp, so half the outputs
        # stood still and the whole outputs were read as a staircase: numeric 0)
        [-8.13282299041748 + 70.52656555175781j, -87.53008270263672 + 18.58820343017578j],
        [52.62570571899414 - 74.2653579711914j, 39.578712463378906 - 24.752300262451172j],
    ],
)
def test_a_complex32_square_whose_moves_cancel_passes(z):
    result = check(chalf_square(one_minus=True), np.array(z, np.complex64), seed=0)
    assert result.verdict == "passed", str(result)
    wrong = check(chalf_square(1.1, one_minus=True), np.array(z, np.complex64), seed=0)
    assert wrong.verdict == "failed", str(wrong)
