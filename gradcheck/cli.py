"""The ``gradcheck`` command: check the gradients of ops from the command line.

``gradcheck verify TARGET...`` loads each target (:mod:`gradcheck.frontend.loading`), checks it on
generated inputs (:func:`gradcheck.verify`) and renders the results
(:mod:`gradcheck.frontend.render`: a table, or JSON with ``--format json``, whose schema is
documented there). This module parses and validates the command line, maps errors to
exit codes, and does no math.

Exit status: 0 every target passed; 1 a gradient check failed (or was inconclusive);
2 a usage or load error, reported as one line on stderr saying which option or target
and why (``--verbose`` adds the traceback); 5 the run checked nothing (as pytest); 101
an internal error, a bug of gradcheck's own, reported with its traceback and a request
to report it (ruff's convention); 130 and 143 the run was stopped by SIGINT or SIGTERM.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import shlex
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

# Only what the command line's definition needs: `gradcheck --help`, `--version` and
# `verify --help` import neither NumPy nor the engine (benchmarks/cli_startup.py); the
# commands import what they use when they run.
from gradcheck import __version__
from gradcheck.checking.vocabulary import Verdict
from gradcheck.defaults import (
    DEFAULT_EXAMPLE_TIMEOUT,
    DEFAULT_REGRESSION_FACTOR,
    RATIO_FLOOR,
)
from gradcheck.errors import (
    GradcheckError,
    InternalError,
    Interrupted,
    InvalidDescription,
    LoadError,
    NothingToCheck,
    OutputError,
    RemoteError,
    printable,
)
from gradcheck.frontend.files import OutputFile
from gradcheck.frontend.formats import FORMATS, OutputFormat, RunReport
from gradcheck.frontend.options import (
    FLAGS,
    OPTION_OF_SETTING,
    SWITCHES,
    parse_domain,
    parse_kwargs,
    parse_shapes,
    setting_options,
    settings_from_options,
)
from gradcheck.frontend.plan import BUILTIN_TARGETS, RunItem, listed_plan, plan_run
from gradcheck.frontend.progress import COLOR_CHOICES, Progress, can_redraw, wants_color
from gradcheck.search.precedence import layered

if TYPE_CHECKING:
    from gradcheck.frontend.config import ProjectConfig
    from gradcheck.frontend.runner import Job, StopOnSignals, WorkerSetup
    from gradcheck.search.verifier import LoadedTarget, VerifyResult

__all__ = ["main", "RunItem", "plan_run", "BUILTIN_TARGETS"]


_EXAMPLES = """\b
Examples:
  gradcheck verify                         # the engine's own ops: see it work
  gradcheck verify mymodule:MyOp           # one op (class or function)
  gradcheck verify mymodule                # every op in a module
  gradcheck verify ops/layers.py:Conv      # a file, by path
  gradcheck verify mymodule:MatMul --shape n,k --shape k,m
  gradcheck verify mymodule:Log --domain 0.1:10 --dtype float32
  gradcheck verify mymodule:Sum --kwargs '{"axis": 0}' --format json
  gradcheck verify --save-baseline base.json   # [tool.gradcheck] targets (CI)
  gradcheck verify --baseline base.json --junit-xml report.xml --jobs 4
  gradcheck list mymodule                  # the targets a module offers
"""


class _Gradcheck(click.Group):
    """A click group whose usage errors are one line (``Error: ...``) with exit 2,
    whose own errors (:class:`GradcheckError`) exit with their ``exit_code``, and whose
    unexpected exceptions (a bug of gradcheck's) exit 101 with the traceback."""

    def main(self, args: Sequence[str] | None = None, **extra: Any) -> Any:  # type: ignore[override]
        standalone = extra.pop("standalone_mode", True)
        extra.setdefault("prog_name", "gradcheck")
        if not standalone:
            return super().main(args, standalone_mode=False, **extra)
        try:
            self._standalone(args, **extra)
        except SystemExit as end:
            if args is None:  # the process's own command line, not a caller's list
                _end_process(end.code)
            raise

    def _standalone(self, args: Sequence[str] | None, **extra: Any) -> NoReturn:
        closed = _guard_standard_streams()
        if 1 in closed:
            click.echo(
                "Error: stdout is closed: the results cannot be printed; redirect it to a "
                "file (or to /dev/null) instead of closing it",
                err=True,
            )
            sys.exit(2)
        try:
            code = super().main(args, standalone_mode=False, **extra)
        except click.exceptions.Abort:  # Ctrl-C outside a run (click's KeyboardInterrupt)
            click.echo("Aborted.", err=True)
            sys.exit(128 + signal.SIGINT)
        except Interrupted as exc:  # SIGINT or SIGTERM before a run had a result
            click.echo(f"Error: interrupted by {exc.name}", err=True)
            sys.exit(128 + exc.signum)
        except click.ClickException as exc:
            click.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except Exception as exc:
            _report_internal_error(exc)
            sys.exit(InternalError.exit_code)
        sys.exit(code if isinstance(code, int) else 0)


def _end_process(code: Any) -> None:
    """End the command's process now that it has said everything: its output flushed,
    then os._exit, without the interpreter's teardown (freeing every module's objects:
    tenths of a second after the summary, for nothing). No user code ran here, so no
    exit handler of the user's is skipped; a coverage run (which saves at exit) is left
    to end as usual, and so is a process with anything else still running (a thread,
    a child process: a Dask cluster's), which the interpreter's exit would join."""
    import multiprocessing
    import threading

    if "coverage" in sys.modules or multiprocessing.active_children():
        return
    if any(t.is_alive() and not t.daemon for t in threading.enumerate()[1:]):
        return
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): Python prints it, status 1
        _write_stderr(f"{code}\n")
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a closed pipe: what was lost is already reported
            pass
    os._exit(code)


def _write_stderr(text: str) -> None:
    try:
        sys.stderr.write(text)
    except Exception:
        pass


def _guard_standard_streams() -> list[int]:
    """Descriptors 0-2 that were closed, each now open on the null device (so that no
    file the command opens takes its number); and a terminal that cannot encode a
    character (a non-ASCII op name, an ASCII locale) shows it as an escape."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            setattr(sys, name, open(1 if name == "stdout" else 2, "w", closefd=False))
            stream = getattr(sys, name)
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError):
            pass
    return closed


def _report_internal_error(exc: BaseException, context: str = "") -> None:
    """A bug of gradcheck's own, not of the op nor of the input: its traceback (the
    worker's, for a :class:`RemoteError`), always, then the one line asking for a report."""
    if isinstance(exc, RemoteError):
        name, trace = exc.type_name, exc.remote_traceback
    else:
        name, trace = type(exc).__name__, "".join(traceback.format_exception(exc))
    click.echo(trace.rstrip(), err=True)
    click.echo(
        f"Error: {context}internal error {name}: {exc} (a bug in gradcheck: please report "
        f"it, with the traceback above)",
        err=True,
    )


@click.group(
    cls=_Gradcheck,
    invoke_without_command=True,  # to say what a missing command is: a usage error
    subcommand_metavar="COMMAND [ARGS]...",
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=_EXAMPLES,
)
@click.version_option(__version__, "--version", "-V", prog_name="gradcheck")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Check that the gradients of differentiable operations are right.

    gradcheck runs each op's forward and backward on generated inputs, compares the
    gradient with finite differences and checks everything else a backward can get
    wrong; a failure is shrunk to the smallest input that still fails.

    Exit status: 0 all passed, 1 a check failed, 2 a usage or load error, 5 nothing
    was checked, 101 a bug in gradcheck (please report it), 130/143 stopped by
    SIGINT/SIGTERM.
    """
    if ctx.invoked_subcommand is None:  # a usage error, as for click's no_args_is_help
        click.echo(ctx.get_help(), err=True)
        ctx.exit(2)


# --- running ----------------------------------------------------------------------


def _hypothesis_home() -> str | None:
    """Where Hypothesis may keep its files during a command: our cache folder, not
    ./.hypothesis (it caches what it learns, e.g. constants found in the user's code,
    and a command run in someone's project should not leave that behind); None when
    the user chose a folder (HYPOTHESIS_STORAGE_DIRECTORY)."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return None
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "gradcheck", "hypothesis")


@contextlib.contextmanager
def _hypothesis_files_out_of_the_working_directory() -> Iterator[None]:
    """Hypothesis's home is :func:`_hypothesis_home` while inside, and what it was
    after (set_hypothesis_home_dir exists in every Hypothesis we support; the
    environment variable is read only by recent ones, and would outlive the command)."""
    from hypothesis import configuration

    home = _hypothesis_home()
    if home is None:
        yield
        return
    before = getattr(configuration, "__hypothesis_home_directory", None)
    configuration.set_hypothesis_home_dir(home)
    try:
        yield
    finally:
        configuration.set_hypothesis_home_dir(before)


def _fail(message: str, code: int, exc: BaseException | None, verbose: bool) -> NoReturn:
    if isinstance(exc, InternalError):
        # a bug of gradcheck's own (a RemoteError: raised in the worker that loaded the
        # targets): its traceback and the request to report it, as anywhere else
        _report_internal_error(exc)
        raise click.exceptions.Exit(InternalError.exit_code)
    if verbose and exc is not None:
        cause = exc.__cause__ or exc
        # (an error from a worker carries its traceback as text)
        trace = getattr(exc, "remote_traceback", None) or "".join(traceback.format_exception(cause))
        click.echo(trace.rstrip(), err=True)
    click.echo(f"Error: {message}", err=True)
    raise click.exceptions.Exit(code)


# --- option parsing ---------------------------------------------------------------


def _replay_command(ctx: click.Context, target: str, seed: int) -> str:
    """The exact command that replays one target's run: the options the user gave,
    the target, and the run's seed."""
    raw = ctx.params
    words = ["gradcheck", "verify", target]
    for option, flag in FLAGS.items():
        if ctx.get_parameter_source(option) is not click.core.ParameterSource.COMMANDLINE:
            continue
        value = raw[option]
        if option in SWITCHES:
            words.append(flag if value else SWITCHES[option])
        elif isinstance(value, tuple):
            for v in map(str, value):
                # A value starting with '-' must be attached, or it reads as an option.
                words.extend([f"{flag}={v}"] if v.startswith("-") else [flag, v])
        else:
            words.extend([flag, str(value)])
    if raw.get("config_path") is not None:
        words.extend(["--config", str(raw["config_path"])])
    words.extend(["--seed", str(seed)])
    return shlex.join(words)


# --format, for every command that prints results: its choices, default and help come
# from the table of output formats, and it gives the command the OutputFormat.
_format_option = click.option(
    "--format",
    "output_format",
    type=click.Choice(list(FORMATS)),
    default=next(iter(FORMATS)),
    show_default=True,
    callback=lambda ctx, param, value: FORMATS[value],
    help="Output: " + "; ".join(f"{f.name}: {f.help}" for f in FORMATS.values()) + ".",
)


# --- commands ---------------------------------------------------------------------


@main.command("verify", epilog=_EXAMPLES)
@click.argument("targets", nargs=-1, metavar="[TARGET]...")
@setting_options("checks")
@_format_option
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read [tool.gradcheck] from this file: a pyproject.toml, or a TOML file with "
    "the table's keys at top level. Default: the first pyproject.toml with a "
    "[tool.gradcheck] table, from the working directory up to the repository root.",
)
@setting_options("run")
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    metavar="N",
    help="Check N targets at once, each in a process of its own (same results and order "
    "as one) [default: one per CPU core this process may use, at most one per target; "
    "1 with --device].",
)
@click.option(
    "--save-baseline",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write each target's verdict, error ratio, seed and settings to FILE (JSON).",
)
@click.option(
    "--baseline",
    "baseline_path",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Compare with a saved baseline: exit 1 if a target that passed fails, or its "
    "error ratio grew by more than the regression factor. Reuses its seeds.",
)
@click.option(
    "--regression-factor",
    type=float,
    metavar="X",
    help="A target regresses when its error ratio exceeds X times its baseline ratio "
    f"(floored at {RATIO_FLOOR:g}) [default: regression-factor in the config, else "
    f"{DEFAULT_REGRESSION_FACTOR}]. See docs/ci.md.",
)
@click.option(
    "--junit-xml",
    metavar="PATH",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write a JUnit XML report (one testcase per target).",
)
@click.option(
    "--seeds",
    type=click.IntRange(min=1, max=100_000),
    metavar="S",
    help="Deep run: check each target with S seeds (seed, seed+1, ...), S times the "
    "examples, as S jobs; one verdict per target, the shrunk failure of the first "
    "failing seed [default: 1].",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="Where the jobs run: local worker processes (--jobs), or a Dask cluster "
    "(pip install 'gradcheck[dask]'): --scheduler's, else a LocalCluster of --jobs "
    "worker processes.",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    help="The Dask scheduler of --executor dask (tcp://host:8786).",
)
@click.option(
    "--shard",
    metavar="K/N",
    envvar="GRADCHECK_SHARD",
    help="Check only part K of N of the run (a CI matrix job; env GRADCHECK_SHARD), "
    "balanced by recorded durations; needs a fixed seed. Combine the parts' outputs "
    "with gradcheck merge.",
)
@click.option(
    "--durations",
    "durations_path",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Balance --shard by the seconds each target took in FILE (a JSON report or a "
    "baseline) [default: the --baseline file's].",
)
@click.option(
    "--html",
    "html_path",
    metavar="PATH",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write an HTML report: one self-contained file with every target and, per "
    "failure, its report, charts, shrunk input and replay command [default: html in "
    "the config, else none].",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Print only what did not pass and the summary: no line per target, no table.",
)
@click.option(
    "--color",
    "color_choice",
    type=click.Choice(COLOR_CHOICES),
    default=COLOR_CHOICES[0],
    show_default=True,
    help="Colour the output. auto: on a terminal (not TERM=dumb), unless NO_COLOR is "
    "set; FORCE_COLOR=1 colours a pipe too.",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Show tracebacks of load errors and the op's runtime warnings.",
)
@click.pass_context
# One of the two functions over 60 code lines (issue 24): the body is the run's
# sequence, its parts in the functions below. The options that give a check's settings
# (the settings table's rows) arrive in `_settings`, read by settings_from_options.
def verify_command(
    ctx: click.Context,
    /,
    targets: tuple[str, ...],
    seed: int | None,
    output_format: OutputFormat,
    config_path: Path | None,
    jobs: int | None,
    save_baseline: Path | None,
    baseline_path: Path | None,
    regression_factor: float | None,
    junit_xml: Path | None,
    seeds: int | None,
    executor: str,
    scheduler: str | None,
    shard: str | None,
    durations_path: Path | None,
    html_path: Path | None,
    quiet: bool,
    color_choice: str,
    verbose: bool,
    **_settings: Any,
) -> None:
    """Check the gradients of TARGETs on generated inputs.

    A TARGET is module:Name, path/to/file.py:Name, or a module or file (every op
    defined in it, of every kind module:Name takes, and every function marked with
    @gradcheck.describe; -v says what it left out and why).
    The working directory is importable. Without a TARGET, the targets listed in
    [tool.gradcheck] of the project's pyproject.toml are checked, or, without any, the
    engine's own ops. Settings come from an op's @gradcheck.describe, overridden by
    the configuration file, overridden by the options.

    In CI: --save-baseline on the main branch, --baseline on pull requests, and
    --junit-xml for the CI's test report; with GITHUB_ACTIONS=true, failures are also
    printed as GitHub annotations. Exit status: 0 all passed, 1 a check failed or
    regressed against the baseline, 2 a usage, load, configuration or baseline error,
    5 nothing was checked (no target selected), 101 a bug in gradcheck (please report
    it), 130/143 stopped by SIGINT/SIGTERM (what finished is still written).
    """
    from gradcheck.frontend.runner import StopOnSignals, WorkerSetup

    started = time.monotonic()  # the summary line's time: what the user waited
    setup = WorkerSetup(
        cwd=_working_directory(verbose),
        stdout_to_stderr=True,  # the command's stdout carries its own output only
        hypothesis_home=_hypothesis_home(),
    )
    # SIGINT and SIGTERM stop the run, which still prints and writes what finished.
    # The first worker starts now (Python, NumPy, Hypothesis: most of a small run's
    # time), while the options and the targets are read here; a usage error stops it.
    if scheduler is not None and executor != "dask":
        raise click.BadParameter("needs --executor dask", param_hint="'--scheduler'")
    from gradcheck.frontend.runner import usable_cores

    # Without --jobs, one job per usable core (fewer when there are fewer targets, one
    # with a device: _jobs_at_once); the workers start before the targets are known.
    starting = jobs or usable_cores()
    with StopOnSignals() as signals, _Runner(starting, setup, executor, scheduler, verbose) as run:
        run.shown = _progress(output_format, quiet, color_choice)
        # The frameworks of the targets named here are known from their modules' text
        # alone: the worker is told to import them, and the command says so, before
        # this process imports NumPy below (the first line of output, at once). Those
        # of a configuration's targets are known once it is read.
        frameworks = run.preload(targets, None, setup.cwd) if targets else []
        if frameworks:
            run.shown.loading(", ".join(frameworks))
        # Imported once the worker is starting (the settings' validators import NumPy).
        from gradcheck.frontend.config import is_regression_factor

        overrides = settings_from_options(ctx)
        if regression_factor is not None and not is_regression_factor(regression_factor):
            raise click.BadParameter(
                f"must be a number >= 1, got {regression_factor:g}",
                param_hint="'--regression-factor'",
            )
        # Checked before anything runs: a typo in a path must not cost the whole run.
        outputs = _outputs(
            save_baseline,
            junit_xml,
            verbose,
            {"baseline": baseline_path, "config": config_path},
            html_path,
        )
        config, baseline = _inputs(config_path, baseline_path, verbose)
        if html_path is None and config is not None and config.html is not None:
            outputs.update(_outputs(None, None, verbose, None, config.html))
        run_seed = _run_seed(seed, baseline, config)
        if config is not None:
            run.shown.note(f"config: {_shown_path(config.path)}")
        if not targets:
            frameworks = run.preload(targets, config, setup.cwd)
            if frameworks:
                run.shown.loading(", ".join(frameworks))
        # Here while the worker starts, not after the last result: what the summary
        # and the output files need (tenths of a second on a loaded machine).
        import gradcheck.frontend.baseline
        import gradcheck.frontend.ci_report
        import gradcheck.frontend.html_report
        import gradcheck.frontend.render  # noqa: F401

        # The targets are imported in the worker process, never here: whatever a
        # module does at import cannot end, block or write into the command's output
        # (the workers' stdout is stderr).
        try:
            what = " ".join(targets) or "the configured targets"
            items, skipped, notes = run.run.load(
                listed_plan, targets, config, verbose, what=printable(what)
            )
        except GradcheckError as exc:
            _fail(str(exc), exc.exit_code, exc, verbose)
        for line in notes:
            run.shown.note(line)
        for line in skipped or ():
            run.shown.note(f"skipped {line}")
        settings = [_job_settings(item, overrides, seed, baseline, run_seed) for item in items]
        at_once = _jobs_at_once(jobs, settings, run.run, seeds or 1)
        plan = [_job(item, s, verbose, at_once) for item, s in zip(items, settings)]
        manifest = None
        ranges = [(i, 0, seeds or 1) for i in range(len(plan))]  # (target, seeds)
        if shard is not None:  # (target, range of its seeds) tasks: --seeds splits
            fixed = (
                seed is not None
                or baseline is not None
                or "seed" in getattr(config, "defaults", {})
            )
            ranges, manifest = _take_shard(
                shard, durations_path, plan, baseline, fixed, run_seed, seeds, verbose
            )
            run.shown.note(_shard_note(manifest, ranges))
        mine = [plan[i].spec for i, _, _ in ranges]
        items, plan = _with_seeds(items, plan, ranges)
        run.shown.total = len(plan)
        results, stopped_by = _run_all(run, items, plan, overrides, verbose, signals)
        signals.acknowledge()  # from here on, what finished is written whatever comes
        if (seeds or 1) > 1:
            from gradcheck.frontend.deep import combine_seeds

            results = combine_seeds(results, [stop - first for _, first, stop in ranges])
        comparison = _compare(
            results, _shard_baseline(baseline, manifest, mine), regression_factor, config
        )

        def replay(result: VerifyResult) -> str:
            return _replay_command(ctx, result.target, result.seed)

        charts = _html_charts(run, results) if "HTML report" in outputs else {}
        run.release()  # the workers are done: they end while the report is written
        unwritten = _write_outputs(outputs, results, run_seed, comparison, replay, charts, manifest)
        if os.environ.get("GITHUB_ACTIONS") == "true":
            _annotate(items, results, comparison, to_stderr=output_format.document)
        if os.environ.get("GITHUB_STEP_SUMMARY"):
            unwritten += _step_summary(results, run_seed, comparison, replay)
        color = output_format.color and wants_color(color_choice, sys.stdout)
        report = RunReport(
            results,
            run_seed,
            replay,
            comparison,
            color,
            signal.Signals(stopped_by).name if stopped_by else None,
            quiet=quiet,
            shard=manifest,
            elapsed=time.monotonic() - started,
        )
        run.close_bars()
        text = output_format.run(report)
        lost = _emit(f"\n{text}" if run.shown.wrote and not output_format.document else text, color)
        for problem in [*unwritten, *([lost] if lost else [])]:
            click.echo(f"Error: {problem}", err=True)
    if stopped_by is not None:
        ctx.exit(128 + stopped_by)  # the shell's convention: 130 for SIGINT, 143 for SIGTERM
    if unwritten or lost:
        ctx.exit(OutputError.exit_code)
    from gradcheck.frontend.runner import is_gradcheck_bug

    if any(is_gradcheck_bug(r) for r in results):
        ctx.exit(InternalError.exit_code)  # reported as the target's failure, traceback above
    if not results and manifest is None:  # whatever selected nothing: never a pass
        # (a shard may be empty when there are more shards than targets: its merge is not)
        ctx.exit(NothingToCheck.exit_code)
    passed = all(r.passed for r in results) and (comparison is None or comparison.passed)
    ctx.exit(0 if passed else 1)


def _working_directory(verbose: bool) -> str:
    try:
        return os.getcwd()
    except OSError as exc:
        _fail(
            f"the working directory cannot be read ({exc.strerror}: was it deleted?); "
            f"cd to an existing folder",
            2,
            exc,
            verbose,
        )


def _progress(output_format: OutputFormat, quiet: bool, color_choice: str) -> Progress:
    """What the run says while it runs (gradcheck.frontend.progress): a line per
    finished target where the report goes (stderr, for a document on stdout), and a
    live line on a terminal's stderr; nothing with --quiet."""
    if quiet:
        return Progress(0, None, None)
    lines = sys.stderr if output_format.document else sys.stdout
    live = sys.stderr if can_redraw(sys.stderr) else None
    return Progress(0, lines, live, color=wants_color(color_choice, lines))


def _shown_path(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def _inputs(config_path: Path | None, baseline_path: Path | None, verbose: bool) -> Any:
    """The configuration and the baseline, read and checked (one error line each)."""
    from gradcheck.frontend.baseline import load_baseline
    from gradcheck.frontend.config import load_config

    try:
        config = load_config(config_path)
        baseline = load_baseline(baseline_path) if baseline_path is not None else None
    except GradcheckError as exc:
        _fail(str(exc), exc.exit_code, exc, verbose)
    if baseline is not None:
        from gradcheck.frontend.baseline import version_mismatches

        changed = version_mismatches(baseline)
        if changed:
            click.echo(
                f"Warning: {baseline_path} was saved under other versions "
                f"({', '.join(changed)}): the same seeds may draw other examples and "
                f"give other error ratios; save the baseline again with --save-baseline",
                err=True,
            )
    return config, baseline


def _compare(
    results: list[VerifyResult],
    baseline: Any,
    regression_factor: float | None,
    config: ProjectConfig | None,
) -> Any:
    """The comparison with --baseline (None without one), on the targets that
    finished (a target the run did not reach is the baseline's 'vanished')."""
    if baseline is None:
        return None
    from gradcheck.frontend.baseline import compare

    factor = regression_factor
    if factor is None:
        factor = config.regression_factor if config else DEFAULT_REGRESSION_FACTOR
    finished = [r for r in results if r.verdict != Verdict.NOT_RUN]
    return compare(finished, baseline, factor=factor)


def _emit(text: str, color: bool | None = None) -> OutputError | None:
    """Print the command's output; the error when stdout cannot take it (a closed
    pipe, a full disk): the output is lost, which the exit status must say."""
    try:
        click.echo(text, color=color)
        sys.stdout.flush()
    except OSError as exc:
        try:  # so that the interpreter's last flush does not fail again
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError, io.UnsupportedOperation):
            pass
        return OutputError(f"cannot write the output to stdout ({exc.strerror or exc})")
    return None


def _outputs(
    save_baseline: Path | None,
    junit_xml: Path | None,
    verbose: bool,
    inputs: dict[str, Path | None] | None = None,
    html: Path | None = None,
) -> dict[str, Any]:
    """The files to write, each checked now (its folder created, a file creatable in
    it, a regular file or none) and resolved against the working directory of the
    start; two outputs naming one file, or an output naming an input (``inputs``: what
    each is, "baseline" and "config"), are refused; the baseline may be saved over the
    one read (updated in place)."""
    wanted = {"baseline": save_baseline, "JUnit report": junit_xml, "HTML report": html}
    try:
        outputs = {
            what: OutputFile(path, what=what, error=OutputError)
            for what, path in wanted.items()
            if path is not None
        }
    except OutputError as exc:
        _fail(str(exc), exc.exit_code, exc, verbose)
    seen: dict[str, str] = {}
    read = {what: path for what, path in (inputs or {}).items() if path is not None}
    for what, given in read.items():
        seen[os.path.realpath(given)] = f"the {what} it reads ({given})"
    for what, out in outputs.items():
        key = os.path.realpath(out.path)
        rewritten = "baseline" in read and key == os.path.realpath(read["baseline"])
        if key in seen and not (what == "baseline" and rewritten):
            _fail(
                f"{out.given}: the {what} would overwrite {seen[key]}; give another file name",
                OutputError.exit_code,
                None,
                verbose,
            )
        seen[key] = f"the {what}"
    return outputs


def _html_charts(runner: _Runner, results: list[VerifyResult]) -> dict[str, str]:
    """The charts of the HTML report's failures, drawn in the worker that imported the
    targets (they run the op again); none when it cannot draw them (a note says why)."""
    from gradcheck.frontend.html_report import charts_of

    failures = [(r.target, r.failure) for r in results if r.failure is not None]
    if not failures:
        return {}
    try:
        drawn: dict[str, str] = runner.run.load(
            charts_of, failures, what="the failures' charts of the HTML report"
        )
    except GradcheckError as exc:
        if runner.shown is not None:
            runner.shown.note(f"HTML report: charts not drawn: {exc}")
        return {}
    return drawn


def _write_outputs(
    outputs: dict[str, Any],
    results: list[VerifyResult],
    seed: int,
    comparison: Any,
    replay: Callable[[VerifyResult], str],
    charts: dict[str, str],
    shard: dict[str, Any] | None = None,
) -> list[OutputError]:
    """Write the baseline (the targets that finished), the JUnit report and the HTML
    report (all of them), each atomically; the errors of those that could not be
    written."""
    from gradcheck.frontend.baseline import baseline_text
    from gradcheck.frontend.ci_report import junit_xml
    from gradcheck.frontend.html_report import html_report

    regressions = {r.target: r.reason for r in comparison.regressions} if comparison else {}
    contents = {
        "baseline": lambda: baseline_text(
            [r for r in results if r.verdict != Verdict.NOT_RUN], seed=seed, shard=shard
        ).encode("utf-8"),
        "JUnit report": lambda: (
            junit_xml(
                results,
                seed=seed,
                regressions={r.target: r.reason for r in comparison.regressions}
                if comparison
                else {},
                shard=shard,
            )
            + b"\n"
        ),
        "HTML report": lambda: html_report(
            results, seed=seed, replay=replay, charts=charts, regressions=regressions
        ).encode("utf-8"),
    }
    unwritten = []
    for what, out in outputs.items():
        try:
            out.write(contents[what]())
        except OutputError as exc:
            unwritten.append(exc)
    return unwritten


def _with_seeds(
    items: list[RunItem], plan: list[Job], ranges: list[tuple[int, int, int]]
) -> tuple[list[RunItem], list[Job]]:
    """The jobs of the run's tasks: for each ``(i, first, stop)``, target ``i``'s job
    once per seed ``first`` to ``stop - 1`` of a deep run (seed ``k`` is its seed +
    ``k``), the seeds of one task next to each other (gradcheck.frontend.deep
    combines them); one seed, the target's own, without ``--seeds``."""
    from dataclasses import replace

    from gradcheck.frontend.deep import seed_of

    new_items, new_plan = [], []
    for i, first, stop in ranges:
        job = plan[i]
        base = int(job.settings.get("seed", 0))
        for k in range(first, stop):
            new_items.append(items[i])
            new_plan.append(replace(job, settings={**job.settings, "seed": seed_of(base, k)}))
    return new_items, new_plan


def _take_shard(
    text: str,
    durations_path: Path | None,
    plan: list[Job],
    baseline: Any,
    fixed_seed: bool,
    run_seed: int,
    seeds: int | None,
    verbose: bool,
) -> tuple[list[tuple[int, int, int]], dict[str, Any]]:
    """This shard's part of the run (gradcheck.frontend.shards): its tasks, each
    ``(target index, first seed, stop)``, and its manifest."""
    from gradcheck.frontend.baseline import current_versions
    from gradcheck.frontend.shards import durations_of, manifest, parse_shard, plan_digest, split

    try:
        shard = parse_shard(text)
    except ValueError as exc:
        message = str(exc).removeprefix(f"--shard {text}: ")
        raise click.BadParameter(message, param_hint="'--shard'") from None
    if not fixed_seed:
        _fail(
            "--shard needs the same seed in every shard: give --seed N (in a CI matrix, "
            "one number for all its jobs, such as the workflow's run id)",
            2,
            None,
            verbose,
        )
    durations = durations_of(baseline) if baseline is not None else {}
    if durations_path is not None:
        durations = durations_of(_read_durations(durations_path, verbose))
    names = [job.spec for job in plan]
    tasks = split(names, shard.count, durations, seeds or 1)[shard.index - 1]
    digest = plan_digest([(job.spec, {**job.settings, "seeds": seeds or 1}) for job in plan])
    shown = manifest(
        shard,
        seed=run_seed,
        names=names,
        digest=digest,
        versions=current_versions(),
        tasks=tasks,
        seeds=seeds or 1,
        bases=[int(plan[t.position].settings.get("seed", 0)) for t in tasks],
    )
    return [(t.position, t.first, t.stop) for t in tasks], shown


def _shard_note(manifest: dict[str, Any], ranges: list[tuple[int, int, int]]) -> str:
    """``shard 2/4: 48 of 192 targets`` (and, in a deep run, how many of its seeds)."""
    head = (
        f"shard {manifest['index']}/{manifest['count']}: {len(ranges)} of "
        f"{len(manifest['targets'])} targets"
    )
    seeds = manifest["seeds"]
    if seeds == 1:
        return head
    held = sum(stop - first for _, first, stop in ranges)
    every = len(manifest["targets"]) * seeds
    return f"{head}, {held} of the run's {every} seeds (--seeds {seeds})"


def _read_durations(path: Path, verbose: bool) -> Any:
    import json

    from gradcheck.frontend.files import read_text

    try:
        return json.loads(
            read_text(path, what="durations file", limit=256 << 20, error=OutputError)
        )
    except OutputError as exc:
        _fail(str(exc), 2, exc, verbose)
    except (ValueError, RecursionError) as exc:
        _fail(f"{path}: not a JSON report or baseline ({exc})", 2, exc, verbose)


def _shard_baseline(baseline: Any, manifest: dict[str, Any] | None, mine: list[str]) -> Any:
    """The baseline a shard compares with: its own targets, and those of the baseline
    that no shard runs (vanished, reported alike by every shard); not the targets of
    the other shards, which are not vanished."""
    if baseline is None or manifest is None:
        return baseline
    planned = set(manifest["targets"])
    own = set(mine)
    targets = {
        name: entry
        for name, entry in baseline["targets"].items()
        if name not in planned or name in own
    }
    return {**baseline, "targets": targets}


def _run_seed(seed: int | None, baseline: Any, config: ProjectConfig | None) -> int:
    """The run's seed: --seed, else the baseline's (to check the same examples), else
    the configuration's default, else a fresh one."""
    if seed is not None:
        return seed
    if baseline is not None:
        return int(baseline["seed"])
    if config is not None and "seed" in config.defaults:
        return int(config.defaults["seed"])
    return secrets.randbits(32)


def _job_settings(
    item: RunItem,
    overrides: dict[str, Any],
    seed: int | None,
    baseline: Any,
    run_seed: int,
) -> dict[str, Any]:
    """verify()'s keyword arguments for one target: the options over its settings
    from the configuration; the seed from --seed, else the baseline's for this
    target, else the target's own from the configuration, else the run's."""
    old = baseline["targets"].get(item.target.name) if baseline is not None else None
    return layered(
        defaults={"seed": run_seed},
        project=item.settings,  # the file's defaults and the target's entry, merged
        baseline={"seed": old["seed"]} if old is not None else None,
        options=dict(overrides, seed=seed),
    )


def _jobs_at_once(
    jobs: int | None, settings: list[dict[str, Any]], run: Any, seeds: int = 1
) -> int:
    """The jobs the run checks at once: ``--jobs``, else one per usable core but no
    more than the jobs (targets times ``--seeds``), and one where a target is checked
    on a device (a GPU the processes would share); the local runner is told (a Dask
    cluster was sized when it started)."""
    from gradcheck.frontend.runner import Run, default_jobs

    n = len(settings) * max(1, seeds)
    if jobs is None:
        jobs = default_jobs(n, any(s.get("device") for s in settings))
        if isinstance(run, Run):
            run.n_jobs = jobs
    return max(1, min(jobs, n))


def _job(item: RunItem, settings: dict[str, Any], verbose: bool, jobs: int = 1) -> Job:
    """The job of one target: verify()'s settings, and the run's limits apart."""
    from gradcheck.frontend.config import RUN_LIMITS
    from gradcheck.frontend.runner import Job, default_max_memory

    limits = {key: settings.pop(key) for key in RUN_LIMITS if key in settings}
    return Job(
        item.target.name,
        settings,
        verbose,
        timeout=limits.get("timeout"),
        example_timeout=limits.get("example_timeout", DEFAULT_EXAMPLE_TIMEOUT),
        max_memory=limits.get("max_memory", default_max_memory(jobs)) or None,
    )


class _Runner:
    """The run's workers, the first started at once (it imports NumPy and Hypothesis
    while the command loads the targets), all stopped on the way out. What they report
    goes to ``shown``, the run's :class:`~gradcheck.frontend.progress.Progress`, once
    the command has made it (the targets known)."""

    def __init__(
        self,
        jobs: int,
        setup: WorkerSetup,
        executor: str = "local",
        scheduler: str | None = None,
        verbose: bool = False,
    ) -> None:
        from gradcheck.frontend.runner import Run

        self.shown: Progress | None = None
        self.verbose = verbose
        self.run: Any
        if executor == "dask":
            from gradcheck.frontend.dask_executor import DaskRun

            self.run = DaskRun(jobs, setup, scheduler, on_finished=self._finished)
        else:
            self.run = Run(jobs, setup, progress=self._started, on_finished=self._finished)

    def preload(self, targets: Sequence[str], config: ProjectConfig | None, cwd: str) -> list[str]:
        """The frameworks the targets' modules import, as their text says
        (gradcheck.frontend.preload), which the worker starts importing now."""
        from gradcheck.frontend.preload import frameworks_of

        folders = [cwd]
        specs = list(targets)
        if not specs and config is not None:
            folders.insert(0, str(config.path.parent.resolve()))
            specs = [listed.target for listed in config.targets]
        frameworks = frameworks_of(specs, folders)
        if frameworks and hasattr(self.run, "preload"):
            from gradcheck.checking.frameworks import preloaded_modules

            self.run.preload(preloaded_modules(frameworks))
        return [fw.name for fw in frameworks]

    def _started(self, index: int, job: Job) -> Any:
        shown = self.shown
        if shown is None:
            return None
        shown.started(index, job.spec)
        return lambda done, total: shown.examples(index, done, total)

    def _finished(self, index: int, outcome: Any) -> None:
        from gradcheck.search.verifier import VerifyResult

        if self.shown is not None and isinstance(outcome, VerifyResult):
            self.shown.finished_target(index, outcome)

    def release(self) -> None:
        release = getattr(self.run, "release", None)
        if release is not None:
            release()

    def close_bars(self) -> None:
        if self.shown is not None:
            self.shown.close()

    def __enter__(self) -> _Runner:
        try:
            self.run.prestart()
        except GradcheckError as exc:
            self.run.close()
            _fail(str(exc), exc.exit_code, exc, self.verbose)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close_bars()
        self.run.close()


def _run_all(
    runner: _Runner,
    items: list[RunItem],
    plan: list[Job],
    overrides: dict[str, Any],
    verbose: bool,
    signals: StopOnSignals,
) -> tuple[list[VerifyResult], int | None]:
    """Run every job: the results, and the signal that stopped the run (None when it
    ran to its end). An error ends the run with its one-line message, naming the
    target whose job raised it."""
    from gradcheck.search.verifier import VerifyResult

    results: list[VerifyResult] = []
    try:
        for index, outcome in runner.run.results(plan):
            if not isinstance(outcome, VerifyResult):
                runner.close_bars()
                runner.run.close()  # before the message: no worker outlives the command
                _fail_item(outcome, items[index], overrides, verbose)
            results.append(outcome)
    except Interrupted as stop:
        signals.acknowledge()
        runner.close_bars()
        results.extend(outcome for _, outcome in runner.run.stop(stop.signum))
        return results, stop.signum
    return results, None


def _fail_item(
    exc: BaseException, item: RunItem, overrides: dict[str, Any], verbose: bool
) -> NoReturn:
    """One target's error as its one-line message and exit code."""
    if isinstance(exc, InvalidDescription):
        _fail(_describe_invalid(exc, item, overrides), exc.exit_code, exc, verbose)
    if isinstance(exc, GradcheckError) and not isinstance(exc, InternalError):
        _fail(f"{item.target.name}: {exc}", exc.exit_code, exc, verbose)
    # A bug of gradcheck's own, not of the op (here, or a RemoteError from a worker).
    _report_internal_error(exc, f"{item.target.name}: ")
    raise click.exceptions.Exit(InternalError.exit_code)


def _annotate(
    items: list[RunItem], results: list[VerifyResult], comparison: Any, *, to_stderr: bool
) -> None:
    """GitHub Actions annotations (the runner reads workflow commands on stdout and
    stderr; with --format json they go to stderr, so that stdout stays one document)."""
    from gradcheck.frontend.ci_report import github_annotations

    locations = {item.target.name: _location(item.target) for item in items}
    lines = github_annotations(
        results,
        regressions={r.target: r.reason for r in comparison.regressions} if comparison else {},
        new=comparison.new if comparison else (),
        vanished=comparison.vanished if comparison else (),
        locations=locations,
    )
    for line in lines:
        click.echo(line, err=to_stderr)


def _step_summary(
    results: list[VerifyResult],
    seed: int,
    comparison: Any,
    replay: Callable[[VerifyResult], str],
) -> list[OutputError]:
    """Append the run's Markdown summary to $GITHUB_STEP_SUMMARY (GitHub shows it on
    the job's page); the error, if it cannot be written."""
    from gradcheck.frontend.ci_report import job_summary

    path = os.environ["GITHUB_STEP_SUMMARY"]
    regressions = {r.target: r.reason for r in comparison.regressions} if comparison else {}
    text = job_summary(results, seed=seed, replay=replay, regressions=regressions)
    try:
        with open(path, "a", encoding="utf-8") as summary:
            summary.write(text + "\n")
    except OSError as exc:
        return [OutputError(f"GITHUB_STEP_SUMMARY {path}: cannot append the job summary: {exc}")]
    return []


def _location(target: Any) -> tuple[str | None, int | None]:
    from gradcheck.frontend.ci_report import source_location

    location = getattr(target, "location", None)
    return location if location is not None else source_location(target.obj)


def _described(target: Any) -> bool:
    from gradcheck.search.description import description_of

    described = getattr(target, "described", None)
    return described if described is not None else description_of(target.obj) is not None


def _describe_invalid(exc: InvalidDescription, item: RunItem, overrides: dict[str, Any]) -> str:
    """Name the option that set the bad value, or say it came from the op's own
    description."""
    setting = exc.field
    if setting is not None and setting in overrides:
        option = OPTION_OF_SETTING.get(setting, setting)
        return f"Invalid value for '{FLAGS[option]}' ({item.target.name}): {exc}"
    if setting is not None and setting in item.settings:
        return f"{item.target.name}: invalid {setting} in {item.source or 'its settings'}: {exc}"
    if setting is not None and _described(item.target):
        return (
            f"{item.target.name}: invalid {setting} in its @gradcheck.describe(...): {exc}"
            f" (override with {FLAGS[OPTION_OF_SETTING.get(setting, setting)]})"
        )
    if setting is not None:
        flag = FLAGS.get(OPTION_OF_SETTING.get(setting, setting))
        if flag is not None:
            return f"{item.target.name}: {exc} (set it with {flag})"
    return f"{item.target.name}: {exc}"


@main.command("merge")
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@click.option(
    "--json",
    "json_path",
    metavar="PATH",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the merged JSON report (from the shards' --format json reports).",
)
@click.option(
    "--junit-xml",
    metavar="PATH",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the merged JUnit report (from the shards' --junit-xml files).",
)
@click.option(
    "--save-baseline",
    metavar="PATH",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the merged baseline (from the shards' --save-baseline files).",
)
@_format_option
@click.option("-q", "--quiet", is_flag=True, help="No table: only what did not pass.")
@click.option("-v", "--verbose", is_flag=True, help="Show tracebacks of errors.")
def merge_command(
    files: tuple[str, ...],
    json_path: Path | None,
    junit_xml: Path | None,
    save_baseline: Path | None,
    output_format: OutputFormat,
    quiet: bool,
    verbose: bool,
) -> None:
    """Merge the outputs of the shards of one run (gradcheck verify --shard K/N): their
    JSON reports, JUnit files and baselines (each kind recognised by its content), into
    one of each, the targets in the unsharded run's order.

    Shards of different runs (another configuration, seed or versions), a shard given
    twice and a missing shard are refused. Exit status: the unsharded run's (0 all
    passed, 1 a target failed or regressed against the baseline), 2 for files that
    cannot be merged.
    """
    from gradcheck.frontend.merge import merge_files, render_merged

    wanted = {"JSON report": json_path, "JUnit report": junit_xml, "baseline": save_baseline}
    try:
        outputs = {
            what: OutputFile(path, what=what, error=OutputError)
            for what, path in wanted.items()
            if path is not None
        }
        merged = merge_files(files)
    except GradcheckError as exc:
        _fail(str(exc), exc.exit_code, exc, verbose)
    documents = {
        "JSON report": (merged.report, "--format json reports"),
        "JUnit report": (merged.junit, "--junit-xml files"),
        "baseline": (merged.baseline, "--save-baseline files"),
    }
    for what in outputs:
        if documents[what][0] is None:
            _fail(
                f"cannot write the merged {what}: no shard's {documents[what][1]} given",
                2,
                None,
                verbose,
            )
    if output_format.document and merged.report is None:
        _fail("--format json needs the shards' JSON reports (--format json)", 2, None, verbose)
    problems = []
    for what, out in outputs.items():
        document = documents[what][0]
        data = (
            document
            if isinstance(document, bytes)
            else _json_text(document, sort_keys=what == "baseline")  # as --save-baseline
        )
        try:
            out.write(data)
        except OutputError as exc:
            problems.append(exc)
    text = (
        _json_text(merged.report).decode()
        if output_format.document
        else render_merged(merged, quiet=quiet)
    )
    lost = _emit(text.rstrip("\n"))
    for problem in [*problems, *([lost] if lost else [])]:
        click.echo(f"Error: {problem}", err=True)
    if problems or lost:
        sys.exit(OutputError.exit_code)
    if not merged.rows and merged.junit is None:  # the merged run checked nothing
        sys.exit(NothingToCheck.exit_code)
    sys.exit(merged.exit_code)


def _json_text(document: Any, sort_keys: bool = False) -> bytes:
    text = json.dumps(document, indent=2, allow_nan=False, sort_keys=sort_keys)
    return (text + "\n").encode("utf-8")


@main.command("list")
@click.argument("modules", nargs=-1, metavar="[MODULE]...")
@_format_option
@click.option("-v", "--verbose", is_flag=True, help="Show tracebacks of errors.")
def list_command(modules: tuple[str, ...], output_format: OutputFormat, verbose: bool) -> None:
    """List the targets MODULEs offer (default: the built-in set), with their inputs,
    parameters and declared settings; with -v, also what each module leaves out and
    why (on stderr)."""
    from gradcheck.frontend.runner import Run, WorkerSetup

    # The modules are imported in a worker process (their output goes to stderr).
    setup = WorkerSetup(cwd=_working_directory(verbose), stdout_to_stderr=True)
    run = Run(1, setup)
    try:
        rows, skipped = run.load(
            target_rows, modules or (BUILTIN_TARGETS,), verbose, what=printable(" ".join(modules))
        )
    except GradcheckError as exc:
        _fail(str(exc), exc.exit_code, exc, verbose)
    finally:
        run.close()
    for line in skipped or ():
        click.echo(f"skipped {line}", err=True)
    lost = _emit(output_format.targets(rows))
    if lost is not None:
        _fail(str(lost), lost.exit_code, None, verbose)


def target_rows(
    modules: Sequence[str], verbose: bool = False
) -> tuple[list[dict[str, Any]], list[str] | None]:
    """The rows of ``gradcheck list`` (run in the worker that imports the modules),
    and, when ``verbose``, what the modules leave out."""
    from gradcheck.frontend.loading import load_targets

    skipped: list[str] | None = [] if verbose else None
    rows = [_target_row(t) for module in modules for t in load_targets(module, skipped=skipped)]
    return rows, skipped


def _target_row(target: LoadedTarget) -> dict[str, Any]:
    from gradcheck.checking.signature import op_signature
    from gradcheck.frontend.discovery import target_kind
    from gradcheck.search.description import description_of

    description = description_of(target.obj)
    # (a positional parameter given a value in describe(kwargs=...) is no input, as the
    # search and the check take it)
    given = {} if description is None else dict(description.as_dict().get("kwargs") or {})
    sig = op_signature(target.obj).given(given)
    return {
        "target": target.name,
        "kind": target_kind(target.obj),
        "arity": sig.arity,
        "variadic": sig.variadic,
        "inputs": list(sig.input_names),
        "parameters": list(sig.parameters),
        "described": {} if description is None else description.as_dict(),
    }


@main.command("plot")
@click.argument("target", metavar="TARGET")
@click.option(
    "-o", "--output", required=True, type=click.Path(dir_okay=False), help="Image file (.png)."
)
@click.option("--shape", multiple=True, metavar="SPEC", help="Shape of one input (as in verify).")
@click.option("--domain", multiple=True, metavar="LO:HI", help="Value interval (as in verify).")
@click.option("--dtype", type=click.Choice(["float64", "float32", "float16"]), help="Input dtype.")
@click.option("--kwargs", metavar="JSON", help="The op's keyword parameters.")
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Seed of the drawn example, the upstream gradient and the direction.",
)
@click.option("-v", "--verbose", is_flag=True, help="Show tracebacks of errors.")
def plot_command(
    target: str,
    output: str,
    shape: tuple[str, ...],
    domain: tuple[str, ...],
    dtype: str | None,
    kwargs: str | None,
    seed: int,
    verbose: bool,
) -> None:
    """Plot the finite-difference error against the step size and the Taylor
    remainder test of TARGET at one generated example (matplotlib: the extra 'plot').

    Inputs are drawn as verify draws them (the op's description, then these options).
    The Taylor remainder falls with slope 2 when the gradient is right, 1 when wrong.
    Exit status: 0 the gradient looks right (or the slope is undecided), 1 it looks
    wrong, 2 a usage, load or output error.
    """
    options = {
        "shapes": parse_shapes(shape),
        "domain": parse_domain(domain),
        "dtype": dtype,
        "kwargs": parse_kwargs(kwargs),
    }
    try:
        from gradcheck.checking.adapters import require
        from gradcheck.frontend.runner import in_child_process

        require("matplotlib", needed_for="gradcheck plot")
        # the image's folder created and the file checked before anything is drawn
        OutputFile(output, what="image", error=OutputError)
        # the user's module is imported, and its op run, in a child (as verify does):
        # its os._exit, a crash or what it prints cannot end or garble this command
        right, slope = in_child_process(_plot_in_child, target, options, seed, output, verbose)
    except GradcheckError as exc:
        _fail(str(exc), exc.exit_code, exc, verbose)
    if right is None:
        summary = "Taylor slope undecided (is the op linear along the direction?)"
    else:
        verdict = "right" if right else "WRONG"
        summary = f"Taylor slope {slope:.2f}: the gradient looks {verdict}"
    click.echo(f"wrote {output}; {summary}")
    if right is False:  # as verify: 1 for a gradient that is wrong
        raise click.exceptions.Exit(1)


def _plot_in_child(
    target: str, options: dict[str, Any], seed: int, output: str, verbose: bool
) -> tuple[bool | None, float]:
    """`gradcheck plot`'s work in the child process: load, draw, diagnose and save;
    whether the gradient looks right (None: undecided) and the Taylor slope."""
    from gradcheck.checking.diagnostics import diagnose
    from gradcheck.frontend.loading import load_targets
    from gradcheck.frontend.plot import save_figure
    from gradcheck.search.verifier import draw_example

    (loaded, *more) = load_targets(target)
    if more:
        raise LoadError(f"'{target}' names {len(more) + 1} targets; plot one (module:Name)")
    with _hypothesis_files_out_of_the_working_directory():
        arrays, params = draw_example(loaded.obj, seed=seed, **options)
    with warnings.catch_warnings():
        if not verbose:
            warnings.simplefilter("ignore", RuntimeWarning)
        result = diagnose(loaded.obj, *arrays, params=params, seed=seed)
    save_figure(result, output, seed=seed)
    return result.gradient_right, float(result.slope)


if __name__ == "__main__":  # pragma: no cover
    main()
