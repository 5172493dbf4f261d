"""mypy finds no error in the package, which ships ``py.typed``: the whole package with
the settings of ``[tool.mypy]`` in pyproject.toml, and the modules of the public API
with ``--strict`` itself (issue 23, item 11). mypy is in the ``test`` extra.

mypy's cache lives in the user's cache folder, not in the work tree: a first run
takes about 20 s of CPU, a later one about a second.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None, reason="mypy is not installed (the 'test' extra)"
)

#: The public API: what `import gradcheck` exports, the strategies, the checker's entry
#: points, the pytest plugin and the command.
PUBLIC = (
    "gradcheck",
    "gradcheck.strategies.*",
    "gradcheck.checking.checker",
    "gradcheck.checking.result",
    "gradcheck.checking.target",
    "gradcheck.search.verifier",
    "gradcheck.search.description",
    "gradcheck.pytest_plugin",
    "gradcheck.cli",
)


def mypy(*args: str, cache: str) -> subprocess.CompletedProcess[str]:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = base / "gradcheck" / f"mypy-{sys.version_info[0]}.{sys.version_info[1]}" / cache
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(folder), "--no-error-summary", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def strict_modules() -> list[str]:
    (strict,) = [o for o in CONFIG["overrides"] if o.get("disallow_untyped_defs")]
    return strict["module"]


def test_the_package_has_no_type_error():
    out = mypy(cache="package")  # the files and settings of [tool.mypy]
    assert CONFIG["files"] == ["gradcheck"]
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert out.returncode == 0 and errors == [], out.stdout + out.stderr


def test_the_public_api_has_no_error_under_strict():
    modules = strict_modules()
    assert set(PUBLIC) <= set(modules)
    targets: list[str] = []
    for name in modules:
        if name.endswith(".*"):
            targets += ["-p", name[:-2]]  # the package and its modules
        elif f"{name}.*" not in modules:
            targets += ["-m", name]
    # --strict for these, while the modules they import are read but not reported
    out = mypy("--strict", "--follow-imports=silent", *targets, cache="strict")
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert out.returncode == 0 and errors == [], out.stdout + out.stderr


def test_mygrads_paths_to_the_engine_type_check(tmp_path):
    """The engine lives in gradcheck/engine/; MyGrad's paths (gradcheck.tensor_base,
    gradcheck.nnet.layers...) reach it at run time through an import finder, which type
    checkers cannot follow: a stub at each old path says what it is."""
    from gradcheck import ENGINE_MODULES  # (the old paths' first names)

    engine = ROOT / "gradcheck" / "engine"
    for source in engine.rglob("*.py"):
        relative = source.relative_to(engine)
        if relative.with_suffix("").parts[0] not in ENGINE_MODULES:
            continue  # (new since the move: no old path)
        stub = ROOT / "gradcheck" / relative.with_suffix(".pyi")
        assert stub.exists(), f"no stub at {stub.relative_to(ROOT)} for {source.name}"
    user = tmp_path / "user_code.py"
    user.write_text(
        "from gradcheck.tensor_base import Tensor\n"
        "from gradcheck.nnet.layers import conv_nd\n"
        "import gradcheck.ops.shape as shape\n"
        "def f(t: Tensor) -> Tensor:\n"
        "    return shape.reshape(conv_nd(t, t, stride=1), (-1,))\n"
    )
    out = mypy("--follow-imports=silent", str(user), cache="stubs")
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert out.returncode == 0 and errors == [], out.stdout + out.stderr
