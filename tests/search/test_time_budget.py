"""A time budget per target (issue 40 item 3): the search stops drawing new examples
once ``time_budget`` seconds are spent, and says so; a failure found before is shrunk
and reported as always. The op here sleeps in its forward, so that one example spends
more than the budget whatever the machine's speed: the assertions are about what the
result says, never about how long anything took."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import gradcheck as mg
from gradcheck.cli import main
from gradcheck.errors import InvalidDescription
from gradcheck.frontend.report import report

SLOW_OPS = """
import time
import numpy as np
import gradcheck as mg


class SlowSine(mg.Operation):
    def __call__(self, x):
        self.variables = (x,)
        time.sleep(0.02)
        return np.sin(x.data)

    def backward_var(self, grad, index, **kwargs):
        return grad * np.cos(self.variables[0].data)
"""


class SlowSine(mg.Operation):
    """sin, correct, and slow: every forward call sleeps (a check makes several)."""

    def __call__(self, x):
        self.variables = (x,)
        time.sleep(0.02)
        return np.sin(x.data)

    def backward_var(self, grad, index, **kwargs):
        return grad * np.cos(self.variables[0].data)


class SlowWrongSine(SlowSine):
    """The same with a wrong gradient (a factor of 1.1): fails at every input."""

    def backward_var(self, grad, index, **kwargs):
        return 1.1 * grad * np.cos(self.variables[0].data)


def test_a_spent_budget_ends_the_search_and_says_so():
    result = mg.verify(SlowSine, max_examples=100, seed=0, time_budget=0.1)
    assert result.verdict == "passed"
    assert 1 <= result.examples < 100
    assert result.budget_spent
    assert "time budget spent (0.1 s" in result.note
    assert f"after {result.examples} of its 100 examples" in result.note
    # the report of a pass says it too, and so does the JSON document
    assert "Note: time budget spent" in report(result)
    assert "time budget spent" in result.to_dict()["note"]


def test_without_a_budget_nothing_is_cut_short():
    result = mg.verify(lambda x: mg.sin(x), max_examples=20, seed=0)
    assert result.examples == 20 and not result.budget_spent and not result.note


def test_a_failure_found_in_time_is_still_shrunk_and_fails():
    result = mg.verify(SlowWrongSine, max_examples=100, seed=0, time_budget=0.05)
    assert result.verdict == "failed"
    assert result.failure is not None and result.failure.failure.kind == "mismatch"
    assert result.shrink_steps > 0  # shrinking went on after the budget was spent
    assert not result.budget_spent and "time budget" not in result.note


def test_the_budget_is_an_op_setting_too():
    described = mg.describe(time_budget=0.1)(SlowSine)
    try:
        result = mg.verify(described, max_examples=100, seed=0)
    finally:
        del SlowSine.__gradcheck__
    assert result.budget_spent and result.settings["time_budget"] == 0.1


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan"), "ten", True, 1e9])
def test_a_budget_that_is_not_a_positive_number_of_seconds_is_refused(bad):
    with pytest.raises(InvalidDescription, match="time_budget"):
        mg.verify(lambda x: mg.sin(x), max_examples=2, seed=0, time_budget=bad)
    with pytest.raises(InvalidDescription, match="time_budget"):
        mg.describe(time_budget=bad)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_command_line_and_the_config_file_take_the_budget(workdir: Path):
    (workdir / "slow_ops.py").write_text(SLOW_OPS)
    args = ["verify", "slow_ops:SlowSine", "--seed", "0", "--format", "json"]
    result = CliRunner().invoke(main, [*args, "--time-budget", "0.1"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (target,) = json.loads(result.stdout)["targets"]
    assert target["settings"]["time_budget"] == 0.1
    assert target["examples"] < 100 and "time budget spent" in target["note"]

    (workdir / "pyproject.toml").write_text("[tool.gradcheck]\ntime-budget = 0.1\n")
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (target,) = json.loads(result.stdout)["targets"]
    assert target["settings"]["time_budget"] == 0.1 and "time budget spent" in target["note"]


def test_a_bad_budget_on_the_command_line_is_one_line_and_exit_2(workdir: Path):
    result = CliRunner().invoke(main, ["verify", "--time-budget", "0"])
    assert result.exit_code == 2
    assert "--time-budget" in result.output and "positive number of seconds" in result.output


@pytest.mark.parametrize("quiet", [[], ["-q"]])
def test_the_table_says_a_pass_stopped_at_its_budget(workdir: Path, quiet: list[str]):
    # a pass that checked fewer examples than asked is said in the text output too
    # (with -q as well), not only in JSON
    (workdir / "slow_ops.py").write_text(SLOW_OPS)
    args = ["verify", "slow_ops:SlowSine", "--seed", "0", "--time-budget", "0.1", *quiet]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "slow_ops:SlowSine: time budget spent" in result.stdout


def test_the_verify_fixture_warns_when_a_pass_stopped_at_its_budget():
    from gradcheck.pytest_plugin import _warn_if_budget_spent

    result = mg.verify(SlowSine, max_examples=100, seed=0, time_budget=0.1)
    with pytest.warns(UserWarning, match="time budget spent"):
        _warn_if_budget_spent(result)
