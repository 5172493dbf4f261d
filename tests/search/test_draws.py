"""The seed alone decides what gradcheck draws (gradcheck/search/draws.py): not which
local modules are loaded beside the target, nor the numbers written in them, so that a
replay line replays on every path (command, verify, the pytest fixtures)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.internal.conjecture import providers

from gradcheck.search.verifier import draw_example

# A target whose module is full of numbers Hypothesis would draw (were it to mine them).
LITERAL_OPS = """
import numpy as np
import gradcheck as mg

BOUNDS = (3.7177, -12345.678, 0.000123, 98765.4321, 7.25, -0.3333, 42.4242)


def scaled(x):
    return mg.sin(x) * 2.5


class Wobbly(mg.Operation):
    \"\"\"sin, whose backward errs where |x| > 1.75, by 1e-4 of the gradient times |x| (so
    that the largest error seen is not the shrunk example's: both are reported).\"\"\"

    def __call__(self, x):
        self.variables = (x,)
        return np.sin(x.data)

    def backward_var(self, grad, index, **kwargs):
        x = self.variables[0].data
        return grad * np.cos(x) * np.where(np.abs(x) > 1.75, 1 + 1e-4 * np.abs(x), 1.0)
"""

# Another local module, imported beside the target in one run and not in the other.
MORE_LITERALS = "NUMBERS = [-6.02214076e23, 1.602e-19, 2.998e8, 6.674e-11, 8.314, -273.15]\n"

# Every example a search checks, as bytes: the arrays and the seed of the check.
PROBE = """
import hashlib, sys
if sys.argv[1] == "with-more":
    import more_literals  # noqa: F401
import literal_ops
import gradcheck

seen = []
gradcheck.verify(
    literal_ops.scaled, seed=3, max_examples=60,
    on_example=lambda arrays, s: seen.append(([a.tobytes() for a in arrays], s)),
)
print(len(seen), hashlib.sha256(repr(seen).encode()).hexdigest())
"""


@pytest.fixture
def literal_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "literal_ops.py").write_text(LITERAL_OPS)
    (tmp_path / "more_literals.py").write_text(MORE_LITERALS)
    (tmp_path / "probe.py").write_text(PROBE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([".", os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_this_hypothesis_has_the_hooks_and_they_are_put_back():
    from gradcheck.search import draws

    # A Hypothesis that renamed them would draw literals again: this test says so.
    assert draws._providers() is providers
    before = [getattr(providers, name) for name in draws.HOOKS]
    assert not draws.replaced()
    with draws.seed_alone_decides():
        assert draws.replaced()
        with draws.seed_alone_decides():  # nested (or another thread's search)
            assert draws.replaced()
        assert draws.replaced()  # still inside the outer one
        assert len(providers._get_local_constants()) == 0
    assert [getattr(providers, name) for name in draws.HOOKS] == before
    assert not draws.replaced()


def test_a_hypothesis_without_the_hooks_draws_as_before(monkeypatch):
    from gradcheck.search import draws

    # as if a later Hypothesis had renamed one of them
    monkeypatch.setattr(draws, "HOOKS", (*draws.HOOKS, "_renamed_since"))
    getter = providers._get_local_constants
    with draws.seed_alone_decides():
        assert providers._get_local_constants is getter
    assert draw_example(lambda x: x * 2, seed=1, shapes=["3"])[0][0].shape == (3,)


def test_a_local_module_imported_beside_the_target_does_not_move_the_draws(literal_dir):
    alone = _python("probe.py", "alone")
    beside = _python("probe.py", "with-more")
    assert alone.returncode == 0 and beside.returncode == 0, alone.stderr + beside.stderr
    assert alone.stdout.split()[0] == "60"
    assert alone.stdout == beside.stdout


def test_the_command_and_the_fixture_draw_the_same_for_the_same_seed(pytester, monkeypatch):
    """The command's JSON and the gradcheck_verify fixture's result under pytest (with a
    conftest of its own, full of numbers) agree: every error measured, the failure's
    inputs and the largest error seen."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(literal_ops=LITERAL_OPS)
    pytester.makeconftest(f"OTHER = {MORE_LITERALS!r}\nSCALES = [1.234567, -99.5, 0.0625]\n")
    pytester.makepyfile(
        test_fixture_run="""
        import json
        from pathlib import Path
        import literal_ops

        def test_scaled(gradcheck_verify):
            result = gradcheck_verify(literal_ops.scaled, seed=5, max_examples=40)
            Path("scaled.json").write_text(json.dumps(result.to_dict()))

        def test_wobbly(gradcheck_verify):
            try:
                gradcheck_verify(literal_ops.Wobbly, seed=5, max_examples=40)
            except AssertionError as exc:
                Path("wobbly.txt").write_text(str(exc))
        """
    )
    pytester.syspathinsert()
    outer = settings.get_current_profile_name()
    settings.load_profile("default")
    try:
        pytester.runpytest("-p", "gradcheck.pytest_plugin").assert_outcomes(passed=2)
    finally:
        settings.load_profile(outer)

    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return _python("-m", "gradcheck", "verify", *args, "--seed", "5", "--max-examples", "40")

    ran = command("literal_ops:scaled", "--format", "json", "-q")
    assert ran.returncode == 0, ran.stderr
    (listed,) = json.loads(ran.stdout)["targets"]
    by_fixture = json.loads((pytester.path / "scaled.json").read_text())
    keys = ("examples", "skipped", "max_abs_error", "max_rel_error", "error_ratio")
    assert {k: listed[k] for k in keys} == {k: by_fixture[k] for k in keys}

    failed = command("literal_ops:Wobbly")
    assert failed.returncode == 1, failed.stderr
    text = (pytester.path / "wobbly.txt").read_text()
    block = text.split("\n", 1)[1].rsplit("Replay:", 1)[0]  # past the headline
    assert "x (float64" in block and "largest error seen" in block.lower(), text
    assert _timeless(block) in _timeless(failed.stdout), (text, failed.stdout)


def _timeless(text: str) -> str:
    return re.sub(r"[0-9.]+ s\b", "- s", textwrap.dedent(text))
