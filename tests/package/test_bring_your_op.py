"""docs/bring-your-op.md runs: each framework's Python blocks in order, in one
namespace per framework (skipped where it is not installed), and its commands
check what they say they check."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.cli import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "bring-your-op.md"
SECTION = re.compile(r"^## (PyTorch|MyGrad|JAX)\n(.*?)(?=^## |\Z)", re.S | re.M)
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
PACKAGE = {"PyTorch": "torch", "MyGrad": "mygrad", "JAX": "jax"}


def sections() -> dict[str, str]:
    return dict(SECTION.findall(PAGE.read_text()))


def test_the_page_has_an_example_per_framework_and_the_readme_links_it():
    assert set(sections()) == set(PACKAGE)
    readme = (PAGE.parent.parent / "README.md").read_text()
    assert "docs/bring-your-op.md" in readme


@pytest.mark.parametrize("name", sorted(PACKAGE))
def test_the_examples_run(name, tmp_path, monkeypatch):
    if importlib.util.find_spec(PACKAGE[name]) is None:
        pytest.skip(f"{PACKAGE[name]} is not installed")
    text = sections()[name]
    blocks = FENCE.findall(text)
    python = [body for lang, body in blocks if lang == "python"]
    namespace: dict = {"__name__": f"bring_{name.lower()}"}
    for i, code in enumerate(python):
        exec(compile(code, f"{PAGE}:{name}:{i}", "exec"), namespace)
    # The command shown runs the first block's op, saved as the file it names.
    (command,) = [body for lang, body in blocks if lang == "console"]
    words = [w.strip("'") for w in re.findall(r"'[^']*'|\S+", command.strip())][2:]
    spec = words[1]
    (tmp_path / spec.split(":")[0]).write_text(python[0])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    out = CliRunner().invoke(main, [*words, "--max-examples", "10", "--seed", "0"])
    assert out.exit_code == 0, out.output
