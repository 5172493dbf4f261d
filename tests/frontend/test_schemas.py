"""The JSON Schemas shipped in the package (gradcheck/schemas/) hold for what gradcheck
really writes and reads: the CLI's JSON of passing, failing, raising and inconclusive
targets, a saved baseline and the comparison with it, and the [tool.gradcheck] tables
the configuration reader accepts; and they reject documents whose required fields went
missing or were renamed, so that a change of the outputs that forgets its schema fails
here (issue 23, item 8)."""

from __future__ import annotations

import copy
import inspect
import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest

import gradcheck.frontend.render
import gradcheck.schemas
from gradcheck.checking.vocabulary import FAILURE_KINDS, RUN_FAILURE_KINDS, Skip, Verdict
from gradcheck.errors import ConfigError
from gradcheck.frontend.baseline import _ENTRY_FIELDS
from gradcheck.frontend.config import OPTION_KEYS, PROJECT_KEYS, load_config

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the 'test' extra")

ROOT = Path(__file__).resolve().parents[2]
MY_OPS = ROOT / "examples" / "my_ops.py"

# Targets whose verdicts and failure kinds differ: the document's every branch.
ODD_OPS = """
import gradcheck as mg


def raises(x):
    raise ValueError("no forward here")


def nowhere_finite(x):
    return mg.log(-mg.abs(x) - 1.0)
"""


def validator(name: str) -> jsonschema.protocols.Validator:
    schema = gradcheck.schemas.load(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def errors(name: str, document: object) -> list[str]:
    found = validator(name).iter_errors(document)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in found]


def gradcheck_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "gradcheck", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """One real run of each kind, shared by the tests below: the JSON of five targets,
    the baseline it saved, and the JSON of a run compared with that baseline."""
    work = tmp_path_factory.mktemp("schemas")
    (work / "odd_ops.py").write_text(ODD_OPS)
    targets = [
        f"{MY_OPS}:Cube",
        f"{MY_OPS}:WrongSoftplus",
        "gradcheck.builtin_targets:square",
        "odd_ops:raises",
        "odd_ops:nowhere_finite",
    ]
    first = gradcheck_cli(
        work, "verify", *targets, "--max-examples", "5", "--seed", "0", "--format", "json",
        "--save-baseline", "baseline.json",
    )  # fmt: skip
    assert first.returncode == 1, first.stderr
    # compared with other settings: "settings_changed" is filled in
    second = gradcheck_cli(
        work, "verify", *targets[:3], "--max-examples", "6", "--format", "json",
        "--baseline", "baseline.json",
    )  # fmt: skip
    assert second.returncode == 1, second.stderr
    return {
        "verify": json.loads(first.stdout),
        "baseline": json.loads((work / "baseline.json").read_text()),
        "compared": json.loads(second.stdout),
    }


def test_the_schemas_are_valid_and_load_by_name():
    assert gradcheck.schemas.names() == ("verify", "baseline", "config")
    for name in gradcheck.schemas.names():
        validator(name)  # check_schema raises for an invalid schema
        assert Path(str(gradcheck.schemas.path(name))).name == f"{name}.schema.json"
    assert gradcheck.schemas.load("verify") is not gradcheck.schemas.load("verify")
    with pytest.raises(ValueError, match="no schema named 'verfy'; the schemas are verify"):
        gradcheck.schemas.load("verfy")


def test_the_package_reads_its_schemas_without_jsonschema():
    code = (
        "import sys, gradcheck.schemas as s; [s.load(n) for n in s.names()]; "
        "import gradcheck.cli; print('jsonschema' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_the_json_of_real_runs_is_valid(runs):
    document = runs["verify"]
    assert errors("verify", document) == []
    by_name = {t["target"].rsplit(":", 1)[-1]: t for t in document["targets"]}
    assert by_name["Cube"]["verdict"] == "passed" and by_name["square"]["passed"]
    assert by_name["WrongSoftplus"]["failure"]["kind"] == "mismatch"
    assert by_name["raises"]["failure"]["kind"] == "forward_error"
    assert by_name["nowhere_finite"]["verdict"] == "inconclusive"
    assert by_name["nowhere_finite"]["skipped"][Skip.UNDEFINED] > 0


def test_the_baseline_file_and_the_comparison_are_valid(runs):
    assert errors("baseline", runs["baseline"]) == []
    compared = runs["compared"]
    assert errors("verify", compared) == []
    assert set(compared["baseline"]["settings_changed"]) == {
        t["target"] for t in compared["targets"]
    }
    assert compared["baseline"]["vanished"] == ["odd_ops:nowhere_finite", "odd_ops:raises"]


def _without(document, path):
    *parents, last = path
    out = copy.deepcopy(document)
    node = out
    for key in parents:
        node = node[key]
    return out, node, last


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("verify", ["seed"]),
        ("verify", ["targets", 0, "error_ratio"]),
        ("verify", ["targets", 1, "failure", "kind"]),
        ("baseline", ["seed"]),
        ("baseline", ["targets", "gradcheck.builtin_targets:square", "error_ratio"]),
    ],
)
@pytest.mark.parametrize("change", ["missing", "renamed"])
def test_a_missing_or_renamed_required_field_is_invalid(runs, name, path, change):
    document, node, key = _without(runs[name], path)
    value = node.pop(key)
    if change == "renamed":
        node[key + "s"] = value
    assert errors(name, document), f"{change} {'/'.join(map(str, path))} was accepted"


def test_a_missing_comparison_field_and_a_wrong_enum_are_invalid(runs):
    document, node, key = _without(runs["compared"], ["baseline", "settings_changed"])
    del node[key]
    assert any("settings_changed" in e for e in errors("verify", document))
    document = copy.deepcopy(runs["verify"])
    document["targets"][0]["verdict"] = "passed_mostly"
    assert errors("verify", document)
    document = copy.deepcopy(runs["verify"])
    document["targets"][0]["passed"] = False  # contradicts "verdict": "passed"
    assert errors("verify", document)


def test_the_enumerations_are_the_vocabulary():
    defs = gradcheck.schemas.load("verify")["$defs"]
    verdicts = {Verdict.PASSED, Verdict.FAILED, Verdict.INCONCLUSIVE, Verdict.TIMED_OUT}
    assert set(defs["verdict"]["enum"]) == verdicts | {Verdict.NOT_RUN}
    assert set(defs["kind"]["enum"]) == set(FAILURE_KINDS) | set(RUN_FAILURE_KINDS)
    skips = {v for k, v in vars(Skip).items() if k.isupper()}
    assert set(defs["skip_reason"]["enum"]) == skips
    entry = gradcheck.schemas.load("baseline")["$defs"]["entry"]
    assert set(entry["required"]) == set(_ENTRY_FIELDS)
    assert set(entry["properties"]["verdict"]["enum"]) == set(defs["verdict"]["enum"])


def test_the_documented_json_names_every_field_of_the_schema():
    doc = inspect.getdoc(gradcheck.frontend.render)
    defs = gradcheck.schemas.load("verify")
    for key in [
        *defs["properties"],
        *defs["$defs"]["target"]["required"],
        *defs["$defs"]["comparison"]["required"],
    ]:
        assert f'"{key}"' in doc, f"render.py's docstring does not document {key!r}"


# [tool.gradcheck] tables the reader accepts (each a pyproject.toml's), and ones it
# refuses: the schema agrees on every one.
VALID_TABLES = [
    """
    max-examples = 20
    seed = 3
    regression-factor = 2
    [[tool.gradcheck.targets]]
    target = "ops:Softplus"
    domain = [-5, 5]
    [[tool.gradcheck.targets]]
    target = "ops:MatMul"
    shapes = ["n,k", "k,m"]
    dtype = "float32"
    rtol = 1e-3
    kwargs = { transpose = true }
    domain = [[-1, 1], [0.5, 2.0]]
    """,
    """
    mode = "fast"
    atol = 0
    avoid = [0.0, 1.5]
    timeout = 30
    example-timeout = 2.5
    [[tool.gradcheck.targets]]
    target = "examples/gather.py:GatherRows"
    shapes = ["n,k", [3]]
    integers = { 1 = [0, 5] }
    constants = [1]
    booleans = 2
    domain = "0:"
    [[tool.gradcheck.targets]]
    target = "mypkg.ops"
    modes = "rev,fwd"
    order = 2
    device = "cpu"
    nondet-tol = 1e-12
    min-dims = 1
    broadcast = true
    unique = false
    integers = ["0:-1:2"]
    domain = ["0:1", [1, 3]]
    """,
]
INVALID_TABLES = [
    "max_examples = 20",  # the key is spelled max-examples
    'mode = "slow"',
    "seed = -1",
    "max-examples = 0",
    "regression-factor = 0.5",
    'broadcast = "yes"',
    "min-dims = 9",
    "order = 5",
    'modes = ["rev", "sideways"]',
    "timeout = 0",
    "[[tool.gradcheck.targets]]\ndomain = [0, 1]",  # no target
    '[[tool.gradcheck.targets]]\ntarget = "m:Op"\nrtl = 1e-3',
    '[[tool.gradcheck.targets]]\ntarget = "m:Op"\nshapes = "n,k"',
    'targets = "m:Op"',
]


def _table(tmp_path: Path, body: str) -> tuple[dict[str, Any], object]:
    """The table as TOML reads it, and what the reader made of it (a ProjectConfig or
    the ConfigError it raised)."""
    text = "[tool.gradcheck]\n" + textwrap.dedent(body)
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    try:
        parsed: object = load_config(path)
    except ConfigError as exc:
        parsed = exc
    return tomllib.loads(text)["tool"]["gradcheck"], parsed


@pytest.mark.parametrize("body", VALID_TABLES)
def test_the_tables_the_reader_accepts_are_valid(tmp_path, body):
    table, parsed = _table(tmp_path, body)
    assert not isinstance(parsed, ConfigError), parsed
    assert errors("config", table) == []


@pytest.mark.parametrize("body", INVALID_TABLES)
def test_the_tables_the_reader_refuses_are_invalid(tmp_path, body):
    table, parsed = _table(tmp_path, body)
    assert isinstance(parsed, ConfigError)
    assert errors("config", table), f"the schema accepts {body!r}: {parsed}"


def test_the_config_schema_has_the_readers_keys():
    schema = gradcheck.schemas.load("config")
    options = schema["$defs"]["options"]["properties"]
    assert set(options) == set(OPTION_KEYS)
    assert set(schema["properties"]) == set(PROJECT_KEYS)
    target = schema["$defs"]["target"]
    assert target["required"] == ["target"] and set(target["properties"]) == {"target"}
