"""The pytest plugin: fixtures, a marker, options and collected gradient checks.

pytest loads this module in every test run where gradcheck is installed: the plugin
named ``gradcheck`` (the ``pytest11`` entry point, ``_gradcheck_entry_points``)
registers it, unless ``-p no:gradcheck`` or the project has a ``gradcheck`` of its
own; ``-p gradcheck.pytest_plugin`` names it directly. So it imports nothing but
pytest, the standard library and three modules of plain names at import time. The
checker, the search and Hypothesis are imported when a fixture is first called or a
collected target runs.

Fixtures (session-scoped and stateless, so they work inside ``@given`` tests):

``gradcheck(target, *arrays, **settings_and_params)``
    Check one example (:func:`gradcheck.check`, which takes the same keywords: its
    settings, ``order=2``, ``mode="fast"``..., and the op's parameters, ``axis=0``;
    ``params={...}`` for a parameter named like a setting); on failure raise
    ``AssertionError`` with the command line's report: the inputs' values and the
    command that replays it. Returns the :class:`CheckResult`.
``gradcheck_verify(target, **options)``
    Run the generated-input search (:func:`gradcheck.verify`) and fail with the shrunk
    example's report, as the command line prints it. Returns the :class:`VerifyResult`.

The marker ``@pytest.mark.gradcheck(...)`` takes every setting of either function
(their columns of the settings table, :mod:`gradcheck.search.settings`), and each
fixture takes those of its function.

Settings come, weakest first, from the run's Hypothesis profile (``gradcheck_verify``
only, below), the ini keys (``gradcheck_seed``, ``gradcheck_max_examples``,
``gradcheck_mode``), the command line (``--gradcheck-seed``...), the
``@pytest.mark.gradcheck(...)`` marker nearest the test, and the fixture call itself.

The Hypothesis profile: when the run selected one other than Hypothesis's default
(``--hypothesis-profile NAME``, Hypothesis's own option, or ``settings.load_profile``
in a conftest), ``gradcheck_verify`` checks its ``max_examples`` examples; and if it is
not derandomized, each call draws a new seed (``--hypothesis-seed N`` fixes it; a
failure names the seed, which ``--gradcheck-seed`` replays). Under Hypothesis's default
profile the fixture checks :func:`gradcheck.verify`'s 100 examples with seed 0. The
profile's ``deadline`` is not applied: a search's examples run the finite differences
too, whose time is not the op's (``pytest-timeout`` bounds a test).

With ``pytest --gradcheck``, each target listed in ``[tool.gradcheck]`` of the
project's ``pyproject.toml`` becomes a test item named after it, collected from that
file (``pyproject.toml::mymodule:MyOp``, a node ID pytest runs again), with the JUnit
identity of ``gradcheck verify --junit-xml``.
"""

from __future__ import annotations

import re
import secrets
import shlex
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gradcheck.checking.vocabulary import MODES, Verdict
from gradcheck.errors import GradcheckFailure
from gradcheck.search.precedence import layered

__all__ = ["GradcheckItem", "GradcheckFile"]

#: Runs in a test suite must replay: without --gradcheck-seed, every fixture call and
#: collected target uses this seed.
DEFAULT_SEED = 0

_current_item = pytest.StashKey["pytest.Item | None"]()
_session_settings = pytest.StashKey["dict[str, Any]"]()


# -- options, ini keys, marker, header ------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gradcheck", "gradient checks (gradcheck)")
    group.addoption(
        "--gradcheck",
        action="store_true",
        default=False,
        help="collect each target of [tool.gradcheck] in pyproject.toml as a test item",
    )
    group.addoption(
        "--gradcheck-seed",
        type=int,
        default=None,
        metavar="N",
        help="seed for the gradcheck fixtures and collected targets",
    )
    group.addoption(
        "--gradcheck-max-examples",
        type=int,
        default=None,
        metavar="N",
        help="examples per generated-input search (gradcheck_verify, --gradcheck items)",
    )
    group.addoption(
        "--gradcheck-mode",
        choices=MODES,
        default=None,
        help="finite-difference mode: full (every element), fast (random directions), auto",
    )
    parser.addini("gradcheck_seed", "seed for gradcheck's fixtures and items", default=None)
    parser.addini("gradcheck_max_examples", "examples per gradcheck search", default=None)
    parser.addini("gradcheck_mode", "gradcheck's finite-difference mode", default=None)


def _ini_setting(config: pytest.Config, name: str) -> Any:
    raw = config.getini(f"gradcheck_{name}")
    if raw in (None, ""):
        return None
    if name == "mode":
        if raw not in MODES:
            raise pytest.UsageError(
                f"ini key gradcheck_mode must be one of {', '.join(MODES)}, got {raw!r}"
            )
        return raw
    try:
        number = int(raw)
    except ValueError:
        number = -1
    if number < (0 if name == "seed" else 1):
        kind = "non-negative" if name == "seed" else "positive"
        raise pytest.UsageError(f"ini key gradcheck_{name} must be a {kind} integer, got {raw!r}")
    return number


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "gradcheck(**settings): settings for the gradcheck fixtures in this test "
        "(the keywords of gradcheck.check and gradcheck.verify: mode, order, rtol...)",
    )
    # Only what the user set: a file's own settings ([tool.gradcheck]) give way to
    # these, and to nothing else.
    names = ("seed", "max_examples", "mode")
    options = {n: config.getoption(f"--gradcheck-{n.replace('_', '-')}") for n in names}
    if options["max_examples"] is not None and options["max_examples"] < 1:
        raise pytest.UsageError("--gradcheck-max-examples must be a positive integer")
    ini = {n: _ini_setting(config, n) for n in names}
    config.stash[_session_settings] = layered(ini=ini, options=options)
    config.stash[_current_item] = None
    _configure_collection(config)


def pytest_report_header(config: pytest.Config) -> str | None:
    # Only in a session that uses gradcheck (--gradcheck or a setting of ours), or with
    # -v: pytest loads the plugin in every project of an environment that has gradcheck.
    used = config.getoption("--gradcheck") or config.stash[_session_settings]
    if not used and config.get_verbosity() < 1:
        return None
    session: dict[str, Any] = config.stash[_session_settings]
    settings = {"seed": DEFAULT_SEED, **session}
    return "gradcheck: " + ", ".join(f"{k.replace('_', '-')}={v}" for k, v in settings.items())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    # The fixtures are session-scoped (Hypothesis forbids function-scoped ones in
    # @given tests), so they learn the running test, and its marker, from here.
    item.config.stash[_current_item] = item
    try:
        return (yield)
    finally:
        item.config.stash[_current_item] = None


def setting_keys() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The settings of :func:`gradcheck.check` and of :func:`gradcheck.verify`: their
    columns of the settings table (:mod:`gradcheck.search.settings`, imported here, when
    a fixture or a marker is used, not when the plugin loads)."""
    from gradcheck.search.settings import CHECK, VERIFY, names_taken_by

    return names_taken_by(CHECK), names_taken_by(VERIFY)


def marker_keys() -> tuple[str, ...]:
    """What ``@pytest.mark.gradcheck(...)`` takes: every setting of either fixture's
    function (each fixture takes those of its own)."""
    from gradcheck.search.settings import names_taken_by

    return names_taken_by("marker")


def _marker_problem(item: pytest.Item) -> str | None:
    """What is wrong with the item's ``@pytest.mark.gradcheck(...)`` markers, if
    anything (checked at collection: a typo fails there, in one line)."""
    for marker in item.iter_markers("gradcheck"):
        if marker.args:
            return (
                f"{item.nodeid}: @pytest.mark.gradcheck takes keyword settings only "
                f"({', '.join(marker_keys())}), got positional {marker.args!r}"
            )
        if not marker.kwargs:
            continue
        known = marker_keys()
        unknown = sorted(set(marker.kwargs) - set(known))
        if unknown:
            return (
                f"{item.nodeid}: @pytest.mark.gradcheck got unknown setting(s) "
                f"{', '.join(unknown)}; known: {', '.join(known)}"
            )
    return None


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    # A collector whose items carry a bad gradcheck marker fails to collect, naming it.
    report: Any = yield
    if report.passed and isinstance(report.result, list):
        problems = [
            problem
            for node in report.result
            if isinstance(node, pytest.Item) and (problem := _marker_problem(node))
        ]
        if problems:
            report.outcome, report.longrepr, report.result = "failed", "\n".join(problems), []
    return report  # type: ignore[no-any-return]


def _marker_settings(item: pytest.Item | None) -> dict[str, Any]:
    if item is None:
        return {}
    problem = _marker_problem(item)
    if problem is not None:  # an item that was not collected (validated) by pytest
        raise pytest.UsageError(problem)
    settings: dict[str, Any] = {}
    # closest marker last, so that it wins
    for marker in reversed(list(item.iter_markers("gradcheck"))):
        settings.update(marker.kwargs)
    return settings


# -- fixtures ------------------------------------------------------------------------
class _Fixture:
    def __init__(self, config: pytest.Config) -> None:
        self._config = config

    def _settings(
        self,
        keys: tuple[str, ...],
        call: dict[str, Any],
        defaults: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The session's and the marker's settings that this fixture takes, under the
        call's own keywords, over the fixture's ``defaults`` (seed 0 unless given)."""

        def known(settings: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in settings.items() if k in keys}

        return layered(
            defaults=known({"seed": DEFAULT_SEED} if defaults is None else defaults),
            options=known(self._config.stash[_session_settings]),
            marker=known(_marker_settings(self._config.stash[_current_item])),
            call=call,
        )

    def _replay(self, seed: int) -> str:
        """The command that runs the failing test again as it ran: its node ID, the
        session's settings and the seed (a fixture call's or marker's own settings
        are in the test)."""
        item = self._config.stash[_current_item]
        if item is None:  # called outside a test's call phase: no node ID to name
            return f"call the fixture again with seed={seed}"
        node = _node_from_here(item, self._config)
        return shlex.join(["pytest", node, *_session_flags(self._config, seed)])


def _node_from_here(item: pytest.Item, config: pytest.Config) -> str:
    """The item's node ID with its file's path relative to where pytest was started
    (a node ID's is relative to the rootdir: from a subfolder it names no file)."""
    import os

    _, sep, rest = item.nodeid.partition("::")
    try:
        path = os.path.relpath(item.path, config.invocation_params.dir)
    except ValueError:  # (another drive)
        return item.nodeid
    return f"{Path(path).as_posix()}{sep}{rest}" if sep else item.nodeid


def _session_flags(config: pytest.Config, seed: int) -> list[str]:
    """The session's gradcheck settings (ini keys, options) as options of ``pytest``,
    and ``seed`` as ``--gradcheck-seed``."""
    session = config.stash[_session_settings]
    words = []
    for key in ("mode", "max_examples"):
        if session.get(key) is not None:
            words.extend([f"--gradcheck-{key.replace('_', '-')}", str(session[key])])
    return [*words, "--gradcheck-seed", str(seed)]


class CheckFixture(_Fixture):
    """``gradcheck(target, *arrays, **settings_and_params)``: check one example; see
    the module docstring."""

    def __call__(self, target: Any, *arrays: Any, **keywords: Any) -> Any:
        __tracebackhide__ = True
        from gradcheck.checking.checker import check
        from gradcheck.errors import WorkerDied
        from gradcheck.frontend.render import report_text
        from gradcheck.frontend.runner import in_child_process

        # check() tells its settings from the op's parameters: the same keywords here
        check_keys, _ = setting_keys()
        given = {k: v for k, v in keywords.items() if k in check_keys}
        op_params = {k: v for k, v in keywords.items() if k not in check_keys}
        settings = self._settings(check_keys, given)
        try:  # in a process of its own: the op's os._exit or crash fails this test only
            result = in_child_process(check, target, *arrays, **op_params, **settings)
        except WorkerDied as exc:  # reported with the example, as a failed check is
            result = _died_checking(target, arrays, op_params, settings, exc)
        if result.verdict == Verdict.FAILED:
            replay = self._replay(result.seed)
            raise AssertionError(f"{report_text(result)}\nReplay: {replay}")
        if result.verdict != Verdict.PASSED:
            # A kink, an output that is not finite, nothing to compare: the example
            # says nothing about the gradient, and a test must not pass on it.
            pytest.skip(f"gradcheck: {result.target} {result.verdict}: {result.note}")
        return result


class VerifyFixture(_Fixture):
    """``gradcheck_verify(target, **options)``: the generated-input search; see the
    module docstring."""

    def __call__(self, target: Any, **options: Any) -> Any:
        __tracebackhide__ = True
        from gradcheck.errors import WorkerDied
        from gradcheck.frontend.runner import in_child_process
        from gradcheck.frontend.unfinished import ExampleLog
        from gradcheck.search.verifier import verify

        _, verify_keys = setting_keys()
        settings = self._settings(verify_keys, options, defaults=verify_defaults())
        log = ExampleLog()
        try:  # in a process of its own: the op's os._exit or crash fails this test only
            result = in_child_process(verify, target, **settings, on_example=log)
        except WorkerDied as exc:  # reported at the example it was on, as the CLI does
            names = _input_names(target)
            result = log.died(_target_label(target), settings, exc, input_names=names)
        finally:
            log.close()
        if not result.passed:
            replay = self._replay(result.seed)
            raise AssertionError(format_verify_failure(result, replay))
        _warn_if_budget_spent(result)
        return result


def _warn_if_budget_spent(result: Any) -> None:
    """A pass whose search stopped at its time budget checked fewer examples than
    asked: a warning in pytest's summary says so (never a silent shortening)."""
    if result.passed and getattr(result, "budget_spent", False):
        import warnings

        warnings.warn(f"gradcheck: {result.target}: {result.note}", stacklevel=3)


#: The suffixes of the profiles Hypothesis's pytest plugin derives from the one selected
#: (``--hypothesis-verbosity``, ``--hypothesis-explain``): the same profile for us.
_DERIVED_PROFILE = re.compile(r"(-with-\w+-verbosity|-with-explain-phase)+$")


def verify_defaults() -> dict[str, Any]:
    """``gradcheck_verify``'s defaults, from the run's Hypothesis profile (module
    docstring): seed 0 (and :func:`gradcheck.verify`'s own count) under Hypothesis's
    default profile; a selected profile's ``max_examples``, with seed 0 when it is
    derandomized and a new seed at each call when it is not."""
    from hypothesis import settings

    name = _current_profile_name(settings)
    profile = settings.default
    if name is None or _DERIVED_PROFILE.sub("", name) == "default" or profile is None:
        return {"seed": DEFAULT_SEED}
    seed = DEFAULT_SEED if profile.derandomize else _forced_seed()
    return {"seed": seed, "max_examples": profile.max_examples}


def _current_profile_name(settings: Any) -> str | None:
    getter = getattr(settings, "get_current_profile_name", None)
    if getter is not None:
        return str(getter())
    name = getattr(settings, "_current_profile", None)  # older Hypothesis: unexported
    return None if name is None else str(name)


def _forced_seed() -> int:
    """``--hypothesis-seed``'s value as a gradcheck seed, else a new random one."""
    from hypothesis import core

    forced = getattr(core, "global_force_seed", None)
    if forced is None:
        return secrets.randbits(32)
    if isinstance(forced, int) and forced >= 0:
        return forced
    return zlib.crc32(str(forced).encode("utf-8"))  # a seed that is not a number


@pytest.fixture(scope="session")
def gradcheck(pytestconfig: pytest.Config) -> CheckFixture:
    """Check the gradient of an op at one input: ``gradcheck(MyOp, x, y, axis=0)``.

    Fails the test with gradcheck's report when the gradient is wrong; skips it, with
    the reason, when the example says nothing about the gradient (a kink, an output
    that is not finite, nothing to compare: never a pass, never a failure); returns the
    :class:`gradcheck.CheckResult` when it passed.
    """
    return CheckFixture(pytestconfig)


@pytest.fixture(scope="session")
def gradcheck_verify(pytestconfig: pytest.Config) -> VerifyFixture:
    """Check an op on generated inputs: ``gradcheck_verify(MyOp, shapes=["n,k", "k"])``.

    Takes :func:`gradcheck.verify`'s keywords; fails the test with the report of the
    shrunk failing example. The number of examples and the seed follow the run's
    Hypothesis profile when one was selected (``--hypothesis-profile``), unless the call,
    the marker or a gradcheck option sets them.
    """
    return VerifyFixture(pytestconfig)


def format_verify_failure(result: Any, replay: str) -> str:
    """The report of a failed (or inconclusive) search: a headline (with the run's
    largest errors, as the command line's table row), then the block the
    command line prints for it (:func:`gradcheck.frontend.render.failure_block`: the
    shrunk example's report, its inputs' values, where it was found) ending with
    ``replay``, the command that runs it again."""
    from gradcheck.frontend.render import failure_block

    headline = (
        f"gradcheck: {result.target} {result.verdict} after {result.examples} example(s)"
        f" (seed {result.seed})"
    )
    if result.max_abs_error == result.max_abs_error:  # (nan: none measured)
        # the run's, as the command line's table gives them (the report below names
        # the examples that had them)
        headline += (
            f"; max abs err {result.max_abs_error:.3g}, max rel err "
            f"{result.max_rel_error:.3g} (the run's)"
        )
    if result.skip_lines:
        headline += "; " + "; ".join(result.skip_lines)
    if result.shapes:
        headline += f"; {result.shapes}"
    return f"{headline}\n{failure_block(result, replay)}"


# -- collected targets ---------------------------------------------------------------
#
# With --gradcheck, the project's configuration file (the pyproject.toml that `gradcheck
# verify` reads) is collected like a test file: one item per target, named as the
# command line names it, so that its node ID (``pyproject.toml::ops:Softplus``) runs it
# again, and its JUnit testcase is the one `gradcheck verify --junit-xml` writes
# (classname the module, name the op). When the run's arguments do not reach the file
# (a testpaths setting), it is added to them; named arguments select as usual.
_project_file = pytest.StashKey["Path | None"]()


def _configure_collection(config: pytest.Config) -> None:
    config.stash[_project_file] = None
    if not config.getoption("--gradcheck"):
        return
    from gradcheck.errors import ConfigError
    from gradcheck.frontend.config import find_pyproject, load_config

    try:
        path = find_pyproject(config.rootpath)
        project = load_config(path) if path is not None else None
    except ConfigError as exc:
        raise pytest.UsageError(f"--gradcheck: {exc}") from None
    if project is None or not project.targets:
        raise pytest.UsageError(
            f"--gradcheck: no targets to collect; list them in [tool.gradcheck] of "
            f'{path or "pyproject.toml"}, e.g. [[tool.gradcheck.targets]] target = "mymodule:MyOp"'
        )
    config.stash[_project_file] = project.path
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        reached = any(
            project.path.parent == Path(arg).resolve()
            or Path(arg).resolve() in project.path.parents
            for arg in config.args
        )
        if not reached:
            config.args.append(str(project.path))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> GradcheckFile | None:
    project = parent.config.stash.get(_project_file, None)
    if project is not None and file_path == project:
        return GradcheckFile.from_parent(parent, path=file_path)
    return None


class GradcheckFile(pytest.File):
    """The ``[tool.gradcheck]`` table of a ``pyproject.toml``: one item per target, as
    ``gradcheck verify`` runs them (an entry naming a module gives an item per target in
    it; a target listed twice is one item, with the settings of its first entry)."""

    def collect(self) -> Iterator[GradcheckItem]:
        from gradcheck.errors import GradcheckError, WorkerDied
        from gradcheck.frontend.config import load_config
        from gradcheck.frontend.runner import in_child_process

        project = load_config(self.path)
        assert project is not None  # load_config raises for an explicit file without it
        _importable(self.path.parent)  # targets are named relative to the project
        seen: set[str] = set()
        for entry in project.targets:
            # The user's modules are imported in a child, as `gradcheck list` does: a
            # module that ends its process (os._exit) at import fails its entry's item,
            # it does not end the session (green) before anything was checked.
            try:
                names = in_child_process(_target_names, entry.target)
                problem = None
            except WorkerDied:
                names = [entry.target]
                problem = (
                    f"gradcheck: {entry.target}: loading it ended its process (os._exit or "
                    f"sys.exit at import, a crash in native code, or a signal); nothing of it "
                    f"was checked"
                )
            except GradcheckError as exc:  # that entry fails, the others run
                names, problem = [entry.target], f"gradcheck: {entry.target}: {exc}"
            for name in names:
                if name not in seen:
                    seen.add(name)
                    yield GradcheckItem.from_parent(
                        self, name=name, options=project.options_for(entry), problem=problem
                    )


def _importable(folder: Path) -> None:
    import sys

    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


def _target_names(spec: str) -> list[str]:
    from gradcheck.frontend.loading import load_targets

    return [t.name for t in load_targets(spec)]


def _load_and_verify(spec: str, options: dict[str, Any], log: Any) -> Any:
    from gradcheck.frontend.loading import enter_module_state, load_targets
    from gradcheck.search.verifier import verify

    (target,) = load_targets(spec)
    enter_module_state(spec)
    log.named(_input_names(target.obj))
    return verify(target.obj, name=target.name, **options, on_example=log)


def _input_names(target: Any) -> list[str]:
    """The op's inputs' names as its reports give them (none where it cannot be
    resolved: its reports say ``input 0``...)."""
    from gradcheck.checking.resolve import resolve_target

    try:
        return list(resolve_target(target).signature.input_names)
    except Exception:
        return []


def _target_label(target: Any) -> str:
    from gradcheck.search.results import target_label

    try:
        return str(target_label(target))
    except Exception:
        return repr(target)


def _died_checking(
    target: Any, arrays: Any, params: dict[str, Any], settings: dict[str, Any], exc: Any
) -> Any:
    """The failed check of a ``gradcheck`` fixture whose process the op ended: its
    inputs' values, named as the op names them, as a failure's report shows them."""
    from gradcheck.checking.result import CheckResult, Failure
    from gradcheck.checking.vocabulary import Kind

    return CheckResult(
        verdict=Verdict.FAILED,
        target=_target_label(target),
        failure=Failure(exc.kind or Kind.WORKER_DIED, f"{exc}; it was checking the inputs below"),
        inputs=[a for a in arrays],
        params=dict(params),
        seed=int(settings.get("seed") or 0),
        input_names=_input_names(target),
    )


class GradcheckItem(pytest.Item):
    """One target of ``[tool.gradcheck]``, checked with :func:`gradcheck.verify`."""

    def __init__(self, *, options: dict[str, Any], problem: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.options = options
        self.problem = problem
        self.add_marker("gradcheck")

    def setup(self) -> None:
        # The JUnit testcase of `gradcheck verify --junit-xml`: classname the module,
        # name the op (pytest's own would be "pyproject.toml" and "ops:Name").
        from _pytest.junitxml import xml_key

        from gradcheck.frontend.loading import split_spec

        xml = self.config.stash.get(xml_key, None)
        if xml is not None:
            module, name = split_spec(self.name)
            reporter = xml.node_reporter(self.nodeid)
            reporter.add_attribute("classname", module)
            reporter.add_attribute("name", name or self.name)

    def runtest(self) -> None:
        from gradcheck.errors import GradcheckError, WorkerDied
        from gradcheck.frontend.config import RUN_LIMITS
        from gradcheck.frontend.runner import in_child_process
        from gradcheck.frontend.unfinished import ExampleLog

        if self.problem is not None:
            raise GradcheckFailure(self.problem)
        # the file's settings, overridden by the command line and ini keys; the time
        # limits are gradcheck verify's (here, pytest-timeout's job)
        options = layered(
            defaults={"seed": DEFAULT_SEED},
            project={k: v for k, v in self.options.items() if k not in RUN_LIMITS},
            options=self.config.stash[_session_settings],
        )
        log = ExampleLog()
        try:  # in a process of its own: the op's os._exit or crash fails this item only
            result = in_child_process(_load_and_verify, self.name, options, log)
        except WorkerDied as exc:  # reported at the example it was on, as the CLI does
            result = log.died(self.name, options, exc)
        except GradcheckError as exc:
            raise GradcheckFailure(f"gradcheck: {self.name}: {exc}") from None
        finally:
            log.close()
        if not result.passed:
            raise GradcheckFailure(format_verify_failure(result, self.replay(result.seed)))
        _warn_if_budget_spent(result)

    def replay(self, seed: int) -> str:
        """The ``gradcheck verify`` command that runs this target as it ran here: the
        same file's settings, the session's (``--gradcheck-mode``...) as its options."""
        words = ["gradcheck", "verify", self.name]
        session = self.config.stash[_session_settings]
        for key in ("mode", "max_examples"):
            if session.get(key) is not None:
                words.extend([f"--{key.replace('_', '-')}", str(session[key])])
        if self.path != Path.cwd() / "pyproject.toml":
            words.extend(["--config", str(self.path)])
        return shlex.join([*words, "--seed", str(seed)])

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, GradcheckFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"gradcheck {self.name}"
