"""The report a person acts on (issue 34, items 4 and 5; issue 37, item 3): the size of
a bug survives shrinking, inputs are named as the user named them, the upstream
gradient is shown, one seed and one relative error per report, and ``str(result)``
is the command line's text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import gradcheck
from gradcheck import Operation
from gradcheck.cli import main
from gradcheck.frontend.render import failure_block, render_json
from gradcheck.search.verifier import stepped_out_of_domain, verify


class SinGrowingError(Operation):
    """sin, whose backward errs by a factor 1 + 0.5·tanh(1e-5·x**6): by up to a third at
    the magnitudes a search draws, by 5e-6 (still a failure) at x = 1, where Hypothesis
    shrinks it."""

    def __call__(self, x):
        self.variables = (x,)
        return np.sin(x.data)

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        return grad * np.cos(x) * (1 + 0.5 * np.tanh(1e-5 * x**6))


class Affine(Operation):
    """logits * scale, whose gradient for ``scale`` is wrong (it is ``logits``)."""

    def __call__(self, logits, scale):
        self.variables = (logits, scale)
        return logits.data * scale.data

    def backward_var(self, grad, index, **kwargs):
        logits, scale = self.variables
        return grad * (scale.data if index == 0 else 2 * logits.data)


class SquareOffByAConstant(Operation):
    """x**2 whose backward is grad·(2x + 1e-3), wrong where the gradient is 0 too."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data**2

    def backward_var(self, grad, index, **kwargs):
        return grad * (2 * self.variables[0].data + 1e-3)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_size_of_a_bug_survives_shrinking(seed):
    result = verify(SinGrowingError, max_examples=50, seed=seed)
    assert result.verdict == "failed"
    shrunk = result.failure
    worst = result.worst
    assert worst is not None and worst is not shrunk
    # The shrunk example is small, the bug is not: the worst seen says how big it is.
    assert shrunk.max_rel_error < 1e-4 < 0.01 < worst.max_rel_error
    assert result.max_rel_error == worst.max_rel_error  # the table's is the worst seen
    assert result.max_abs_error >= worst.max_abs_error
    assert result.worst_example.startswith(("example ", "shrink step "))
    # ...and replays alone from its own seed and inputs.
    again = gradcheck.check(SinGrowingError, *worst.inputs, seed=worst.seed)
    assert again.max_rel_error == worst.max_rel_error
    text = str(result)
    assert re.search(r"Largest error seen \(the run's (max abs err and )?max rel err\): ", text)
    assert result.worst_example in text and result.max_rel_error_at == result.worst_example
    assert f"{worst.max_rel_error:.3g}" in text


class WrongSoftplus(Operation):
    """Softplus whose backward forgot a minus sign (the README's)."""

    def __call__(self, x):
        self.variables = (x,)
        return np.logaddexp(0.0, x.data)

    def backward_var(self, grad, index, **kwargs):
        return grad * np.exp(-np.logaddexp(0.0, self.variables[0].data))  # 1 / (1 + e^x)


def _shown_at(result, which):
    """The example the report names for the table's ``which`` error ("abs", "rel"),
    checked to have that error."""
    value = getattr(result, f"max_{which}_error")
    at = getattr(result, f"max_{which}_error_at")
    if at == "the reported example":
        assert getattr(result.failure, f"max_{which}_error") == value
    elif at == result.worst_example:
        assert getattr(result.worst, f"max_{which}_error") == value
    else:
        name = {"abs": "max abs err", "rel": "max rel err"}[which]
        assert f"The run's {name}, {value:.3g}, was seen at {at} (it replays with the run" in str(
            result
        )
    return at


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_each_of_the_tables_errors_is_named_with_the_example_that_had_it(seed):
    # The table's max abs err and max rel err are the largest over every example; the
    # report shows the shrunk example and the one of the largest relative error, and
    # names the example of each of the table's numbers (the largest abs err was
    # another example's, 0.851 beside 0.685 shown, with nothing to say so).
    result = verify(WrongSoftplus, seed=seed)
    assert result.verdict == "failed"
    abs_at, rel_at = _shown_at(result, "abs"), _shown_at(result, "rel")
    assert abs_at.startswith(("the reported example", "example ", "shrink step "))
    assert rel_at.startswith(("the reported example", "example ", "shrink step "))
    document = result.to_dict()
    assert (document["max_abs_error_at"], document["max_rel_error_at"]) == (abs_at, rel_at)
    if result.worst is not None:
        assert document["worst_seen"]["example"] == result.worst_example


def test_a_largest_abs_error_at_another_example_is_named_with_it():
    # (the README's run: max abs err 0.851 in the table, 0.685 and 0.0581 shown)
    split = []
    for seed in range(6):
        result = verify(WrongSoftplus, seed=seed)
        if result.max_abs_error_at not in ("the reported example", result.worst_example):
            split.append(seed)
            assert result.max_abs_error > result.worst.max_abs_error
            line = f"The run's max abs err, {result.max_abs_error:.3g}, was seen at "
            assert (
                line + f"{result.max_abs_error_at} (it replays with the run: Replay below)."
                in str(result)
            )
    assert split  # (seeds 0, 3 and 5 when written)


def test_json_fills_found_and_the_worst_seen():
    result = verify(SinGrowingError, max_examples=50, seed=0)
    document = json.loads(render_json([result], seed=0, replay=lambda r: "gradcheck verify x"))
    (target,) = document["targets"]
    assert target["found"]  # (was null for an input in none of the search's reaches)
    assert target["worst_seen"]["example"] == result.worst_example
    assert target["worst_seen"]["max_rel_error"] == target["max_rel_error"]
    assert target["worst_seen"]["inputs"][0]["data"] == result.worst.inputs[0].tolist()
    jsonschema = pytest.importorskip("jsonschema")
    from gradcheck import schemas

    jsonschema.validate(document, schemas.load("verify"))


def test_a_pass_has_no_worst_failure_and_found_is_empty():
    class Square(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return x.data**2

        def backward_var(self, grad, index, **kwargs):
            return grad * 2 * self.variables[0].data

    result = verify(Square, max_examples=10, seed=0)
    assert result.passed and result.worst is None and result.found == ""
    assert result.to_dict()["worst_seen"] is None


def test_inputs_are_named_as_the_forward_names_them():
    result = gradcheck.check(Affine, np.array([1.0, 2.0]), np.array([3.0, -1.0]), seed=0)
    assert result.input_names == ["logits", "scale"]
    assert result.failure.input == 1
    text = str(result)
    assert "failed: mismatch (input scale)" in text
    assert "the gradient of input scale differs" in text
    assert "input 1" not in text
    assert "logits (float64[2]):" in text and "scale (float64[2]):" in text
    assert result.to_dict()["input_names"] == ["logits", "scale"]


def test_module_parameters_are_named_by_their_paths():
    torch = pytest.importorskip("torch")

    class Layer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(2, 1).double()

        def forward(self, x):
            return torch.tanh(self.linear(x))

    result = gradcheck.check(Layer(), np.array([[0.5, -0.25]]), seed=0)
    assert result.input_names == ["x", "linear.weight", "linear.bias"]
    assert "linear.weight (float64[1, 2]):" in str(result)


def test_the_upstream_gradient_is_named_v_at_order_2():
    torch = pytest.importorskip("torch")

    class WrongSecond(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x.detach()  # the second derivative misses half of 6x

    result = gradcheck.check(WrongSecond, np.array([0.5, -1.5]), order=2, seed=0)
    assert result.verdict == "failed"
    assert result.input_names == ["x", "v"]
    text = str(result)
    assert "v (float64[2]):" in text  # as the other inputs are printed
    assert "u, the upstream gradient" in text and "uᵀJ" in text


def test_the_report_shows_the_upstream_gradient_that_analytic_and_numeric_multiply():
    x = np.array([0.5, -1.0])
    result = gradcheck.check(Affine, x, np.array([2.0, 3.0]), seed=3)
    v = result.upstream
    assert v is not None and v.shape == (2,)
    row = result.failure.worst[0]
    j = row.index[0]
    # analytic and numeric are v·(d out/d scale) = v * 2x and v * x elementwise
    assert row.analytic == pytest.approx(v[j] * 2 * x[j])
    assert row.numeric == pytest.approx(v[j] * x[j], rel=1e-6)
    text = str(result)
    assert "Analytic and numeric are vᵀJ" in text
    (shown,) = [line for line in text.splitlines() if line.startswith("v, the upstream gradient")]
    assert np.array2string(v, precision=17, separator=", ") in text.split(shown, 1)[1]
    assert result.to_dict()["upstream"]["data"] == v.tolist()


def test_one_relative_error_never_against_a_zero_reference():
    # One element's gradient is 0, where the backward says 1e-3; the other is 2.
    result = gradcheck.check(SquareOffByAConstant, np.array([0.0, 1.0]), seed=0)
    assert result.verdict == "failed"
    (errors,) = result.per_input
    # Each element's error over its own size as the tolerance takes it: |numeric|,
    # or atol / rtol where that is larger (the zero element), never 0.
    floor = errors.atol / errors.rtol
    assert 0 < floor < max(abs(e.numeric) for e in result.failure.worst)
    for e in result.failure.worst:
        assert e.rel_error == pytest.approx(e.abs_error / max(abs(e.numeric), floor))
        assert e.rel_error <= result.max_rel_error  # never above the headline's
    assert result.max_rel_error < 1  # (was 5e306 against the zero element)
    assert errors.max_rel_error == max(e.rel_error for e in result.failure.worst)


class NoisyBeside(Operation):
    """out[0] = (1e-7·x0 + 1e9) - 1e9, rounded to ulps of 1e9: finite differences
    resolve its gradient no finer than ~1e-2, far above the gradient (1e-7); out[1] =
    0.06·x1, whose backward says 0.76."""

    def __call__(self, x):
        self.variables = (x,)
        d = x.data
        return np.stack([(1e-7 * d[0] + 1e9) - 1e9, 0.06 * d[1]])

    def backward_var(self, grad, index, **kwargs):
        return np.stack([1e-7 * grad[0], 0.76 * grad[1]])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_elements_relative_error_is_not_shrunk_by_another_elements_allowance(seed):
    # The error of 0.7 on a gradient of 0.06 is 11.7 of it; the noisy element beside
    # it made the input's scale its allowance / rtol, and the error read 0.1 (lstsq: 1e-7).
    result = gradcheck.check(NoisyBeside, np.array([0.3, 0.5]), seed=seed)
    assert result.verdict == "failed"
    (row,) = result.failure.worst
    assert row.index == (1,)
    assert row.rel_error == pytest.approx(0.7 / 0.06, rel=1e-6)
    assert result.max_rel_error == row.rel_error
    text = str(result)
    assert f"Max relative difference: {row.rel_error:.3g} " in text
    document = result.to_dict()
    assert document["max_rel_error"] == document["worst"][0]["rel_error"] == row.rel_error


class NoisyAndWrong(Operation):
    """(0.06·x + 1e13) - 1e13, whose outputs round at 1e13's ulp (2e-3): finite
    differences cannot tell its gradient from 0; its backward says 7.6, a gross error
    beyond what they resolve. (At 1e9, once taken for a forward computing in float32,
    it is now differenced in float64 and resolved to 1e-3.)"""

    def __call__(self, x):
        self.variables = (x,)
        return (0.06 * x.data + 1e13) - 1e13

    def backward_var(self, grad, index, **kwargs):
        return 7.6 * grad


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_error_beyond_what_finite_differences_resolve_does_not_read_as_rounding(seed):
    # Where finite differences cannot tell the gradient from 0, the error is relative
    # to the larger of what they resolve there and the analytic value: 1 for an
    # analytic value that is all error (was ~5e-7: relative to the resolution over
    # rtol, which read as rounding).
    result = gradcheck.check(NoisyAndWrong, np.array([0.3, 0.5]), seed=seed)
    assert result.verdict == "failed"
    for e in result.failure.worst:
        assert abs(e.numeric) < e.floor < e.abs_error  # the floor governs there
        assert e.rel_error == pytest.approx(e.abs_error / abs(e.analytic))  # (> the floor)
        assert 0.5 < e.rel_error <= 2
    assert 0.5 < result.max_rel_error <= 2


class ZeroButSaysOne(Operation):
    """0·x, whose backward says 1."""

    def __call__(self, x):
        self.variables = (x,)
        return 0.0 * x.data

    def backward_var(self, grad, index, **kwargs):
        return grad * 1.0


@pytest.mark.parametrize(
    "tolerances", [{}, {"atol": 0.0, "rtol": 0.0}, {"rtol": 0.0}, {"atol": 0.0}]
)
def test_a_backward_wrong_where_the_gradient_is_exactly_0_is_wrong_by_all_of_it(tolerances):
    # numeric exactly 0: relative to the analytic value, 1 (was 1.9e4, inf or 5.9e306
    # against the tolerance's size there, as small as it was)
    result = gradcheck.check(ZeroButSaysOne, np.array([0.5, -2.0]), seed=0, **tolerances)
    assert result.verdict == "failed"
    assert [e.rel_error for e in result.failure.worst] == [1.0, 1.0]
    assert result.max_rel_error == 1.0


def test_a_forward_that_raised_a_step_away_is_reported_as_that():
    from gradcheck.checking.result import CheckResult, Failure

    raised = CheckResult(
        "failed",
        "op",
        failure=Failure("forward_error", "the forward at a perturbed input raised ValueError"),
    )
    assert stepped_out_of_domain([np.array([1.0 + 1e-9])], raised, {"domain": (1.0, 2.0)})

    class LogRaisesBelowOne(Operation):
        def __call__(self, x):
            if np.any(x.data < 1):
                raise ValueError("below the domain")
            self.variables = (x,)
            return np.log(x.data)

        def backward_var(self, grad, index, **kwargs):
            return grad / self.variables[0].data

    gradcheck.describe(domain="[1:3]")(LogRaisesBelowOne)
    result = verify(LogRaisesBelowOne, max_examples=40, seed=0)
    assert result.passed, result
    assert "output not finite there" not in result.skipped
    assert result.skipped.get("the forward raised near the drawn input", 0) > 0


def test_str_and_report_of_a_check_are_the_command_lines_text():
    result = gradcheck.check(Affine, np.array([1.0, 2.0]), np.array([3.0, -1.0]), seed=0)
    assert str(result) == gradcheck.report(result)
    assert str(result).startswith("gradcheck: ") and "Index" in str(result)
    assert "seed: 0" in str(result)  # check(..., seed=0) replays it
    # Python's assert shows str(result) (pytest's rewriting of a test module's asserts
    # shows a shortened repr instead: there, `assert result.passed, str(result)`)
    with pytest.raises(AssertionError, match=r"mismatch \(input scale\)") as raised:
        exec("assert result.passed, result", {"result": result})
    assert str(raised.value) == str(result)


@pytest.fixture
def ops_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "report_ops.py").write_text(
        "import numpy as np\n"
        "from gradcheck import Operation\n\n"
        "class Affine(Operation):\n"
        "    def __call__(self, logits, scale):\n"
        "        self.variables = (logits, scale)\n"
        "        return logits.data * scale.data\n\n"
        "    def backward_var(self, grad, index, **kwargs):\n"
        "        logits, scale = self.variables\n"
        "        return grad * (scale.data if index == 0 else 2 * logits.data)\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _timeless(text: str) -> str:
    return re.sub(r"calls in [0-9.]+ s", "calls in - s", text)


def test_the_command_line_prints_one_seed_and_what_str_gives(ops_dir):
    out = CliRunner().invoke(
        main, ["verify", "report_ops:Affine", "--max-examples", "20", "--seed", "7"]
    )
    assert out.exit_code == 1, out.output
    # One seed in the report: the run's, which replays it.
    assert set(re.findall(r"seed[:= ]+(\d+)", out.stdout)) == {"7"}, out.stdout
    import report_ops

    result = verify(report_ops.Affine, max_examples=20, seed=7, name="report_ops:Affine")
    replay = "gradcheck verify report_ops:Affine --max-examples 20 --seed 7"
    block = gradcheck.report(result, replay=replay)
    assert _timeless(block) in _timeless(out.stdout)
    assert "Replay: gradcheck verify report_ops:Affine --max-examples 20 --seed 7" in out.stdout
    assert "Replay: gradcheck.verify(report_ops.Affine, seed=7)" in str(result)


def test_the_upstream_gradient_at_order_2_is_drawn_and_shrunk_like_the_inputs():
    torch = pytest.importorskip("torch")

    class WrongSecond(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x.detach()  # the second derivative misses half of 6x

    result = verify(WrongSecond, order=2, max_examples=30, seed=1)
    assert result.verdict == "failed"
    failure = result.failure
    assert failure.input_names == ["x", "v"]
    x, v = failure.inputs
    # v shrank as x did (to the simplest value that still fails), not a Gaussian draw
    assert x.shape == v.shape == () and float(v) == 1.0
    # ...and replays alone, given as the upstream gradient
    again = gradcheck.check(WrongSecond, x, upstream=v, order=2, seed=failure.seed)
    assert again.failure.worst == failure.failure.worst
    assert "upstream=v, order=2" in str(result) or result.worst is failure


def test_check_takes_the_upstream_gradient():
    x = np.array([0.5, -1.0])
    v = np.array([1.0, 0.0])
    result = gradcheck.check(Affine, x, np.array([2.0, 3.0]), upstream=v, seed=3)
    assert result.upstream.tolist() == v.tolist()
    # only the first element's gradient is asked for: the second compares 0 with 0
    assert [e.index for e in result.failure.worst] == [(0,)]
    with pytest.raises(gradcheck.errors.CheckUsageError, match="upstream has the shape"):
        gradcheck.check(Affine, x, x, upstream=np.ones(3))


def test_the_ops_own_exception_text_is_not_renamed():
    def raises(x, y):
        raise ValueError("input 0 must be positive")

    result = gradcheck.check(raises, np.array([1.0]), np.array([2.0]))
    assert result.failure.kind == "forward_error"
    assert "ValueError: input 0 must be positive" in result.failure.message


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_zero_gradient_with_truncation_noise_is_no_relative_error_of_one(seed):
    # x³ at x = 0: the numeric gradient is pure truncation (~1e-29) against an analytic
    # 0. Relative to that noise the error read 1.0 ("100% wrong") on a passing op;
    # relative to what finite differences resolve there (their error estimate, which
    # the tolerance allows) it is a small part of that.
    def cube(x):
        return x**3

    result = gradcheck.check(cube, np.zeros((1, 1, 65)), seed=seed, mode="full")
    assert result.passed
    assert 0 < result.max_abs_error < 1e-20
    assert result.max_rel_error < 0.1
    assert result.max_rel_error <= 1.01 * result.error_ratio


def test_a_wrong_gradient_keeps_its_relative_error():
    def double(x):
        return 2 * x

    class Double(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return double(x.data)

        def backward_var(self, grad, index, **kwargs):
            return 3 * grad

    result = gradcheck.check(Double, np.linspace(-1, 1, 5), seed=0)
    assert not result.passed
    assert abs(result.max_rel_error - 0.5) < 1e-6


class ReadsMemoryOrder(Operation):
    """x**2 times each element's position in C order, right; its backward reads x in
    its memory's order: wrong only on a non-contiguous input, found after the gradient
    comparison passed (``noncontiguous_input``)."""

    def __call__(self, a):
        self.variables = (a,)
        return a.data**2 * np.arange(a.data.size).reshape(a.shape)

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        return 2 * (np.ravel(x, order="K") * np.arange(x.size)).reshape(x.shape) * grad


def test_a_failure_found_after_the_comparison_shows_no_error_not_the_passing_ones():
    from gradcheck.frontend.render import render_table

    result = verify(ReadsMemoryOrder, shapes=["2,3"], max_examples=20, seed=0)
    assert result.failure.failure.kind == "noncontiguous_input"
    table = render_table([result], seed=0, replay=lambda r: "gradcheck verify x")
    row = next(line for line in table.splitlines() if "FAILED" in line)
    # the gradients agreed wherever compared: no "max abs err 0.00e+00" (or 1e-9)
    assert row.split()[4:6] == ["-", "-"], table
    document = json.loads(render_json([result], seed=0, replay=lambda r: "gradcheck verify x"))
    (entry,) = document["targets"]
    for where in (entry, entry["failure"]):
        errors = [where[k] for k in ("max_abs_error", "max_rel_error", "error_ratio")]
        assert errors == ["nan"] * 3, where
    assert entry["failure"]["kind"] == "noncontiguous_input"
    jsonschema = pytest.importorskip("jsonschema")
    from gradcheck import schemas

    jsonschema.validate(document, schemas.load("verify"))


def test_pytest_says_the_runs_errors_as_the_command_lines_table_does():
    from gradcheck.pytest_plugin import format_verify_failure

    result = verify(WrongSoftplus, seed=0)
    head, _, rest = format_verify_failure(result, "pytest x --gradcheck-seed 0").partition("\n")
    errors = f"max abs err {result.max_abs_error:.3g}, max rel err {result.max_rel_error:.3g}"
    assert f"(seed 0); {errors} (the run's)" in head  # (was the seed alone)
    # ...and the report names where each was seen, as the command line's does
    assert rest == failure_block(result, "pytest x --gradcheck-seed 0")


class SinWrongSign(Operation):
    """sin, whose backward has the wrong sign: -cos."""

    def __call__(self, x):
        self.variables = (x,)
        return np.sin(x.data)

    def backward_var(self, grad, index, **kwargs):
        return -grad * np.cos(self.variables[0].data)


def test_a_scalar_outputs_analytic_and_numeric_are_the_derivative_itself():
    # v = 1 for a scalar output: the table shows -cos(0.3) and cos(0.3), not products
    # with a hidden Gaussian draw; the line saying so appears once, with v shown.
    result = gradcheck.check(SinWrongSign, np.array(0.3), seed=0)
    (row,) = result.failure.worst
    assert row.analytic == pytest.approx(-np.cos(0.3)) and row.numeric == pytest.approx(np.cos(0.3))
    assert result.upstream.tolist() == 1.0
    text = str(result)
    assert text.count("Analytic and numeric are") == 1
    assert "it is a scalar, and the upstream gradient v is 1" in text
    assert "v, the upstream gradient (float64[]):\n  1." in text


def test_a_backward_that_ignores_a_scalar_outputs_upstream_gradient_still_fails():
    class IgnoresV(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return np.sum(x.data**2)

        def backward_var(self, grad, index, **kwargs):
            return 2 * self.variables[0].data  # no grad: right at v = 1 only

    result = gradcheck.check(IgnoresV, np.array([0.5, -1.5]), seed=0)
    assert result.verdict == "failed" and result.failure.kind == "nonlinear"


def test_a_search_that_checked_fewer_examples_than_asked_says_so():
    class Raises(Operation):
        def __call__(self, x):
            raise ValueError("nope")

        def backward_var(self, grad, index, **kwargs):
            return grad

    result = verify(Raises, max_examples=5, seed=0)
    assert result.examples == 0 and result.rejected > 5  # Hypothesis's draws, not 5
    first = result.skip_lines[0]
    assert first.startswith("checked 0 of the 5 examples asked: ")
    assert f"the {result.rejected} skipped below are draws besides them" in first
    # where the failure was found (JSON's "found" too): at the first draw of all
    said = f"at the first of {result.rejected} draws: the forward raised at every one"
    assert result.found == said and result.to_dict()["found"] == said
    assert f"Found {said}." in str(result)
    # a run that checked every example asked says nothing of it
    passed = verify(lambda x: gradcheck.abs(x), max_examples=10, seed=0)
    assert passed.examples == 10 and not any("asked" in line for line in passed.skip_lines)


def test_an_order_1_failure_of_an_order_2_check_names_its_own_inputs():
    torch = pytest.importorskip("torch")

    class ScaleWrongForScale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x, scale)
            return torch.sin(x) * scale

        @staticmethod
        def backward(ctx, grad):
            x, scale = ctx.saved_tensors
            return grad * torch.cos(x) * scale, grad * torch.cos(x)  # d/dscale is sin

    result = gradcheck.check(ScaleWrongForScale, np.array(0.3), np.array(1.5), order=2)
    assert result.failure.order == 1
    assert result.input_names == ["x", "scale"] == result.to_dict()["input_names"]
    assert len(result.inputs) == 2


def test_the_junit_failure_is_the_command_lines_report(ops_dir):
    # JUnit's <failure> held the shrunk example only: no "Found", no largest error
    # seen, no Replay line; it is the command line's block now, its note last.
    import xml.etree.ElementTree as ET

    args = ["verify", "report_ops:Affine", "--max-examples", "20", "--seed", "7"]
    out = CliRunner().invoke(main, [*args, "--junit-xml", "r.xml"])
    assert out.exit_code == 1, out.output
    (failure,) = [c.find("failure") for c in ET.parse("r.xml").iter("testcase")]
    text = failure.text
    assert "Found at example" in text
    replay = "Replay: gradcheck verify report_ops:Affine --max-examples 20 --seed 7"
    assert text.rstrip().endswith(replay)
    assert _timeless(text.strip()) in _timeless(out.stdout)


class MeanOfSquaresOverN(Operation):
    """mean(x**2), whose backward divides by the size once more (a JAX user's bug):
    at x = [1, 1], 0.5 where the gradient is 1. Its numbers there are float16's, so
    the tolerance allows for a backward that rounds v to float16 (a few float16 eps)."""

    def __call__(self, x):
        self.variables = (x,)
        return np.mean(x.data**2)

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        return grad * 2 * x / x.size / x.size


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_upstream_rounding_allowance_is_no_size_of_the_gradient(seed):
    # analytic 0.5 against numeric 1 is a relative error of 0.5 (was 1.3e-5: the
    # allowance, 4 float16 eps, over rtol = 1e-7 counted as the gradient's size)
    result = gradcheck.check(MeanOfSquaresOverN, np.array([1.0, 1.0]), seed=seed)
    assert result.verdict == "failed"
    assert [e.rel_error for e in result.failure.worst] == [0.5, 0.5]
    assert result.max_rel_error == 0.5
    assert "Max relative difference: 0.5 " in str(result)


class ExitsAboveOne(Operation):
    """2x, whose forward calls sys.exit above 1 + 1e-7: at x = 1 only a step of the
    finite differences reaches it."""

    def __call__(self, x):
        self.variables = (x,)
        if np.any(x.data > 1 + 1e-7):
            raise SystemExit(0)
        return 2 * x.data

    def backward_var(self, grad, index, **kwargs):
        return 2 * grad


def test_an_op_that_exits_a_step_away_is_reported_as_that():
    # shrunk to x = 1, where the forward runs: the report says the exit came at a
    # perturbed input (was: as if at the example shown, which runs there)
    result = verify(ExitsAboveOne, max_examples=30, seed=0, domain=(0.5, 3.0))
    failure = result.failure.failure
    assert failure.kind == "exited"
    shown = float(np.asarray(result.failure.inputs[0]).max())
    if shown <= 1 + 1e-7:
        assert "at a perturbed input" in failure.message
    else:  # (a draw above 1 exits at the example itself)
        assert "at a perturbed input" not in failure.message
    assert result.failure.input_names == ["x"]


class FadingSquare(Operation):
    """x**2 whose backward fades to 0 as |x| grows: 2x·(1 - min(1, |x|/10)). Its
    relative error is exactly 1 at every |x| >= 10: many examples tie for the worst."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data**2

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        return grad * 2 * x * (1 - np.minimum(1, np.abs(x) / 10))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_tie_for_the_max_rel_err_names_the_example_shown(seed):
    # On a tie, the worst seen (chosen by its error ratio) was one example and the
    # run's max rel err line named another, with the same number (issue 34).
    result = verify(FadingSquare, seed=seed)
    assert result.verdict == "failed" and result.worst is not None
    assert result.worst.max_rel_error == result.max_rel_error == 1.0
    assert result.max_rel_error_at == result.worst_example
    text = str(result)
    assert "Largest error seen (the run's max rel err" in text
    assert "The run's max rel err" not in text


class CubeInFloat32(Operation):
    """x**3 whose backward computes 3x² in float32: right to float32's precision only
    (as a torch backward with ``torch.where(mask, 0.3, -0.7)`` is: Python numbers
    take torch's default dtype)."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data**3

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data.astype(np.float32)
        return grad * (np.float32(3) * x * x).astype(np.float64)


def test_a_float64_mismatch_of_float32_rounding_size_says_what_usually_causes_it():
    x = np.array([0.1, 1.7, -2.3, 0.9])
    result = gradcheck.check(CubeInFloat32, x, seed=0)
    assert result.failure is not None and result.failure.kind == "mismatch"
    assert "float32's rounding size" in str(result)
    assert "torch.where()" in str(result)
    # a gross error is not put down to rounding
    wrong = gradcheck.check(SquareOffByAConstant, x, seed=0)
    assert wrong.failure is not None and "rounding size" not in str(wrong)


class ScaledTanh(Operation):
    """c·tanh(x / c) with the number ``c`` kept out of ``self.variables`` and given no
    gradient, as a parameter: drawn as a tensor for want of a value, it gets none."""

    def __call__(self, x, c):
        self.variables = (x, c)
        return c.data * np.tanh(x.data / c.data)

    def backward_var(self, grad, index, **kwargs):
        x, c = (t.data for t in self.variables)
        if index == 1:
            raise gradcheck.SkipGradient("c is a number")
        return grad * (1 - np.tanh(x / c) ** 2)


def test_an_input_without_gradient_is_said_to_maybe_be_a_parameter_wanting_a_value():
    result = gradcheck.check(ScaledTanh, np.array([0.5, 1.5]), np.array([2.0, 3.0]), seed=0)
    assert result.failure is not None and result.failure.kind == "missing_gradient"
    text = str(result)
    assert "If c is a parameter of the op" in text and "--kwargs '{\"c\": ...}'" in text
    # another kind of failure has no such line
    assert "parameter of the op" not in str(gradcheck.check(Affine, np.ones(2), np.ones(2)))


def test_a_pass_whose_max_rel_err_looks_large_says_why_it_passed():
    # (issue 34: good_gate passed with "8.82e-02" in the max rel err column and
    # nothing else: a reader takes it for a 9% error; it is at an element near 0,
    # within what finite differences resolve there)
    from dataclasses import replace

    from gradcheck.frontend.render import render_table
    from gradcheck.frontend.report import report

    result = verify(lambda x: gradcheck.tanh(x), max_examples=3, seed=0)
    assert result.passed
    looks_bad = replace(result, max_rel_error=0.0882, error_ratio=0.99)
    table = render_table([looks_bad], seed=0, replay=lambda r: "")
    said = "max rel err 8.82e-02 is above rtol 1e-07: at an element that finite differences"
    assert said in table and "error / tolerance at most 0.99 (below 1 passes)" in table
    assert said in report(looks_bad)
    # a pass whose errors are within rtol, as most are, says nothing more
    assert "is above rtol" not in render_table([result], seed=0, replay=lambda r: "")
