"""A whole module is every target in it: what `discover` takes, what it leaves out and
why (`gradcheck list -v`, `gradcheck verify -v`), and what a package re-exports."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.cli import main
from gradcheck.errors import TargetNotFound
from gradcheck.frontend.loading import load_module, load_targets

OPS = """
import numpy as np
import gradcheck
from gradcheck import Operation
from gradcheck.nnet.activations import ReLU


class Square(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data ** 2

    def backward_var(self, grad, index, **kwargs):
        return grad * 2 * self.variables[0].data


class Base(Operation):
    pass


class _Private(Square):
    pass


class Settings:
    pass


@gradcheck.describe
def marked(x):
    return x * x


def helper(x):
    return x


square_again = Square
INSTANCE = Square()
NUMBER = 3.0
"""


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary working directory holding user modules, cleaned from sys.modules."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if (getattr(sys.modules[name], "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def reasons(module_name: str) -> dict[str, str | None]:
    from gradcheck.frontend.discovery import discover

    return {f.name: f.reason for f in discover(load_module(module_name))}


def test_every_public_callable_is_a_target_or_has_a_reason(user_dir: Path) -> None:
    write(user_dir, "ops_a.py", OPS)
    found = reasons("ops_a")
    assert [n for n, r in found.items() if r is None] == ["Square", "marked"]
    assert found["np"] == "the module numpy, imported"
    assert found["Operation"] == "imported from gradcheck.operation"
    assert found["ReLU"] == "imported from gradcheck.nnet.activations"
    assert "without __call__" in str(found["Base"])
    assert "private" in str(found["_Private"])
    assert found["Settings"] == "a class that is not an op"
    assert "without @gradcheck.describe" in str(found["helper"])
    assert found["square_again"] == "the same op as Square"  # not checked twice
    assert "the class is the target" in str(found["INSTANCE"])
    assert "NUMBER" not in found  # data is not listed


def test_a_package_that_imports_its_ops_says_where_they_are(user_dir: Path) -> None:
    write(user_dir, "mypkg/ops.py", OPS)
    write(user_dir, "mypkg/__init__.py", "from .ops import Square, marked\n")
    found = reasons("mypkg")
    assert found["Square"] == "imported from mypkg.ops"
    with pytest.raises(TargetNotFound, match=r"imports ops from mypkg\.ops: check that module"):
        load_targets("mypkg")
    assert [t.name for t in load_targets("mypkg.ops")] == ["mypkg.ops:Square", "mypkg.ops:marked"]
    (one,) = load_targets("mypkg:Square")  # named alone, an imported op is checked
    assert one.obj.__name__ == "Square"


def test_load_targets_hands_back_what_it_left_out(user_dir: Path) -> None:
    write(user_dir, "ops_b.py", OPS)
    skipped: list[str] = []
    names = [t.name for t in load_targets("ops_b", skipped=skipped)]
    assert names == ["ops_b:Square", "ops_b:marked"]
    assert "ops_b:np: the module numpy, imported" in skipped
    assert any(line.startswith("ops_b:helper: a function without") for line in skipped)


def test_list_and_verify_say_what_they_skipped_with_v_only(user_dir: Path) -> None:
    write(user_dir, "ops_c.py", OPS)
    runner = CliRunner()
    quiet = runner.invoke(main, ["list", "ops_c"])
    assert quiet.exit_code == 0, quiet.output
    assert "skipped" not in quiet.output
    loud = runner.invoke(main, ["list", "ops_c", "-v"])
    assert loud.exit_code == 0, loud.output
    assert "skipped ops_c:helper: a function without @gradcheck.describe" in loud.stderr
    assert "skipped ops_c:Operation: imported from gradcheck.operation" in loud.stderr
    ran = runner.invoke(main, ["verify", "ops_c", "-v", "--max-examples", "3", "--seed", "0"])
    assert ran.exit_code == 0, ran.output
    assert "skipped ops_c:helper: a function without @gradcheck.describe" in ran.output
    assert "ops_c:Square" in ran.output and "ops_c:marked" in ran.output


def test_list_v_of_a_module_without_targets_says_why_not_a_traceback(user_dir: Path) -> None:
    """The message of a module that offers no target sends the user to `list -v`; that
    printed a traceback and the message again, never the reasons."""
    write(user_dir, "ops_e.py", "import numpy as np\n\ndef helper(x):\n    return x\n")
    result = CliRunner().invoke(main, ["list", "ops_e", "-v"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "skipped ops_e:helper: a function without @gradcheck.describe" in result.stderr
    assert result.stderr.count("offers no target") == 1
    assert result.stderr.rstrip().splitlines()[-1].startswith("Error: module 'ops_e' offers")


def test_list_v_with_json_keeps_stdout_one_document(user_dir: Path) -> None:
    import json

    write(user_dir, "ops_d.py", OPS)
    result = CliRunner().invoke(main, ["list", "ops_d", "-v", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [t["target"] for t in doc["targets"]] == ["ops_d:Square", "ops_d:marked"]
    assert "skipped ops_d:helper" in result.stderr


def test_list_counts_a_positional_parameter_given_in_kwargs_as_a_parameter(
    user_dir: Path,
) -> None:
    """`describe(kwargs={"delta": 1.0})` makes `delta` a parameter for the search and the
    check; `gradcheck list` showed `2 (x, delta)` inputs."""
    import json

    source = (
        "import gradcheck\n\n"
        "@gradcheck.describe(kwargs={'delta': 1.0})\n"
        "def huber(x, delta):\n"
        "    return gradcheck.where(gradcheck.absolute(x) < delta, 0.5 * x * x, delta * x)\n"
    )
    (user_dir / "ops_k.py").write_text(source)
    result = CliRunner().invoke(main, ["list", "ops_k", "--format", "json"])
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["targets"]
    assert (row["arity"], row["inputs"], row["parameters"]) == (1, ["x"], ["delta"])
