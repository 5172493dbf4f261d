"""A run split across CI jobs (``verify --shard K/N``) and put back together
(``gradcheck merge``): the union of the shards is the unsharded run, and the merge
refuses what does not belong together."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from gradcheck.errors import MergeError
from gradcheck.frontend.shards import assign, durations_of, parse_shard, plan_digest
from tests.support.ci_project import make_project

REPO = Path(__file__).resolve().parents[3]

MORE_OPS = """

class Cube(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data**3

    def backward_var(self, grad, index, **kwargs):
        return grad * 3 * self.variables[0].data ** 2


class Tanh(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return np.tanh(x.data)

    def backward_var(self, grad, index, **kwargs):
        return grad * (1 - np.tanh(self.variables[0].data) ** 2)
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for path in make_project(tmp_path, monkeypatch):
        with open(path / "ops.py", "a") as f:
            f.write(MORE_OPS)
        with open(path / "pyproject.toml", "a") as f:
            f.write('\n[[tool.gradcheck.targets]]\ntarget = "ops:Cube"\n')
            f.write('\n[[tool.gradcheck.targets]]\ntarget = "ops:Tanh"\n')
        yield path


def run(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPS_", "GITHUB_", "GRADCHECK_"))
    }
    environ.update(PYTHONPATH=str(REPO), **env)
    return subprocess.run(
        [sys.executable, "-m", "gradcheck", *args],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )


def shards(project: Path, count: int, *extra: str, **env: str) -> list[str]:
    """Run every shard, writing report-K.json, junit-K.xml, baseline-K.json."""
    files = []
    for k in range(1, count + 1):
        out = run(
            project,
            "verify",
            "--shard",
            f"{k}/{count}",
            "--format",
            "json",
            "--junit-xml",
            f"junit-{k}.xml",
            "--save-baseline",
            f"baseline-{k}.json",
            *extra,
            **env,
        )
        assert out.returncode in (0, 1), out.stderr
        (project / f"report-{k}.json").write_text(out.stdout)
        files += [f"report-{k}.json", f"junit-{k}.xml", f"baseline-{k}.json"]
    return files


def key(target: dict) -> tuple:
    return (target["target"], target["verdict"], target["examples"], target["seed"])


# --- the split -------------------------------------------------------------------


def test_parse_shard_refuses_what_is_not_k_of_n() -> None:
    assert parse_shard(" 3/8 ").index == 3
    for bad in ["0/4", "5/4", "1/0", "a/b", "2", "1/2/3", "-1/4"]:
        with pytest.raises(ValueError, match="--shard"):
            parse_shard(bad)


def test_every_target_in_exactly_one_shard_whatever_the_durations() -> None:
    names = [f"m:T{i}" for i in range(37)]
    for durations in [{}, {n: float(i % 7) for i, n in enumerate(names)}, {"m:T3": 100.0}]:
        for count in (1, 2, 5, 37, 50):
            parts = assign(names, count, durations)
            assert len(parts) == count
            assert sorted(i for p in parts for i in p) == list(range(37))
            assert all(p == sorted(p) for p in parts)  # each in the run's order


def test_the_split_is_deterministic_and_does_not_depend_on_the_process() -> None:
    names = [f"pkg.mod:Op{i}" for i in range(20)]
    code = f"from gradcheck.frontend.shards import assign; print(assign({names!r}, 3))"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)},
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outs) == 1


def test_without_durations_the_targets_are_dealt_out_evenly() -> None:
    parts = assign([f"m:T{i}" for i in range(10)], 4)
    assert sorted(len(p) for p in parts) == [2, 2, 3, 3]


def test_recorded_durations_balance_the_largest_shard() -> None:
    # A heavy-tailed library: most targets short, a few long; the longest first
    # makes the largest shard close to the ideal (total / N).
    names = [f"m:T{i}" for i in range(200)]
    seconds = {n: (60.0 if i % 50 == 0 else 0.5 + (i % 9) * 0.3) for i, n in enumerate(names)}
    parts = assign(names, 4, seconds)
    loads = [sum(seconds[names[i]] for i in p) for p in parts]
    ideal = sum(seconds.values()) / 4
    assert max(loads) <= 1.10 * ideal
    # the same library split by count alone is far worse
    by_count = assign(names, 4)
    assert max(sum(seconds[names[i]] for i in p) for p in by_count) > max(loads)


def test_durations_come_from_reports_and_baselines_and_skip_junk() -> None:
    report = {"targets": [{"target": "m:A", "seconds": 1.5}, {"target": "m:B"}, "junk"]}
    assert durations_of(report) == {"m:A": 1.5}
    baseline = {"targets": {"m:A": {"seconds": 2}, "m:B": {"seconds": "nan"}}}
    assert durations_of(baseline) == {"m:A": 2.0}
    assert durations_of({"m:A": -1, "m:B": True, "m:C": 0.25}) == {"m:C": 0.25}
    assert durations_of([1, 2]) == {}


def test_the_plan_digest_sees_settings_seeds_and_order() -> None:
    plan = [("m:A", {"seed": 1}), ("m:B", {"seed": 2})]
    assert plan_digest(plan) == plan_digest([("m:A", {"seed": 1}), ("m:B", {"seed": 2})])
    assert plan_digest(plan) != plan_digest([("m:A", {"seed": 1}), ("m:B", {"seed": 3})])
    assert plan_digest(plan) != plan_digest(plan[::-1])


# --- a deep run's seeds (--seeds S) --------------------------------------------------


def tasks_of(parts: list) -> list[tuple[int, int]]:
    """Every (target, seed) the shards' tasks hold."""
    return sorted((t.position, k) for part in parts for t in part for k in range(t.first, t.stop))


def test_every_seed_of_every_target_in_exactly_one_shard() -> None:
    from gradcheck.frontend.shards import split

    names = [f"m:T{i}" for i in range(13)]
    for durations in [{}, {n: float(1 + i % 5) for i, n in enumerate(names)}, {"m:T2": 500.0}]:
        for count in (1, 3, 8, 64):
            for seeds in (1, 4, 7):
                parts = split(names, count, durations, seeds)
                assert len(parts) == count
                assert tasks_of(parts) == [(i, k) for i in range(13) for k in range(seeds)]
                for part in parts:  # one contiguous range per target, in the run's order
                    positions = [t.position for t in part]
                    assert positions == sorted(set(positions))
                    assert all(t.first < t.stop for t in part)


def test_a_long_targets_seeds_spread_over_the_shards() -> None:
    # One target takes 3/4 of the run: whole, it would be the largest shard's all; its
    # 8 seeds (12.5 s each) spread, and every shard is within 10% of total / 4.
    from gradcheck.frontend.shards import split

    names = ["m:Long", *(f"m:T{i}" for i in range(10))]
    seconds = {"m:Long": 100.0, **{f"m:T{i}": 3.0 + i * 0.1 for i in range(10)}}
    parts = split(names, 4, seconds, seeds=8)
    held = [sum(t.stop - t.first for t in part if t.position == 0) for part in parts]
    assert held == [2, 2, 2, 2]
    loads = [sum(seconds[names[t.position]] * (t.stop - t.first) / 8 for t in p) for p in parts]
    assert max(loads) <= 1.10 * sum(seconds.values()) / 4


def test_one_seed_per_target_splits_as_whole_targets() -> None:
    from gradcheck.frontend.shards import split

    names = [f"m:T{i}" for i in range(30)]
    seconds = {n: float(i % 4) for i, n in enumerate(names)}
    parts = split(names, 4, seconds)
    assert [[t.position for t in p] for p in parts] == assign(names, 4, seconds)
    assert all((t.first, t.stop) == (0, 1) for p in parts for t in p)


def shard_report(
    tmp_path: Path, index: int, ranges: list[list[int]], entries: list[dict], **extra: object
) -> str:
    """A shard's JSON report of a deep run of 4 seeds of m:Op, base seed 10."""
    document = {
        "version": 1,
        "passed": all(e["passed"] for e in entries),
        "seed": 10,
        "targets": entries,
        "shard": {
            "index": index,
            "count": 2,
            "positions": [0] * len(ranges),
            "seeds": 4,
            "ranges": ranges,
            "seed": 10,
            "plan": "digest",
            "versions": {"gradcheck": "x"},
            "targets": ["m:Op"],
        },
        **extra,
    }
    path = tmp_path / f"report-{index}.json"
    path.write_text(json.dumps(document))
    return str(path)


def entry(verdict: str, seed: int, note: str | None, ratio: float | str) -> dict:
    return {
        "target": "m:Op",
        "passed": verdict == "passed",
        "verdict": verdict,
        "examples": 5,
        "rejected": 1,
        "skipped": {"kink": 1},
        "error_ratio": ratio,
        "max_abs_error": ratio,
        "max_rel_error": ratio,
        "seconds": 2.0,
        "seed": seed,
        "note": note,
        "replay": f"gradcheck verify m:Op --seed {seed}",
    }


def test_merge_combines_a_targets_seeds_from_two_shards(tmp_path: Path) -> None:
    from gradcheck.frontend.merge import merge_files

    # Seeds 10, 11 pass in shard 1; of 12, 13 in shard 2, seed 13 fails.
    first = shard_report(tmp_path, 1, [[0, 2, 10]], [entry("passed", 10, "2 seeds (10..11)", 0.25)])
    second = shard_report(
        tmp_path, 2, [[2, 4, 10]], [entry("failed", 13, "2 seeds (12..13): seed 13 failed", 7.5)]
    )
    merged = merge_files([second, first])
    (target,) = merged.report["targets"]
    assert target["verdict"] == "failed" and target["passed"] is False
    assert target["seed"] == 13 and target["replay"].endswith("--seed 13")
    assert target["note"] == "4 seeds (10..13): seed 13 failed"
    assert (target["examples"], target["rejected"], target["seconds"]) == (10, 2, 4.0)
    assert target["skipped"] == {"kink": 2} and target["error_ratio"] == 7.5
    assert merged.exit_code == 1
    # a missing shard leaves seeds of m:Op unchecked: refused, whatever else is given
    with pytest.raises(MergeError, match="shard 2 of 2 missing"):
        merge_files([first])
    overlap = shard_report(tmp_path, 2, [[1, 4, 10]], [entry("passed", 11, None, 0.1)])
    with pytest.raises(MergeError, match="seeds of m:Op that another shard checked"):
        merge_files([first, overlap])


def test_a_split_target_is_compared_with_the_baseline_as_a_whole(tmp_path: Path) -> None:
    from gradcheck.frontend.merge import merge_files

    def comparison(fixed: list[str], ratio_now: float) -> dict:
        return {
            "baseline": {
                "passed": True,
                "regression_factor": 1.5,
                "ratio_floor": 0.05,
                "regressions": [],
                "fixed": fixed,
                "new": [],
                "vanished": [],
                "settings_changed": {},
                "error_ratios": {"m:Op": {"baseline": 3.0, "now": ratio_now}},
            }
        }

    # m:Op failed in the baseline; shard 1's seeds pass (for it: fixed), shard 2's
    # fail: the target fails, which is neither fixed nor a regression.
    first = shard_report(
        tmp_path, 1, [[0, 2, 10]], [entry("passed", 10, None, 0.25)], **comparison(["m:Op"], 0.25)
    )
    second = shard_report(
        tmp_path, 2, [[2, 4, 10]], [entry("failed", 12, None, 5.0)], **comparison([], 5.0)
    )
    merged = merge_files([first, second]).report
    assert merged["baseline"]["fixed"] == [] and merged["baseline"]["regressions"] == []
    assert merged["baseline"]["error_ratios"]["m:Op"]["now"] == 5.0
    # both parts pass: fixed
    second = shard_report(
        tmp_path, 2, [[2, 4, 10]], [entry("passed", 12, None, 0.5)], **comparison(["m:Op"], 0.5)
    )
    assert merge_files([first, second]).report["baseline"]["fixed"] == ["m:Op"]


def test_junit_cases_of_a_split_target_are_one(tmp_path: Path) -> None:
    from gradcheck.frontend.merge import merge_files

    def junit(index: int, first: int, failure: str | None) -> str:
        props = {
            "index": index,
            "count": 2,
            "positions": "[0]",
            "seeds": 4,
            "ranges": f"[[{first}, {first + 2}, 10]]",
            "seed": 10,
            "plan": "digest",
            "versions": '{"gradcheck": "x"}',
            "targets": '["m:Op"]',
        }
        lines = "".join(
            f"<property name=\"gradcheck.shard.{k}\" value='{v}' />" for k, v in props.items()
        )
        body = f'<failure type="failed" message="m">{failure}</failure>' if failure else ""
        path = tmp_path / f"junit-{index}.xml"
        path.write_text(
            f'<testsuites><testsuite name="gradcheck" tests="1" failures="{int(bool(failure))}">'
            f'<properties>{lines}</properties><testcase classname="m" name="Op" time="1.5">'
            f"{body}</testcase></testsuite></testsuites>"
        )
        return str(path)

    merged = merge_files(
        [junit(1, 0, None), junit(2, 2, "bad\nNote: 2 seeds (12..13): seed 12 failed")]
    )
    root = ET.fromstring(merged.junit)
    (case,) = root.iter("testcase")
    assert case.get("time") == "3.000"
    assert case.find("failure").text == "bad\nNote: 4 seeds (10..13): seed 12 failed"
    assert root.find("testsuite").get("failures") == "1" and merged.exit_code == 1


# --- the command line --------------------------------------------------------------


def test_the_merged_shards_are_the_unsharded_run(project: Path) -> None:
    files = shards(project, 3)
    merged = run(
        project,
        "merge",
        *files,
        "--json",
        "m.json",
        "--junit-xml",
        "m.xml",
        "--save-baseline",
        "mb.json",
    )
    assert merged.returncode == 0, merged.stderr
    assert "4 passed (3 shards merged, seed 11)" in merged.stdout
    whole = run(
        project, "verify", "--format", "json", "--junit-xml", "w.xml", "--save-baseline", "wb.json"
    )
    assert whole.returncode == 0, whole.stderr
    one = json.loads(whole.stdout)
    both = json.loads((project / "m.json").read_text())
    assert [key(t) for t in both["targets"]] == [key(t) for t in one["targets"]]
    assert both["seed"] == one["seed"] and both["passed"] is True
    assert "shard" not in both
    cases = [
        (c.get("classname"), c.get("name")) for c in ET.parse(project / "m.xml").iter("testcase")
    ]
    assert cases == [
        (c.get("classname"), c.get("name")) for c in ET.parse(project / "w.xml").iter("testcase")
    ]
    base, whole_base = (json.loads((project / f).read_text()) for f in ("mb.json", "wb.json"))
    assert "shard" not in base
    assert list(base["targets"]) == list(whole_base["targets"])
    assert {k: v["seed"] for k, v in base["targets"].items()} == {
        k: v["seed"] for k, v in whole_base["targets"].items()
    }


def test_a_failure_in_one_shard_fails_the_merged_run(project: Path) -> None:
    files = shards(project, 2, OPS_BREAK="1")
    merged = run(project, "merge", *files, "--format", "json")
    assert merged.returncode == 1
    document = json.loads(merged.stdout)
    assert [t["target"] for t in document["targets"] if not t["passed"]] == ["ops:Square"]
    assert document["passed"] is False
    text = run(project, "merge", *files)
    assert text.returncode == 1
    assert "FAILED ops:Square" in text.stdout and "Replay: " in text.stdout
    junit_only = run(project, "merge", *[f for f in files if f.endswith(".xml")])
    assert junit_only.returncode == 1


def test_a_regression_in_one_shard_fails_the_merged_run(project: Path) -> None:
    assert run(project, "verify", "--save-baseline", "base.json").returncode == 0
    files = shards(project, 2, "--baseline", "base.json", OPS_SIN_K="40")
    merged = run(project, "merge", *files, "--format", "json")
    assert merged.returncode == 1, merged.stderr
    comparison = json.loads(merged.stdout)["baseline"]
    assert [r["target"] for r in comparison["regressions"]] == ["ops:Sin"]
    # No shard calls the other shards' targets vanished.
    assert comparison["vanished"] == []
    calm = shards(project, 2, "--baseline", "base.json")
    assert run(project, "merge", *calm).returncode == 0


def test_a_regression_in_one_shard_of_a_deep_run_fails_the_merged_run(project: Path) -> None:
    # Sin's recorded time is most of the run's: its 3 seeds are split over both shards.
    deep = ["--seeds", "3"]
    assert run(project, "verify", *deep, "--save-baseline", "base.json").returncode == 0
    (project / "durations.json").write_text(json.dumps({"ops:Sin": 100.0}))
    split = [*deep, "--baseline", "base.json", "--durations", "durations.json"]
    files = shards(project, 2, *split, OPS_SIN_K="40")
    manifests = [json.loads((project / f"report-{k}.json").read_text())["shard"] for k in (1, 2)]
    assert all(0 in m["positions"] for m in manifests)  # ops:Sin is target 0
    merged = run(project, "merge", *files, "--format", "json")
    assert merged.returncode == 1, merged.stderr
    comparison = json.loads(merged.stdout)["baseline"]
    assert [r["target"] for r in comparison["regressions"]] == ["ops:Sin"]
    assert comparison["fixed"] == [] and comparison["vanished"] == []
    calm = shards(project, 2, *split)
    assert run(project, "merge", *calm).returncode == 0
    alone = run(project, "merge", "report-1.json", "baseline-1.json")
    assert alone.returncode == 2 and "shard 2 of 2 missing" in alone.stderr


def test_a_missing_or_doubled_shard_is_refused(project: Path) -> None:
    files = shards(project, 3)
    missing = run(project, "merge", *[f for f in files if "-2." not in f])
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines()[-1].startswith("Error: shard 2 of 3 missing")
    twice = run(project, "merge", *files, "report-1.json")
    assert twice.returncode == 2 and "both shard 1/3" in twice.stderr


def test_shards_of_different_runs_are_refused(project: Path) -> None:
    first = shards(project, 2)
    (project / "report-2.json").rename(project / "keep.json")
    other = run(project, "verify", "--shard", "2/2", "--seed", "12", "--format", "json")
    (project / "report-2.json").write_text(other.stdout)
    out = run(project, "merge", "report-1.json", "report-2.json")
    assert out.returncode == 2
    assert "not shards of one run: their seed differ" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert first  # the matching files were written


def test_a_shard_needs_a_fixed_seed_and_a_valid_spec(tmp_path: Path) -> None:
    target = "gradcheck.builtin_targets:square"
    no_seed = run(tmp_path, "verify", target, "--shard", "1/2")
    assert no_seed.returncode == 2 and "--shard needs the same seed" in no_seed.stderr
    bad = run(tmp_path, "verify", target, "--shard", "3/2", "--seed", "1")
    assert bad.returncode == 2 and "K must be between 1 and N" in bad.stderr
    from_env = run(tmp_path, "verify", target, "--seed", "1", GRADCHECK_SHARD="x")
    assert from_env.returncode == 2 and "--shard" in from_env.stderr


def test_the_environment_variable_selects_the_shard(tmp_path: Path) -> None:
    spec = "gradcheck.builtin_targets"
    names = []
    for k in (1, 2):
        out = run(
            tmp_path,
            "verify",
            spec,
            "--seed",
            "3",
            "--max-examples",
            "1",
            "--format",
            "json",
            GRADCHECK_SHARD=f"{k}/2",
        )
        assert out.returncode == 0, out.stderr
        names.append([t["target"] for t in json.loads(out.stdout)["targets"]])
    assert not set(names[0]) & set(names[1])
    assert abs(len(names[0]) - len(names[1])) <= 1


def test_files_that_are_not_shards_are_refused(project: Path) -> None:
    plain = run(project, "verify", "--format", "json", "--save-baseline", "plain.json")
    (project / "plain-report.json").write_text(plain.stdout)
    for name in ("plain-report.json", "plain.json", "pyproject.toml"):
        out = run(project, "merge", name)
        assert out.returncode == 2
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_the_documented_matrix_recipe_runs(project: Path) -> None:
    """The `run:` steps of docs/ci.md's sharded workflow, with the matrix values put in."""
    doc = (REPO / "docs" / "ci.md").read_text()
    recipe = doc[doc.index("# .github/workflows/gradients.yml (sharded)") :]
    recipe = recipe[: recipe.index("```")]
    steps = re.findall(r"^\s+run: (gradcheck .*)$", recipe, flags=re.M)
    assert [s.split()[1] for s in steps] == ["verify", "merge"]
    shard_step, merge_step = steps
    for k in (1, 2, 3, 4):
        command = shard_step.replace("${{ matrix.shard }}", str(k)).replace(
            "${{ github.run_id }}", "4242"
        )
        command = command.replace("gradcheck ", f"{sys.executable} -m gradcheck ", 1)
        out = subprocess.run(
            command,
            shell=True,
            cwd=project,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            timeout=300,
        )
        assert out.returncode == 0, out.stderr
    command = merge_step.replace("gradcheck ", f"{sys.executable} -m gradcheck ", 1)
    out = subprocess.run(
        command,
        shell=True,
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "4 passed (4 shards merged, seed 4242)" in out.stdout
    assert len(list(ET.parse(project / "gradcheck.xml").iter("testcase"))) == 4
    assert len(json.loads((project / "gradcheck-baseline.json").read_text())["targets"]) == 4


def pytest_run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OPS_", "PYTEST_"))}
    environ.update(PYTHONPATH=str(REPO), OPS_BREAK="1")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--gradcheck",
            "-p",
            "no:cacheprovider",
            "-q",
            "-o",
            "addopts=",
            *args,
        ],
        cwd=project,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_collected_items_run_under_xdist_worksteal(project: Path) -> None:
    pytest.importorskip("xdist", reason="pytest-xdist is not installed")
    out = pytest_run(project, "-p", "xdist", "-n", "2", "--dist", "worksteal")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "1 failed, 3 passed" in out.stdout
    assert "ops:Square" in out.stdout


def test_collected_items_split_by_pytest_split(project: Path) -> None:
    pytest.importorskip("pytest_split", reason="pytest-split is not installed")
    seen = []
    for group in ("1", "2"):
        out = pytest_run(project, "--splits", "2", "--group", group, "-rA")
        assert out.returncode in (0, 1), out.stdout + out.stderr
        seen += re.findall(r"^(?:PASSED|FAILED) (\S+)", out.stdout, flags=re.M)
    assert len(seen) == 4 and len(set(seen)) == 4
