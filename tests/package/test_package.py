"""The package's public surface: lazy loading and names that stay what they are."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import types

import gradcheck


def test_import_gradcheck_loads_neither_numpy_nor_hypothesis():
    heavy = ("numpy", "hypothesis", "gradcheck.engine.tensor_base")
    code = f"import sys, gradcheck; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_import_of_the_cli_loads_neither_the_engine_nor_hypothesis():
    # `gradcheck --help` and `gradcheck list` start fast: the engine's ops and
    # Hypothesis load when a target is checked.
    heavy = ("hypothesis", "gradcheck.engine.tensor_base", "gradcheck.engine.ops")
    code = f"import sys, gradcheck.cli; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_worker_that_lists_the_targets_imports_neither_the_command_nor_click():
    # `gradcheck verify` sends its zygote listed_plan (pickled by reference) and gets
    # RunItems back: the worker unpickles them from gradcheck.frontend.plan, never
    # from the command's module (which imports click).
    import pickle

    from gradcheck.cli import listed_plan

    blob = pickle.dumps((listed_plan, (["gradcheck.builtin_targets"], None, False)))
    code = (
        "import pickle, sys\n"
        "function, args = pickle.loads(sys.stdin.buffer.read())\n"
        "items, _, _ = function(*args)\n"
        "sys.stdout.buffer.write(pickle.dumps("
        "(items, sorted(m for m in ('click', 'gradcheck.cli') if m in sys.modules))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, check=True)
    items, imported = pickle.loads(out.stdout)
    assert imported == []
    assert len(items) > 10 and type(items[0]).__module__ == "gradcheck.frontend.plan"


def test_public_names_are_not_shadowed_by_submodules():
    # Importing a submodule sets it as an attribute of the package; a public function
    # with a module's name would then become that module.
    for info in pkgutil.walk_packages(gradcheck.__path__, "gradcheck."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    for name in gradcheck.__all__:
        value = getattr(gradcheck, name)
        if name in ("linalg", "nnet", "random"):
            assert isinstance(value, types.ModuleType)
        else:
            assert not isinstance(value, types.ModuleType), name


def test_star_import_and_dir():
    namespace: dict = {}
    exec("from gradcheck import *", namespace)
    assert {"Tensor", "check", "verify", "add", "einsum", "no_autodiff"} <= set(namespace)
    assert {"Tensor", "sum", "describe"} <= set(dir(gradcheck))


def test_unknown_attribute():
    try:
        gradcheck.no_such_thing  # noqa: B018
    except AttributeError as exc:
        assert "no_such_thing" in str(exc)
    else:
        raise AssertionError("no AttributeError")


# The paths users type, kept as aliases of the modules in the layer subpackages.
ALIASES = {
    "gradcheck.cli": "gradcheck.cli",
    "gradcheck.pytest_plugin": "gradcheck.pytest_plugin",
    "gradcheck.adapters": "gradcheck.checking.adapters",
    "gradcheck.diagnostics": "gradcheck.checking.diagnostics",
}


def test_old_module_paths_are_the_real_modules():
    for old, new in ALIASES.items():
        module = importlib.import_module(old)
        assert module is importlib.import_module(new) is sys.modules[old], old
        assert getattr(gradcheck, old.rpartition(".")[2]) is module
    from gradcheck.adapters import _top_module, framework  # noqa: F401  (private names too)
    from gradcheck.checking.adapters import framework as real_framework
    from gradcheck.cli import main
    from gradcheck.cli import main as real_main
    from gradcheck.diagnostics import Diagnosis, diagnose  # noqa: F401

    assert main is real_main and framework is real_framework


def test_python_dash_m_runs_the_cli_under_both_paths():
    for module in ("gradcheck", "gradcheck.cli"):
        out = subprocess.run(
            [sys.executable, "-m", module, "--version"], capture_output=True, text=True
        )
        assert out.returncode == 0 and gradcheck.__version__ in out.stdout, (module, out)
