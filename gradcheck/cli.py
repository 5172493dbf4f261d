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

import json
import signal
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

# Only what the command line's definition needs: `gradcheck --help`, `--version` and
# `verify --help` import neither NumPy nor the engine (benchmarks/cli_startup.py); the
# commands import what they use when they run.
from gradcheck import __version__
from gradcheck.defaults import (
    DEFAULT_REGRESSION_FACTOR,
    RATIO_FLOOR,
)
from gradcheck.errors import (
    EmptyModule,
    GradcheckError,
    InternalError,
    Interrupted,
    LoadError,
    NothingToCheck,
    OutputError,
    printable,
)
from gradcheck.frontend.exits import (
    _end_process,
    _fail,
    _guard_standard_streams,
    _hypothesis_files_out_of_the_working_directory,
    _hypothesis_home,
    _report_internal_error,
    _working_directory,
)
from gradcheck.frontend.files import OutputFile
from gradcheck.frontend.formats import FORMATS, OutputFormat
from gradcheck.frontend.options import (
    parse_domain,
    parse_kwargs,
    parse_shapes,
    setting_options,
)
from gradcheck.frontend.outputs import (
    _emit,
    _progress,
)
from gradcheck.frontend.plan import BUILTIN_TARGETS, RunItem, plan_run
from gradcheck.frontend.plan import listed_plan as listed_plan  # (tests, the worker)
from gradcheck.frontend.progress import COLOR_CHOICES
from gradcheck.frontend.verify_run import (
    _exit_status,
    _plan_run,
    _read_run,
    _report_run,
    _run_all,
    _Runner,
)
from gradcheck.frontend.verify_run import _jobs_at_once as _jobs_at_once  # (tests)

if TYPE_CHECKING:
    from gradcheck.search.verifier import LoadedTarget

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


#: Set in the context's ``obj`` when the command runs on its process's own command line
#: (not a caller's list of arguments: pytest's CliRunner, a script), whose process has
#: imported nothing of the user's: the zygote may be forked from it (WorkerSetup.fork).
OWN_PROCESS = "gradcheck-own-process"


class _Gradcheck(click.Group):
    """A click group whose usage errors are one line (``Error: ...``) with exit 2,
    whose own errors (:class:`GradcheckError`) exit with their ``exit_code``, and whose
    unexpected exceptions (a bug of gradcheck's) exit 101 with the traceback."""

    def main(self, args: Sequence[str] | None = None, **extra: Any) -> Any:  # type: ignore[override]
        standalone = extra.pop("standalone_mode", True)
        extra.setdefault("prog_name", "gradcheck")
        if not standalone:
            return super().main(args, standalone_mode=False, **extra)
        if args is None:  # the process's own command: its workers may be forked from it
            extra.setdefault("obj", {OWN_PROCESS: True})
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


# --- option parsing ---------------------------------------------------------------


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
# The body is the run's sequence, its parts in frontend/verify_run.py. The options that
# give a check's settings (the settings table's rows) arrive in `_settings`, read by
# settings_from_options.
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
    from gradcheck.frontend.jobs import WorkerSetup, torch_threads, usable_cores
    from gradcheck.frontend.runner import StopOnSignals

    started = time.monotonic()  # the summary line's time: what the user waited
    setup = WorkerSetup(
        cwd=_working_directory(verbose),
        stdout_to_stderr=True,  # the command's stdout carries its own output only
        hypothesis_home=_hypothesis_home(),
        fork=isinstance(ctx.obj, dict) and bool(ctx.obj.get(OWN_PROCESS)),
        torch_threads=torch_threads(),
    )
    # SIGINT and SIGTERM stop the run, which still prints and writes what finished.
    # The first worker starts now (Python, NumPy, Hypothesis: most of a small run's
    # time), while the options and the targets are read here; a usage error stops it.
    if scheduler is not None and executor != "dask":
        raise click.BadParameter("needs --executor dask", param_hint="'--scheduler'")
    # Without --jobs, one job per usable core (fewer when there are fewer targets, one
    # with a device: _jobs_at_once); the workers start before the targets are known.
    starting = jobs or usable_cores()
    with StopOnSignals() as signals, _Runner(starting, setup, executor, scheduler, verbose) as run:
        run.shown = _progress(output_format, quiet, color_choice)
        # The frameworks of the targets named here are known from their modules' text
        # alone: the worker is told to import them, and the command says so, before
        # this process imports NumPy below (the first line of output, at once). Those
        # of a configuration's targets are known once it is read (in _read_run).
        if targets:
            run.preload_and_say(targets, None, setup.cwd)
        given = _read_run(ctx, run, setup.cwd)
        planned = _plan_run(ctx, run, given)
        results, stopped_by = _run_all(
            run, planned.items, planned.jobs, given.overrides, verbose, signals
        )
        signals.acknowledge()  # from here on, what finished is written whatever comes
        reported = _report_run(ctx, run, given, planned, results, stopped_by, started)
    _exit_status(ctx, results, stopped_by, reported)


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
    from gradcheck.frontend.jobs import WorkerSetup
    from gradcheck.frontend.runner import Run

    # The modules are imported in a worker process (their output goes to stderr).
    setup = WorkerSetup(cwd=_working_directory(verbose), stdout_to_stderr=True)
    run = Run(1, setup)
    try:
        rows, skipped, empty = run.load(
            target_rows, modules or (BUILTIN_TARGETS,), verbose, what=printable(" ".join(modules))
        )
    except GradcheckError as exc:
        _fail(str(exc), exc.exit_code, exc, verbose)
    finally:
        run.close()
    for line in skipped or ():
        click.echo(f"skipped {line}", err=True)
    if empty is not None:  # (-v: the reasons above are what the message points to)
        _fail(empty, EmptyModule.exit_code, None, False)
    lost = _emit(output_format.targets(rows))
    if lost is not None:
        _fail(str(lost), lost.exit_code, None, verbose)


def target_rows(
    modules: Sequence[str], verbose: bool = False
) -> tuple[list[dict[str, Any]], list[str] | None, str | None]:
    """The rows of ``gradcheck list`` (run in the worker that imports the modules);
    when ``verbose``, what the modules leave out, and the message of a module that
    offers no target (its reasons are the point of ``-v`` then, not a traceback)."""
    from gradcheck.frontend.loading import load_targets

    skipped: list[str] | None = [] if verbose else None
    rows = []
    for module in modules:
        try:
            rows += [_target_row(t) for t in load_targets(module, skipped=skipped)]
        except EmptyModule as exc:
            if not verbose:
                raise
            return rows, skipped, str(exc)
    return rows, skipped, None


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
