"""This checkout as an installed distribution, for subprocess tests of what installing
gradcheck does to every process: its pytest11 and hypothesis entry points.

:func:`installed` makes a site folder holding links to the package and to the
top-level module, and a ``gradcheck`` dist-info whose entry points and scripts are
``pyproject.toml``'s: what ``pip install .`` gives, without a build. Put first on
``sys.path`` (``PYTHONPATH``), its distribution is the one Hypothesis and pytest see,
also where an older gradcheck is installed (the first distribution of a name wins
for Hypothesis; pytest skips a second plugin of the same name).

:func:`run_python` starts Python with ``-S``, the site folders of this interpreter on
``PYTHONPATH`` instead: their ``.pth`` files are not run, so that an editable install
of gradcheck where the suite runs (a finder that maps ``gradcheck`` and its
submodules to some checkout) cannot stand in for what the test installed.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: variables that would change what the entry points do
CLEARED = (
    "PYTHONPATH",
    "HYPOTHESIS_NO_PLUGINS",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
    "PYTEST_PLUGINS",
    "PYTEST_ADDOPTS",
)


def installed(tmp_path: Path) -> dict[str, str]:
    """The environment of a process in which this checkout is installed."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = config["project"]
    modules = config["tool"].get("setuptools", {}).get("py-modules", [])
    folder = tmp_path / "site-packages"
    folder.mkdir()
    for name in ["gradcheck", *(f"{module}.py" for module in modules)]:
        (folder / name).symlink_to(ROOT / name)
    dist = folder / "gradcheck-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: gradcheck\nVersion: 0.1.0\n")
    groups = {"console_scripts": project.get("scripts", {}), **project["entry-points"]}
    (dist / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in entries.items())
            for group, entries in groups.items()
        )
    )
    env = {k: v for k, v in os.environ.items() if k not in CLEARED}
    env["PYTHONPATH"] = os.pathsep.join([str(folder), *site_folders()])
    return env


def site_folders() -> list[str]:
    """The site-packages folders of this interpreter and the folders their ``.pth``
    files add (they follow the first one on sys.path), this checkout excepted."""
    sites = set(site.getsitepackages())
    first = next(i for i, path in enumerate(sys.path) if path in sites)
    return [p for p in sys.path[first:] if Path(p).is_dir() and Path(p).resolve() != ROOT]


def run_python(
    *args: str, cwd: Path, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in ``cwd``: a fresh interpreter, as a user starts one."""
    return subprocess.run(
        [sys.executable, "-S", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
