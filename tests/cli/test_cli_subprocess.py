"""`gradcheck` as a user runs it: a real process in a temporary working directory
holding their module (the package itself is found through PYTHONPATH, as it is not
installed here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import REPO

ARGS = ["--max-examples", "10", "--seed", "1"]


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    out["PYTHONPATH"] = str(REPO)
    out.update(extra)
    return out


def gradcheck(cwd: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gradcheck", *args],
        cwd=cwd,
        env=env(**extra),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_module_run_passes_and_fails_with_exit_codes(workdir: Path) -> None:
    ok = gradcheck(workdir, "verify", "user_ops:Square", *ARGS)
    assert ok.returncode == 0, ok.stderr
    assert "1 passed" in ok.stdout and ok.stderr == ""
    bad = gradcheck(workdir, "verify", "user_ops:WrongSquare", *ARGS)
    assert bad.returncode == 1
    assert "mismatch (input 0)" in bad.stdout and "Index" in bad.stdout
    # No Hypothesis output, and no example database written into the user's directory.
    assert bad.stderr == ""
    assert "Falsifying" not in bad.stdout
    assert not (workdir / ".hypothesis").exists()


def test_json_on_stdout_only(workdir: Path) -> None:
    targets = ["user_ops:Square", "user_ops:WrongSquare", "user_ops:Raises"]
    result = gradcheck(workdir, "verify", *targets, *ARGS, "--format", "json")
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    verdicts = {t["target"]: t["verdict"] for t in doc["targets"]}
    assert verdicts["user_ops:Square"] == "passed"
    assert verdicts["user_ops:WrongSquare"] == "failed"
    assert verdicts["user_ops:Raises"] == "failed"
    assert result.stderr == ""


def test_load_error_is_one_line_exit_2(workdir: Path) -> None:
    result = gradcheck(workdir, "verify", "user_ops:Missing")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "has no attribute 'Missing'" in result.stderr


def test_console_script_style_launch_imports_the_working_directory(
    workdir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # A console script's sys.path[0] is its own directory, not the working directory.
    bin_dir = tmp_path_factory.mktemp("bin")
    launcher = bin_dir / "gradcheck_launcher.py"
    launcher.write_text("from gradcheck.frontend.cli import main\nmain()\n")
    result = subprocess.run(
        [sys.executable, str(launcher), "verify", "user_ops:Square", *ARGS],
        cwd=workdir,
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
@pytest.mark.parametrize("no_color", [False, True])
def test_colour_only_on_a_tty_and_never_with_no_color(workdir: Path, no_color: bool) -> None:
    primary, secondary = os.openpty()
    extra = {"NO_COLOR": "1"} if no_color else {}
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "gradcheck", "verify", "user_ops:WrongSquare", *ARGS],
            cwd=workdir,
            env=env(**extra),
            stdout=secondary,
            stderr=subprocess.DEVNULL,
            timeout=120,
        )
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(primary)
    out = b"".join(chunks).decode()
    assert proc.returncode == 1
    assert "FAILED" in out
    assert ("\x1b[" in out) is not no_color
