"""The table of output formats (gradcheck.frontend.formats) drives --format."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import gradcheck
from gradcheck.cli import list_command, verify_command
from gradcheck.frontend.formats import FORMATS, RunReport

CLI = Path(gradcheck.__file__).parent / "cli.py"


def _format_param(command):
    (param,) = [p for p in command.params if p.name == "output_format"]
    return param


def test_the_choices_of_every_command_are_the_table():
    for command in (verify_command, list_command):
        param = _format_param(command)
        assert list(param.type.choices) == list(FORMATS)
        assert param.default == next(iter(FORMATS))
        for f in FORMATS.values():
            assert f.help in param.help


def test_the_cli_spells_no_format_name():
    # Every decision about a format reads the table; no `== "json"` in the command.
    names = set(FORMATS)
    literals = [
        node.lineno
        for node in ast.walk(ast.parse(CLI.read_text()))
        if isinstance(node, ast.Constant) and node.value in names
    ]
    assert literals == []


def test_every_format_renders_a_run_and_a_target_list():
    result = gradcheck.verify(lambda x: x * x, max_examples=2, seed=0, name="m:sq")
    row = {
        "target": "m:sq",
        "kind": "function",
        "arity": 1,
        "variadic": False,
        "inputs": ["x"],
        "parameters": [],
        "described": {},
    }
    for f in FORMATS.values():
        text = f.run(RunReport([result], 0, lambda r: "gradcheck verify m:sq"))
        listing = f.targets([row])
        assert "m:sq" in text and "m:sq" in listing
        if f.document:  # one document a program reads
            assert json.loads(text)["targets"][0]["target"] == "m:sq"
            assert json.loads(listing)["targets"][0]["target"] == "m:sq"
