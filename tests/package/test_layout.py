"""tests/ mirrors the package (tests/README.md): test files sit in the folder of the layer
they test, helper modules in tests/support/, nothing but conftest.py at the top."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ALLOWED_AT_TOP = {"conftest.py"}


def _python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_test_or_helper_module_at_the_top_of_tests():
    top = [p.name for p in TESTS.glob("*.py") if p.name not in ALLOWED_AT_TOP]
    assert top == [], f"move these into the folder of the layer they test: {top}"


def test_helper_modules_live_in_support():
    outside = [
        str(p.relative_to(TESTS))
        for p in _python_files()
        if not p.name.startswith("test_")
        and p.name not in {"conftest.py", "__init__.py"}
        and p.parent.name != "support"
    ]
    assert outside == [], f"helpers belong in tests/support/: {outside}"


def test_support_holds_no_tests():
    tests = [p.name for p in (TESTS / "support").glob("test_*.py")]
    assert tests == [], f"test files belong beside the layer they test: {tests}"


def test_every_test_folder_is_named_in_the_readme():
    readme = (TESTS / "README.md").read_text()
    folders = {p.parent.relative_to(TESTS).parts[0] for p in _python_files() if p.parent != TESTS}
    missing = sorted(f for f in folders if f"`{f}/`" not in readme)
    assert missing == [], f"name these folders in tests/README.md: {missing}"


def test_test_file_names_are_unique():
    twice = [n for n, k in Counter(p.name for p in TESTS.rglob("test_*.py")).items() if k > 1]
    assert twice == [], f"pytest imports test files by name; rename: {twice}"
