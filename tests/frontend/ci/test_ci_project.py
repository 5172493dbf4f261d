"""`gradcheck verify` in a project with a [tool.gradcheck] block: the configured run,
baselines, JUnit, GitHub annotations and --jobs, through click's test runner."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import gradcheck
from gradcheck.cli import main
from tests.support.ci_project import make_project


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield from make_project(tmp_path, monkeypatch)


def run(*args: str):
    return CliRunner().invoke(main, ["verify", *args], catch_exceptions=False)


def document(*args: str) -> dict:
    result = run(*args, "--format", "json")
    return {"exit_code": result.exit_code, **json.loads(result.stdout)}


def test_the_configured_targets_run_with_their_settings(project: Path) -> None:
    doc = document()
    assert doc["exit_code"] == 0
    assert doc["seed"] == 11  # the configuration's default seed
    sin, square = doc["targets"]
    assert (sin["target"], square["target"]) == ("ops:Sin", "ops:Square")
    assert sin["settings"]["domain"] == [-3.0, 3.0]
    assert square["settings"]["shapes"] == ["3,4"]
    assert sin["examples"] == square["examples"] == 6
    assert square["failure"] is None


def test_options_override_the_file_and_named_targets_keep_their_entry(project: Path) -> None:
    doc = document("ops:Square", "--max-examples", "3", "--seed", "5")
    (square,) = doc["targets"]
    assert square["examples"] == 3 and square["seed"] == 5
    assert square["settings"]["shapes"] == ["3,4"]  # from its entry in the file
    assert square["replay"] == "gradcheck verify ops:Square --max-examples 3 --seed 5"


def test_a_broken_backward_fails_with_exit_1(project: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPS_BREAK", "1")
    result = run()
    assert result.exit_code == 1
    assert "ops:Square  FAILED" in result.stdout
    assert "1 passed, 1 failed" in result.stdout


def test_from_a_sub_package_with_its_own_pyproject_the_project_file_is_used(
    project: Path, monkeypatch
) -> None:
    sub = project / "sub"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[project]\nname = "sub"\n[tool.ruff]\nline-length = 90\n')
    monkeypatch.chdir(sub)
    result = run("--max-examples", "2")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"config: {project.resolve() / 'pyproject.toml'}"  # the file it used
    # (a line per target as it finishes: with a job per core, in either order)
    assert sorted(line.split()[1] for line in lines[1:3]) == ["ops:Sin", "ops:Square"]


def test_another_config_file(project: Path) -> None:
    other = project / "ci.toml"
    other.write_text('max-examples = 2\nseed = 4\n[[targets]]\ntarget = "ops:Sin"\n')
    doc = document("--config", str(other))
    assert [t["target"] for t in doc["targets"]] == ["ops:Sin"]
    assert doc["targets"][0]["examples"] == 2 and doc["seed"] == 4


def test_without_config_or_target_the_builtin_default_runs(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no pyproject.toml here or above /tmp
    from gradcheck.cli import plan_run
    from gradcheck.frontend.config import load_config

    assert load_config() is None
    names = [item.target.name for item in plan_run([], None)]
    assert names and all(n.startswith("gradcheck.builtin_targets:") for n in names)


# --- baselines ----------------------------------------------------------------------


def test_a_doubled_error_under_tolerance_is_a_regression(project: Path, monkeypatch) -> None:
    saved = run("--save-baseline", "base.json")
    assert saved.exit_code == 0, saved.output
    base = json.loads((project / "base.json").read_text())
    sin = base["targets"]["ops:Sin"]
    assert 0.05 < sin["error_ratio"] < 0.5 and sin["seed"] == 11
    assert sin["settings"]["max_examples"] == 6 and sin["verdict"] == "passed"

    same = run("--baseline", "base.json")
    assert same.exit_code == 0, same.output
    assert "baseline: 0 regressions in 2 compared targets" in same.stdout

    monkeypatch.setenv("OPS_SIN_K", "40")  # twice the error; still passes
    worse = run("--baseline", "base.json")
    assert worse.exit_code == 1
    assert "2 passed" in worse.stdout
    assert "regression: ops:Sin: error ratio grew from" in worse.stdout
    assert "(x2, more than x1.5)" in worse.stdout
    # A larger factor (flag over file) lets it through.
    assert run("--baseline", "base.json", "--regression-factor", "2.5").exit_code == 0


def test_the_factor_comes_from_the_config(project: Path, monkeypatch) -> None:
    assert run("--save-baseline", "base.json").exit_code == 0
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace("seed = 11", "seed = 11\nregression-factor = 3")
    )
    monkeypatch.setenv("OPS_SIN_K", "40")
    doc = document("--baseline", "base.json")
    assert doc["exit_code"] == 0
    assert doc["baseline"]["regression_factor"] == 3 and doc["baseline"]["regressions"] == []


def test_a_target_that_now_fails_regresses_and_new_ones_are_reported(
    project: Path, monkeypatch
) -> None:
    assert run("ops:Square", "--save-baseline", "base.json").exit_code == 0
    monkeypatch.setenv("OPS_BREAK", "1")
    doc = document("--baseline", "base.json")
    assert doc["exit_code"] == 1
    assert doc["baseline"]["regressions"] == [
        {"target": "ops:Square", "reason": "passed in the baseline, failed now"}
    ]
    assert doc["baseline"]["new"] == ["ops:Sin"]
    monkeypatch.delenv("OPS_BREAK")
    text = run("ops:Sin", "--baseline", "base.json")
    assert text.exit_code == 0  # new and vanished targets are not failures
    assert "new: ops:Sin: not in the baseline (not a failure)" in text.stdout
    assert "vanished: ops:Square: in the baseline but not run (not a failure)" in text.stdout


def test_the_baseline_seed_is_reused(project: Path) -> None:
    assert run("--seed", "99", "--save-baseline", "base.json").exit_code == 0
    doc = document("--baseline", "base.json")
    assert doc["seed"] == 99 and {t["seed"] for t in doc["targets"]} == {99}
    assert document("--baseline", "base.json", "--seed", "3")["seed"] == 3


def test_changed_settings_are_reported_not_failed(project: Path) -> None:
    assert run("--save-baseline", "base.json").exit_code == 0
    result = run("--baseline", "base.json", "--max-examples", "3")
    assert result.exit_code == 0
    assert "settings changed: ops:Sin: max_examples differ from the baseline's" in result.stdout


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"targets": {}}', "not a gradcheck baseline"),
        ('{"gradcheck_baseline": 7, "seed": 1, "targets": {}}', "baseline version 7"),
        ('{"gradcheck_baseline": 1, "seed": "x", "targets": {}}', "needs an integer 'seed'"),
        (
            '{"gradcheck_baseline": 1, "seed": 1, "targets": {"ops:Sin": {"verdict": "passed"}}}',
            "target 'ops:Sin' has no valid 'passed'",
        ),
    ],
)
def test_a_malformed_baseline_is_one_line_exit_2(project: Path, text, message) -> None:
    (project / "base.json").write_text(text)
    result = run("--baseline", "base.json")
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("Error: base.json: ") and message in line


def test_a_missing_baseline_is_one_line_exit_2(project: Path) -> None:
    result = run("--baseline", "nope.json")
    assert result.exit_code == 2 and "nope.json: cannot read the baseline" in result.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("max-examples = 0", "key 'max-examples' must be an integer >= 1, got 0"),
        ("mood = 'fast'", "unknown key 'mood' (did you mean 'mode'?)"),
        ("[[tool.gradcheck.targets]]\nshapes = ['3']", "targets entry 1 needs a 'target' key"),
    ],
)
def test_a_malformed_config_is_one_line_exit_2(project: Path, text, message) -> None:
    (project / "pyproject.toml").write_text(f"[tool.gradcheck]\n{text}\n")
    result = run()
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert "pyproject.toml: [tool.gradcheck]" in line and message in line


def test_a_config_naming_a_missing_op_is_a_load_error(project: Path) -> None:
    (project / "pyproject.toml").write_text('[[tool.gradcheck.targets]]\ntarget = "ops:Tan"\n')
    result = run()
    assert result.exit_code == 2 and "Tan" in result.stderr


def test_bad_regression_factor(project: Path) -> None:
    result = run("--regression-factor", "0.9")
    assert result.exit_code == 2 and "'--regression-factor'" in result.stderr


# --- reports ------------------------------------------------------------------------


def test_junit_xml_has_one_testcase_per_target(project: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPS_BREAK", "1")
    assert run("--junit-xml", "report.xml").exit_code == 1
    root = ET.parse(project / "report.xml").getroot()
    (suite,) = root.iter("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {"Sin", "Square"}
    assert all(c.get("classname") == "ops" and float(c.get("time")) >= 0 for c in cases.values())
    assert cases["Sin"].find("failure") is None
    failure = cases["Square"].find("failure")
    assert failure.get("type") == "failed" and "mismatch" in failure.get("message")
    assert "Index" in failure.text and "input x" in failure.text


def test_junit_marks_a_regression(project: Path, monkeypatch) -> None:
    assert run("--save-baseline", "base.json").exit_code == 0
    monkeypatch.setenv("OPS_SIN_K", "40")
    assert run("--baseline", "base.json", "--junit-xml", "r.xml").exit_code == 1
    cases = {c.get("name"): c for c in ET.parse(project / "r.xml").iter("testcase")}
    assert cases["Sin"].find("failure").get("type") == "regression"


def test_github_annotations_when_on_actions(project: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPS_BREAK", "1")
    assert not any(line.startswith("::") for line in run().stdout.splitlines())
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = run()
    (line,) = [x for x in result.stdout.splitlines() if x.startswith("::")]
    head, sep, message = line.partition("::")[2].partition("::")
    assert sep and head.startswith("error ")
    props = dict(p.split("=", 1) for p in head[len("error ") :].split(","))
    assert props["title"] == "gradcheck%3A ops%3ASquare failed"
    assert props["file"] == "ops.py" and int(props["line"]) > 1
    assert "%0A" in message and "\r" not in message
    # With JSON, annotations go to stderr and stdout stays one document.
    doc = run("--format", "json")
    json.loads(doc.stdout)
    assert doc.stderr.splitlines()[-1].startswith("::error ")  # after the lines per target


def test_jobs_2_gives_the_same_json_as_jobs_1(project: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPS_BREAK", "1")  # a failure (with its shrinking) too

    def without_timings(doc: dict) -> dict:
        for t in doc["targets"]:
            t.pop("seconds")
            for check in ("failure", "worst_seen"):
                if t.get(check):
                    t[check].pop("seconds", None)
        return doc

    serial = without_timings(document("--jobs", "1"))
    parallel = without_timings(document("--jobs", "2"))
    assert serial["exit_code"] == 1
    assert_same_document(parallel, serial)


def assert_same_document(got: Any, expected: Any, where: str = "") -> None:
    """Equal, except that floats need only agree to 1%: NumPy's vectorised loops round
    differently with the memory alignment of their arrays, which depends on what a
    process allocated before, and error estimates (differences of nearly equal
    finite differences) amplify that in their last digits. Same examples, same
    verdicts, same failing input: everything else is exact."""
    if isinstance(expected, float) and isinstance(got, float):
        assert math.isclose(got, expected, rel_tol=1e-2, abs_tol=1e-300), where
    elif isinstance(expected, dict):
        assert isinstance(got, dict) and got.keys() == expected.keys(), where
        for key in expected:
            assert_same_document(got[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same_document(g, e, f"{where}[{i}]")
    else:
        assert got == expected, where


def test_settings_that_do_not_fit_the_op_name_the_file(project: Path) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        '[[tool.gradcheck.targets]]\ntarget = "ops:Square"\nmax-examples = 2\n'
        '[[tool.gradcheck.targets]]\ntarget = "ops:Sin"\nshapes = ["3", "2"]\n'
    )
    for jobs in ("1", "2"):  # the error comes back from a worker process the same way
        result = run("--jobs", jobs)
        assert result.exit_code == 2
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"Error: ops:Sin: invalid shapes in {pyproject}: got 2 shapes")


def test_the_baseline_records_the_versions_and_warns_when_they_differ(project: Path) -> None:
    import platform

    import hypothesis
    import numpy

    assert run("--save-baseline", "base.json").exit_code == 0
    saved = json.loads((project / "base.json").read_text())
    assert saved["versions"] == {
        "gradcheck": gradcheck.__version__,
        "hypothesis": hypothesis.__version__,
        "numpy": numpy.__version__,
        "python": platform.python_version(),
    }
    same = CliRunner().invoke(main, ["verify", "--baseline", "base.json"])
    assert same.exit_code == 0 and "Warning" not in same.stderr
    saved["versions"]["hypothesis"] = "6.100.0"
    (project / "base.json").write_text(json.dumps(saved))
    other = CliRunner().invoke(main, ["verify", "--baseline", "base.json"])
    assert other.exit_code == 0  # a warning, not a failure
    (warning,) = [line for line in other.stderr.splitlines() if line.startswith("Warning")]
    assert f"hypothesis 6.100.0 -> {hypothesis.__version__}" in warning
    assert "base.json" in warning and "--save-baseline" in warning
