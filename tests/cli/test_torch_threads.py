"""torch's intra-op threads in a run's workers (issue 40): one, unless the user chose
(``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS``, or the target's module calling
``torch.set_num_threads`` as it is imported); ``--verbose`` says which
(gradcheck.frontend.jobs.torch_threads, gradcheck.frontend.worker._torch_threads)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.cli import main
from gradcheck.frontend.jobs import THREAD_VARIABLES, torch_threads

# An op that notes, each time it runs, torch's intra-op threads and whether the
# thread variables reached it (what the op starts must not inherit gradcheck's).
NOTES_ITS_THREADS = """
import json
import os

import torch
{extra}

def cube(x):
    seen = {{"threads": torch.get_num_threads(),
             "variables": [os.environ.get(n) for n in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")]}}
    with open("threads-seen", "a") as f:
        f.write(json.dumps(seen) + "\\n")
    return torch.pow(x, 3)
"""


def _seen(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "threads-seen").read_text().splitlines()]


def _run(capfd: pytest.CaptureFixture[str], spec: str) -> str:
    """The command's output and what its worker wrote to the process's stderr."""
    out = CliRunner().invoke(main, ["verify", spec, "--max-examples", "3", "--verbose"])
    assert out.exit_code == 0, out.output
    return out.output + capfd.readouterr().err


@pytest.fixture
def no_thread_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pytest.importorskip("torch")
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_one_thread_unless_the_environment_chooses():
    assert torch_threads({}) == 1
    assert torch_threads({"OMP_NUM_THREADS": ""}) == 1
    assert torch_threads({"OMP_NUM_THREADS": "3"}) is None
    assert torch_threads({"MKL_NUM_THREADS": "2"}) is None


def test_a_torch_target_is_checked_on_one_thread(no_thread_variables: Path, capfd):
    # On main the worker left torch's own count: one thread per core (2 here), on
    # which a loaded machine made tiny non-contiguous ops wait milliseconds each.
    folder = no_thread_variables
    (folder / "threads_op.py").write_text(NOTES_ITS_THREADS.format(extra=""))
    output = _run(capfd, "threads_op:cube")
    seen = _seen(folder)
    assert seen and all(s == {"threads": 1, "variables": [None, None]} for s in seen), seen
    assert "torch runs 1 intra-op thread (gradcheck's choice" in output


def test_torch_imported_through_a_helper_gets_one_thread_too(no_thread_variables: Path, capfd):
    # The module's text does not name torch (no preload): the count is set as the
    # user's modules are loaded.
    folder = no_thread_variables
    (folder / "threads_helper.py").write_text(NOTES_ITS_THREADS.format(extra=""))
    (folder / "threads_indirect.py").write_text("from threads_helper import cube  # noqa\n")
    _run(capfd, "threads_indirect:cube")
    assert {s["threads"] for s in _seen(folder)} == {1}


def test_the_environment_chooses(no_thread_variables: Path, capfd, monkeypatch: pytest.MonkeyPatch):
    folder = no_thread_variables
    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # (torch takes at most one per core)
    (folder / "threads_op.py").write_text(NOTES_ITS_THREADS.format(extra=""))
    output = _run(capfd, "threads_op:cube")
    assert {s["variables"][0] for s in _seen(folder)} == {"2"}  # the user's, left as set
    assert "intra-op thread" in output
    assert ", as OMP_NUM_THREADS or MKL_NUM_THREADS chose" in output


def test_the_targets_module_chooses(no_thread_variables: Path, capfd):
    folder = no_thread_variables
    extra = "torch.set_num_threads(3)"
    (folder / "threads_op.py").write_text(NOTES_ITS_THREADS.format(extra=extra))
    output = _run(capfd, "threads_op:cube")
    assert {s["threads"] for s in _seen(folder)} == {3}
    assert "torch runs 3 intra-op threads, as the target's module set" in output


def test_nothing_is_said_without_verbose(no_thread_variables: Path, capfd):
    folder = no_thread_variables
    (folder / "threads_op.py").write_text(NOTES_ITS_THREADS.format(extra=""))
    out = CliRunner().invoke(main, ["verify", "threads_op:cube", "--max-examples", "2"])
    assert out.exit_code == 0, out.output
    assert "intra-op" not in out.output + capfd.readouterr().err
