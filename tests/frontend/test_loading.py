"""Loading targets from specs: modules, files, names; every load error is one line."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from gradcheck.errors import GradcheckError, ModuleLoadError, TargetNotFound
from gradcheck.frontend.loading import load_targets, split_spec
from gradcheck.operation import Operation

OPS = '''
import numpy as np
import gradcheck
from gradcheck import Operation


class Square(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data ** 2

    def backward_var(self, grad, index, **kwargs):
        return grad * 2 * self.variables[0].data


class _Private(Square):
    pass


class Base(Operation):
    """No __call__: a base class, not a target."""


@gradcheck.describe(domain=(0.5, 2.0))
def marked(x):
    return x * x


def helper(x):
    return x


NUMBER = 3.0
INSTANCE = Square()
'''


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary working directory holding user modules, cleaned from sys.modules."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:  # the user's modules, not the libraries
        if (getattr(sys.modules[name], "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_split_spec() -> None:
    assert split_spec("a.b:C") == ("a.b", "C")
    assert split_spec("a.b") == ("a.b", None)
    assert split_spec("dir/ops.py:Ops.Mul") == ("dir/ops.py", "Ops.Mul")
    assert split_spec(r"C:\ops\my.py") == (r"C:\ops\my.py", None)


def test_module_in_working_directory_by_name(user_dir: Path) -> None:
    write(user_dir, "userops1.py", OPS)
    (target,) = load_targets("userops1:Square")
    assert target.name == "userops1:Square"
    assert issubclass(target.obj, Operation)


def test_whole_module_offers_op_classes_and_marked_functions_only(user_dir: Path) -> None:
    write(user_dir, "userops2.py", OPS)
    names = [t.name for t in load_targets("userops2")]
    assert names == ["userops2:Square", "userops2:marked"]


def test_unmarked_function_can_be_named_explicitly(user_dir: Path) -> None:
    write(user_dir, "userops3.py", OPS)
    (target,) = load_targets("userops3:helper")
    assert target.obj.__name__ == "helper"


def test_file_path_and_its_siblings_importable(user_dir: Path) -> None:
    write(user_dir, "pkg/sibling_helpers.py", "FACTOR = 2\n")
    write(
        user_dir,
        "pkg/fileops.py",
        OPS + "\nfrom sibling_helpers import FACTOR\n",
    )
    targets = load_targets("pkg/fileops.py")
    assert [t.name for t in targets] == ["pkg/fileops.py:Square", "pkg/fileops.py:marked"]
    (one,) = load_targets("pkg/fileops.py:Square")
    assert one.obj is targets[0].obj  # loaded once


def test_dotted_attribute(user_dir: Path) -> None:
    write(user_dir, "userops4.py", OPS + "\nclass Ops:\n    Sq = Square\n")
    (target,) = load_targets("userops4:Ops.Sq")
    assert target.obj.__name__ == "Square"


@pytest.mark.parametrize(
    ("spec", "error", "words"),
    [
        ("no_such_module_xyz:Op", ModuleLoadError, ["no module named 'no_such_module_xyz'"]),
        ("missing/file.py:Op", ModuleLoadError, ["no file 'missing/file.py'"]),
        ("userops5:Squar", TargetNotFound, ["no attribute 'Squar'", "did you mean 'Square'"]),
        ("userops5:NUMBER", GradcheckError, ["'userops5:NUMBER' is a float", "not an Operation"]),
        ("userops5:INSTANCE", GradcheckError, ["instance", "name the class"]),
        ("userops5:Base", GradcheckError, ["without a __call__"]),
        ("userops5:np", GradcheckError, ["is a module"]),
        ("empty_mod", TargetNotFound, ["offers no target"]),
        (
            "broken_mod:X",
            ModuleLoadError,
            ["cannot import module 'broken_mod'", "ZeroDivisionError"],
        ),
        ("dep_mod:X", ModuleLoadError, ["cannot import module 'dep_mod'", "not_installed_dep"]),
        ("syntax_mod:X", ModuleLoadError, ["cannot import module 'syntax_mod'", "SyntaxError"]),
    ],
)
def test_load_errors_are_one_line_with_exit_code_2(
    user_dir: Path, spec: str, error: type[Exception], words: list[str]
) -> None:
    write(user_dir, "userops5.py", OPS)
    write(user_dir, "empty_mod.py", "X = 1\n")
    write(user_dir, "broken_mod.py", "1 / 0\n")
    write(user_dir, "dep_mod.py", "import not_installed_dep\n")
    write(user_dir, "syntax_mod.py", "def f(:\n")
    with pytest.raises(error) as info:
        load_targets(spec)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message
    assert info.value.exit_code == 2


def test_failed_import_can_be_retried(user_dir: Path) -> None:
    path = write(user_dir, "later.py", "raise RuntimeError('not yet')\n")
    with pytest.raises(ModuleLoadError, match="RuntimeError: not yet"):
        load_targets("later.py")
    path.write_text(OPS)
    assert next(t.name for t in load_targets("later.py")) == "later.py:Square"
