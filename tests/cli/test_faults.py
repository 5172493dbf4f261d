"""Nothing an op does ends a `gradcheck verify` run or loses the other targets' results
(issue 22): an op that exits, crashes its process, hangs, or is interrupted.

Each test runs the command as a user does, in a process of its own (signals, workers
and file descriptors are process-wide), on tiny ops with few examples, under a timeout.
"""

from __future__ import annotations

import json
import os
import signal
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
    # named as the op names them, as every other failure's inputs are (was [])
    assert found["ops:OsExit"]["failure"]["input_names"] == ["x"]
    assert found["ops:ExitsInForward"]["failure"]["input_names"] == ["x"]
    assert "SystemExit(3)" in found["ops:ExitsInBackward"]["failure"]["message"]
    assert (ops / "r.xml").read_text().count("<testcase") == len(names)
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr


def test_a_module_that_ends_its_process_at_import_is_a_load_error(ops: Path):
    # Issue 35: the import runs in a worker, never in the command; a module that
    # ends that process is a load error naming the targets (exit 2), never a silent
    # green run.
    (ops / "dies.py").write_text(
        "import multiprocessing, os\n"
        "from ops import Good\n"
        "if multiprocessing.parent_process() is not None:\n"
        "    os._exit(3)\n"
    )
    out = gradcheck(ops, "verify", "dies:Good", *FAST, "--format", "json")
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""
    assert "exited with code 3 while importing dies:Good" in out.stderr


def test_a_module_that_exits_0_at_import_is_never_a_silent_green_run(ops: Path):
    (ops / "exits.py").write_text("import os\nfrom ops import Good\nos._exit(0)\n")
    out = gradcheck(ops, "verify", "exits:Good", "ops:Bad", *FAST)
    assert out.returncode == 2, out.stderr
    assert "exited with code 0 while importing" in out.stderr


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


SLOW = textwrap.dedent(
    """
    import os, re, time
    from ops import Good


    class Slow(Good):
        def __call__(self, x):
            open("started", "a").close()  # the test waits for it, then sends a signal
            time.sleep(0.2)
            return Good.__call__(self, x)


    class SlowInC(Good):
        def __call__(self, x):
            open("started", "a").close()
            re.match(r"(a+)+$", "a" * 64 + "b")  # holds the GIL for ages
            return Good.__call__(self, x)
    """
)


def start(cwd: Path, *args: str, tag: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(PYTHONPATH=str(REPO), GRADCHECK_TEST_TAG=tag)
    return subprocess.Popen(
        [sys.executable, "-m", "gradcheck", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for(path: Path, seconds: float = 60) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def tagged(tag: str) -> list[int]:
    """Processes still alive with our tag in their environment (Linux)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and f"GRADCHECK_TEST_TAG={tag}".encode() in (
                entry / "environ"
            ).read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            pass
    return found


needs_proc = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="Linux /proc")


@pytest.fixture
def slow(ops: Path) -> Path:
    (ops / "slow.py").write_text(SLOW)
    return ops


@needs_proc
@pytest.mark.parametrize(
    "signum, code, jobs, op",
    [(signal.SIGINT, 130, "1", "slow:Slow"), (signal.SIGTERM, 143, "2", "slow:SlowInC")],
    ids=["sigint-serial", "sigterm-j2-c-loop"],
)
def test_a_signal_stops_the_run_and_what_finished_is_printed_and_written(
    slow: Path, signum: int, code: int, jobs: str, op: str
):
    tag = f"{os.getpid()}-{signum}"
    # The slow op is last: with one worker or two, it starts when a target finished.
    names = ["ops:Good", "ops:Bad", op]
    args = ["verify", *names, *FAST, "--jobs", jobs, "--format", "json",
            "--junit-xml", "r.xml", "--save-baseline", "b.json"]  # fmt: skip
    process = start(slow, *args, tag=tag)
    try:
        wait_for(slow / "started")
        process.send_signal(signum)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == code, err
    doc = json.loads(out)
    assert doc["interrupted"] == signal.Signals(signum).name
    found = {t["target"]: t for t in doc["targets"]}
    assert list(found) == names  # every target, in order
    assert found[op]["verdict"] == "not_run" and not found[op]["passed"]
    done = [n for n in names if found[n]["verdict"] != "not_run"]
    assert "ops:Good" in done or "ops:Bad" in done
    assert all(found[n]["verdict"] == "not_run" for n in names if n not in done)
    if "ops:Good" in done:
        assert found["ops:Good"]["passed"]
    junit = (slow / "r.xml").read_text()
    assert junit.count("<testcase") == 3 and "<skipped" in junit
    baseline = json.loads((slow / "b.json").read_text())
    assert sorted(baseline["targets"]) == sorted(done)  # what finished, only
    assert tagged(tag) == []  # no worker left behind
    assert "Traceback" not in err


@needs_proc
def test_no_worker_outlives_a_killed_command(slow: Path):
    import time

    tag = f"{os.getpid()}-kill"
    process = start(slow, "verify", "slow:SlowInC", "ops:Good", *FAST, "--jobs", "2", tag=tag)
    try:
        wait_for(slow / "started")
        assert len(tagged(tag)) >= 2  # the command and its workers
        process.kill()  # SIGKILL: no handler runs
        process.communicate(timeout=30)  # the pipes close: nobody holds them
        deadline = time.monotonic() + 10
        while tagged(tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert tagged(tag) == []
    finally:
        process.kill()


def test_a_module_that_raises_keyboard_interrupt_at_import_is_a_load_error(ops: Path):
    (ops / "kbi.py").write_text("raise KeyboardInterrupt\n")
    out = gradcheck(ops, "verify", "kbi:Op", *FAST)
    assert out.returncode == 2
    assert "cannot import module 'kbi': KeyboardInterrupt" in out.stderr


@needs_proc
def test_a_signal_while_the_targets_load_exits_at_once_with_its_code(ops: Path):
    (ops / "slowimport.py").write_text(
        "import time\nopen('started', 'a').close()\ntime.sleep(60)\nfrom ops import Good\n"
    )
    process = start(ops, "verify", "slowimport:Good", *FAST, tag=f"{os.getpid()}-load")
    try:
        wait_for(ops / "started")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130
    assert err.strip() == "Error: interrupted by SIGINT" and out == ""


NOISY = textwrap.dedent(
    """
    import ctypes, os, sys
    from ops import Good

    print("IMPORT-PRINT", flush=True)
    os.write(1, b"IMPORT-OSWRITE\\n")


    class Noisy(Good):
        def __call__(self, x):
            print("FORWARD-PRINT", flush=True)
            os.write(1, b"FORWARD-OSWRITE\\n")
            sys.__stdout__.write("FORWARD-DUNDER\\n")
            sys.__stdout__.flush()
            if os.name == "posix":
                libc = ctypes.CDLL(None)
                libc.printf(b"FORWARD-LIBC\\n")
                libc.fflush(None)
            return Good.__call__(self, x)
    """
)
WRITES = ["IMPORT-PRINT", "IMPORT-OSWRITE", "FORWARD-PRINT", "FORWARD-OSWRITE", "FORWARD-DUNDER"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_with_json_the_users_writes_to_stdout_go_to_stderr(ops: Path, jobs: str):
    (ops / "noisy.py").write_text(NOISY)
    out = gradcheck(ops, "verify", "noisy:Noisy", "ops:Good", *FAST, "--jobs", jobs,
                    "--format", "json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert [t["target"] for t in json.loads(out.stdout)["targets"]] == ["noisy:Noisy", "ops:Good"]
    for text in WRITES + (["FORWARD-LIBC"] if os.name == "posix" else []):
        assert text in out.stderr, text


def test_the_table_keeps_the_users_writes_off_stdout(ops: Path):
    # Issue 35: the command's stdout carries gradcheck's output only, in every format.
    (ops / "noisy.py").write_text(NOISY)
    out = gradcheck(ops, "verify", "noisy:Noisy", *FAST)
    assert out.returncode == 0, out.stderr
    for text in WRITES:
        assert text in out.stderr and text not in out.stdout, text


def test_list_with_json_keeps_stdout_one_document(ops: Path):
    (ops / "noisy.py").write_text(NOISY)
    out = gradcheck(ops, "list", "noisy", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["targets"][0]["target"] == "noisy:Noisy"
    assert "IMPORT-OSWRITE" in out.stderr
