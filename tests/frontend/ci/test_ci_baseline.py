"""Baselines: the file round-trips exactly, and the comparison rule."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradcheck.errors import OutputError
from gradcheck.frontend.baseline import (
    RATIO_FLOOR,
    BaselineError,
    baseline_document,
    compare,
    load_baseline,
    save_baseline,
)
from gradcheck.search.verifier import VerifyResult


def result(target="m:Op", ratio=0.2, verdict="passed", seed=1):
    return VerifyResult(
        target=target,
        passed=verdict == "passed",
        verdict=verdict,
        examples=10,
        rejected=0,
        failure=None,
        max_abs_error=1e-9,
        max_rel_error=1e-10,
        error_ratio=ratio,
        seconds=0.5,
        seed=seed,
        settings={"domain": (-math.inf, 1.0), "dtype": "float64", "shapes": ("n,k",)},
    )


ratios = st.floats(0, 0.99, allow_subnormal=False)


@given(ratios)
def test_the_file_keeps_full_precision(tmp_path_factory, ratio) -> None:
    path = tmp_path_factory.mktemp("b") / "base.json"
    save_baseline(path, [result(ratio=ratio)], seed=3)
    loaded = load_baseline(path)
    assert loaded["targets"]["m:Op"]["error_ratio"] == ratio  # exactly
    assert loaded["seed"] == 3


def test_the_file_is_readable_json(tmp_path) -> None:
    path = tmp_path / "base.json"
    save_baseline(path, [result(ratio=math.nan, verdict="inconclusive")], seed=3)
    text = path.read_text()
    assert text.startswith("{\n  ") and '"error_ratio": "nan"' in text
    entry = json.loads(text)["targets"]["m:Op"]
    assert entry["settings"]["domain"] == ["-inf", 1.0]  # no NaN/Infinity literals
    assert load_baseline(path)["targets"]["m:Op"]["verdict"] == "inconclusive"
    assert list(json.loads(text)) == sorted(json.loads(text))


def old(**targets):
    doc = baseline_document(
        [result(t, ratio=r, verdict=v) for t, (r, v) in targets.items()], seed=1
    )
    return json.loads(json.dumps(doc))  # as read back from a file


@given(old_ratio=ratios, new_ratio=ratios, factor=st.floats(1, 10))
def test_the_rule(old_ratio, new_ratio, factor) -> None:
    comparison = compare(
        [result(ratio=new_ratio)], old(**{"m:Op": (old_ratio, "passed")}), factor=factor
    )
    regressed = new_ratio > factor * max(old_ratio, RATIO_FLOOR)
    assert comparison.passed is (not regressed)


def test_noise_below_the_floor_is_not_a_regression() -> None:
    base = old(**{"m:Op": (1e-6, "passed")})
    assert compare([result(ratio=1e-4)], base, factor=1.5).passed
    assert not compare([result(ratio=0.1)], base, factor=1.5).passed


def test_verdict_changes_new_and_vanished() -> None:
    base = old(a=(0.1, "passed"), b=(2.0, "failed"), c=(0.1, "passed"), gone=(0.1, "passed"))
    now = [
        result("a", ratio=3.0, verdict="failed"),
        result("b", ratio=0.1),
        result("c", ratio=math.nan, verdict="inconclusive"),
        result("fresh", ratio=0.1),
    ]
    comparison = compare(now, base, factor=1.5)
    assert [(r.target, r.reason) for r in comparison.regressions] == [
        ("a", "passed in the baseline, failed now"),
        ("c", "passed in the baseline, inconclusive now"),
    ]
    assert comparison.fixed == ["b"]
    assert comparison.new == ["fresh"] and comparison.vanished == ["gone"]
    text = comparison.render()
    assert "new: fresh: not in the baseline (not a failure)" in text
    assert "baseline: 2 regressions in 3 compared targets" in text
    json.dumps(comparison.to_dict(), allow_nan=False)


def test_an_unwritable_baseline_is_an_output_error(tmp_path) -> None:
    (tmp_path / "no").write_text("a file where the folder should be")
    with pytest.raises(OutputError, match="cannot write the baseline"):
        save_baseline(tmp_path / "no" / "base.json", [result()], seed=1)


def test_a_baseline_in_a_missing_folder_creates_it(tmp_path) -> None:
    save_baseline(tmp_path / "no" / "base.json", [result()], seed=1)
    assert load_baseline(tmp_path / "no" / "base.json")["seed"] == 1


_GOOD = {
    "gradcheck_baseline": 1,
    "seed": 1,
    "targets": {"m:Op": {"verdict": "passed", "passed": True, "examples": 3, "error_ratio": 0.1,
                         "seed": 1}},
}  # fmt: skip
_DEEP = "[" * 10000 + "]" * 10000
_TEXT = json.dumps(_GOOD)
MALFORMED = {
    "deep": _DEEP,
    "deep-in-a-field": _TEXT.replace('"examples": 3', '"examples": ' + _DEEP),
    "10000-digit-seed": _TEXT.replace('"seed": 1,', '"seed": 1' + "0" * 10000 + ",", 1),
    "nan-literal": _TEXT.replace('"error_ratio": 0.1', '"error_ratio": NaN'),
    "infinity-literal": _TEXT.replace('"error_ratio": 0.1', '"error_ratio": Infinity'),
}


@pytest.mark.parametrize("content", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_baseline_is_one_error_naming_it(tmp_path, content) -> None:
    path = tmp_path / "b.json"
    path.write_text(content)
    with pytest.raises(BaselineError) as info:
        load_baseline(path)
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)
    assert "set_int_max_str_digits" not in str(info.value)


def test_a_baseline_that_is_not_utf8_is_one_error(tmp_path) -> None:
    path = tmp_path / "b.json"
    path.write_bytes(json.dumps(_GOOD).encode().replace(b"m:Op", b"m:\xff"))
    with pytest.raises(BaselineError, match="not UTF-8"):
        load_baseline(path)


def test_a_huge_or_special_baseline_is_refused_before_it_is_read(tmp_path) -> None:
    import os

    sparse = tmp_path / "big.json"
    with open(sparse, "wb") as f:
        f.truncate(8 << 30)  # 8 GB of nothing, on no disk
    with pytest.raises(BaselineError, match="more than the 67,108,864"):
        load_baseline(sparse)
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "p.json")
        with pytest.raises(BaselineError, match="not a regular file"):
            load_baseline(tmp_path / "p.json")
    if os.path.exists("/dev/zero"):
        with pytest.raises(BaselineError, match="not a regular file"):
            load_baseline("/dev/zero")
