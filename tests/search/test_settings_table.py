"""The settings table (gradcheck/search/settings.py, issue 39): every setting is one
row, and every way to give it is read off that row. Here: the functions' keywords are
the table's columns, the command line's options and the configuration schema are the
table's, and each setting documented for the command line means the same wherever
else it is taken (``describe``, ``verify``, ``check``, the configuration file, the
marker and the fixtures' keys)."""

from __future__ import annotations

import inspect
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradcheck
import gradcheck.schemas
from gradcheck.checking.checker import CHECK_SETTINGS, check
from gradcheck.cli import verify_command
from gradcheck.errors import InvalidDescription
from gradcheck.frontend.config import OPTION_KEYS, load_config
from gradcheck.frontend.config_schema import SCHEMA_FILE, schema_text
from gradcheck.frontend.options import CLI_ROWS, settings_from_options
from gradcheck.pytest_plugin import marker_keys, setting_keys
from gradcheck.search import validators as validators_module
from gradcheck.search.description import Description, description_of, normalize_setting
from gradcheck.search.settings import (
    CHECK,
    CONFIG,
    DESCRIBE,
    RUN,
    SETTINGS,
    VERIFY,
    names_taken_by,
    setting,
)
from gradcheck.search.verifier import DEFAULTS, VERIFY_SETTINGS, effective_options, verify


def keywords(function: Any, *leave_out: str) -> set[str]:
    parameters = inspect.signature(function).parameters.values()
    return {p.name for p in parameters if p.kind is p.KEYWORD_ONLY} - set(leave_out)


def test_each_function_takes_exactly_its_column():
    assert keywords(gradcheck.describe) == set(names_taken_by(DESCRIBE))
    assert {f.name for f in fields(Description)} == set(names_taken_by(DESCRIBE))
    assert keywords(verify, "name", "progress", "on_example") == set(names_taken_by(VERIFY))
    assert keywords(check, "params") == set(names_taken_by(CHECK)) == set(CHECK_SETTINGS)
    assert VERIFY_SETTINGS == names_taken_by(VERIFY)


def test_names_are_unique_and_each_check_exists():
    names = [row.name for row in SETTINGS]
    assert len(names) == len(set(names))
    for row in SETTINGS:
        if row.normalize is not None:
            assert callable(getattr(validators_module, f"normalize_{row.normalize}")), row.name
        # a setting the configuration or the command line validates has a check
        if row.config_key is not None:
            assert row.normalize is not None, row.name
    with pytest.raises(ValueError, match="no entry point 'cli'"):
        names_taken_by("cli")


def test_the_shipped_config_schema_is_the_generated_one():
    # regenerate with: python -m gradcheck.frontend.config_schema
    assert Path(str(SCHEMA_FILE)).read_text(encoding="utf-8") == schema_text()
    schema = gradcheck.schemas.load("config")
    assert list(schema["$defs"]["options"]["properties"]) == list(OPTION_KEYS)


def test_the_command_line_options_are_the_tables_rows():
    params = {p.name: p for p in verify_command.params}
    for row in CLI_ROWS:
        option = params[row.option]
        assert option.opts == [row.flag], row.name
        assert option.help == row.help
        assert bool(option.multiple) == row.multiple
        assert option.secondary_opts == ([row.off_flag] if row.off_flag else [])
        if row.metavar is not None:
            assert option.metavar == row.metavar
    # every setting of verify and every limit of the run has an option
    given = {row.setting for row in CLI_ROWS}
    assert given == set(names_taken_by(VERIFY)) | set(names_taken_by(RUN))


def test_the_marker_and_the_fixtures_take_the_columns():
    check_keys, verify_keys = setting_keys()
    assert set(check_keys) == set(CHECK_SETTINGS)
    assert verify_keys == VERIFY_SETTINGS
    assert set(marker_keys()) == set(check_keys) | set(verify_keys)
    # the past bugs: the marker refused order, the check fixture gave it to the op
    assert "order" in marker_keys() and "order" in check_keys


def test_defaults_come_from_the_table():
    assert DEFAULTS == {"dtype": "float64", "max_examples": 100, "mode": "auto"}
    assert setting("max_examples").default == DEFAULTS["max_examples"]


def op(x, y, k=1.0):
    return x * y * k


#: For each setting of the command line: its value as Python, as a TOML value and as
#: the command line's words.
SPELLINGS: dict[str, tuple[Any, str, list[str]]] = {
    "shapes": (["3", "3"], '["3", "3"]', ["--shape", "3", "--shape", "3"]),
    "domain": ((0.5, 2.0), "[0.5, 2.0]", ["--domain", "0.5:2"]),
    "dtype": ("float32", '"float32"', ["--dtype", "float32"]),
    "kwargs": ({"k": 2}, "{k = 2}", ["--kwargs", '{"k": 2}']),
    "max_examples": (7, "7", ["--max-examples", "7"]),
    "seed": (5, "5", ["--seed", "5"]),
    "mode": ("fast", '"fast"', ["--mode", "fast"]),
    "atol": (0.5, "0.5", ["--atol", "0.5"]),
    "rtol": (0.25, "0.25", ["--rtol", "0.25"]),
    "broadcast": (True, "true", ["--broadcast"]),
    "avoid": ([0.0], "[0.0]", ["--avoid", "0"]),
    "constants": (1, "1", ["--constant", "1"]),
    "integers": ({1: (0, 3)}, '["1:0:3"]', ["--integers", "1:0:3"]),
    "booleans": ([1], "[1]", ["--boolean", "1"]),
    "unique": (False, "false", ["--no-unique"]),
    "min_dims": (2, "2", ["--min-dims", "2"]),
    "order": (2, "2", ["--order", "2"]),
    "modes": ("rev,fwd", '"rev,fwd"', ["--modes", "rev,fwd"]),
    "device": ("cpu", '"cpu"', ["--device", "cpu"]),
    "nondet_tol": (0.125, "0.125", ["--nondet-tol", "0.125"]),
    "skip_on": ("ZeroDivisionError", '"ZeroDivisionError"', ["--skip-on", "ZeroDivisionError"]),
    "compiled": ("eager", '"eager"', ["--compiled", "eager"]),
    "batched": (False, "false", ["--no-batched"]),
    "reference_forward": ("numpy:tanh", '"numpy:tanh"', ["--reference-forward", "numpy:tanh"]),
    "time_budget": (30, "30", ["--time-budget", "30"]),
    "timeout": (40, "40", ["--timeout", "40"]),
    "example_timeout": (50, "50", ["--example-timeout", "50"]),
    "max_memory": ("1G", '"1G"', ["--max-memory", "1G"]),
}


def test_every_option_has_its_spellings_here():
    assert set(SPELLINGS) == {row.setting for row in CLI_ROWS}


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_a_setting_means_the_same_wherever_it_is_given(name, tmp_path):
    python, toml, words = SPELLINGS[name]
    row = setting(name)
    expected = normalize_setting(name, python)
    # the command line (its value then goes through the same check in verify)
    ctx = verify_command.make_context("verify", [*words])
    given = settings_from_options(ctx) if row.replayed else {name: ctx.params[row.option]}
    assert normalize_setting(name, given[name]) == expected
    # the configuration file
    if CONFIG in row.takes:
        file = tmp_path / "gradcheck.toml"
        file.write_text(f"{row.config_key} = {toml}\n", encoding="utf-8")
        config = load_config(file)
        assert config is not None and config.defaults == {name: expected}
    # describe
    if DESCRIBE in row.takes:
        described = gradcheck.describe(**{name: python})(lambda x, y, k=1.0: x * y * k)
        assert description_of(described).as_dict() == {name: expected}
    # verify (its settings after the op's description and the defaults)
    if VERIFY in row.takes and name != "seed":
        assert effective_options(op, **{name: python})[name] == expected
    # the marker, and the fixture of each function that takes it
    assert (name in marker_keys()) == bool({CHECK, VERIFY} & row.takes)


#: Settings of ``check`` that a plain NumPy function can be checked with, in the
#: spelling of the command line and the configuration file.
CHECKABLE = {
    "seed": 5,
    "mode": "fast",
    "atol": 0.5,
    "rtol": 0.25,
    "dtype": "float32",
    "constants": 1,  # one index, as --constant 1 and constants = 1
    "modes": "rev",
    "order": 1,
    "nondet_tol": 0.125,
    "skip_on": "ZeroDivisionError",
    "reference_forward": "numpy:multiply",
    "compiled": False,
    "batched": False,
}


@pytest.mark.parametrize("name", list(CHECKABLE))
def test_check_takes_each_setting_as_the_command_line_spells_it(name):
    assert CHECK in setting(name).takes

    def forward(x, y, **params):
        assert not params, f"the op was given {params}"
        return x * y

    result = check(forward, np.array([1.0, 2.0]), np.array([3.0, 0.5]), **{name: CHECKABLE[name]})
    assert result.verdict == "passed", result


@pytest.mark.parametrize(
    "call",
    [
        lambda: gradcheck.describe(unique=1),
        lambda: gradcheck.verify(op, broadcast="no", max_examples=3, seed=0),
        lambda: gradcheck.verify(op, unique="yes", max_examples=3, seed=0),
        lambda: gradcheck.verify(op, batched=1, max_examples=3, seed=0),
        lambda: gradcheck.verify(op, seed=-1, max_examples=3),
    ],
    ids=["describe-unique", "verify-broadcast", "verify-unique", "verify-batched", "verify-seed"],
)
def test_a_value_the_configuration_refuses_is_refused_by_the_functions_too(call):
    # (describe took unique=1 as True, verify took broadcast="no" as True, and a seed
    # of -1; the configuration file and the command line refused them)
    with pytest.raises(InvalidDescription, match="must be"):
        call()


def test_an_invalid_modes_option_is_named_as_given(tmp_path, monkeypatch):
    # --forward-mode is another spelling of modes: the error names --modes, as typed
    from click.testing import CliRunner

    from gradcheck.cli import main

    (tmp_path / "ops_here.py").write_text("def square(x):\n    return x * x\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = CliRunner().invoke(
        main, ["verify", "ops_here:square", "--modes", "bogus", "--max-examples", "3"]
    )
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--modes'" in result.stderr


def test_a_check_reads_its_settings_from_one_frozen_object():
    import dataclasses

    from gradcheck.checking.check_settings import CheckSettings

    plain = CheckSettings("full", None, None, None, "float64", False, 4, ())
    with pytest.raises(dataclasses.FrozenInstanceError):
        plain.mode = "fast"  # type: ignore[misc]
    # a record holds the plain settings, and the others where they are not plain
    assert plain.recorded() == {
        "mode": "full",
        "atol": None,
        "rtol": None,
        "dtype": None,
        "reference": "float64",
        "complex_step": False,
        "directions": 4,
        "constants": [],
    }
    asked = dataclasses.replace(plain, constants=(1,), modes=("rev", "fwd"), nondet_tol=0.5)
    assert asked.recorded() == {
        **plain.recorded(),
        "constants": [1],
        "modes": ["rev", "fwd"],
        "nondet_tol": 0.5,
    }
    result = check(op, np.array([1.0, 2.0]), np.array([3.0, 0.5]), constants=[1], seed=2)
    assert result.settings == {**plain.recorded(), "constants": [1]}
