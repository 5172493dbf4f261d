"""Fixtures for the CLI tests: a temporary working directory holding the user's ops."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent
REPO = HERE.parent.parent
SUPPORT = REPO / "tests" / "support"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary working directory with ``user_ops.py`` (and ``holdout_ops.py``) in
    it; modules loaded from it are forgotten afterwards."""
    for name in ("user_ops.py", "holdout_ops.py"):
        shutil.copy(SUPPORT / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv("NO_COLOR", raising=False)
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        # the user's modules only (those from the folder): the libraries a command
        # imported on first use (multiprocessing...) stay, as they would in a process
        origin = getattr(sys.modules[name], "__file__", None) or ""
        if origin.startswith(str(tmp_path)):
            del sys.modules[name]


def on_a_terminal(
    command: list[str], cwd: Path, env: dict[str, str], stderr: bool = True
) -> tuple[int, str]:
    """Run ``command`` with its stdout (and its stderr, unless ``stderr`` is false) on
    a pseudo-terminal: its exit status and everything it wrote there."""
    import os
    import subprocess

    primary, secondary = os.openpty()
    try:
        proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdout=secondary,
            stderr=secondary if stderr else subprocess.DEVNULL,
        )
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the other side closed (Linux)
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = proc.wait(timeout=120)
    finally:
        os.close(primary)
    return code, b"".join(chunks).decode()
