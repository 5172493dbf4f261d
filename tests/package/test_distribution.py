"""What the distribution ships: the LICENSE, modern metadata, and an sdist that holds
every file of the checkout, so that its tests run from it (issue 23, item 11)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_license_is_a_file_and_an_spdx_expression():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert PROJECT["license"] == "MIT"  # PEP 639, not the deprecated {text = ...}
    assert PROJECT["license-files"] == ["LICENSE"]
    assert "Typing :: Typed" in PROJECT["classifiers"]
    assert (ROOT / "gradcheck" / "py.typed").exists()


def _checkout_files() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [f for f in out.stdout.splitlines() if (ROOT / f).is_file()]


def _require_setuptools_77() -> None:
    """Skip where this environment's setuptools cannot build the project: PEP 639's
    ``license = "MIT"`` needs setuptools >= 77 (pyproject.toml's build requirement, which
    pip meets in an isolated build environment; a fresh venv brings an older one)."""
    try:
        found = metadata.version("setuptools")
    except metadata.PackageNotFoundError:
        pytest.skip("setuptools is not installed (building a distribution needs >= 77)")
    major = re.match(r"\d+", found)
    if major is None or int(major.group()) < 77:
        pytest.skip(f"setuptools {found} < 77 cannot build PEP 639 license metadata")


def test_the_sdist_holds_every_file_of_the_checkout(tmp_path):
    _require_setuptools_77()
    files = _checkout_files()
    source = tmp_path / "src"  # a copy: building writes an egg-info next to the sources
    for name in files:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    archive = _build(source, tmp_path / "dist", "build_sdist")
    with tarfile.open(archive) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    missing = sorted(set(files) - names - {".gitignore"})
    assert missing == []
    assert "conftest.py" in names and "LICENSE" in names and "PKG-INFO" in names


def test_the_wheel_ships_the_schemas_and_py_typed(tmp_path):
    # Package data: the JSON Schemas (gradcheck.schemas.load) and the typing marker.
    _require_setuptools_77()
    source = tmp_path / "src"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", ".*_cache", "build", "dist", "*.egg-info", "__pycache__"
        ),
    )
    wheel = _build(source, tmp_path / "dist", "build_wheel")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    schemas = {f"gradcheck/schemas/{n}.schema.json" for n in ("verify", "baseline", "config")}
    assert schemas | {"gradcheck/py.typed", "gradcheck/schemas/__init__.py"} <= names


@pytest.mark.slow
def test_an_install_from_the_git_url_runs_the_command(tmp_path):
    # The README's install without a clone: pip builds the committed tree from git.
    _checkout_files()
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # the dependencies from this environment, gradcheck itself from git
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "base.pth").write_text(
        "\n".join(p for p in sys.path if p.endswith("site-packages")) + "\n"
    )
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps"]
    subprocess.run([*pip, f"git+file://{ROOT}@{commit}"], check=True, timeout=600)
    command = ["verify", "gradcheck.builtin_targets:square", "--max-examples", "3", "-q"]
    out = subprocess.run(
        [str(venv / "bin" / "gradcheck"), *command],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("1 passed")


def _build(source, dist, hook):
    """Build ``source`` with setuptools' PEP 517 ``hook`` into ``dist``: the archive's
    path."""
    build = f"import sys; from setuptools import build_meta; print(build_meta.{hook}(sys.argv[1]))"
    out = subprocess.run(
        [sys.executable, "-c", build, str(dist)],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return dist / out.stdout.strip().splitlines()[-1]
