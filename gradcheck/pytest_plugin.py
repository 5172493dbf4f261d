"""The pytest plugin: fixtures, a marker, options and collected gradient checks.

pytest loads this module in every test run where gradcheck is installed: the plugin
named ``gradcheck`` (the ``pytest11`` entry point, ``_gradcheck_entry_points``)
registers it, unless ``-p no:gradcheck`` or the project has a ``gradcheck`` of its
own; ``-p gradcheck.pytest_plugin`` names it directly. So it imports nothing but
pytest, the standard library and three modules of plain names at import time. The
checker, the search and Hypothesis are imported when a fixture is first called or a
collected target runs.

Fixtures (session-scoped and stateless, so they work inside ``@given`` tests):

``gradcheck(target, *arrays, **params)``
    Check one example (:func:`gradcheck.check`); on failure raise ``AssertionError``
    with the same report as the command line. Returns the :class:`CheckResult`.
``gradcheck_verify(target, **options)``
    Run the generated-input search (:func:`gradcheck.verify`) and fail with the shrunk
    example's report. Returns the :class:`VerifyResult`.

Settings come, weakest first, from the ini keys (``gradcheck_seed``,
``gradcheck_max_examples``, ``gradcheck_mode``), the command line
(``--gradcheck-seed``...), the ``@pytest.mark.gradcheck(...)`` marker nearest the test,
and the fixture call itself.

With ``pytest --gradcheck``, each target listed in ``[tool.gradcheck]`` of
``pyproject.toml`` becomes a test item named after it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gradcheck.checking.vocabulary import MODES, Verdict
from gradcheck.errors import GradcheckFailure
from gradcheck.search.precedence import layered

__all__ = ["GradcheckItem", "GradcheckFile"]

#: Marker keywords, and where each goes: every one is a setting of gradcheck.check
#: or gradcheck.verify.
MARKER_KEYS = ("atol", "rtol", "mode", "dtype", "seed", "max_examples", "reference", "directions")
CHECK_KEYS = ("atol", "rtol", "mode", "dtype", "seed", "reference", "directions")
VERIFY_KEYS = ("atol", "rtol", "mode", "dtype", "seed", "max_examples")
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
        f"({', '.join(MARKER_KEYS)})",
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


def pytest_report_header(config: pytest.Config) -> str:
    settings = {"seed": DEFAULT_SEED, **config.stash[_session_settings]}
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


def _marker_settings(item: pytest.Item | None) -> dict[str, Any]:
    if item is None:
        return {}
    settings: dict[str, Any] = {}
    # closest marker last, so that it wins
    for marker in reversed(list(item.iter_markers("gradcheck"))):
        if marker.args:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.gradcheck takes keyword settings only "
                f"({', '.join(MARKER_KEYS)}), got positional {marker.args!r}"
            )
        unknown = sorted(set(marker.kwargs) - set(MARKER_KEYS))
        if unknown:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.gradcheck got unknown setting(s) "
                f"{', '.join(unknown)}; known: {', '.join(MARKER_KEYS)}"
            )
        settings.update(marker.kwargs)
    return settings


# -- fixtures ------------------------------------------------------------------------
class _Fixture:
    def __init__(self, config: pytest.Config) -> None:
        self._config = config

    def _settings(self, keys: tuple[str, ...], call: dict[str, Any]) -> dict[str, Any]:
        """The session's and the marker's settings that this fixture takes, under the
        call's own keywords."""

        def known(settings: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in settings.items() if k in keys}

        return layered(
            defaults=known({"seed": DEFAULT_SEED}),
            options=known(self._config.stash[_session_settings]),
            marker=known(_marker_settings(self._config.stash[_current_item])),
            call=call,
        )


class CheckFixture(_Fixture):
    """``gradcheck(target, *arrays, **params)``: check one example; see the module
    docstring."""

    def __call__(self, target: Any, *arrays: Any, **params: Any) -> Any:
        __tracebackhide__ = True
        from gradcheck.checking.checker import check
        from gradcheck.frontend.report import format_result

        result = check(target, *arrays, params=params, **self._settings(CHECK_KEYS, {}))
        if result.verdict == Verdict.FAILED:
            raise AssertionError(format_result(result))
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
        from gradcheck.search.verifier import verify

        result = verify(target, **self._settings(VERIFY_KEYS, options))
        if not result.passed:
            raise AssertionError(format_verify_failure(result))
        return result


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
    shrunk failing example.
    """
    return VerifyFixture(pytestconfig)


def format_verify_failure(result: Any) -> str:
    """The report of a failed (or inconclusive) search: a headline, then the shrunk
    example's report."""
    from gradcheck.frontend.report import format_result

    headline = (
        f"gradcheck: {result.target} {result.verdict} after {result.examples} example(s)"
        f" (seed {result.seed})"
    )
    if result.skip_lines:
        headline += "; " + "; ".join(result.skip_lines)
    lines = [headline]
    if result.note:
        lines.append(result.note)
    if result.failure is not None:
        lines.append(format_result(result.failure))
    return "\n".join(lines)


# -- collected targets ---------------------------------------------------------------
class GradcheckFile(pytest.File):
    """The ``[tool.gradcheck]`` table of a ``pyproject.toml``: one item per target."""

    def collect(self) -> Iterator[GradcheckItem]:
        from gradcheck.frontend.config import load_config

        project = load_config(self.path)
        assert project is not None  # load_config raises for an explicit file without it
        for entry in project.targets:
            yield GradcheckItem.from_parent(
                self, name=entry.target, options=project.options_for(entry)
            )


class GradcheckItem(pytest.Item):
    """One target of ``[tool.gradcheck]``, checked with :func:`gradcheck.verify`."""

    def __init__(self, *, options: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.options = options
        self.add_marker("gradcheck")

    def runtest(self) -> None:
        from gradcheck.errors import GradcheckError
        from gradcheck.frontend.config import RUN_LIMITS
        from gradcheck.frontend.loading import load_targets
        from gradcheck.search.verifier import verify

        # the file's settings, overridden by the command line and ini keys; the time
        # limits are gradcheck verify's (here, pytest-timeout's job)
        options = layered(
            defaults={"seed": DEFAULT_SEED},
            project={k: v for k, v in self.options.items() if k not in RUN_LIMITS},
            options=self.config.stash[_session_settings],
        )
        try:
            targets = load_targets(self.name)
        except GradcheckError as exc:
            raise GradcheckFailure(f"gradcheck: {exc}") from None
        reports = []
        for target in targets:
            try:
                result = verify(target.obj, name=target.name, **options)
            except GradcheckError as exc:
                reports.append(f"gradcheck: {target.name}: {exc}")
                continue
            if not result.passed:
                reports.append(format_verify_failure(result))
        if reports:
            raise GradcheckFailure("\n\n".join(reports))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, GradcheckFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"gradcheck {self.name}"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    # tryfirst: added before -k/-m deselection, so those select collected targets too.
    if not config.getoption("--gradcheck"):
        return
    from gradcheck.errors import ConfigError
    from gradcheck.frontend.config import find_pyproject

    path = find_pyproject(config.rootpath)
    try:
        file = GradcheckFile.from_parent(session, path=path) if path else None
        new = list(file.collect()) if file else []
    except ConfigError as exc:
        raise pytest.UsageError(f"--gradcheck: {exc}") from None
    if not new:
        raise pytest.UsageError(
            f"--gradcheck: no targets to collect; list them in [tool.gradcheck] of "
            f'{path or "pyproject.toml"}, e.g. [[tool.gradcheck.targets]] target = "mymodule:MyOp"'
        )
    items.extend(new)
