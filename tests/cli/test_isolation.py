"""Isolation that holds (issue 35): user code never runs in the command, never leaks
into the next target, never loses a verdict or a file. One test per fault of the issue,
each run as a user runs the command (a process of its own, under a timeout)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.cli.conftest import REPO

FAST = ["--max-examples", "3", "--seed", "1"]

OPS = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time
    import numpy as np
    import gradcheck as mg


    class Exp(mg.Operation):
        def __call__(self, x):
            self.variables = (x,)
            return np.exp(np.clip(x.data, -5, 5))

        def backward_var(self, grad, index, **kw):
            x = self.variables[0].data
            return grad * np.exp(np.clip(x, -5, 5)) * ((x > -5) & (x < 5))


    class Wrong(Exp):
        def backward_var(self, grad, index, **kw):
            return 3 * super().backward_var(grad, index, **kw)


    class Underflows(mg.Operation):
        # exp(-1e4) underflows to 0: harmless, unless NumPy's error state says raise
        def __call__(self, x):
            self.variables = (x,)
            return x.data + 0.0 * np.exp(-1e4 - x.data**2)

        def backward_var(self, grad, index, **kw):
            return grad * np.ones_like(self.variables[0].data)


    class Slow(Exp):
        def __call__(self, x):
            time.sleep(0.05)
            return super().__call__(x)


    class SetsErrorState(Exp):
        def __call__(self, x):
            np.seterr(all="raise")
            return super().__call__(x)


    class SetsAlarm(Exp):
        def __call__(self, x):
            signal.alarm(1)
            return super().__call__(x)


    class LeavesAChild(Exp):
        def __call__(self, x):
            if not os.path.exists("child.pid"):
                child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
                with open("child.pid", "w") as f:
                    f.write(str(child.pid))
            return super().__call__(x)


    def _square(v):
        return v * v


    class UsesAPool(Exp):
        def __call__(self, x):
            import multiprocessing
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                assert pool.map(_square, [3]) == [9]
            return super().__call__(x)


    class Unprintable(Exception):
        def __str__(self):
            raise RuntimeError("no text")


    class RaisesUnprintable(Exp):
        def __call__(self, x):
            raise Unprintable()


    class RaisesEscapes(Exp):
        def __call__(self, x):
            raise ValueError("bad\\n::error file=x.py,line=1::INJECTED\\x1b]0;title\\x07")


    class BadlyNamed(Exp):
        def backward_var(self, grad, index, **kw):
            return 2 * super().backward_var(grad, index, **kw)


    # a name the user's code may set to anything: a newline, a CI command, an escape
    BadlyNamed.__qualname__ = "Badly\\x1b[31mNamed\\n::error file=x.py,line=1::INJECTED"


    @mg.describe(kwargs={"f": lambda v: v})
    def with_a_lambda(x, f=None):
        return x * 2.0


    class HugeView(Exp):
        def __call__(self, x):
            self.variables = (x,)
            return np.broadcast_to(np.float64(1.0), (2**20, 2**20))


    class Hog(Exp):
        def __call__(self, x):
            hoard = []
            while True:
                hoard.append(np.ones(2**24))
    """
)


def gradcheck(
    cwd: Path, *args: str, timeout: float = 120, **options: object
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["PYTHONPATH"] = str(REPO)
    env.update(options.pop("env", {}))  # type: ignore[call-overload]
    return subprocess.run(
        [sys.executable, "-m", "gradcheck", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        **options,  # type: ignore[call-overload]
    )


@pytest.fixture
def ops(tmp_path: Path) -> Path:
    (tmp_path / "ops.py").write_text(OPS)
    return tmp_path


def verdicts(out: subprocess.CompletedProcess[str]) -> dict[str, str]:
    return {t["target"]: t["verdict"] for t in json.loads(out.stdout)["targets"]}


def failure(out: subprocess.CompletedProcess[str], name: str) -> dict:
    (found,) = [t for t in json.loads(out.stdout)["targets"] if t["target"] == name]
    return found["failure"] or {}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# -- 1. user code runs only in workers ---------------------------------------------------


def test_a_thread_started_at_import_writes_nothing_into_the_json_document(ops: Path):
    (ops / "chatty.py").write_text(
        "import threading, time\nfrom ops import Exp\n"
        "def talk():\n    while True:\n"
        "        print('NOISE', flush=True)\n        time.sleep(0.01)\n"
        "threading.Thread(target=talk).start()  # not a daemon: it would outlive the command\n"
    )
    out = gradcheck(ops, "verify", "chatty:Exp", *FAST, "--format", "json", timeout=60)
    assert out.returncode == 0, out.stderr
    assert verdicts(out) == {"chatty:Exp": "passed"}
    assert "NOISE" not in out.stdout


def test_a_module_that_ignores_sigterm_at_import_cannot_keep_the_run_going(ops: Path):
    (ops / "stubborn.py").write_text(
        "import signal, time\nfrom ops import Exp\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "class Sleeps(Exp):\n    def __call__(self, x):\n"
        "        open('started', 'w').close()\n        time.sleep(600)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["PYTHONPATH"] = str(REPO)
    command = [sys.executable, "-m", "gradcheck", "verify", "stubborn:Sleeps", *FAST]
    proc = subprocess.Popen(
        command, cwd=ops, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 90
        while not (ops / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (ops / "started").exists()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.communicate()


# -- 2. every target starts clean; verdicts do not depend on the order -------------------


@pytest.mark.parametrize(
    ("polluter", "victim"),
    [("ops:SetsErrorState", "ops:Underflows"), ("ops:SetsAlarm", "ops:Slow")],
)
def test_a_targets_state_does_not_decide_the_next_ones_verdict(
    ops: Path, polluter: str, victim: str
):
    together = gradcheck(ops, "verify", polluter, victim, *FAST, "--format", "json")
    alone = gradcheck(ops, "verify", victim, *FAST, "--format", "json")
    reversed_ = gradcheck(ops, "verify", victim, polluter, *FAST, "--format", "json")
    assert verdicts(alone)[victim] == "passed", alone.stdout
    assert verdicts(together)[victim] == "passed", together.stdout
    assert verdicts(together) == verdicts(reversed_)


POLLUTER_AT_IMPORT = textwrap.dedent(
    """
    import numpy as np
    import gradcheck as mg

    np.seterr(all="raise")  # at import: in the process that imports every module


    class Underflows(mg.Operation):
        def __call__(self, x):
            self.variables = (x,)
            return x.data + 0.0 * np.exp(-1e4 - x.data**2)

        def backward_var(self, grad, index, **kw):
            return grad * np.ones_like(self.variables[0].data)
    """
)


def test_a_modules_error_state_set_at_import_is_its_own_targets_alone(ops: Path):
    # The module that sets np.seterr(all="raise") at import decided the verdict of
    # another module's target, loaded in the same worker (its Replay passed alone);
    # its own target keeps the state it has alone, in any order.
    (ops / "raises.py").write_text(POLLUTER_AT_IMPORT)
    victim, own = "ops:Underflows", "raises:Underflows"
    alone = {
        name: verdicts(gradcheck(ops, "verify", name, *FAST, "--format", "json"))[name]
        for name in (victim, own)
    }
    assert alone == {victim: "passed", own: "failed"}
    for order in ([own, victim], [victim, own]):
        for jobs in ("1", "2"):
            run = gradcheck(ops, "verify", *order, *FAST, "--jobs", jobs, "--format", "json")
            assert verdicts(run) == alone, (order, jobs, run.stdout)


# -- 3. what a target started ends with it; workers may start processes ------------------


def test_a_child_process_an_op_starts_ends_with_its_target(ops: Path):
    out = gradcheck(ops, "verify", "ops:LeavesAChild", *FAST)
    assert out.returncode == 0, out.stderr
    pid = int((ops / "child.pid").read_text())
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid)


def test_an_op_may_use_a_multiprocessing_pool(ops: Path):
    out = gradcheck(ops, "verify", "ops:UsesAPool", "--max-examples", "2", "--seed", "1")
    assert out.returncode == 0, out.stdout + out.stderr


# -- 4. a verdict is never lost to gradcheck's own error -------------------------------


def test_an_exception_whose_str_raises_fails_its_target_only(ops: Path):
    out = gradcheck(ops, "verify", "ops:RaisesUnprintable", "ops:Exp", *FAST, "--format", "json")
    assert out.returncode == 1, out.stderr
    assert verdicts(out) == {"ops:RaisesUnprintable": "failed", "ops:Exp": "passed"}
    assert "its __str__ raised" in failure(out, "ops:RaisesUnprintable")["message"]


def test_a_description_holding_a_lambda_is_checked(ops: Path):
    out = gradcheck(ops, "verify", "ops:with_a_lambda", *FAST, "--format", "json")
    assert out.returncode == 0, out.stderr
    assert verdicts(out) == {"ops:with_a_lambda": "passed"}


def test_a_huge_broadcast_view_fails_its_target_and_the_others_are_reported(ops: Path):
    out = gradcheck(
        ops, "verify", "ops:HugeView", "ops:Wrong", "ops:Exp", *FAST, "--format", "json"
    )
    assert out.returncode == 1, out.stderr
    found = verdicts(out)
    assert found == {"ops:HugeView": "failed", "ops:Wrong": "failed", "ops:Exp": "passed"}
    assert "memory" in failure(out, "ops:HugeView")["message"]


@pytest.mark.parametrize("option", ["--example-timeout", "--timeout"])
def test_an_out_of_range_time_limit_is_refused_in_one_line(ops: Path, option: str):
    out = gradcheck(ops, "verify", "ops:Exp", *FAST, option, "1e9")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and option in out.stderr and "at most" in out.stderr


def test_a_closed_stdout_is_a_usage_error(ops: Path):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["PYTHONPATH"] = str(REPO)
    command = f"exec {sys.executable} -m gradcheck verify ops:Exp {' '.join(FAST)} >&-"
    closed = subprocess.run(["sh", "-c", command], cwd=ops, env=env, capture_output=False,
                            stderr=subprocess.PIPE, text=True, timeout=120)  # fmt: skip
    assert closed.returncode == 2, closed.stderr
    assert "stdout is closed" in closed.stderr and "Traceback" not in closed.stderr


def test_a_deleted_working_directory_is_a_usage_error(ops: Path):
    gone = ops / "gone"
    gone.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["PYTHONPATH"] = str(REPO)
    command = f"cd {gone} && rmdir {gone} && exec {sys.executable} -m gradcheck verify ops:Exp"
    out = subprocess.run(
        ["sh", "-c", command], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 2, out.stderr
    assert "working directory" in out.stderr and "Traceback" not in out.stderr


def test_a_terminal_that_cannot_encode_a_name_gets_it_escaped(ops: Path):
    (ops / "named.py").write_text("from ops import Exp\nclass Éxp(Exp):\n    pass\n")
    out = gradcheck(ops, "verify", "named", *FAST, env={"PYTHONIOENCODING": "ascii", "LC_ALL": "C"})
    assert out.returncode == 0, out.stderr
    assert "named:\\xc9xp" in out.stdout


# -- 6. resource limits -----------------------------------------------------------------


def test_an_op_that_allocates_without_end_fails_fast_naming_the_limit(ops: Path):
    out = gradcheck(ops, "verify", "ops:Hog", "ops:Exp", *FAST, "--max-memory", "1G",
                    "--format", "json", timeout=240)  # fmt: skip
    assert out.returncode == 1, out.stderr
    assert verdicts(out) == {"ops:Hog": "failed", "ops:Exp": "passed"}
    message = failure(out, "ops:Hog")["message"]
    assert "MemoryError" in message and "1 GiB: --max-memory" in message
    assert json.loads(out.stdout)["targets"][0]["examples"] == 0  # no search after it


def test_a_memory_limit_below_what_a_worker_needs_is_refused(ops: Path):
    out = gradcheck(ops, "verify", "ops:Exp", "--max-memory", "10M")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "Invalid value for '--max-memory'" in out.stderr and "at least 256M" in out.stderr


# -- 7. output files --------------------------------------------------------------------


def test_a_report_path_that_is_a_symlink_is_replaced_not_written_through(ops: Path):
    precious = ops / "precious.txt"
    precious.write_text("keep me\n")
    (ops / "report.xml").symlink_to(precious)
    out = gradcheck(ops, "verify", "ops:Exp", *FAST, "--junit-xml", "report.xml",
                    "--save-baseline", "precious-link.json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert precious.read_text() == "keep me\n"
    assert not (ops / "report.xml").is_symlink()
    assert "<testsuite" in (ops / "report.xml").read_text()


@pytest.mark.parametrize(
    "args",
    [
        ["--baseline", "base.json", "--junit-xml", "base.json"],
        ["--save-baseline", "out", "--junit-xml", "out"],
    ],
)
def test_two_files_of_a_run_naming_one_path_are_refused_before_the_run(ops: Path, args):
    assert (
        gradcheck(ops, "verify", "ops:Exp", *FAST, "--save-baseline", "base.json").returncode == 0
    )
    before = (ops / "base.json").read_bytes()
    out = gradcheck(ops, "verify", "ops:Exp", *FAST, *args)
    assert out.returncode == 2, out.stderr
    assert "overwrite" in out.stderr and out.stderr.count("\n") == 1
    assert (ops / "base.json").read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_a_report_to_a_fifo_is_refused_instead_of_blocking(ops: Path):
    os.mkfifo(ops / "fifo")
    out = gradcheck(ops, "verify", "ops:Exp", *FAST, "--junit-xml", "fifo", timeout=60)
    assert out.returncode == 2
    assert "not a regular file" in out.stderr


# -- 8 and 9. escaping; baselines validated whole ----------------------------------------


def test_an_op_message_with_control_characters_is_escaped_in_every_format(ops: Path):
    for fmt in ("table", "json"):
        out = gradcheck(ops, "verify", "ops:RaisesEscapes", *FAST, "--format", fmt,
                        env={"GITHUB_ACTIONS": "true"})  # fmt: skip
        assert out.returncode == 1, out.stderr
        for stream in (out.stdout, out.stderr):
            assert "\x1b" not in stream and "\x07" not in stream
            assert not any(line.startswith("::error file=x.py") for line in stream.splitlines())


def test_a_target_name_with_control_characters_is_escaped_in_every_format(ops: Path):
    for fmt in ("table", "json"):
        out = gradcheck(ops, "verify", "ops:BadlyNamed", *FAST, "--format", fmt,
                        "--junit-xml", f"{fmt}.xml", "--html", f"{fmt}.html",
                        env={"GITHUB_ACTIONS": "true"})  # fmt: skip
        assert out.returncode == 1, out.stderr
        written = [(ops / f"{fmt}.xml").read_text(), (ops / f"{fmt}.html").read_text()]
        for text in (out.stdout, out.stderr, *written):
            assert "\x1b" not in text
            lines = text.splitlines()
            assert not any(line.lstrip().startswith("::error file=x.py") for line in lines)
        # (its headline names it as it was loaded, ops:BadlyNamed, since its own name does
        # not find it again; wherever its own name is printed, it is escaped)
        assert "ops:BadlyNamed" in out.stdout + out.stderr
        assert "Badly\x1b" not in out.stdout + out.stderr


def baseline(ops: Path, edit) -> Path:
    assert gradcheck(ops, "verify", "ops:Exp", *FAST, "--save-baseline", "b.json").returncode == 0
    document = json.loads((ops / "b.json").read_text())
    edit(document)
    (ops / "b.json").write_text(json.dumps(document))
    return ops / "b.json"


def test_a_baseline_name_that_would_inject_a_ci_command_is_refused(ops: Path):
    name = "ops:Gone\n::error file=x.py,line=1::INJECTED\x1b[2J"
    baseline(ops, lambda d: d["targets"].update({name: d["targets"]["ops:Exp"]}))
    out = gradcheck(
        ops, "verify", "ops:Exp", "--baseline", "b.json", env={"GITHUB_ACTIONS": "true"}
    )
    assert out.returncode == 2
    assert "\x1b" not in out.stderr + out.stdout
    assert not any(line.startswith("::error") for line in (out.stderr + out.stdout).splitlines())


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.update(seed=-1),
        lambda d: d["targets"]["ops:Exp"].update(seed=-5),
        lambda d: d["targets"]["ops:Exp"].update(examples=-1),
        lambda d: d["targets"]["ops:Exp"].update(verdict="great"),
        lambda d: d.update(versions=["1"]),
    ],
)
def test_a_baseline_is_validated_whole_before_the_run(ops: Path, edit):
    baseline(ops, edit)
    out = gradcheck(ops, "verify", "ops:Exp", "--baseline", "b.json", *FAST)
    assert out.returncode == 2, out.stdout
    assert "b.json" in out.stderr and out.stderr.count("\n") == 1


# -- 5. pytest: an op that ends its process fails its item, the session goes on ---------

PYPROJECT = """
[tool.gradcheck]
max-examples = 3
[[tool.gradcheck.targets]]
target = "faulty:Exits"
[[tool.gradcheck.targets]]
target = "ops:Wrong"
"""

TESTS = """
from faulty import Exits, SysExits
from ops import Exp
import numpy as np


def test_check_of_an_op_that_exits(gradcheck):
    gradcheck(Exits, np.ones(3))


def test_verify_of_an_op_that_sys_exits(gradcheck_verify):
    gradcheck_verify(SysExits)


def test_after_them(gradcheck):
    gradcheck(Exp, np.ones(3))
"""


def test_pytest_items_and_fixtures_survive_an_op_that_ends_its_process(ops: Path):
    (ops / "faulty.py").write_text(
        "import os, sys\nfrom ops import Exp\n"
        "class Exits(Exp):\n    def __call__(self, x):\n        os._exit(0)\n"
        "class SysExits(Exp):\n    def __call__(self, x):\n        sys.exit(0)\n"
    )
    (ops / "pyproject.toml").write_text(PYPROJECT)
    (ops / "test_faulty.py").write_text(TESTS)
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{ops}"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--gradcheck", "-q", "-rA"],
        cwd=ops, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    assert "4 failed, 1 passed" in out.stdout, out.stdout
    assert "PASSED test_faulty.py::test_after_them" in out.stdout
    assert "FAILED pyproject.toml::ops:Wrong" in out.stdout


def test_pytest_collection_survives_a_module_that_ends_its_process_at_import(ops: Path):
    # collecting [tool.gradcheck] imports the user's modules: in a child, so a module
    # that calls os._exit(0) at import fails its item instead of ending the session green
    (ops / "exits_at_import.py").write_text("import os\nfrom ops import Exp\nos._exit(0)\n")
    (ops / "pyproject.toml").write_text(PYPROJECT.replace("faulty:Exits", "exits_at_import:Exp"))
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{ops}"}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--gradcheck", "-q", "-rA",
         "pyproject.toml"],
        cwd=ops, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr
    assert "2 failed" in out.stdout, out.stdout
    assert "loading it ended its process" in out.stdout
    assert "FAILED pyproject.toml::ops:Wrong" in out.stdout
