"""verify's cost model (issues 25, 40): large examples screened by fast mode along one
direction, then over groups where that does not pass them tightly, full mode where the
screen does not pass one and for small ones; what it still catches."""

from __future__ import annotations

from gradcheck.checking import checker
from gradcheck.checking.result import CheckResult, InputErrors
from gradcheck.search.example_check import PROJECTION_TIGHTNESS, projected_pass
from gradcheck.search.verifier import SCREEN_GROUP_SIZE, verify
from tests.support.helpers import load_example

_xtanh = load_example("xtanh")
XTanh, XTanhOneOff = _xtanh.XTanh, _xtanh.XTanhOneOff


# -- which mode each example gets ----------------------------------------------------------
def _modes_used(monkeypatch) -> list[tuple[str, int | None]]:
    seen: list[tuple[str, int | None]] = []
    real = checker.check

    def spy(*args, **kwargs):
        result = real(*args, **kwargs)
        seen.append((result.settings["mode"], result.settings.get("group_size")))
        return result

    monkeypatch.setattr(checker, "check", spy)
    return seen


def test_verify_screens_large_examples_by_one_direction_then_groups(monkeypatch) -> None:
    """Each large example is first judged along one direction (4 forward calls at
    most); the groups' screen (2 calls per group of 128) only where that does not
    pass it tightly."""
    seen = _modes_used(monkeypatch)
    calls: list[int] = []
    real = checker.check

    def counted(*args, **kwargs):
        result = real(*args, **kwargs)
        calls.append(result.forward_calls)
        return result

    monkeypatch.setattr(checker, "check", counted)
    result = verify(XTanh, shapes=["40,50"], max_examples=20, seed=0)
    assert result.passed and result.examples == 20
    assert set(seen) <= {("fast", None), ("fast", SCREEN_GROUP_SIZE)}
    assert seen.count(("fast", None)) == 20
    assert seen.count(("fast", SCREEN_GROUP_SIZE)) <= 2
    # 2000 elements: the groups' screen alone made 32 forward calls an example
    assert sum(calls) < 20 * 16


def _result(verdict: str, *ratios_sizes: tuple[float, int]) -> CheckResult:
    per_input = [
        InputErrors(i, 0.0, 0.0, ratio, 0, size) for i, (ratio, size) in enumerate(ratios_sizes)
    ]
    return CheckResult(verdict, "op", per_input=per_input)


def test_one_direction_passes_an_example_only_within_one_elements_tolerance() -> None:
    tight = PROJECTION_TIGHTNESS
    assert projected_pass(_result("passed", (0.9 * tight / 40, 1600)))
    assert projected_pass(_result("passed", (0.0, 2000), (0.5 * tight, 1)))
    assert not projected_pass(_result("passed", (1.1 * tight / 40, 1600)))
    assert not projected_pass(_result("passed", (0.0, 2000), (1.1 * tight, 1)))
    assert not projected_pass(_result("passed", (float("nan"), 2000)))
    assert not projected_pass(_result("passed"))
    for verdict in ("failed", "not differentiable", "inconclusive"):
        assert not projected_pass(_result(verdict, (0.0, 2000)))


def test_an_atol_given_skips_the_one_direction(monkeypatch) -> None:
    """An absolute atol does not bound how far the elements' tolerances spread, on
    which the one direction's tightness rests: the groups' screen alone."""
    seen = _modes_used(monkeypatch)
    assert verify(XTanh, shapes=["40,50"], max_examples=5, seed=0, atol=1e-7).passed
    assert seen and set(seen) == {("fast", SCREEN_GROUP_SIZE)}


def test_verify_checks_small_examples_in_full(monkeypatch) -> None:
    seen = _modes_used(monkeypatch)
    assert verify(XTanh, shapes=["4,5"], max_examples=10, seed=0).passed
    assert seen and set(seen) == {("full", None)}


def test_verify_finds_a_relative_1e_6_error_in_one_of_2000_elements(monkeypatch) -> None:
    seen = _modes_used(monkeypatch)
    result = verify(XTanhOneOff, shapes=["40,50"], max_examples=100, seed=1)
    assert result.verdict == "failed"
    report = result.failure
    assert report.settings["mode"] == "full"  # the report is full mode's
    assert report.failure.worst[0].index == (30, 0)  # flat 1500
    assert report.failure.mismatched == 1
    assert ("fast", SCREEN_GROUP_SIZE) in seen


class _WrongAbove(XTanh):
    """Wrong by a relative 1e-4 wherever x > 5: every element of some inputs."""

    def backward_var(self, grad, index, **kwargs):
        import numpy as np

        g = np.array(super().backward_var(grad, index), dtype=np.float64)
        return np.where(self.variables[0].data > 5, g * (1 + 1e-4), g)


def test_shrinking_a_large_example_takes_the_screens_failure(monkeypatch) -> None:
    """While shrinking, a screen's failure at located elements is the step's verdict
    (full mode refining every wrong element of 2000 costs seconds per step); the
    shrunk example is then checked in full mode for the report."""
    seen = _modes_used(monkeypatch)
    result = verify(_WrongAbove, shapes=["40,50"], max_examples=50, seed=0)
    assert result.verdict == "failed" and result.shrink_steps > 0
    report = result.failure
    assert report.settings["mode"] == "full" and report.failure.kind == "mismatch"
    assert all(
        report.inputs[0].reshape(-1)[e.index[0] * 50 + e.index[1]] > 5 for e in report.failure.worst
    )
    # full mode: the first failure and the report; the shrinking steps: screens alone
    assert seen.count(("full", None)) <= 2 < result.shrink_steps
