"""What a ``gradcheck verify`` run reads and writes besides its targets: the
configuration and the baseline read and checked, the output files checked before the
run and written after it, the comparison with the baseline, the GitHub annotations and
job summary, the progress shown while it runs, and the command's own output.

Like :mod:`gradcheck.cli`, it imports neither NumPy nor the engine at its top: each
function imports what it writes.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gradcheck.checking.vocabulary import Verdict
from gradcheck.defaults import DEFAULT_REGRESSION_FACTOR
from gradcheck.errors import GradcheckError, OutputError
from gradcheck.frontend.exits import _fail
from gradcheck.frontend.files import OutputFile
from gradcheck.frontend.formats import OutputFormat
from gradcheck.frontend.progress import Progress, can_redraw, wants_color

if TYPE_CHECKING:
    from gradcheck.frontend.config import ProjectConfig
    from gradcheck.frontend.plan import RunItem
    from gradcheck.frontend.verify_run import _Runner
    from gradcheck.search.verifier import VerifyResult


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
                replay=replay,
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
