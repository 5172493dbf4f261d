"""Nothing an op does ends a `gradcheck verify` run or loses the other targets' results
(issue 22): an op that exits, crashes its process, hangs, or is interrupted.

Each test runs the command as a user does, in a process of its own (signals, workers
and file descriptors are process-wide), on tiny ops with few examples, under a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli.conftest import REPO

FAST = ["--max-examples", "3", "--seed", "1"]

OPS = textwrap.dedent(
    """
    import os, signal, sys, time, ctypes
    import gradcheck as mg


    class Good(mg.Operation):
        def __call__(self, x):
            self.variables = (x,)
            return x.data ** 2

        def backward_var(self, grad, index, **kw):
            return grad * 2 * self.variables[0].data


    class Bad(Good):
        def backward_var(self, grad, index, **kw):
            return grad * 3 * self.variables[0].data


    class ExitsInForward(Good):
        def __call__(self, x):
            sys.exit(0)


    class ExitsInBackward(Good):
        def backward_var(self, grad, index, **kw):
            raise SystemExit(3)


    class Interrupts(Good):
        def __call__(self, x):
            raise KeyboardInterrupt


    class OsExit(Good):
        def __call__(self, x):
            os._exit(7)


    class Segfault(Good):
        def backward_var(self, grad, index, **kw):
            ctypes.string_at(0)


    class KilledBySignal(Good):
        def __call__(self, x):
            os.kill(os.getpid(), signal.SIGKILL)
    """
)


def gradcheck(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "gradcheck", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def ops(tmp_path: Path) -> Path:
    (tmp_path / "ops.py").write_text(OPS)
    return tmp_path


def targets(result: subprocess.CompletedProcess[str]) -> dict[str, dict]:
    return {t["target"]: t for t in json.loads(result.stdout)["targets"]}


def kind(entry: dict) -> str | None:
    return (entry.get("failure") or {}).get("kind")


FAULTS = {
    "ops:ExitsInForward": "exited",
    "ops:ExitsInBackward": "exited",
    "ops:Interrupts": "exited",
    "ops:OsExit": "worker_died",
    "ops:Segfault": "worker_died",
    "ops:KilledBySignal": "worker_died",
}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_op_that_exits_or_kills_its_process_fails_alone(ops: Path, jobs: str):
    names = ["ops:Good", *FAULTS, "ops:Bad"]
    out = gradcheck(ops, "verify", *names, *FAST, "--jobs", jobs, "--format", "json",
                    "--junit-xml", "r.xml")  # fmt: skip
    assert out.returncode == 1, out.stderr
    found = targets(out)
    assert list(found) == names  # every result, in order
    assert found["ops:Good"]["passed"]
    assert kind(found["ops:Bad"]) == "mismatch"
    for name, expected in FAULTS.items():
        assert not found[name]["passed"]
        assert kind(found[name]) == expected, (name, found[name]["failure"])
    died = {name: found[name]["failure"]["message"] for name in FAULTS}
    assert "exited with code 7" in died["ops:OsExit"]
    assert "signal 11 (SIGSEGV)" in died["ops:Segfault"]
    assert "signal 9 (SIGKILL)" in died["ops:KilledBySignal"]
    # the example it was on
    assert found["ops:OsExit"]["failure"]["inputs"]
    assert "SystemExit(3)" in found["ops:ExitsInBackward"]["failure"]["message"]
    assert (ops / "r.xml").read_text().count("<testcase") == len(names)
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr


def test_a_module_that_kills_the_workers_at_import_fails_its_targets(ops: Path):
    (ops / "dies.py").write_text(
        "import multiprocessing, os\n"
        "from ops import Good\n"
        "if multiprocessing.parent_process() is not None:\n"
        "    os._exit(3)\n"
    )
    out = gradcheck(ops, "verify", "dies:Good", *FAST, "--format", "json")
    assert out.returncode == 1, out.stderr
    (entry,) = targets(out).values()
    assert kind(entry) == "worker_died"
    assert "exited with code 3 before its first example" in entry["failure"]["message"]


HANGS = textwrap.dedent(
    """
    import re, time
    from ops import Good


    class Sleeps(Good):
        def __call__(self, x):
            time.sleep(3600)


    class HoldsTheGil(Good):
        def backward_var(self, grad, index, **kw):
            re.match(r"(a+)+$", "a" * 64 + "b")  # a C loop no signal handler interrupts
            return Good.backward_var(self, grad, index, **kw)
    """
)


@pytest.fixture
def hangs(ops: Path) -> Path:
    (ops / "hangs.py").write_text(HANGS)
    return ops


def test_a_target_over_its_time_limit_times_out_and_the_run_goes_on(hangs: Path):
    names = ["hangs:Sleeps", "ops:Good", "hangs:HoldsTheGil"]
    out = gradcheck(hangs, "verify", *names, *FAST, "--timeout", "1", "--format", "json",
                    "--junit-xml", "r.xml")  # fmt: skip
    assert out.returncode == 1, out.stderr
    found = targets(out)
    assert found["ops:Good"]["passed"]
    for name in ("hangs:Sleeps", "hangs:HoldsTheGil"):
        assert found[name]["verdict"] == "timed_out" and not found[name]["passed"]
        assert kind(found[name]) == "timed_out"
        assert "--timeout" in found[name]["failure"]["message"]
        assert found[name]["failure"]["inputs"]  # the example it was on
    assert (hangs / "r.xml").read_text().count("<testcase") == 3


def test_the_limit_per_example_comes_from_the_configuration_too(hangs: Path):
    (hangs / "pyproject.toml").write_text(
        "[tool.gradcheck]\nmax-examples = 3\nseed = 1\n"
        '[[tool.gradcheck.targets]]\ntarget = "hangs:Sleeps"\nexample-timeout = 1\n'
        '[[tool.gradcheck.targets]]\ntarget = "ops:Good"\n'
    )
    out = gradcheck(hangs, "verify", "--jobs", "2", "--format", "json")
    assert out.returncode == 1, out.stderr
    found = targets(out)
    assert found["hangs:Sleeps"]["verdict"] == "timed_out"
    assert "--example-timeout" in found["hangs:Sleeps"]["failure"]["message"]
    assert found["ops:Good"]["passed"]


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "abc"])
def test_a_bad_time_limit_is_one_line_naming_the_option(ops: Path, value: str):
    out = gradcheck(ops, "verify", "ops:Good", *FAST, f"--timeout={value}")
    assert out.returncode == 2
    assert "--timeout" in out.stderr and "positive number of seconds" in out.stderr
    assert len(out.stderr.strip().splitlines()) <= 2


def test_a_bad_time_limit_in_the_configuration_names_the_file_and_key(ops: Path):
    (ops / "pyproject.toml").write_text("[tool.gradcheck]\nexample-timeout = 0\n")
    out = gradcheck(ops, "verify", "ops:Good", *FAST)
    assert out.returncode == 2
    assert "pyproject.toml" in out.stderr and "'example-timeout'" in out.stderr
