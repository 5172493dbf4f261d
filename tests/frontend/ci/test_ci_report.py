"""JUnit XML and GitHub Actions annotations: valid, escaped, one entry per target."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from gradcheck.frontend.ci_report import escape_data, escape_property, github_annotations, junit_xml
from gradcheck.search.verifier import VerifyResult


def unescape(text: str, prop: bool) -> str:
    # The runner's reverse mapping; %25 last, so "%253A" stays "%3A".
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if prop else [])
    for code, char in [*pairs, ("%25", "%")]:
        text = text.replace(code, char)
    return text


@given(st.text())
def test_escaping_round_trips_and_leaves_no_separator(text) -> None:
    data, prop = escape_data(text), escape_property(text)
    assert "\n" not in data and "\r" not in data
    assert ":" not in prop and "," not in prop and "\n" not in prop
    assert unescape(data, prop=False) == text
    assert unescape(prop, prop=True) == text


def result(target, note="", verdict="inconclusive"):
    return VerifyResult(
        target=target,
        passed=verdict == "passed",
        verdict=verdict,
        examples=0,
        rejected=3,
        skipped={"not differentiable there": 3},
        failure=None,
        max_abs_error=math.nan,
        max_rel_error=math.nan,
        error_ratio=math.nan,
        seconds=0.25,
        seed=1,
        note=note,
    )


def test_annotation_lines() -> None:
    nasty = "50% of <x> & y:\r\nz, w"
    lines = github_annotations(
        [result("m:Op", note=nasty), result("m:Ok", verdict="passed")],
        regressions={"m:Ok": "error ratio grew"},
        new=["m:New"],
        locations={"m:Op": ("src/m.py", 12)},
    )
    assert lines[0] == (
        "::error file=src/m.py,line=12,title=gradcheck%3A m%3AOp inconclusive::"
        "m:Op: inconclusive%0ANote: 50%25 of <x> & y:%0D%0Az, w"
    )
    assert lines[1] == "::error title=gradcheck%3A m%3AOk regressed::m:Ok: error ratio grew"
    assert lines[2] == "::notice title=gradcheck::m:New: not in the baseline"


def test_junit_is_valid_xml_whatever_the_text() -> None:
    nasty = 'a <b> & "c" \x1b[31m\x00 ok'
    data = junit_xml(
        [result("pkg.mod:Op", note=nasty), result("m:Fine", verdict="passed")],
        seed=5,
        regressions={"m:Fine": "grew <a lot>"},
    )
    root = ET.fromstring(data)
    cases = list(root.iter("testcase"))
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("pkg.mod", "Op"),
        ("m", "Fine"),
    ]
    failure = cases[0].find("failure")
    assert failure.get("type") == "inconclusive"
    assert 'a <b> & "c" \ufffd[31m\ufffd ok' in failure.text
    assert cases[1].find("failure").get("type") == "regression"
    assert root.find("testsuite").get("failures") == "2"
    assert cases[0].find("system-out").text.startswith("3 examples skipped")


def test_the_summary_line_gives_the_runs_own_time_and_the_targets_beside_it() -> None:
    # with a job per core the targets' seconds add up to more than the run took: the
    # summary says what the user waited, and the summed time beside it
    from gradcheck.frontend.render import _summary

    two = [result("m:a", verdict="passed"), result("m:b", verdict="passed")]
    assert _summary(two, seed=1) == "2 passed in 0.50 s (seed 1)"
    assert _summary(two, seed=1, elapsed=0.25) == (
        "2 passed in 0.25 s (seed 1; 0.50 s of targets' time, run side by side)"
    )
    assert _summary(two, seed=1, elapsed=1.0) == "2 passed in 1.00 s (seed 1)"
