"""The engine lives in ``gradcheck/engine/``; MyGrad's paths of its modules
(``gradcheck.tensor_base``, ``gradcheck.ops.arithmetic``, ``gradcheck.nnet.layers.conv``...)
are the very same module objects, at any depth, so classes compare, pickle and load
under both."""

from __future__ import annotations

import importlib
import os
import pickle
import pkgutil
import subprocess
import sys

import pytest

import gradcheck
import gradcheck.engine


def engine_modules() -> list[str]:
    """The engine's modules that have an old path (those the engine had before it had a
    folder: not its newer modules, such as gradcheck.engine.execution)."""
    return [
        info.name
        for info in pkgutil.walk_packages(gradcheck.engine.__path__, "gradcheck.engine.")
        if info.name.split(".")[2] in gradcheck.ENGINE_MODULES
    ]


def test_every_old_path_is_the_engine_module_itself():
    names = engine_modules()
    assert "gradcheck.engine.nnet.layers.conv" in names
    for new in names:
        old = new.replace("gradcheck.engine.", "gradcheck.", 1)
        assert importlib.import_module(old) is importlib.import_module(new), old
        assert sys.modules[old] is sys.modules[new]
        assert sys.modules[new].__spec__.name == new  # its own spec, not the alias's


def test_no_engine_file_is_loaded_twice():
    for new in engine_modules():
        importlib.import_module(new.replace("gradcheck.engine.", "gradcheck.", 1))
    by_file: dict[str, set[int]] = {}
    for module in list(sys.modules.values()):
        where = getattr(module, "__file__", None) or ""
        if "engine" in where:
            by_file.setdefault(where, set()).add(id(module))
    assert [f for f, ids in by_file.items() if len(ids) > 1] == []


def test_classes_are_one_under_both_paths():
    from gradcheck.engine.ops.arithmetic import Add as NewAdd
    from gradcheck.ops.arithmetic import Add
    from gradcheck.tensor_base import Tensor

    assert Add is NewAdd
    assert isinstance(gradcheck.tensor([1.0]), Tensor)
    assert gradcheck.tensor_base is gradcheck.engine.tensor_base
    assert gradcheck.nnet is gradcheck.engine.nnet
    from gradcheck import graph

    assert graph is gradcheck.engine.graph


def test_a_tensor_pickled_under_the_old_path_loads():
    t = gradcheck.tensor([1.0, 2.0])
    text = pickle.dumps(t, protocol=2)  # names classes as text: module\nname
    assert b"gradcheck.engine.tensor_base" in text
    old = text.replace(b"gradcheck.engine.tensor_base", b"gradcheck.tensor_base")
    back = pickle.loads(old)
    assert type(back) is type(t) and back.data.tolist() == [1.0, 2.0]


def test_an_old_path_that_names_nothing_is_not_found():
    with pytest.raises(ModuleNotFoundError, match=r"gradcheck\.ops\.no_such_family"):
        importlib.import_module("gradcheck.ops.no_such_family")


def test_python_m_runs_an_old_path():
    code = "import runpy; runpy.run_module('gradcheck.tensor_base', run_name='__main__')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_import_gradcheck_stays_light():
    # the finder is a plain class: importlib.abc would bring tempfile, random, bz2...
    # into every pytest run of an installation (pytest imports the plugin's package)
    code = "import sys, gradcheck; print(sorted({'importlib.abc', 'tempfile'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr


def test_hypothesis_hook_registers_the_tensor_of_the_engine_folder():
    # the hook waits for the engine's tensor module, which `gradcheck.Tensor` imports
    # by its new path; the strategy it registers is gradcheck.strategies.tensors
    code = (
        "import sys, hypothesis, hypothesis.strategies as st, _gradcheck_entry_points as e\n"
        "e._hypothesis_setup_hook()\n"
        "import gradcheck as mg\n"
        "hypothesis.find(st.from_type(mg.Tensor), lambda t: True)\n"
        "print('gradcheck.strategies.tensors' in sys.modules)\n"
    )
    env = {**os.environ, "HYPOTHESIS_NO_PLUGINS": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.stdout.strip() == "True", done.stderr


def test_tensor_base_keeps_mygrads_names():
    # the names of mygrad.tensor_base that gradcheck.tensor_base had before the split
    import gradcheck.tensor_base as tb

    names = (
        "CONSTANT_ONLY_DTYPES DisconnectedView Operation Tensor asarray astensor tensor "
        "execute_op assign_in_place implements_numpy_override _REGISTERED_UFUNC"
    )
    assert [n for n in names.split() if not hasattr(tb, n)] == []


def test_process_state_reads_the_engine_by_its_new_paths():
    # a process that imported the engine by its new paths alone (as gradcheck's own
    # code does): the state compared between targets must see the engine's switches
    code = (
        "import sys\n"
        "from gradcheck.frontend import process_state\n"
        "import gradcheck.engine.tensor_base, gradcheck.engine.random\n"
        "from gradcheck.engine._utils import lock_management as lm\n"
        "assert 'gradcheck._utils.lock_management' not in sys.modules\n"
        "before = process_state._engine()\n"
        "lm.MEM_GUARD = not lm.MEM_GUARD\n"
        "print(process_state._engine() != before, None not in before)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["True", "True"], done.stderr


def test_importing_a_submodule_by_its_old_path_leaves_its_packages_function():
    """`nnet.layers.batchnorm` is a function and a submodule's name; the import system
    sets an imported submodule as its parent's attribute, which turned the function into
    the module once `gradcheck.nnet.layers.batchnorm` was imported by its old path (the
    doctest `batchnorm(...)` then raised "'module' object is not callable")."""
    code = (
        "import importlib, gradcheck as mg\n"
        "importlib.import_module('gradcheck.nnet.layers.batchnorm')\n"
        "from gradcheck.nnet.layers import batchnorm\n"
        "import gradcheck.engine.nnet.layers as layers\n"
        "assert callable(batchnorm) and callable(layers.batchnorm), batchnorm\n"
        "print(batchnorm(mg.Tensor([[1.0], [3.0]]), eps=0.0).data.ravel().tolist())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[-1.0, 1.0]"
