"""Adapters without their framework: one line naming the extra, exit 2."""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

from gradcheck.checking.adapters import framework, framework_of, require
from gradcheck.checking.resolve import resolve_target
from gradcheck.cli import main
from gradcheck.errors import MissingExtra


def test_require_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now fails
    with pytest.raises(
        MissingExtra,
        match=r"pip install torch \(or, from a clone of gradcheck, pip install '\.\[torch\]'\)",
    ):
        require("torch", needed_for="this")
    assert MissingExtra.exit_code == 2


def test_marked_function_without_torch_is_a_missing_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)

    @framework("torch")
    def f(x):
        return x

    assert framework_of(f) == "torch"
    with pytest.raises(MissingExtra, match="PyTorch"):
        resolve_target(f)


def test_cli_module_that_needs_torch(tmp_path, monkeypatch):
    # torch missing where the module is imported (a worker): its import fails as a
    # missing torch's would
    (tmp_path / "needs_torch.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    out = CliRunner().invoke(main, ["verify", "needs_torch:F"])
    assert out.exit_code == 2
    (line,) = out.output.strip().splitlines()
    assert "pip install torch (or, from a clone of gradcheck, pip install '.[torch]')" in line


def test_plain_functions_stay_gradcheck_targets():
    assert framework_of(lambda x: x * 2) is None
    with pytest.raises(ValueError, match="framework must be 'torch' or 'mygrad'"):
        framework("tensorflow")


def test_a_name_missing_from_an_installed_framework_is_not_an_install_hint(tmp_path, monkeypatch):
    pytest.importorskip("mygrad")
    (tmp_path / "wrong_import.py").write_text("from mygrad import NoSuchOperation\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    out = CliRunner().invoke(main, ["list", "wrong_import"])
    assert out.exit_code == 2
    (line,) = out.output.strip().splitlines()
    assert "cannot import name 'NoSuchOperation' from 'mygrad'" in line
    assert "pip install" not in line  # mygrad is installed: the name is wrong
