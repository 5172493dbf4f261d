"""Issue 34 item 8: a forward that raises a domain error (a LinAlgError at a singular
matrix, or an exception the user names with skip_on) is outside the op's domain: the
example is skipped and counted, never failed; any other exception stays a failure."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import gradcheck
from gradcheck.checking.checker import check
from gradcheck.checking.numerical import Evaluator
from gradcheck.checking.vocabulary import Skip
from gradcheck.cli import main
from gradcheck.errors import CheckUsageError, InvalidDescription
from tests.support import domain_ops as ops

OPS = "tests.support.domain_ops"


def test_a_singular_matrix_is_skipped_not_failed():
    result = check(ops.Inverse, np.zeros((2, 2)))
    assert (result.verdict, result.note) == ("inconclusive", Skip.DOMAIN_ERROR)
    assert check(ops.Inverse, np.array([[2.0, 1.0], [0.5, 3.0]])).verdict == "passed"


@pytest.mark.parametrize("x", [[1e-6, 2.0], [4e-6], [1e-7, 3e-7]])
def test_a_step_that_crosses_into_the_raising_set_is_no_failure(x):
    # The steps around a small x reach x <= 0, where the forward raises LinAlgError.
    assert check(ops.CholeskySqrt, np.array(x)).verdict == "passed"
    wrong = check(ops.WrongCholeskySqrt, np.array(x))
    assert wrong.verdict == "failed" and wrong.failure.kind == "mismatch"


def test_named_exceptions_are_domain_errors_and_others_stay_failures():
    x = np.array([0.4, 0.3])
    assert check(ops.unit_ball_square, x).failure.kind == "forward_error"
    for spec in (
        ops.OutsideUnitBall,
        f"{OPS}:OutsideUnitBall",
        [ops.OutsideUnitBall],
    ):
        result = check(ops.unit_ball_square, x, skip_on=spec)
        assert (result.verdict, result.note) == ("inconclusive", Skip.DOMAIN_ERROR)
    assert check(ops.unit_ball_raises_value_error, x, skip_on="ValueError").verdict == (
        "inconclusive"
    )
    other = check(ops.unit_ball_raises_value_error, x, skip_on="ZeroDivisionError")
    assert other.failure.kind == "forward_error"
    with pytest.raises(CheckUsageError, match="skip_on"):
        check(ops.unit_ball_square, x, skip_on="NoSuchError")


def test_verify_counts_domain_errors_as_skipped_examples():
    failed = gradcheck.verify(ops.unit_ball_square, max_examples=30, seed=0)
    assert failed.verdict == "failed"
    for result in (
        gradcheck.verify(
            ops.unit_ball_square, max_examples=30, seed=0, skip_on=ops.OutsideUnitBall
        ),
        gradcheck.verify(ops.described_unit_ball_square, max_examples=30, seed=0),
    ):
        assert result.verdict == "passed", result
        assert result.skipped.get(Skip.DOMAIN_ERROR, 0) > 0
    singular = gradcheck.verify(ops.Inverse, shapes=["2,2"], max_examples=40, seed=0)
    assert singular.verdict == "passed"


def test_describe_refuses_what_is_not_an_exception():
    with pytest.raises(InvalidDescription, match="skip_on"):
        gradcheck.describe(skip_on="not an exception")
    with pytest.raises(InvalidDescription, match="skip_on"):
        gradcheck.describe(skip_on="NotABuiltinError")


def test_cli_skip_on_is_repeatable_and_replayed():
    runner = CliRunner()
    args = [
        "verify",
        f"{OPS}:unit_ball_square",
        "--max-examples",
        "30",
        "--seed",
        "0",
    ]
    assert runner.invoke(main, args).exit_code == 1
    named = [
        *args,
        "--skip-on",
        f"{OPS}:OutsideUnitBall",
        "--skip-on",
        "ValueError",
    ]
    ok = runner.invoke(main, named)
    assert ok.exit_code == 0, ok.output
    assert "skipped: forward raised a domain error there" in ok.output
    bad = runner.invoke(main, [*args, "--skip-on", "a b"])
    assert bad.exit_code == 2 and "--skip-on" in bad.output and "Traceback" not in bad.output
    missing = runner.invoke(main, [*args, "--skip-on", "no_such_module_here:Err"])
    assert missing.exit_code == 2 and "cannot import 'no_such_module_here'" in missing.output
    other = runner.invoke(main, [*args, "--skip-on", "ZeroDivisionError"])
    assert other.exit_code == 1  # (another exception named: this op's stays a failure)
    assert "--skip-on ZeroDivisionError --seed" in other.output  # the replay keeps it


def test_config_key_skip_on(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.gradcheck]\nskip-on = ["{OPS}:OutsideUnitBall"]\nmax-examples = 30\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(Path(__file__).parents[2]))
    ok = CliRunner().invoke(main, ["verify", f"{OPS}:unit_ball_square", "--seed", "0"])
    assert ok.exit_code == 0, ok.output
    assert "skipped: forward raised a domain error there" in ok.output


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_backward_that_assumes_a_c_ordered_upstream_gradient_fails(seed):
    # (issue 34: a share of checks hands the backward a non-contiguous upstream gradient)
    assert gradcheck.verify(ops.StorageOrderScale, seed=seed, max_examples=100).verdict == "failed"
    assert gradcheck.verify(ops.Scale, seed=seed, max_examples=100).passed


def test_a_linalg_error_at_every_value_of_a_shape_is_the_shape_s():
    # NumPy's inverse raises LinAlgError for a matrix that is not square, too: those
    # shapes are learnt as shapes the op does not run at, the singular draws skipped.
    result = gradcheck.verify(ops.Inverse, max_examples=40, seed=0)
    assert result.verdict == "passed", result
    assert result.skipped.get(Skip.SHAPE, 0) > 0
    assert "must be square" in result.note
    broken = gradcheck.verify(ops.never_runs, max_examples=10, seed=0)
    assert broken.verdict == "failed"
    assert broken.failure.failure.kind == "forward_error"
    assert "never runs" in broken.failure.failure.message


# -- a gradient beyond the dtype's range both ways ---------------------------------------
_TINY = 1.9287408384358897e-209  # an entry gradcheck's search shrank a torch inverse to


def test_a_gradient_beyond_the_range_both_ways_is_skipped_not_failed():
    """sum(inv(A)) at a matrix whose determinant underflows: torch returns a finite
    forward of pure rounding and a gradient of nan and -0 (at v·2**-384 all -0): the
    backward works beyond float64's range both ways, and nothing can be compared."""
    torch = pytest.importorskip("torch")

    def inv_sum(a):
        return torch.linalg.inv(a).sum()

    x = np.array([[0.0, _TINY, _TINY], [_TINY, 0.0, _TINY], [_TINY, _TINY, _TINY]])
    result = check(inv_sum, x, upstream=np.float64(0.1257302210933933))
    assert (result.verdict, result.note) == ("inconclusive", Skip.OVERFLOW), result.failure


def test_a_backward_that_is_nan_at_every_scale_still_fails():
    result = check(ops.NanAtZeroSquare, np.array([0.0, 1.5]))
    assert result.verdict == "failed" and result.failure.kind == "nonfinite_gradient"


class _LogAbsDet(gradcheck.Operation):
    """log|det(A)|, with inv(A)ᵀ as its gradient; ``scale`` multiplies the gradient
    (inf: a backward that returns inf everywhere)."""

    scale = 1.0

    def __call__(self, a):
        self.variables = (a,)
        return np.asarray(np.linalg.slogdet(a.data)[1])

    def backward_var(self, grad, index, **kwargs):
        with np.errstate(all="ignore"):
            return grad * np.linalg.inv(self.variables[0].data).T * self.scale


class _LogAbsDetInf(_LogAbsDet):
    scale = np.inf


_DET_TINY = np.array([[1.0, 0.0], [10.0, 2.2250738585072014e-308]])


def test_a_gradient_beyond_the_range_the_forward_shows_is_skipped_not_failed():
    """log|det| at a matrix of determinant 2.2e-308 (what the search shrank to, seed
    1): the gradient of entry (0, 1) is -10/det = -4.5e308, beyond float64, and the
    inverse overflows in every entry; the forward's own slope along that entry, at
    steps below det/10, is that large too."""
    result = check(_LogAbsDet, _DET_TINY, seed=0)
    assert (result.verdict, result.note) == ("inconclusive", Skip.OVERFLOW), result.failure


@pytest.mark.parametrize("a", [[[1.0, 0.0], [10.0, 2.0]], [[1.0, 0.0], [10.0, 1e-300]]])
def test_an_infinite_gradient_where_every_slope_is_in_range_still_fails(a):
    # (det 1e-300: the slopes are 1e301 at most, representable)
    result = check(_LogAbsDetInf, np.array(a), seed=0)
    assert result.verdict == "failed" and result.failure.kind == "nonfinite_gradient"


def test_a_jump_is_no_slope_beyond_the_range_and_a_steep_entry_is():
    # floor at 0: central slopes 1/2h grow at every smaller step and never settle;
    # log|det| at _DET_TINY: only entry (0, 1)'s slope, -4.5e308, is beyond float64's.
    top = math.log2(float(np.finfo(np.float64).max))
    ev = Evaluator(lambda a, p: np.floor(a[0]), [np.array([0.0, 0.5])], {}, np.ones(2))
    assert not ev.steep_beyond(0, [0], top)

    def logabsdet(a, p):
        return np.asarray(np.linalg.slogdet(a[0])[1])

    ev = Evaluator(logabsdet, [_DET_TINY], {}, np.float64(1.0))
    assert [ev.steep_beyond(0, [j], top) for j in range(4)] == [0, 1, 0, 0]


# -- steps that cross a singular set nearer than they are long -----------------------
_T48 = 2.3529296288310196e-48
_NEAR_SINGULAR = np.array(
    [[_T48, _T48, 0.0, _T48], [1.0, _T48, _T48, _T48], [_T48, 1.0, _T48, _T48], [_T48] * 4]
)
_V4 = np.array([0.1257302210933933, -0.1321048632913019, 0.6404226504432821, 0.1049001171530397])


def test_steps_that_cross_a_nearer_singular_set_are_no_evidence():
    """torch's solve at a 4×4 matrix of entries 2e-48 beside ones (what a search shrank
    to, seed 0): the gradient of entry (0, 3) is 9.7e94, the usual steps (1e-5) measure
    7.5e6 across the singular set; steps at the gradient's own scale find 9.7e94."""
    torch = pytest.importorskip("torch")

    def solve(a, b):
        return torch.linalg.solve(a, b)

    result = check(solve, _NEAR_SINGULAR, np.ones(4), upstream=_V4)
    assert result.verdict == "passed", result.failure


class _CubeTooBig(gradcheck.Operation):
    """x³ with a backward 1000 times too large: the own-scale steps see 3x² as well."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data**3

    def backward_var(self, grad, index, **kwargs):
        return grad * 3000 * self.variables[0].data ** 2


def test_a_gradient_far_too_large_of_a_smooth_op_still_fails():
    result = check(_CubeTooBig, np.array([0.3, -2.0, 1e-20]), seed=0)
    assert result.verdict == "failed" and result.failure.kind == "mismatch"


def test_a_backward_that_meets_a_singular_matrix_is_skipped_not_failed():
    # The forward's solve with a takes this matrix (its LU pivot is a rounding error,
    # not 0); the backward's solve with a.T finds it singular. Issue 34's corpus: a
    # correct MyGrad solve failed as backward_error there.
    a, b = np.array([[1.75, 1.75], [3.0, 3.0]]), np.zeros(2)
    v = np.array([0.125, -0.132])
    result = check(ops.Solve, a, b, upstream=v)
    assert (result.verdict, result.note) == ("inconclusive", Skip.BACKWARD_DOMAIN_ERROR)
    regular = np.array([[2.0, 1.0], [0.5, 3.0]])
    assert check(ops.Solve, regular, np.array([1.0, -1.0])).verdict == "passed"
    other = check(ops.SolveRaisingValueError, regular, np.array([1.0, -1.0]))
    assert other.failure.kind == "backward_error"
