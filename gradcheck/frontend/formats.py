"""The output formats (``--format``) of ``gradcheck verify`` and ``gradcheck list``.

One table, :data:`FORMATS` (ruff's output-format table is the model): each entry says
how the format renders a run and a target list, and what it needs from the command
(whether stdout must stay one machine-read document, whether it may be coloured). The
commands take their ``--format`` choices, help and behaviour from it, so a new format
is one more entry here and its renderer. The renderers (:mod:`gradcheck.frontend.render`)
are imported when a format is used, so that ``--help`` stays light.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gradcheck.search.verifier import VerifyResult

__all__ = ["FORMATS", "OutputFormat", "RunReport"]


@dataclass(frozen=True)
class RunReport:
    """What one ``gradcheck verify`` run produced, for an output format to render."""

    results: Sequence[VerifyResult]
    seed: int
    #: The command that replays one target's run.
    replay: Callable[[VerifyResult], str]
    #: The comparison with ``--baseline`` (:class:`gradcheck.frontend.baseline.Comparison`).
    comparison: Any = None
    #: Colour the output (a format whose ``color`` is true, on a terminal).
    color: bool = False
    #: The signal that stopped the run ("SIGINT"), when one did.
    stopped_by: str | None = None
    #: ``--quiet``: only what did not pass, and the summary.
    quiet: bool = False
    #: The manifest of a shard's run (``--shard``), written into the JSON document.
    shard: dict[str, Any] | None = None
    #: Seconds the run took, from the command's start (the summary line's time).
    elapsed: float | None = None


@dataclass(frozen=True)
class OutputFormat:
    """One value of ``--format``."""

    name: str
    #: For ``--help``.
    help: str
    #: stdout carries one document a program reads: whatever the user's code writes to
    #: stdout, and the GitHub annotations, go to stderr instead.
    document: bool
    #: It may be coloured (on a terminal, without NO_COLOR).
    color: bool
    #: ``gradcheck verify``'s output.
    run: Callable[[RunReport], str]
    #: ``gradcheck list``'s output, from its rows.
    targets: Callable[[Sequence[dict[str, Any]]], str]


def _table_run(report: RunReport) -> str:
    from gradcheck.frontend.render import render_table

    text = render_table(
        report.results,
        seed=report.seed,
        replay=report.replay,
        color=report.color,
        stopped_by=report.stopped_by,
        quiet=report.quiet,
        elapsed=report.elapsed,
    )
    if report.comparison is not None:
        text += f"\n\n{report.comparison.render()}"
    return text


def _json_run(report: RunReport) -> str:
    from gradcheck.frontend.render import render_json

    extra: dict[str, Any] = {}
    if report.comparison is not None:
        extra["baseline"] = report.comparison.to_dict()
    if report.stopped_by is not None:
        extra["interrupted"] = report.stopped_by
    if report.shard is not None:
        extra["shard"] = report.shard
    return render_json(report.results, seed=report.seed, replay=report.replay, extra=extra)


def _table_targets(rows: Sequence[dict[str, Any]]) -> str:
    from gradcheck.frontend.render import render_target_list

    return render_target_list(rows)


def _json_targets(rows: Sequence[dict[str, Any]]) -> str:
    from gradcheck.frontend.render import render_target_list

    return render_target_list(rows, as_json=True)


#: The output formats by name, in the order ``--help`` lists them; the first is the
#: default.
FORMATS: dict[str, OutputFormat] = {
    f.name: f
    for f in (
        OutputFormat(
            "table",
            "a table, then each failure's report",
            document=False,
            color=True,
            run=_table_run,
            targets=_table_targets,
        ),
        OutputFormat(
            "json",
            "one JSON document on stdout (its schema: the README)",
            document=True,
            color=False,
            run=_json_run,
            targets=_json_targets,
        ),
    )
}
