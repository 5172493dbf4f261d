"""Shared test configuration: Hypothesis profiles and the --runslow option."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir

pytest_plugins = ["pytester"]

# The compatibility paths (gradcheck/adapters.py...) replace themselves in sys.modules with the
# module they name, which pytest's doctest collection would take for an import mismatch;
# their doctests are collected from the real modules.
collect_ignore = [
    str(path)
    for path in (Path(__file__).parent / "gradcheck").glob("*.py")
    if "sys.modules[__name__] = " in path.read_text()
]
# The JAX page's examples run where JAX is installed.
if importlib.util.find_spec("jax") is None:
    collect_ignore.append("docs/jax.md")

# Hypothesis profiles (README, "Development"). The suite's default, the same everywhere, on
# a developer's machine as in CI: derandomized (each test draws the same examples in every
# run, so a run that passed passes again until the code or Hypothesis changes) and bounded
# (30 examples a test). "deep" is the opt-in random search: HYPOTHESIS_PROFILE=deep pytest.
settings.register_profile(
    "suite",
    derandomize=True,  # and so no example database: nothing replayed, nothing saved
    deadline=None,  # timings on shared machines are noise
    max_examples=30,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "deep",
    derandomize=False,
    deadline=None,
    max_examples=200,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)  # its example database replays the failures it found, in deep runs only
# Hypothesis keeps its files (the example database, caches) in .hypothesis/ of the folder
# it runs in: the work tree. They go to the user's cache folder instead.
cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
set_hypothesis_home_dir(
    os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY") or cache / "gradcheck" / "hypothesis"
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which turns "auto" into a count
def pytest_cmdline_main(config: pytest.Config) -> None:
    # `-n auto` by default where pytest-xdist is installed (the 'test' extra), rather than
    # in addopts, which would make `pytest` an error where only pytest is (pip install .
    # && pip install pytest). An explicit -n wins; xdist's workers run one process each.
    if (
        config.pluginmanager.hasplugin("xdist")
        and not hasattr(config, "workerinput")
        and config.getoption("numprocesses", None) is None
    ):
        config.option.numprocesses = "auto"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
