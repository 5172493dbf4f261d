"""The pytest plugin, run in pytester sandboxes: fixtures, marker, options, collected
targets, and that loading the plugin loads nothing heavy."""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Iterator
from pathlib import Path

import hypothesis  # noqa: F401
import numpy  # noqa: F401
import pytest
from hypothesis import settings

import gradcheck.checking.checker
import gradcheck.search.verifier

# In-process pytester runs drop the modules a run imported afterwards; NumPy's
# extension cannot be loaded twice in one process, so what the sandboxes use is
# imported here, once, first.
PLUGIN = ("-p", "gradcheck.pytest_plugin")

OPS = """
import numpy as np
import gradcheck as mg


class Square(mg.Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data ** 2

    def backward_var(self, grad, index, **kwargs):
        return grad * 2 * self.variables[0].data


class SlightlyWrongSquare(Square):
    def backward_var(self, grad, index, **kwargs):
        return grad * 2.002 * self.variables[0].data


class WrongSquare(Square):
    def backward_var(self, grad, index, **kwargs):
        return grad * 3 * self.variables[0].data
"""


@pytest.fixture
def sandbox(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> Iterator[pytest.Pytester]:
    # Only our plugin, loaded explicitly: the same whether or not gradcheck is
    # installed (and its entry point visible) where this suite runs.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(myops=OPS)
    pytester.syspathinsert()
    # The in-process runs see this process's Hypothesis profile, which gradcheck_verify
    # follows: Hypothesis's default there, as in a project that selects none, whatever
    # profile this suite runs under (HYPOTHESIS_PROFILE=deep).
    outer = settings.get_current_profile_name()
    settings.load_profile("default")
    try:
        yield pytester
    finally:
        settings.load_profile(outer)


def test_the_check_fixture_passes_and_fails_with_the_report(sandbox):
    sandbox.makepyfile(
        test_ops="""
        import numpy as np
        from myops import Square, WrongSquare

        def test_right(gradcheck):
            result = gradcheck(Square, np.array([1.0, -2.0, 3.0]))
            assert result.verdict == "passed"

        def test_wrong(gradcheck):
            gradcheck(WrongSquare, np.array([1.0, -2.0, 3.0]))
        """
    )
    result = sandbox.runpytest(*PLUGIN)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: gradcheck: *WrongSquare failed: mismatch (input x)*",
            "*Mismatched elements: 3 / 3*",
            "*Index*Analytic*Numeric*Abs err*Rel err*",
            # the command line's report: the input's values, and the replay (issue 34)
            "*x (float64[[]3[]]):",  # ([[] is a literal [ to fnmatch)
            "*[[] 1., -2.,  3.[]]",
            "*Replay: pytest test_ops.py::test_wrong --gradcheck-seed 0",
        ]
    )
    # the helper's own frames are hidden: the traceback ends in the user's test
    assert "pytest_plugin.py" not in result.stdout.str()


def test_the_check_fixture_takes_integer_labels_as_constants(sandbox):
    sandbox.makepyfile(
        test_labels="""
        import numpy as np
        import gradcheck as mg

        class Pick(mg.Operation):
            def __call__(self, x, labels):
                self.variables = (x, labels)
                return x.data[np.arange(len(labels.data)), labels.data] ** 2

            def backward_var(self, grad, index, **kwargs):
                x, labels = self.variables
                rows = np.arange(len(labels.data))
                out = np.zeros_like(x.data)
                out[rows, labels.data] = grad * 2 * x.data[rows, labels.data] * self.k
                return out

            k = 1.0

        class WrongPick(Pick):
            k = 1.5

        X = np.array([[1.0, -2.0, 0.5], [0.3, 2.0, -1.0]])

        def test_right(gradcheck):
            result = gradcheck(Pick, X, np.array([2, 0]))
            assert result.verdict == "passed"
            assert result.settings["constants"] == [1]

        def test_wrong(gradcheck):
            gradcheck(WrongPick, X, np.array([2, 0]))
        """
    )
    result = sandbox.runpytest(*PLUGIN)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*WrongPick failed: mismatch (input x)*",
            "*Constants, not differentiated (integer or boolean arrays): input labels*",
        ]
    )


def test_the_check_fixture_passes_op_parameters(sandbox):
    sandbox.makepyfile(
        test_params="""
        import numpy as np
        import gradcheck as mg

        def test_sum_axis(gradcheck):
            assert gradcheck(mg.sum, np.ones((2, 3)), axis=1).passed
        """
    )
    sandbox.runpytest(*PLUGIN).assert_outcomes(passed=1)


def test_the_fixture_works_inside_given(sandbox):
    sandbox.makepyfile(
        test_given="""
        import numpy as np
        from hypothesis import given, settings, strategies as st
        from myops import Square

        @settings(max_examples=10, deadline=None)
        @given(st.floats(-3, 3))
        def test_square(gradcheck, x):
            gradcheck(Square, np.array([x]))
        """
    )
    sandbox.runpytest(*PLUGIN).assert_outcomes(passed=1)


def test_the_verify_fixture_passes_and_fails_with_the_shrunk_report(sandbox):
    sandbox.makepyfile(
        test_search="""
        from myops import Square, WrongSquare

        def test_right(gradcheck_verify):
            assert gradcheck_verify(Square, max_examples=10).passed

        def test_wrong(gradcheck_verify):
            gradcheck_verify(WrongSquare, max_examples=10, domain=(0.5, 2.0))
        """
    )
    result = sandbox.runpytest(*PLUGIN)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*gradcheck: *WrongSquare failed after * example(s) (seed 0); max abs err *, "
            "max rel err * (the run's)*",
            "*mismatch*",
            "*x (float64*):",
            "*Replay: pytest test_search.py::test_wrong --gradcheck-seed 0",
        ]
    )


def test_the_marker_sets_tolerances_and_is_registered(sandbox):
    sandbox.makepyfile(
        test_marker="""
        import numpy as np
        import pytest
        from myops import SlightlyWrongSquare

        X = np.array([1.0, 2.0])

        @pytest.mark.gradcheck(rtol=1e-2)
        def test_loose(gradcheck):
            gradcheck(SlightlyWrongSquare, X)

        def test_strict(gradcheck):
            gradcheck(SlightlyWrongSquare, X)

        @pytest.mark.gradcheck(mode="fast")
        class TestClass:
            @pytest.mark.gradcheck(rtol=1e-2)
            def test_closest_marker_wins(self, gradcheck):
                result = gradcheck(SlightlyWrongSquare, X)
                assert result.settings["mode"] == "fast"
        """
    )
    result = sandbox.runpytest(*PLUGIN, "--strict-markers")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_strict*"])


def test_an_unknown_marker_setting_is_a_usage_error(sandbox):
    sandbox.makepyfile(
        test_bad_marker="""
        import numpy as np
        import pytest
        from myops import Square

        @pytest.mark.gradcheck(rtoll=1)
        def test_it(gradcheck):
            gradcheck(Square, np.array([1.0]))
        """
    )
    result = sandbox.runpytest(*PLUGIN)
    result.stdout.fnmatch_lines(["*unknown setting(s) rtoll*"])
    assert result.ret != 0
    # at collection, in a few lines: --co fails too, and nothing runs
    listed = sandbox.runpytest(*PLUGIN, "--co", "-q")
    assert listed.ret == pytest.ExitCode.INTERRUPTED
    listed.stdout.fnmatch_lines(["*ERROR collecting test_bad_marker.py*", "*rtoll*"])
    quiet = sandbox.runpytest(*PLUGIN, "-q")
    assert "Traceback" not in quiet.stdout.str() and len(quiet.stdout.lines) < 15


def test_the_header_only_when_gradcheck_is_used_or_with_v(sandbox):
    # pytest loads the plugin in every project of an environment with gradcheck
    sandbox.makepyfile(test_nothing="def test_nothing(): pass")
    assert "gradcheck:" not in sandbox.runpytest(*PLUGIN).stdout.str()
    sandbox.runpytest(*PLUGIN, "-v").stdout.fnmatch_lines(["gradcheck: seed=0"])
    sandbox.makefile(".toml", pyproject='[[tool.gradcheck.targets]]\ntarget = "myops:Square"\n')
    sandbox.runpytest(*PLUGIN, "--gradcheck").stdout.fnmatch_lines(["gradcheck: seed=0"])


def test_seed_option_and_ini_show_in_the_header(sandbox):
    sandbox.makepyfile(test_nothing="def test_nothing(): pass")
    result = sandbox.runpytest(*PLUGIN, "--gradcheck-seed", "7", "--gradcheck-mode", "fast")
    result.stdout.fnmatch_lines(["gradcheck: seed=7, mode=fast"])
    sandbox.makeini("[pytest]\ngradcheck_seed = 5\ngradcheck_max_examples = 12\n")
    sandbox.runpytest(*PLUGIN).stdout.fnmatch_lines(["gradcheck: seed=5, max-examples=12"])


def test_the_seed_option_reaches_the_fixture(sandbox):
    sandbox.makepyfile(
        test_seed="""
        import numpy as np
        from myops import Square

        def test_seed(gradcheck):
            assert gradcheck(Square, np.array([1.0])).seed == 7
        """
    )
    sandbox.runpytest(*PLUGIN, "--gradcheck-seed=7").assert_outcomes(passed=1)


def test_a_bad_ini_value_is_a_usage_error(sandbox):
    sandbox.makeini("[pytest]\ngradcheck_mode = slow\n")
    sandbox.makepyfile(test_nothing="def test_nothing(): pass")
    result = sandbox.runpytest(*PLUGIN)
    result.stderr.fnmatch_lines(["*gradcheck_mode must be one of auto, full, fast*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


PYPROJECT = """
[tool.gradcheck]
max-examples = 8

[[tool.gradcheck.targets]]
target = "myops:Square"
domain = [-2, 2]

[[tool.gradcheck.targets]]
target = "myops:WrongSquare"
domain = [0.5, 2]
"""


def test_collected_targets_are_test_items(sandbox):
    sandbox.makefile(".toml", pyproject=PYPROJECT)
    sandbox.makepyfile(test_plain="def test_plain(): pass")
    result = sandbox.runpytest(*PLUGIN, "--gradcheck", "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*pyproject.toml::myops:Square PASSED*",
            "*pyproject.toml::myops:WrongSquare FAILED*",
            "*gradcheck: myops:WrongSquare failed after*",
        ]
    )
    # -k selects among collected targets too; without --gradcheck nothing is added
    sandbox.runpytest(*PLUGIN, "--gradcheck", "-k", "Square and not Wrong").assert_outcomes(
        passed=1
    )
    sandbox.runpytest(*PLUGIN).assert_outcomes(passed=1)


def test_collected_node_ids_run_again_and_count_right(sandbox):
    sandbox.makefile(
        ".toml", pyproject=PYPROJECT + '\n[[tool.gradcheck.targets]]\ntarget = "myops"\n'
    )
    sandbox.makepyfile(test_plain="def test_plain(): pass")
    listed = sandbox.runpytest(*PLUGIN, "--gradcheck", "--co", "-q")
    ids = [line for line in listed.stdout.lines if "::" in line]
    # the module entry adds the targets not listed before, each once
    assert ids[:3] == [
        "pyproject.toml::myops:Square",
        "pyproject.toml::myops:WrongSquare",
        "pyproject.toml::myops:SlightlyWrongSquare",
    ]
    listed.stdout.fnmatch_lines([f"{len(ids)} tests collected*"])
    sandbox.runpytest(*PLUGIN, "--gradcheck", ids[0]).assert_outcomes(passed=1)
    failed = sandbox.runpytest(*PLUGIN, "--gradcheck", "-k", "WrongSquare and not Slightly")
    (line,) = [x for x in failed.stdout.lines if x.startswith("FAILED ")]
    again = sandbox.runpytest(*PLUGIN, "--gradcheck", line.split()[1])
    again.assert_outcomes(failed=1)


def test_collected_targets_are_found_when_testpaths_do_not_reach_the_file(sandbox):
    sandbox.makefile(
        ".toml", pyproject=PYPROJECT + '\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    )
    sandbox.mkdir("tests")
    (sandbox.path / "tests" / "test_plain.py").write_text("def test_plain(): pass\n")
    result = sandbox.runpytest(*PLUGIN, "--gradcheck")
    result.assert_outcomes(passed=2, failed=1)
    # a named path selects as usual: only what it names
    sandbox.runpytest(*PLUGIN, "--gradcheck", "tests").assert_outcomes(passed=1)


def test_a_target_has_the_same_junit_identity_as_in_gradcheck_verify(sandbox, monkeypatch):
    import xml.etree.ElementTree as ET

    from click.testing import CliRunner

    from gradcheck.cli import main

    sandbox.makefile(".toml", pyproject=PYPROJECT)
    sandbox.runpytest(*PLUGIN, "--gradcheck", "--junitxml", "py.xml", "-k", "myops")
    monkeypatch.chdir(sandbox.path)
    args = ["verify", "--junit-xml", "cli.xml", "--max-examples", "2", "--seed", "1"]
    CliRunner().invoke(main, args)

    def cases(name: str) -> set[tuple[str | None, str | None]]:
        tree = ET.parse(sandbox.path / name)
        return {(c.get("classname"), c.get("name")) for c in tree.iter("testcase")}

    assert cases("cli.xml") == {("myops", "Square"), ("myops", "WrongSquare")}
    assert cases("py.xml") == cases("cli.xml")


def test_collected_targets_take_no_time_limit_from_the_file(sandbox):
    # The time limits are gradcheck verify's; pytest items ignore them (pytest-timeout).
    sandbox.makefile(
        ".toml",
        pyproject="[tool.gradcheck]\ntimeout = 30\nexample-timeout = 5\nmax-examples = 3\n"
        '[[tool.gradcheck.targets]]\ntarget = "myops:Square"\ntimeout = 9\n',
    )
    sandbox.runpytest(*PLUGIN, "--gradcheck").assert_outcomes(passed=1)


def test_collection_without_targets_or_with_a_bad_config_is_a_usage_error(sandbox):
    sandbox.makepyfile(test_plain="def test_plain(): pass")
    sandbox.makefile(".toml", pyproject="[tool.gradcheck]\nseed = 1\n")
    result = sandbox.runpytest(*PLUGIN, "--gradcheck")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--gradcheck: no targets to collect*"])
    sandbox.makefile(".toml", pyproject="[project]\nname = 'x'\n")
    result = sandbox.runpytest(*PLUGIN, "--gradcheck")
    result.stderr.fnmatch_lines(["*--gradcheck: no targets to collect*"])
    sandbox.makefile(".toml", pyproject="[tool.gradcheck]\nmax-exampels = 3\n")
    result = sandbox.runpytest(*PLUGIN, "--gradcheck")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown key 'max-exampels'*"])


def test_a_target_that_does_not_load_fails_its_item_with_one_line(sandbox):
    sandbox.makefile(".toml", pyproject='[[tool.gradcheck.targets]]\ntarget = "myops:Nope"\n')
    result = sandbox.runpytest(*PLUGIN, "--gradcheck")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*gradcheck: *Nope*"])


def test_a_run_that_does_not_use_gradcheck_imports_nothing_heavy(sandbox, monkeypatch):
    # the subprocess must import this checkout's gradcheck, installed or not
    root = str(Path(gradcheck.__file__).resolve().parents[1])
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    )
    sandbox.makeconftest(
        textwrap.dedent(
            """
            import json, sys

            def pytest_sessionfinish(session):
                heavy = [
                    "numpy",
                    "hypothesis",
                    "gradcheck.engine.tensor_base",
                    "gradcheck.checking.checker",
                ]
                with open("loaded.json", "w") as f:
                    json.dump([m for m in heavy if m in sys.modules], f)
            """
        )
    )
    sandbox.makepyfile(test_plain="def test_plain(): assert 1 + 1 == 2")
    result = sandbox.runpytest_subprocess(*PLUGIN, "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["gradcheck: seed=0"])  # the plugin did load
    assert json.loads((sandbox.path / "loaded.json").read_text()) == []


def test_the_check_fixture_skips_an_example_that_says_nothing(sandbox):
    # A kink, an output that is not finite, nothing to compare: never a pass.
    sandbox.makepyfile(
        test_skips="""
        import numpy as np
        import gradcheck as mg
        from myops import WrongSquare

        def test_at_a_kink(gradcheck):
            gradcheck(lambda x: mg.abs(x), np.array([0.0, 1.0]))

        def test_undefined(gradcheck):
            gradcheck(lambda x: mg.log(x), np.array([-1.0]))

        def test_empty(gradcheck):
            gradcheck(WrongSquare, np.zeros(0))
        """
    )
    result = sandbox.runpytest(*PLUGIN, "-rs")
    result.assert_outcomes(skipped=3)
    result.stdout.fnmatch_lines(
        [
            "*not differentiable: not differentiable there*",
            "*inconclusive: output not finite there*",
            "*inconclusive: nothing to compare*",
        ]
    )


# -- gradcheck_verify and the run's Hypothesis profile (issue 23, item 12) ----------------
PROFILES = """
from hypothesis import settings

settings.register_profile("three", max_examples=3, derandomize=True)
settings.register_profile("random", max_examples=4, derandomize=False)
"""

COUNTS = """
import pytest
from myops import Square


def test_plain(gradcheck_verify):
    result = gradcheck_verify(Square)
    print(f"\\nRESULT plain examples={result.examples} seed={result.seed}")


def test_again(gradcheck_verify):
    result = gradcheck_verify(Square)
    print(f"\\nRESULT again examples={result.examples} seed={result.seed}")


@pytest.mark.gradcheck(max_examples=7, seed=5)
def test_marker(gradcheck_verify):
    result = gradcheck_verify(Square)
    print(f"\\nRESULT marker examples={result.examples} seed={result.seed}")


def test_call(gradcheck_verify):
    result = gradcheck_verify(Square, max_examples=5)
    print(f"\\nRESULT call examples={result.examples} seed={result.seed}")
"""


@pytest.fixture
def profiles(sandbox, monkeypatch):
    """A sandbox whose conftest registers two profiles, run in a subprocess: a profile
    Hypothesis loads stays loaded in its process, and would leak into this suite."""
    root = str(Path(gradcheck.__file__).resolve().parents[1])
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    )
    sandbox.makeconftest(PROFILES)
    sandbox.makepyfile(test_counts=COUNTS)

    def run(*args: str, conftest: str = "") -> dict[str, tuple[int, int]]:
        if conftest:
            sandbox.makeconftest(PROFILES + conftest)
        # Hypothesis's own plugin, which adds --hypothesis-profile (autoload is off here)
        result = sandbox.runpytest_subprocess(
            *PLUGIN, "-p", "_hypothesis_pytestplugin", "-s", *args
        )
        result.assert_outcomes(passed=4)
        found = {}
        for line in result.stdout.lines:
            if line.startswith("RESULT "):
                _, name, examples, seed = line.split()
                found[name] = (int(examples.split("=")[1]), int(seed.split("=")[1]))
        return found

    return run


def test_the_verify_fixture_runs_the_examples_of_the_selected_profile(profiles):
    found = profiles("--hypothesis-profile", "three")
    assert found["plain"] == (3, 0)  # derandomized: the plugin's seed 0
    assert found["marker"] == (7, 5) and found["call"] == (5, 0)  # explicit settings win
    # gradcheck's own option is stronger than the profile
    assert profiles("--hypothesis-profile", "three", "--gradcheck-max-examples", "2")["plain"] == (
        2,
        0,
    )


def test_without_a_selected_profile_the_verify_fixture_keeps_its_defaults(profiles):
    # Hypothesis's default profile (and the one its --hypothesis-verbosity derives from it)
    found = profiles("--hypothesis-verbosity", "quiet")
    assert found["plain"] == (100, 0) and found["call"] == (5, 0)


def test_a_loaded_random_profile_draws_a_seed_per_call_unless_one_is_forced(profiles):
    found = profiles(conftest='settings.load_profile("random")\n')
    assert found["plain"][0] == 4 and found["again"][0] == 4
    assert found["plain"][1] != found["again"][1]  # a new seed each call
    assert found["marker"] == (7, 5)
    forced = profiles("--hypothesis-seed", "7", conftest='settings.load_profile("random")\n')
    assert forced["plain"] == (4, 7) and forced["again"] == (4, 7)


def test_the_marker_names_domain_errors(sandbox):
    sandbox.makepyfile(
        test_skip_on="""
        import numpy as np
        import pytest

        class Outside(Exception):
            pass

        def op(x):
            if float(np.sum(x.data)) > 0.5:
                raise Outside("outside")
            return x * x

        X = np.array([0.4, 0.3])

        def test_unnamed_fails(gradcheck):
            gradcheck(op, X)

        @pytest.mark.gradcheck(skip_on=[Outside])
        def test_named_skips(gradcheck):
            gradcheck(op, X)

        @pytest.mark.gradcheck(skip_on=Outside, max_examples=20)
        def test_named_search_passes(gradcheck_verify):
            assert gradcheck_verify(op).skipped
        """
    )
    result = sandbox.runpytest(*PLUGIN)
    result.assert_outcomes(passed=1, failed=1, skipped=1)
    result.stdout.fnmatch_lines(["*test_unnamed_fails*"])


# -- one path for settings, one report (issue 34) -------------------------------------
#: A value of every setting the marker takes (test_settings_paths.py checks that they
#: are check's and verify's keywords): a new setting fails here until it has one.
SETTING_SAMPLES = {
    "constants": (1,),
    "seed": 3,
    "mode": "full",
    "atol": 1e-9,
    "rtol": 1e-6,
    "dtype": "float32",
    "reference": "native",
    "complex_step": True,
    "directions": 6,
    "group_size": 8,
    "order": 2,
    "modes": ("rev", "fwd"),
    "device": "cpu",
    "nondet_tol": 1e-12,
    "skip_on": ("ZeroDivisionError",),
    "upstream": (1.0, -2.0, 0.5),
    "shapes": ("3", "3"),
    "domain": (-1.0, 1.0),
    "kwargs": {"scale": 2.0},
    "max_examples": 5,
    "broadcast": True,
    "avoid": (0.0,),
    "unique": True,
    "integers": {1: (0, 3)},
    "booleans": (1,),
    "min_dims": 1,
    "reference_forward": "numpy:square",
    "compiled": "eager",
    "batched": False,
    "time_budget": 30.0,
}

RECORDER = """
from types import SimpleNamespace

import numpy as np
import pytest

import gradcheck.checking.checker as checker
import gradcheck.frontend.runner as runner
import gradcheck.search.verifier as verifier
from myops import Square

SEEN = {}
X = np.ones(3)


@pytest.fixture(autouse=True)
def record(monkeypatch):
    # what reaches gradcheck.check and gradcheck.verify, as they were called
    def fake_check(target, *arrays, **keywords):
        SEEN["check"] = keywords
        return SimpleNamespace(verdict="passed")

    def fake_verify(target, **keywords):
        SEEN["verify"] = keywords
        return SimpleNamespace(passed=True)

    SEEN.clear()
    monkeypatch.setattr(checker, "check", fake_check)
    monkeypatch.setattr(verifier, "verify", fake_verify)
    # the fixtures check in a forked child (issue 35): the spies record in this process
    monkeypatch.setattr(runner, "in_child_process", lambda f, *args, **kw: f(*args, **kw))


def test_op_parameters_still_reach_the_op(gradcheck):
    gradcheck(Square, X, scale=2.0, params={"mode": "op's own"})
    assert SEEN["check"]["scale"] == 2.0 and SEEN["check"]["params"] == {"mode": "op's own"}
    assert SEEN["check"]["seed"] == 0 and "mode" not in SEEN["check"]
"""


def test_every_setting_reaches_the_fixtures(sandbox):
    from gradcheck.checking.checker import CHECK_SETTINGS
    from gradcheck.pytest_plugin import marker_keys
    from gradcheck.search.verifier import VERIFY_SETTINGS

    assert set(SETTING_SAMPLES) == set(marker_keys())
    tests = [RECORDER]
    for key, value in SETTING_SAMPLES.items():
        checks = []
        if key in CHECK_SETTINGS:
            checks.append(("gradcheck(Square, X, **given)", "check"))
        if key in VERIFY_SETTINGS:
            checks.append(("gradcheck_verify(Square, **given)", "verify"))
        body = "".join(
            f"    {call}\n    assert SEEN[{where!r}][{key!r}] == {value!r}, SEEN\n"
            for call, where in checks
        )
        tests.append(
            f"@pytest.mark.gradcheck({key}={value!r})\n"
            f"def test_marker_{key}(gradcheck, gradcheck_verify):\n    given = {{}}\n{body}\n\n"
            f"def test_call_{key}(gradcheck, gradcheck_verify):\n"
            f"    given = {{{key!r}: {value!r}}}\n{body}\n"
        )
    sandbox.makepyfile(test_settings="\n\n".join(tests))
    result = sandbox.runpytest(*PLUGIN, "--strict-markers")
    result.assert_outcomes(passed=2 * len(SETTING_SAMPLES) + 1)


def test_order_2_in_the_marker_and_the_call_reaches_the_check(sandbox):
    # gradcheck's own ops have no double backward: order 2 reaches check(), which
    # says so (it was refused by the marker, and handed to the op's forward by the call)
    sandbox.makepyfile(
        test_order="""
        import numpy as np
        import pytest
        from myops import Square

        @pytest.mark.gradcheck(order=2)
        def test_marker(gradcheck):
            gradcheck(Square, np.array([1.0]))

        def test_call(gradcheck):
            gradcheck(Square, np.array([1.0]), order=2)
        """
    )
    result = sandbox.runpytest(*PLUGIN)
    result.assert_outcomes(failed=2)
    assert result.stdout.str().count("checking its order 2 needs a torch or JAX target") == 2
    assert "forward_error" not in result.stdout.str()


def _block(text: str, start: str) -> str:
    """The lines of a report from the one that starts with ``start`` to its Replay
    line, with pytest's ``E   `` prefix and the measured seconds taken out."""
    import re

    lines = [re.sub(r"^E\s{7}", "", line) for line in text.splitlines()]
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    last = next(i for i in range(first, len(lines)) if lines[i].startswith("Replay: "))
    return re.sub(r"calls in [0-9.]+ s", "calls in _ s", "\n".join(lines[first : last + 1]))


def test_a_collected_target_fails_with_the_command_lines_report(sandbox):
    from click.testing import CliRunner

    from gradcheck.cli import main

    sandbox.makefile(".toml", pyproject=PYPROJECT)
    result = sandbox.runpytest(*PLUGIN, "--gradcheck", "-k", "WrongSquare")
    result.assert_outcomes(failed=1)
    cli = CliRunner().invoke(main, ["verify", "myops:WrongSquare", "--seed", "0"])
    assert cli.exit_code == 1, cli.output
    start = "gradcheck: myops:WrongSquare failed: mismatch"
    ours = _block(result.stdout.str(), start)
    assert ours == _block(cli.output, start)
    assert "x (float64" in ours
    assert ours.endswith("Replay: gradcheck verify myops:WrongSquare --seed 0")


QUITS = """
import os
import gradcheck as mg


class Quits(mg.Operation):
    def __call__(self, x):
        self.variables = (x,)
        os._exit(0)

    def backward_var(self, grad, index, **kwargs):
        return grad
"""


def test_an_op_that_ends_its_process_is_reported_with_its_example_as_the_cli_does(sandbox):
    # Both fixtures and a collected target: the failure, the example it was on (its
    # inputs named, their values) and the replay, as `gradcheck verify` reports it (was
    # one line: "the process checking it exited with code 0", no example, no replay).
    sandbox.makepyfile(quits=QUITS)
    sandbox.makefile(
        ".toml",
        pyproject="[tool.gradcheck]\nmax-examples = 5\n\n"
        '[[tool.gradcheck.targets]]\ntarget = "quits:Quits"\n',
    )
    sandbox.makepyfile(
        test_quits="""
        import numpy as np
        from quits import Quits

        def test_check(gradcheck):
            gradcheck(Quits, np.array([1.5, -2.0]))

        def test_verify(gradcheck_verify):
            gradcheck_verify(Quits, max_examples=5)
        """
    )
    result = sandbox.runpytest(*PLUGIN, "--gradcheck")
    result.assert_outcomes(failed=3)
    text = result.stdout.str()
    assert text.count("Quits failed: worker_died") == 3
    assert text.count("inputs: x float64[") == 3
    assert "E       x (float64[2]):\nE         [ 1.5, -2. ]\n" in text
    result.stdout.fnmatch_lines(
        [
            "*Replay: pytest test_quits.py::test_check --gradcheck-seed 0*",
            "*it was checking the example below (example 1 drawn)*",
            "*Replay: pytest test_quits.py::test_verify --gradcheck-seed 0*",
        ]
    )
    result.stdout.fnmatch_lines(["*Replay: gradcheck verify quits:Quits --seed 0*"])


def test_an_op_that_raises_system_exit_fails_the_check_fixture_as_exited(sandbox):
    # as a search reports it (kind `exited`), with the inputs it was given, named
    sandbox.makepyfile(
        test_exits="""
        import sys
        import numpy as np
        import gradcheck as mg

        class Exits(mg.Operation):
            def __call__(self, x):
                self.variables = (x,)
                sys.exit(0)

            def backward_var(self, grad, index, **kwargs):
                return grad

        def test_check(gradcheck):
            gradcheck(Exits, np.array([0.25]))
        """
    )
    result = sandbox.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Exits failed: exited*", "*SystemExit*", "*inputs: x float64*"])


def test_the_replay_names_the_test_from_where_pytest_was_started(sandbox, monkeypatch):
    # started in a subfolder of the rootdir, the command runs from there (the node
    # ID, relative to the rootdir, named a file that is not there: sub/sub/test_it.py)
    sandbox.makeini("[pytest]\n")
    sub = sandbox.mkdir("sub")
    (sub / "test_it.py").write_text(
        "import numpy as np\nfrom myops import WrongSquare\n\n\n"
        "def test_wrong(gradcheck):\n    gradcheck(WrongSquare, np.array([1.5]))\n"
    )
    monkeypatch.chdir(sub)
    result = sandbox.runpytest(*PLUGIN, "test_it.py")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Replay: pytest test_it.py::test_wrong --gradcheck-seed 0*"])
