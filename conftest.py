"""Shared test configuration: Hypothesis profiles and the --runslow option."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = ["pytester"]

# The compatibility paths (gradcheck/adapters.py...) replace themselves in sys.modules with the
# module they name, which pytest's doctest collection would take for an import mismatch;
# their doctests are collected from the real modules.
collect_ignore = [
    str(path)
    for path in (Path(__file__).parent / "gradcheck").glob("*.py")
    if "sys.modules[__name__] = " in path.read_text()
]

# "ci": reproducible and bounded, for the shared 2-core CI machine.
settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=30,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# "dev": the default on a developer's machine; more examples, still no deadline
# (timings on shared machines are noise).
settings.register_profile("dev", deadline=None, max_examples=100)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
