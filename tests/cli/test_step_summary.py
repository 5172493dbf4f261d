"""The GitHub job summary (issue 37, item 7): with GITHUB_STEP_SUMMARY set, a run appends
a Markdown table of its targets, the failures with their replay commands, and the
regressions against the baseline."""

from __future__ import annotations

import math
import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from gradcheck.cli import main
from gradcheck.frontend.ci_report import job_summary
from gradcheck.search.verifier import VerifyResult

FAST = ["--max-examples", "5", "--seed", "1"]
SCALE = """import gradcheck as mg

class Scale(mg.Operation):
    def __call__(self, x):
        self.variables = (x,)
        return 3 * x.data

    def backward_var(self, grad, index, **kwargs):
        return grad * FACTOR

FACTOR = {factor}
"""


def run(*args: str, summary: Path | str):
    env = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTIONS": None}
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def rows(markdown: str) -> dict[str, list[str]]:
    # the target table: target -> its other cells
    found = {}
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("| `") and len(cells) == 5:
            found[cells[0].strip("`")] = cells[1:]
    return found


def test_the_summary_tables_every_target_and_replays_each_failure(workdir: Path) -> None:
    summary = workdir / "summary.md"
    summary.write_text("earlier step\n")
    result = run("verify", "user_ops:Square", "user_ops:WrongSquare", *FAST, summary=summary)
    assert result.exit_code == 1
    text = summary.read_text()
    assert text.startswith("earlier step\n### gradcheck: 1 passed, 1 failed in ")  # appended
    table = rows(text)
    assert set(table) == {"user_ops:Square", "user_ops:WrongSquare"}
    assert table["user_ops:Square"][0] == "✅ passed" and table["user_ops:Square"][1] == "5"
    assert table["user_ops:WrongSquare"][0] == "❌ failed"
    assert re.fullmatch(r"\d\.\d\de[-+]\d\d \(error/tol \S+\)", table["user_ops:WrongSquare"][2])
    assert re.fullmatch(r"\d+\.\d\d s", table["user_ops:WrongSquare"][3])
    failures = text.split("#### Failures", 1)[1]
    assert "user_ops:Square" not in failures and "mismatch (input x)" in failures
    (replay,) = re.findall(r"```text\n(gradcheck verify .*)\n```", failures)
    again = CliRunner().invoke(main, shlex.split(replay)[1:], catch_exceptions=False)
    assert again.exit_code == 1 and "WrongSquare" in again.output  # the command replays it


def test_the_summary_lists_the_regressions_against_the_baseline(workdir: Path) -> None:
    (workdir / "scale_ops.py").write_text(SCALE.format(factor=3))
    assert run("verify", "scale_ops:Scale", *FAST, "--save-baseline", "base.json", summary="")
    (workdir / "scale_ops.py").write_text(SCALE.format(factor=2.5))
    summary = workdir / "summary.md"
    result = run("verify", "scale_ops:Scale", *FAST, "--baseline", "base.json", summary=summary)
    assert result.exit_code == 1
    text = summary.read_text()
    assert rows(text)["scale_ops:Scale"][0] == "❌ failed (regressed)"
    regressions = text.split("#### Regressions against the baseline", 1)[1]
    assert re.search(r"^\| `scale_ops:Scale` \| .*passed.* \|$", regressions, re.M), regressions


def test_no_variable_no_summary(workdir: Path) -> None:
    result = run("verify", "user_ops:Square", *FAST, summary="")
    assert result.exit_code == 0 and not list(workdir.glob("*.md"))


def test_an_unwritable_summary_is_one_error_line_after_the_report(workdir: Path) -> None:
    result = run("verify", "user_ops:Square", *FAST, summary=workdir / "no" / "dir" / "s.md")
    assert result.exit_code == 2
    assert "1 passed" in result.stdout  # the run's report is still printed
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("Error: GITHUB_STEP_SUMMARY ") and "cannot append" in line


def test_markdown_special_characters_stay_in_their_cell() -> None:
    r = VerifyResult(
        "m:A|B", False, "inconclusive", 0, 4, None, math.nan, math.nan, math.nan, 0.1, 1
    )
    r.note = "every example was skipped"
    text = job_summary(
        [r],
        seed=1,
        replay=lambda _: "gradcheck verify 'm:A|B' --seed 1",
        regressions={"m:A|B": "was passed | now inconclusive"},
    )
    assert "| `m:A\\|B` | ⚠️ inconclusive (regressed) | 0 | - | 0.10 s |" in text
    assert "| `m:A\\|B` | was passed \\| now inconclusive |" in text
    assert "every example was skipped" in text.split("#### Failures")[1]
