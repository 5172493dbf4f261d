"""The HTML report (issue 37, item 8): `--html PATH` (or `html` in [tool.gradcheck])
writes one self-contained page with every target and, per failure, the report, the
error-against-step and analytic-against-numeric charts (inline SVG), the shrunk input
and the replay command; tested as a file and in a real headless Chromium."""

from __future__ import annotations

import math
import os
import re
import shlex
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from gradcheck.cli import main
from gradcheck.frontend.html_report import html_report
from gradcheck.frontend.svg import Series, chart
from gradcheck.search.verifier import VerifyResult
from tests.support import browser

OPS = """import numpy as np
import gradcheck as mg

@mg.describe(shapes=["3,4"])
class Cube(mg.Operation):          # d(x³)/dx is 3x², not 2x²
    def __call__(self, x):
        self.variables = (x,)
        return x.data ** 3

    def backward_var(self, grad, index, **kwargs):
        return grad * 2 * self.variables[0].data ** 2

@mg.describe(shapes=["3,4"])
class Sin(mg.Operation):           # 0.1% too large
    def __call__(self, x):
        self.variables = (x,)
        return np.sin(x.data)

    def backward_var(self, grad, index, **kwargs):
        return grad * np.cos(self.variables[0].data) * 1.001

@mg.describe(shapes=["3,4", "3,4"])
class Mul(mg.Operation):           # the gradient of b is a + 1
    def __call__(self, a, b):
        self.variables = (a, b)
        return a.data * b.data

    def backward_var(self, grad, index, **kwargs):
        a, b = self.variables
        return grad * (b.data if index == 0 else a.data + 1)

class Double(mg.Operation):        # right
    def __call__(self, x):
        self.variables = (x,)
        return 2 * x.data

    def backward_var(self, grad, index, **kwargs):
        return 2 * grad
"""
TARGETS = ["html_ops:Cube", "html_ops:Sin", "html_ops:Mul", "html_ops:Double"]
RUN = ["--max-examples", "20", "--seed", "3", "--domain", "0.5:2"]


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def report(workdir: Path) -> Path:
    (workdir / "html_ops.py").write_text(OPS)
    result = run("verify", "html_ops", *RUN, "--html", "out/report.html")
    assert result.exit_code == 1, result.output
    assert "3 failed" in result.stdout
    return workdir / "out" / "report.html"


def sections(page: str) -> list[str]:
    return re.findall(r'<section class="target failure".*?</section>', page, re.S)


def test_three_failures_give_three_sections_with_their_charts(report: Path) -> None:
    page = report.read_text()
    assert report.stat().st_size < 2_000_000
    for target in TARGETS:
        assert f"<code>{target}</code>" in page or f">{target}</a></code>" in page
    found = sections(page)
    assert len(found) == 3
    for section, name in zip(found, TARGETS):
        assert f"{name}: " in section and "failed: mismatch (input" in section
        assert section.count("<svg") == 2 and "not drawn" not in section
        assert "Finite-difference error against step size" in section
        assert "element by element" in section
        (replay,) = re.findall(r'<pre class="replay"><code>(.*?)</code>', section)
        assert replay.startswith(f"gradcheck verify {name} ") and "--seed" in replay
        arg = {"html_ops:Mul": "b"}.get(name, "x")  # the input whose gradient is wrong
        assert f"mismatch (input {arg})" in section
        assert f"{arg} (float64[3, 4])" in section  # the shrunk input, in full, by name
    # nothing loads from anywhere: no script, no link, no source but inline data
    assert "<script" not in page and "<link" not in page and "src=" not in page
    assert set(re.findall(r"https?://[^\s\"'<]+", page)) == {"http://www.w3.org/2000/svg"}


def test_the_replay_command_of_the_page_replays_the_failure(report: Path) -> None:
    (replay,) = re.findall(
        r'<pre class="replay"><code>(gradcheck verify html_ops:Cube .*?)</code>', report.read_text()
    )
    again = run(*shlex.split(replay.replace("&#x27;", "'"))[1:])
    assert again.exit_code == 1 and "html_ops:Cube failed" in again.stdout


def test_the_config_key_writes_the_report_next_to_the_config(workdir: Path) -> None:
    (workdir / "html_ops.py").write_text(OPS)
    (workdir / "pyproject.toml").write_text(
        '[tool.gradcheck]\nhtml = "reports/gradcheck.html"\nmax-examples = 5\n'
        'domain = "0.5:2"\n[[tool.gradcheck.targets]]\ntarget = "html_ops:Double"\n'
    )
    (workdir / "sub").mkdir()
    os.chdir(workdir / "sub")  # the path is the config file's folder's, not the cwd's
    assert run("verify").exit_code == 0
    page = (workdir / "reports" / "gradcheck.html").read_text()
    assert "1 passed" in page and "<code>html_ops:Double</code>" in page
    assert sections(page) == []
    assert run("verify", "--html", "here.html").exit_code == 0  # the option wins
    assert (workdir / "sub" / "here.html").exists()


def test_a_bad_html_key_or_path_is_one_line_before_the_run(workdir: Path) -> None:
    (workdir / "f.txt").write_text("x")
    result = run("verify", "user_ops:Square", "--html", "f.txt/report.html")
    assert result.exit_code == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "HTML report" in result.stderr
    (workdir / "pyproject.toml").write_text("[tool.gradcheck]\nhtml = 3\n")
    result = run("verify", "user_ops:Square")
    assert result.exit_code == 2 and "key 'html' must be a file path" in result.stderr


def test_an_op_that_cannot_be_run_again_still_gets_its_section() -> None:
    from gradcheck.checking.result import CheckResult, Failure

    check = CheckResult(
        "failed", "m:Op", Failure("mismatch", "differs", input=0), inputs=[np.ones(3)]
    )
    result = VerifyResult("m:Op", False, "failed", 1, 0, check, 1.0, 1.0, 2.0, 0.1, 7)

    def broken(x):
        raise RuntimeError("not twice")

    from gradcheck.frontend.html_report import _charts

    # the charts are drawn in the worker (they run the op again): each says why not
    page = html_report(
        [result],
        seed=7,
        replay=lambda r: "gradcheck verify m:Op --seed 7",
        charts={"m:Op": _charts(check, broken)},
    )
    (section,) = sections(page)
    assert section.count("not drawn: RuntimeError: not twice") == 2
    assert "gradcheck verify m:Op --seed 7" in section
    # and a worker that could not draw them at all: the section says so
    page = html_report([result], seed=7, replay=lambda r: "r", charts={})
    (section,) = sections(page)
    assert "charts not drawn" in section and '<pre class="replay">' in section


def test_a_chart_leaves_out_what_a_log_axis_cannot_show() -> None:
    svg = chart(
        [Series("s", [1e-8, 1e-4, 1.0, 10.0], [0.0, 1e-3, math.nan, 2.0], "#000")],
        title="t",
        xlabel="x",
        ylabel="y",
        log_x=True,
        log_y=True,
    )
    assert svg.count("<circle") == 2 and "1e-4" in svg
    empty = chart(
        [Series("s", [1.0], [0.0], "#000")], title="t", xlabel="x", ylabel="y", log_y=True
    )
    assert "no point to draw" in empty


@pytest.mark.skipif(
    browser.chromium() is None, reason="chromium is not installed (apt-get install chromium)"
)
def test_the_page_in_headless_chromium(report: Path) -> None:
    artifacts = Path(os.environ.get("GRADCHECK_ARTIFACTS") or report.parent)
    artifacts.mkdir(parents=True, exist_ok=True)
    with browser.Page(browser.chromium()) as page:
        page.open(report.resolve().as_uri())
        shown = page.evaluate(
            """(() => {
              const box = (e) => { const r = e.getBoundingClientRect();
                const s = getComputedStyle(e);
                return {w: r.width, h: r.height, visible: s.visibility === 'visible'
                        && s.display !== 'none' && s.opacity !== '0'}; };
              return {
                rows: [...document.querySelectorAll('table.targets tbody tr td:first-child')]
                        .map(td => td.textContent),
                failures: [...document.querySelectorAll('section.failure')].map(s => ({
                  title: s.querySelector('h2').textContent,
                  charts: [...s.querySelectorAll('svg')].map(box),
                  points: s.querySelectorAll('svg circle').length,
                  replay: s.querySelector('pre.replay').textContent})),
              };
            })()"""
        )
        shot = page.screenshot(artifacts / "gradcheck-report.png")
        assert page.console_errors() == []
    assert shown["rows"] == TARGETS
    assert [f["title"].split(":")[:2] for f in shown["failures"]] == [
        t.split(":") for t in TARGETS[:3]
    ]
    for failure in shown["failures"]:
        assert len(failure["charts"]) == 2
        for box in failure["charts"]:
            assert box["w"] > 0 and box["h"] > 0 and box["visible"], failure
        assert failure["points"] > 12  # the step curve's points and the 12 elements'
        assert failure["replay"].startswith("gradcheck verify html_ops:")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
