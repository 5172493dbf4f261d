"""What installing gradcheck does to every process, each case in a fresh interpreter of
an environment where this checkout is installed (tests/installed.py).

Hypothesis runs gradcheck's entry point whenever it is imported, including while our
own strategies import it: a bare ``from gradcheck.strategies import tensors`` must
work whatever was imported before, and ``st.from_type(gradcheck.Tensor)`` whichever
of Hypothesis and gradcheck comes first.
"""

from __future__ import annotations

import pytest

from tests.installed import installed, run_python

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
