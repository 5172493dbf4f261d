"""What installing gradcheck does to every process, each case in a fresh interpreter of
an environment where this checkout is installed (tests/support/installed.py).

Hypothesis runs gradcheck's entry point whenever it is imported, including while our
own strategies import it: a bare ``from gradcheck.strategies import tensors`` must
work whatever was imported before, and ``st.from_type(gradcheck.Tensor)`` whichever
of Hypothesis and gradcheck comes first.
"""

from __future__ import annotations

import pytest

from tests.support.installed import installed, run_python

STRATEGY_MODULES = [
    "gradcheck.strategies",
    "gradcheck.strategies.gradients",
    "gradcheck.strategies.graphs",
    "gradcheck.strategies.indices",
    "gradcheck.strategies.inputs",
    "gradcheck.strategies.shapes",
    "gradcheck.strategies.tensors",
]


@pytest.fixture
def env(tmp_path):
    return installed(tmp_path)


def python(tmp_path, env, code):
    result = run_python("-c", code, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize("module", STRATEGY_MODULES)
def test_a_strategies_module_imports_first_thing(tmp_path, env, module):
    assert python(tmp_path, env, f"import {module}; print('ok')") == "ok"


def test_the_readme_import_of_tensors_draws_tensors(tmp_path, env):
    code = (
        "from gradcheck.strategies import tensors\n"
        "from hypothesis import find\n"
        "print(type(find(tensors(), lambda t: True)).__name__)\n"
    )
    assert python(tmp_path, env, code) == "Tensor"


FROM_TYPE = (
    "from hypothesis import find\n"
    "print(type(find(st.from_type(Tensor), lambda t: t.size > 1)).__name__)\n"
)


@pytest.mark.parametrize(
    "imports",
    [
        # hypothesis first: the engine is not loaded when the entry point runs
        "import hypothesis.strategies as st\nimport gradcheck as mg\nTensor = mg.Tensor\n",
        "import hypothesis.strategies as st\nfrom gradcheck.tensor_base import Tensor\n",
        # gradcheck first: the engine is loaded when it runs
        "import gradcheck as mg\nTensor = mg.Tensor\nimport hypothesis.strategies as st\n",
        # the strategies first: it runs while they are being imported
        "from gradcheck.strategies import tensors\nimport gradcheck as mg\n"
        "import hypothesis.strategies as st\nTensor = mg.Tensor\n",
    ],
    ids=[
        "hypothesis-then-gradcheck",
        "hypothesis-then-tensor_base",
        "gradcheck-then-hypothesis",
        "strategies-first",
    ],
)
def test_from_type_draws_tensors_whatever_is_imported_first(tmp_path, env, imports):
    assert python(tmp_path, env, imports + FROM_TYPE) == "Tensor"


def test_verify_checks_a_module_that_imports_the_strategies(tmp_path, env):
    (tmp_path / "ops.py").write_text(
        "from gradcheck.strategies import tensors  # noqa: F401\n"
        "import gradcheck as mg\n\n\n"
        "class Square(mg.Operation):\n"
        "    def __call__(self, x):\n"
        "        self.variables = (x,)\n"
        "        return x.data ** 2\n\n"
        "    def backward_var(self, grad, index, **kwargs):\n"
        "        return grad * 2 * self.variables[0].data\n"
    )
    result = run_python(
        "-m", "gradcheck", "verify", "ops:Square", "--max-examples", "3", cwd=tmp_path, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_cli_imports_first_thing(tmp_path, env):
    assert python(tmp_path, env, "import gradcheck.cli; print('ok')") == "ok"


# -- a project with a gradcheck of its own (issue 22, item 8) ---------------------------
OWN_TEST = """
import gradcheck
from hypothesis import given, strategies as st


@given(st.integers())
def test_own_gradcheck(n):
    assert gradcheck.PROJECT
"""
OWN_MODULE = '"""The project\'s own module named gradcheck."""\nPROJECT = True\n'


@pytest.fixture(params=["gradcheck.py", "gradcheck/__init__.py"])
def own_project(request, tmp_path):
    """A project whose own module (or package) is named gradcheck, and a test of it."""
    project = tmp_path / "project"
    (project / request.param).parent.mkdir(parents=True)
    (project / request.param).write_text(OWN_MODULE)
    (project / "test_own.py").write_text(OWN_TEST)
    return project


PYTEST = ("-m", "pytest", "-q", "-p", "no:cacheprovider")


@pytest.mark.parametrize(
    "command",
    [
        PYTEST,  # the folder is on sys.path from the start
        ("-P", *PYTEST),  # as the `pytest` script: it is put there for the tests
        (*PYTEST, "-p", "no:gradcheck"),
    ],
    ids=["python-m-pytest", "pytest-script", "no-plugin"],
)
def test_pytest_runs_a_project_with_its_own_gradcheck(own_project, env, command):
    result = run_python(*command, cwd=own_project, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_hypothesis_leaves_a_projects_own_gradcheck_alone(own_project, env):
    code = "import hypothesis, gradcheck, sys; print(gradcheck.PROJECT, 'numpy' in sys.modules)"
    assert python(own_project, env, code) == "True False"


def test_importing_hypothesis_imports_nothing_of_gradcheck(tmp_path, env):
    code = "import sys, hypothesis; print(sorted(m for m in sys.modules if 'gradcheck.' in m))"
    assert python(tmp_path, env, code) == "[]"


# -- the plugin, switched on and off ---------------------------------------------------
FIXTURE_TEST = "def test_fixture(gradcheck):\n    assert callable(gradcheck)\n"


@pytest.mark.parametrize(
    "how",
    [
        (),  # the entry point
        ("-p", "gradcheck.pytest_plugin"),  # named as well: registered once
        ("-p", "gradcheck"),
        ("conftest",),  # pytest_plugins = [...] in a conftest, as well
    ],
    ids=["entry-point", "p-module", "p-name", "conftest"],
)
def test_the_plugin_loads_once_however_it_is_named(tmp_path, env, how):
    (tmp_path / "test_fixture.py").write_text(FIXTURE_TEST)
    if how == ("conftest",):
        (tmp_path / "conftest.py").write_text('pytest_plugins = ["gradcheck.pytest_plugin"]\n')
        how = ()
    result = run_python(*PYTEST, *how, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_the_plugin_can_be_named_where_autoloading_is_off(tmp_path, env):
    (tmp_path / "test_fixture.py").write_text(FIXTURE_TEST)
    env = {**env, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    result = run_python(*PYTEST, "-p", "gradcheck.pytest_plugin", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_gradcheck_turns_the_plugin_off(tmp_path, env):
    (tmp_path / "test_fixture.py").write_text(FIXTURE_TEST)
    result = run_python(*PYTEST, "-p", "no:gradcheck", cwd=tmp_path, env=env)
    assert result.returncode == 1
    assert "fixture 'gradcheck' not found" in result.stdout


def test_a_run_without_gradcheck_loads_nothing_heavy(tmp_path, env):
    (tmp_path / "conftest.py").write_text(
        "import sys\n\n\n"
        "def pytest_sessionfinish(session):\n"
        "    heavy = ['numpy', 'hypothesis', 'gradcheck.engine.tensor_base',\n"
        "             'gradcheck.strategies']\n"
        "    print('LOADED', [m for m in heavy if m in sys.modules])\n"
        "    print('PLUGIN', 'gradcheck.pytest_plugin' in sys.modules)\n"
    )
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    pass\n")
    result = run_python(*PYTEST, "-s", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "LOADED []" in result.stdout
    assert "PLUGIN True" in result.stdout
