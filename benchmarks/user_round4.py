"""The fourth user round of issue 34: every pair of `tests/support/user_round4_ops.py`
(a bug and its correct twin) through every documented way to ask for a check, on
seeds 0, 1, 2. A bug must fail and its twin pass on every path, and a failure's report
must name the op and its inputs as the user did, show v, and replay with one seed.

    OMP_NUM_THREADS=1 python benchmarks/user_round4.py [--seeds 0,1,2] [--out DIR]

Paths: `cli` (gradcheck verify NAME FLAGS, the table), `json` (--format json, with
--junit-xml: `junit`), `config` ([tool.gradcheck] entries with the settings as keys),
`module` (gradcheck verify MODULE: no flags, for the pairs that need none), `list`
(gradcheck list MODULE -v: each op listed), `check` (gradcheck.check at an input of
the seed), `describe` (the settings as @gradcheck.describe, then gradcheck.verify),
`fixture` (the gradcheck fixture), `marker` (gradcheck_verify under
@pytest.mark.gradcheck(settings)), `pytest` (pytest --gradcheck). Prints a table of
pairs x paths x seeds (`ok`: the bug failed and the twin passed; else what happened)
and every report defect found.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPS = ROOT / "tests" / "support" / "user_round4_ops.py"
MOD = "user_round4_ops"
GRADCHECK = [sys.executable, "-m", "gradcheck"]

#: name: (bug, twin, settings the pair needs (verify's keywords), the names of its
#: inputs, check's inputs as Python source of the seed ``s``, check's keywords)
PAIRS: dict[str, tuple[str, str, dict, tuple[str, ...], str, dict]] = {
    "affine": (
        "bad_affine",
        "good_affine",
        {"shapes": ["n,3"]},
        ("x", "weight", "bias"),
        "(np.random.default_rng(s).normal(size=(4, 3)),)",
        {},
    ),
    "elu": (
        "bad_elu",
        "good_elu",
        {},
        ("x",),
        "(np.array([-1.5, 0.7, -0.2]) + 0.1 * s,)",
        {},
    ),
    "sinh_cosh": (
        "bad_sinh_cosh",
        "good_sinh_cosh",
        {},
        ("x",),
        "(np.array([0.3, -1.1]) + 0.1 * s,)",
        {},
    ),
    "softplus_o2": (
        "BadSoftplusO2",
        "GoodSoftplusO2",
        {"order": 2},
        ("x", "v"),
        "(np.array([-0.5, 1.2]) + 0.1 * s,)",
        {"order": 2},
    ),
    "tanh_half": (
        "BadTanhHalf",
        "GoodTanhHalf",
        {"dtype": "float32"},
        ("x",),
        "(np.array([0.3, 1.7, -2.2], dtype=np.float32) + np.float32(0.1 * s),)",
        {},
    ),
    "checked_sqrt": (
        "BadCheckedSqrt",
        "GoodCheckedSqrt",
        {},
        ("x",),
        "(np.array([0.5, 2.0]) + 0.1 * s,)",
        {},
    ),
    "log_mix": (
        "BadLogMix",
        "GoodLogMix",
        {},
        ("x", "w"),
        "(np.array([0.3, -1.0]) + 0.1 * s, np.array([0.2, 0.7]))",
        {},
    ),
    "scaled_softsign": (
        "bad_scaled_softsign",
        "good_scaled_softsign",
        {},
        ("x",),
        "(np.array([0.5, -2.0]) + 0.1 * s,)",
        {},
    ),
}
#: pairs whose bug a module-wide run (no flags: the described settings only) must catch
MODULE_WIDE = {"affine", "elu", "tanh_half", "checked_sqrt", "log_mix", "scaled_softsign"}
#: pairs a module offers (a function needs @gradcheck.describe to be one of them)
LISTED = set(PAIRS) - {"sinh_cosh"}
FLAGS = {"shapes": "--shape", "order": "--order", "dtype": "--dtype"}


def flags(settings: dict) -> list[str]:
    out: list[str] = []
    for key, value in settings.items():
        for item in value if isinstance(value, list) else [value]:
            out += [FLAGS[key], item if isinstance(item, str) else json.dumps(item)]
    return out


def toml_value(value) -> str:
    return json.dumps(value)


def config(seed: int) -> str:
    lines = ["[tool.gradcheck]", f"seed = {seed}", ""]
    for bug, twin, settings, *_ in PAIRS.values():
        for name in (bug, twin):
            lines.append("[[tool.gradcheck.targets]]")
            lines.append(f'target = "{MOD}:{name}"')
            lines += [f"{k} = {toml_value(v)}" for k, v in settings.items()]
            lines.append("")
    return "\n".join(lines)


def run(cmd: list[str], cwd: Path, log: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", NO_COLOR="1", PYTHONWARNINGS="ignore")
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    log.write_text(f"$ {' '.join(cmd)}\nexit {p.returncode}\n{p.stdout}\n--- stderr\n{p.stderr}")
    return p


def blocks(text: str) -> dict[str, str]:
    """Each failing target's report block of a command's text, by the target name."""
    out: dict[str, str] = {}
    for part in re.split(r"\n(?=gradcheck: )", text):
        m = re.search(r"Replay: gradcheck verify (\S+)", part)
        if part.startswith("gradcheck: ") and m:
            out[m.group(1).split(":")[-1]] = part
    return out


def report_defects(
    path: str, name: str, text: str, inputs: tuple[str, ...], seed: int | None
) -> list[str]:
    """What a stranger could not act on in a failure's report."""
    bad = []
    # (pytest's: a JUnit failure's text has its lines after "E       ")
    lines = [
        re.sub(r"^E {2,}", "", ln).removeprefix("AssertionError: ") for ln in text.splitlines()
    ]
    head = next((ln for ln in lines if ln.startswith("gradcheck: ")), "")
    if name not in head:
        bad.append(f"headline does not name {name}: {head!r}")
    m = re.search(r"\(input ([^)]*)\)", head)
    if m and not any(m.group(1).startswith(n) for n in inputs):
        bad.append(f"input named {m.group(1)!r}, not one of {inputs}")
    if "mismatch" in head and "Max relative difference" not in text:
        bad.append("no relative error")
    if "mismatch" in head and not re.search(r"upstream gradient [vu]|\n[vu], the upstream", text):
        bad.append("no v")
    if path != "check" and "Replay:" not in text:
        bad.append("no replay line")
    seeds = set(re.findall(r"seed[:= ]+(\d+)", text))
    if seed is not None and seeds - {str(seed)}:
        bad.append(f"seeds {sorted(seeds)} in a report of seed {seed}")
    return [f"{path} {name}: {b}" for b in bad]


def cli_paths(work: Path, seed: int, logs: Path, res: dict, defects: list) -> None:
    groups: dict[str, list[str]] = {}
    for pair, spec in PAIRS.items():
        groups.setdefault(json.dumps(spec[2]), []).append(pair)
    for key, pairs in groups.items():
        settings = json.loads(key)
        names = [n for p in pairs for n in PAIRS[p][:2]]
        targets = [f"{MOD}:{n}" for n in names]
        common = ["verify", *targets, *flags(settings), "--seed", str(seed), "--jobs", "1"]
        tag = "_".join(pairs)
        table = run([*GRADCHECK, *common], work, logs / f"cli_{tag}_{seed}.txt")
        found = blocks(table.stdout)
        xml_path = work / f"junit_{seed}.xml"
        js = run(
            [*GRADCHECK, *common, "--format", "json", "--junit-xml", str(xml_path)],
            work,
            logs / f"json_{tag}_{seed}.txt",
        )
        doc = json.loads(js.stdout)
        failed_junit = {
            tc.get("name")
            for tc in ET.parse(xml_path).getroot().iter("testcase")
            if tc.find("failure") is not None or tc.find("error") is not None
        }
        verdicts = {t["target"].split(":")[-1]: t["verdict"] for t in doc["targets"]}
        for p in pairs:
            bug, twin, _s, inputs, *_ = PAIRS[p]
            cli = {n: said(table.stdout, n, "?") for n in (bug, twin)}
            res[(p, "cli", seed)] = judge(cli[bug] == "FAILED", cli[twin] == "passed", cli)
            res[(p, "json", seed)] = judge(
                verdicts.get(bug) == "failed", verdicts.get(twin) == "passed", verdicts
            )
            res[(p, "junit", seed)] = judge(
                bug in failed_junit, twin not in failed_junit, sorted(failed_junit)
            )
            if bug in found:
                defects += report_defects("cli", bug, found[bug], inputs, seed)


def said(text: str, name: str, none: str) -> str:
    """The verdict a run's progress line gives ``name``."""
    m = re.search(rf"\] {MOD}:{name} (\w+)", text)
    return m.group(1) if m else none


def judge(caught: bool, quiet: bool, seen) -> str:
    if caught and quiet:
        return "ok"
    return (
        ("MISSED " if not caught else "") + ("FALSE-ALARM " if not quiet else "") + str(seen)[:80]
    )


def config_path(work: Path, seed: int, logs: Path, res: dict, defects: list) -> None:
    d = work / f"config_{seed}"
    d.mkdir(exist_ok=True)
    shutil.copy(OPS, d / f"{MOD}.py")
    (d / "pyproject.toml").write_text(config(seed))
    p = run([*GRADCHECK, "verify"], d, logs / f"config_{seed}.txt")
    found = blocks(p.stdout)
    for pair, (bug, twin, _s, inputs, *_r) in PAIRS.items():
        v = {
            n: (m.group(1) if (m := re.search(rf"\] {MOD}:{n} (\w+)", p.stdout)) else "?")
            for n in (bug, twin)
        }
        res[(pair, "config", seed)] = judge(v[bug] == "FAILED", v[twin] == "passed", v)
        if bug in found:
            defects += report_defects("config", bug, found[bug], inputs, seed)


def module_path(work: Path, seed: int, logs: Path, res: dict, defects: list) -> None:
    p = run(
        [*GRADCHECK, "verify", MOD, "--seed", str(seed), "--jobs", "1"],
        work,
        logs / f"module_{seed}.txt",
    )
    found = blocks(p.stdout)
    for pair, (bug, twin, _s, inputs, *_r) in PAIRS.items():
        v = {
            n: (m.group(1) if (m := re.search(rf"\] {MOD}:{n} (\w+)", p.stdout)) else "-")
            for n in (bug, twin)
        }
        if pair not in MODULE_WIDE:
            res[(pair, "module", seed)] = f"n/a {v}"
            continue
        res[(pair, "module", seed)] = judge(v[bug] == "FAILED", v[twin] == "passed", v)
        if bug in found:
            defects += report_defects("module", bug, found[bug], inputs, seed)


PY_PATHS = """
import importlib, json, sys, numpy as np, gradcheck
sys.path.insert(0, ".")
u = importlib.import_module(sys.argv[3])
PAIRS = json.loads(sys.argv[1]); s = int(sys.argv[2]); out = {}
for pair, (bug, twin, settings, inputs, source, kwargs) in PAIRS.items():
    for name in (bug, twin):
        op = getattr(u, name)
        r = gradcheck.check(op, *eval(source), seed=s, **kwargs)
        out[f"check {name}"] = [r.verdict, str(r)]
for pair, (bug, twin, settings, inputs, source, kwargs) in PAIRS.items():
    for name in (bug, twin):
        op = getattr(u, name)
        if settings:
            gradcheck.describe(**settings)(op)
        r = gradcheck.verify(op, seed=s)
        out[f"describe {name}"] = [r.verdict, str(r)]
print(json.dumps(out))
"""


def python_paths(work: Path, seed: int, logs: Path, res: dict, defects: list) -> None:
    p = run(
        [sys.executable, "-c", PY_PATHS, json.dumps(PAIRS), str(seed), MOD],
        work,
        logs / f"python_{seed}.txt",
    )
    got = json.loads(p.stdout.strip().splitlines()[-1])
    for pair, (bug, twin, _s, inputs, *_r) in PAIRS.items():
        for path in ("check", "describe"):
            vb, vt = got[f"{path} {bug}"][0], got[f"{path} {twin}"][0]
            res[(pair, path, seed)] = judge(vb == "failed", vt == "passed", (vb, vt))
            if vb == "failed":
                defects += report_defects(
                    path, bug, got[f"{path} {bug}"][1], inputs, seed if path == "check" else None
                )


def pytest_file() -> str:
    lines = ["import numpy as np", "import pytest", f"import {MOD} as u", ""]
    for bug, twin, settings, _inputs, source, kwargs in PAIRS.values():
        for name in (bug, twin):
            lines += [
                f"def test_fixture_{name}(gradcheck, request):",
                "    s = request.config.getoption('gradcheck_seed') or 0",
                f"    gradcheck(u.{name}, *{source}, **{kwargs!r})",
                "",
                f"@pytest.mark.gradcheck(**{settings!r})",
                f"def test_marker_{name}(gradcheck_verify):",
                f"    gradcheck_verify(u.{name})",
                "",
            ]
    return "\n".join(lines)


def pytest_paths(work: Path, seed: int, logs: Path, res: dict, defects: list) -> None:
    d = work / f"pytest_{seed}"
    d.mkdir(exist_ok=True)
    shutil.copy(OPS, d / f"{MOD}.py")
    (d / "pyproject.toml").write_text(config(seed))
    (d / "test_user_round.py").write_text(pytest_file())
    xml_path = d / "report.xml"
    run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--gradcheck",
            f"--gradcheck-seed={seed}",
            f"--junitxml={xml_path}",
            "-rA",
        ],
        d,
        logs / f"pytest_{seed}.txt",
    )
    outcome: dict[str, tuple[str, str]] = {}
    for tc in ET.parse(xml_path).getroot().iter("testcase"):
        fail = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
        skip = tc.find("skipped")
        state = "failed" if fail is not None else "skipped" if skip is not None else "passed"
        text = (fail.text or fail.get("message", "")) if fail is not None else ""
        outcome[tc.get("name")] = (state, text)
    for pair, (bug, twin, _s, inputs, *_r) in PAIRS.items():
        for path, key in (
            ("fixture", "test_fixture_{}"),
            ("marker", "test_marker_{}"),
            ("pytest", "{}"),
        ):
            vb, vt = (outcome.get(key.format(n), ("?", "")) for n in (bug, twin))
            res[(pair, path, seed)] = judge(vb[0] == "failed", vt[0] == "passed", (vb[0], vt[0]))
            if vb[0] == "failed":
                defects += report_defects(
                    path, bug, vb[1], inputs, seed if path != "marker" else None
                )


def list_path(work: Path, logs: Path, res: dict) -> None:
    p = run([*GRADCHECK, "list", MOD, "-v"], work, logs / "list.txt")
    for pair, (bug, twin, *_r) in PAIRS.items():
        listed = [n for n in (bug, twin) if re.search(rf"^{MOD}:{n}\s", p.stdout, re.M)]
        state = "ok" if len(listed) == 2 else f"listed {listed}"
        if pair not in LISTED:  # (a function without @gradcheck.describe: not a target)
            state = "ok" if not listed else f"listed {listed}"
        for seed in (0, 1, 2):
            res[(pair, "list", seed)] = state


#: more (path, function) pairs a later round runs after these, each run per seed as
#: the paths above (`user_round6.py`: --order 2, --dtype float32)
EXTRA: list = []

PATHS = [
    "cli",
    "json",
    "junit",
    "config",
    "module",
    "list",
    "check",
    "describe",
    "fixture",
    "marker",
    "pytest",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--out", default=None)
    ap.add_argument("--paths", default=",".join(PATHS))
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    chosen = set(args.paths.split(","))
    work = Path(args.out or tempfile.mkdtemp(prefix=f"{MOD}_"))
    work.mkdir(parents=True, exist_ok=True)
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    shutil.copy(OPS, work / f"{MOD}.py")
    res: dict = {}
    defects: list[str] = []
    if "list" in chosen:
        list_path(work, logs, res)
    for seed in seeds:
        for path, fn in (
            ("cli", cli_paths),
            ("config", config_path),
            ("module", module_path),
            ("check", python_paths),
            ("fixture", pytest_paths),
            *EXTRA,
        ):
            if path in chosen:
                fn(work, seed, logs, res, defects)
    shown = [p for p in PATHS if any(k[1] == p for k in res)]
    print("pair".ljust(16) + "".join(p.ljust(10) for p in shown))
    for pair in PAIRS:
        cells = []
        for path in shown:
            states = [res.get((pair, path, s), "-") for s in seeds]
            cells.append(
                f"ok x{len(seeds)}"
                if all(x == "ok" for x in states)
                else "n/a"
                if all(x.startswith("n/a") for x in states)
                else "/".join("ok" if x == "ok" else "X" for x in states)
            )
        print(pair.ljust(16) + "".join(c.ljust(10) for c in cells))
    print("\nnot ok:")
    for key, state in sorted(res.items()):
        if state != "ok":
            print(" ", key, state)
    print("\nreport defects:")
    for d in sorted(set(defects)):
        print(" ", d)
    print(f"\nlogs: {logs}")


if __name__ == "__main__":
    main()
