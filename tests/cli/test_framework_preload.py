"""A framework target's run (issue 40): the framework read from the module's text and
imported by the worker at once, ``loading <framework>...`` first, and nothing left
running after the summary (gradcheck.frontend.preload, gradcheck.frontend.runner)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.checking.frameworks import FRAMEWORKS, frameworks_imported, preloaded_modules
from gradcheck.cli import main
from gradcheck.frontend.preload import frameworks_of, module_source
from gradcheck.frontend.progress import Progress
from gradcheck.frontend.runner import Job, Run, WorkerSetup
from tests.cli.conftest import REPO

SQUARE = "gradcheck.builtin_targets:square"

# A module that imports MyGrad (a framework of the table, light to import) and offers
# an op of gradcheck's own; running it leaves a file behind.
MYGRAD_MODULE = """
import mygrad  # noqa: F401
import gradcheck as mg

open("module-ran", "w").close()


class Square(mg.Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data ** 2

    def backward_var(self, grad, index, **kw):
        return grad * 2 * self.variables[0].data
"""


def names(frameworks) -> list[str]:
    return [fw.name for fw in frameworks]


def test_the_frameworks_a_text_imports():
    assert names(frameworks_imported("import torch\n")) == ["torch"]
    assert names(frameworks_imported("import numpy as np\nfrom torch import nn\n")) == ["torch"]
    assert names(frameworks_imported("def f():\n    import jax.numpy as jnp\n")) == ["jax"]
    assert names(frameworks_imported("import jax, torch\n")) == ["jax"]  # the first name
    assert names(frameworks_imported("import mygrad\nimport torch\n")) == ["torch", "mygrad"]
    assert frameworks_imported("import torchvision\nimport numpy\nx = 'torch'\n") == []


def test_what_a_run_imports_for_torch_is_torch_alone():
    # Not torch.fx.experimental.symbolic_shapes and SymPy, which torch.autograd.grad
    # imports and the adapter's backward does without
    # (tests/checking/adapters/test_torch_engine.py).
    torch = next(fw for fw in FRAMEWORKS if fw.name == "torch")
    assert preloaded_modules([torch]) == ("torch",)


# A torch Function whose backward notes whether SymPy is imported in its process.
TORCH_MODULE = """
import sys
import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, g):
        with open("sympy-seen", "a") as f:
            f.write(f"{'sympy' in sys.modules}\\n")
        (x,) = ctx.saved_tensors
        return 3 * x**2 * g
"""


def test_a_torch_targets_run_imports_no_sympy(tmp_path: Path, monkeypatch):
    # Neither the worker's preload nor the checks' backward (tenths of a second).
    pytest.importorskip("torch")
    (tmp_path / "symop.py").write_text(TORCH_MODULE)
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["verify", "symop:Cube", "--max-examples", "3", "--seed", "1"])
    assert out.exit_code == 0, out.output
    seen = set((tmp_path / "sympy-seen").read_text().split())
    assert seen == {"False"}


# A module that notes, as the worker imports it, whether the worker has imported the
# command's own module or click (the plan's function is found in a module of its own).
NOTES_THE_WORKERS_MODULES = """
import sys
import gradcheck as mg

with open("worker-modules", "w") as f:
    f.write(" ".join(sorted(m for m in ("click", "gradcheck.cli") if m in sys.modules)))


class Square(mg.Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data ** 2

    def backward_var(self, grad, index, **kw):
        return grad * 2 * self.variables[0].data
"""


def test_the_worker_imports_neither_the_command_nor_click(tmp_path: Path, monkeypatch):
    # What a spawned worker imports before the user's module is on a framework target's
    # critical path (benchmarks/torch_target_time.py); the command's module brings click.
    # (CliRunner runs the command on a caller's list: the worker is spawned, not forked.)
    (tmp_path / "notes.py").write_text(NOTES_THE_WORKERS_MODULES)
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["verify", "notes:Square", "--max-examples", "2"])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "worker-modules").read_text() == ""


def test_reading_the_frameworks_imports_no_numpy(tmp_path: Path):
    # The command says what it loads before it imports NumPy (tenths of a second).
    (tmp_path / "good.py").write_text("import torch\n")
    code = (
        "import sys; from gradcheck.frontend.preload import frameworks_of; "
        f"print([f.name for f in frameworks_of(['good:Cube'], [{str(tmp_path)!r}])], "
        "'numpy' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["['torch']", "False"], out.stderr


# The worker's start (a Python, then NumPy, Hypothesis and the framework) is the run's
# critical path: the command starts it before it imports NumPy or the search itself.
STARTS_THE_WORKER = """
import os, sys
import gradcheck.frontend.runner as runner
def start(self):
    print(sorted(m for m in ("numpy", "hypothesis", "gradcheck.search.verifier")
                 if m in sys.modules), flush=True)
    os._exit(0)
runner._Zygote.start = start
from gradcheck.cli import main
main(["verify", "good:Cube", "--max-examples", "2"])
"""


def test_the_worker_starts_before_the_command_imports_numpy(tmp_path: Path):
    (tmp_path / "good.py").write_text("import torch\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", STARTS_THE_WORKER],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.split() == ["[]"], out.stdout + out.stderr


# The first line (what the worker imports) comes before the command imports NumPy.
SAYS_WHAT_IT_LOADS = """
import os, sys
import gradcheck.frontend.progress as progress
def loading(self, names):
    print(names, "numpy" in sys.modules, flush=True)
    os._exit(0)
progress.Progress.loading = loading
from gradcheck.cli import main
main(["verify", "good:Cube", "--max-examples", "2"])
"""


def test_the_command_says_what_it_loads_before_it_imports_numpy(tmp_path: Path):
    (tmp_path / "good.py").write_text("import torch\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", SAYS_WHAT_IT_LOADS],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.split() == ["torch", "False"], out.stdout + out.stderr


# What the summary and the output files need is imported while the worker imports the
# framework, not after the last result (where the user waits for it).
LOADS_THE_TARGETS = """
import os, sys
import gradcheck.frontend.runner as runner
def load(self, *args, **kwargs):
    print(sorted(m for m in ("gradcheck.frontend.baseline", "gradcheck.frontend.ci_report",
                             "gradcheck.frontend.html_report") if m not in sys.modules),
          flush=True)
    os._exit(0)
runner.Run.load = load
from gradcheck.cli import main
main(["verify", "good:Cube", "--max-examples", "2"])
"""


def test_the_reports_are_imported_before_the_targets_are_loaded(tmp_path: Path):
    (tmp_path / "good.py").write_text("import torch\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", LOADS_THE_TARGETS],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.splitlines() == ["loading torch...", "[]"], out.stdout + out.stderr


def test_a_module_is_found_and_read_without_running_it(tmp_path: Path):
    (tmp_path / "mgmod.py").write_text(MYGRAD_MODULE)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "ops.py").write_text("from jax import numpy as jnp\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "file_ops.py").write_text("import torch\n")
    folders = [str(tmp_path)]
    assert names(frameworks_of(["mgmod:Square"], folders)) == ["mygrad"]
    assert names(frameworks_of(["pkg.ops:cube", "sub/file_ops.py:F"], folders)) == ["torch", "jax"]
    assert names(frameworks_of(["sub/file_ops.py"], folders)) == ["torch"]
    assert frameworks_of(["no_such_module:Op", "pkg:Op", "bad-name:Op"], folders) == []
    assert module_source("pkg", folders) == ""
    assert not (tmp_path / "module-ran").exists()


class Stream:
    def __init__(self, tty: bool) -> None:
        self.text, self.tty = "", tty

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self.tty


def test_loading_is_the_live_line_on_a_terminal_until_a_target_starts():
    lines, live = Stream(True), Stream(True)
    progress = Progress(1, lines, live)
    progress.loading("torch")
    assert live.text == "\r\x1b[Kloading torch..." and lines.text == ""
    progress.note("config: pyproject.toml")  # a note keeps it at the bottom
    assert live.text.endswith("\r\x1b[Kloading torch...") and "config" in lines.text
    progress.started(0, "good:Cube")
    assert live.text.endswith("\r\x1b[K[0/1] good:Cube")


def test_loading_is_one_plain_line_off_a_terminal():
    lines = Stream(False)
    progress = Progress(1, lines, None)
    progress.loading("torch")
    progress.started(0, "good:Cube")
    assert lines.text == "loading torch...\n"


def test_the_command_says_what_it_loads_first(tmp_path: Path, monkeypatch):
    pytest.importorskip("mygrad")  # the module it loads is a MyGrad op
    (tmp_path / "mgmod.py").write_text(MYGRAD_MODULE)
    monkeypatch.chdir(tmp_path)
    args = ["verify", "mgmod:Square", "--max-examples", "2", "--seed", "1"]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    assert out.output.startswith("loading mygrad...\n[1/1] mgmod:Square passed")
    quiet = CliRunner().invoke(main, [*args, "-q"])
    assert quiet.exit_code == 0 and "loading" not in quiet.output
    plain = CliRunner().invoke(main, ["verify", SQUARE, "--max-examples", "2", "--seed", "1"])
    assert plain.exit_code == 0 and "loading" not in plain.output  # no framework


def in_worker(run: Run, expression: str):
    """``expression``'s value in the run's zygote (eval pickles by reference)."""
    return run.load(eval, expression)


def test_the_worker_imports_the_frameworks_before_it_loads_anything(tmp_path: Path):
    pytest.importorskip("mygrad")  # the module it loads is a MyGrad op
    imported = "'mygrad' in __import__('sys').modules"
    run = Run(1, WorkerSetup(cwd=str(tmp_path)))
    try:
        assert in_worker(run, imported) is False  # nothing imports it but the preload
    finally:
        run.close()
    run = Run(1, WorkerSetup(cwd=str(tmp_path)))
    try:
        run.preload(["mygrad", "no_such_framework_module"])  # one missing: left to the load
        assert in_worker(run, imported) is True
    finally:
        run.close()


def test_what_the_worker_imported_is_frozen_for_the_targets_processes(tmp_path: Path):
    run = Run(1, WorkerSetup(cwd=str(tmp_path)))
    try:
        outcome = run.check(Job(SQUARE, {"max_examples": 2, "seed": 1}))
        assert outcome.passed
        assert in_worker(run, "__import__('gc').get_freeze_count()") > 0
    finally:
        run.close()


def test_a_released_worker_ends_without_being_waited_for(tmp_path: Path):
    run = Run(1, WorkerSetup(cwd=str(tmp_path)))
    try:
        assert run.check(Job(SQUARE, {"max_examples": 2, "seed": 1})).passed
        zygote = run._zygote
        assert zygote is not None
        run.release()
        zygote.process.join(60)
        assert zygote.process.exitcode == 0
    finally:
        run.close()


def test_closing_waits_for_the_workers_word_not_for_its_exit(tmp_path: Path, monkeypatch):
    # The worker's exit is the kernel freeing its memory (about 0.3 s after a torch
    # target): the run ends once the worker says it has finished, and a thread reaps it.
    run = Run(1, WorkerSetup(cwd=str(tmp_path)))
    try:
        assert run.check(Job(SQUARE, {"max_examples": 2, "seed": 1})).passed
        zygote = run._zygote
        assert zygote is not None
        run.release()
    finally:
        joined: list[str] = []
        join = type(zygote.process).join

        def recorded(process, timeout=None):
            joined.append(threading.current_thread().name)
            return join(process, timeout)

        monkeypatch.setattr(type(zygote.process), "join", recorded)
        run.close()
    assert "MainThread" not in joined
    # Not a child the command's end or the interpreter's exit would wait for.
    assert zygote.process not in multiprocessing.active_children()
    # ... and nothing is left behind: the worker is reaped (no zombie), its pid gone.
    pid = zygote.process.pid
    for _ in range(600):
        if zygote.process.exitcode is not None and not os.path.exists(f"/proc/{pid}"):
            break
        threading.Event().wait(0.1)
    assert zygote.process.exitcode in (0, -signal.SIGKILL)  # (killed as it exits)
    if sys.platform.startswith("linux"):
        assert not os.path.exists(f"/proc/{pid}")
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_the_command_ends_without_the_interpreter_teardown():
    hook = "import atexit; atexit.register(lambda: print('teardown ran', flush=True)); "
    code = hook + "from gradcheck.cli import main; import sys; sys.argv[1:] = ['-V']; main()"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    own = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert own.returncode == 0 and "gradcheck" in own.stdout
    assert "teardown ran" not in own.stdout
    # A caller's argument list (a test, an embedding program): its process goes on.
    code = hook + "from gradcheck.cli import main; main(['-V'])"
    called = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert called.returncode == 0 and "teardown ran" in called.stdout


# A framework's import makes hundreds of thousands of objects that live as long as the
# process: the preload imports it without the garbage collector (whose full collections
# walked them, and NumPy's and Hypothesis's, three times during `import torch`: 0.3-0.5 s
# of its CPU) and freezes what it made, and the collector is on again after.
PRELOADS_A_BIG_MODULE = """
import gc, sys
sys.path.insert(0, ".")
from gradcheck.frontend.worker import _preload
collections = []
gc.callbacks.append(lambda phase, info: phase == "stop" and collections.append(info["generation"]))
_preload(["big"])
print(len(collections), gc.get_freeze_count() >= 300_000, gc.isenabled(), "big" in sys.modules)
"""


def test_the_preload_imports_without_collections_and_freezes_what_it_made(tmp_path: Path):
    (tmp_path / "big.py").write_text("OBJECTS = [[i] for i in range(300_000)]\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", PRELOADS_A_BIG_MODULE],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.split() == ["0", "True", "True", "True"], out.stdout + out.stderr
