"""Render :class:`~gradcheck.search.verifier.VerifyResult`s for the terminal (tabulate) and as
JSON. Results are data computed elsewhere; nothing here measures or decides anything.

The JSON document (``gradcheck verify --format json``), version 1::

    {
      "version": 1,
      "passed": true,                # every target passed
      "seed": 1234,                  # the run's seed
      "targets": [
        {
          "target": "mymodule:MyOp", # how to name it on the command line
          "passed": true,
          "verdict": "passed",       # "passed" | "failed" | "inconclusive" |
                                     # "timed_out" | "not_run"
          "examples": 100,           # examples checked (up to the first failure)
          "rejected": 3,             # examples skipped, never failed...
          "skipped": {"not differentiable there": 2, "output not finite there": 1},
                                     # ...by reason (also "nothing to compare",
                                     # "gradient overflows the dtype there"...)
          "failure": null,           # or {"kind": ..., "message": ..., ...}, below
          "max_abs_error": 2.1e-11,  # largest gradient errors seen (every example,
          "max_rel_error": 3.4e-12,  # failing ones and shrink steps included; an
                                     # element's error over its size as the
                                     # tolerance takes it: see "rel_error" below)
          "max_abs_error_at": null,  # which example had each: "the reported
          "max_rel_error_at": null,  # example", "example 3 of the search", "shrink
                                     # step 7" (null where none was measured)
          "error_ratio": 0.003,      # largest error / tolerance (< 1 passes)
                                     # (the three "nan" where none was measured, and
                                     # for a failure that is not the comparison's:
                                     # noncontiguous_input, batched_*...; "-" in
                                     # the table)
          "seconds": 0.41,
          "seed": 1234,
          "settings": {...},         # the effective shapes, domain, dtype, kwargs...
          "shrink_steps": 0,         # examples run while shrinking a failure
          "note": null,              # e.g. why a run is inconclusive
          "found": null,             # where a failure was found: "at a large input (66
                                     # elements)", "at the domain bound 0", "at
                                     # example 4 of 100, then shrunk in 12 steps"
                                     # (null: nothing failed)
          "worst_seen": null,        # or the failing check with the largest relative
                                     # error the search saw (as "failure", plus
                                     # "example": "example 4 of the search"); the
                                     # replay command replays it too
          "replay": "gradcheck verify mymodule:MyOp --seed 1234"
        }
      ]
    }

A run stopped by a signal has one more top-level field, ``"interrupted"`` (the signal's
name, ``"SIGINT"`` or ``"SIGTERM"``); its targets that did not finish have the verdict
``"not_run"``. With ``--baseline FILE`` the document has one more top-level field,
``"baseline"``:
``{"passed": bool, "regression_factor": float, "ratio_floor": float, "regressions":
[{"target": str, "reason": str}], "fixed": [str], "new": [str], "vanished": [str],
"settings_changed": {target: [setting, ...]}, "error_ratios": {target: {"baseline":
float, "now": float}}}`` (see :mod:`gradcheck.frontend.baseline` for the rule;
``settings_changed`` names, per target, the settings that differ from the baseline's).
A shard of a run (``--shard K/N``) adds ``"shard"``: ``{"index": int, "count": int,
"seed": int, "plan": str, "versions": {name: str}, "targets": [str], "positions": [int]}``
(every target of the unsharded run, and the places of this shard's among them; see
:mod:`gradcheck.frontend.shards`), which ``gradcheck merge`` reads.

The JSON Schema of this document ships in the package: ``gradcheck.schemas.load("verify")``
(``gradcheck/schemas/verify.schema.json``; tests validate real runs against it).

``failure`` is the failing check (:meth:`gradcheck.CheckResult.to_dict`, shrunk
inputs included, with ``input_names``, the inputs' names as the user named them, and
``upstream``, the drawn upstream gradient ``v``) with its failure's ``kind``,
``message``, ``input`` (index of the input concerned), ``worst`` (elements with
``index``, ``analytic``, ``numeric``, ``abs_error``, ``rel_error``: the element's error
over the largest of its |numeric|, atol / rtol and what finite differences resolve there,
and of its |analytic| where they cannot tell the gradient from 0: the one definition
``max_rel_error`` takes the largest of), ``order`` and ``ad_mode``
(the check that failed: order 1, 2..., ``"rev"`` or ``"fwd"``) lifted to the top level;
``worst_seen``
has the same form. Floats are written at full precision; values
that are not finite are the strings ``"nan"``, ``"inf"``, ``"-inf"``, as in
:meth:`~gradcheck.CheckResult.to_dict`. Fields may be added in later versions; none will
be removed or change meaning without a new ``version``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import click
from tabulate import tabulate

from gradcheck.checking.vocabulary import Verdict
from gradcheck.search.verifier import VerifyResult

__all__ = ["JSON_VERSION", "failure_block", "render_json", "render_table", "render_target_list"]

JSON_VERSION = 1

_VERDICT_STYLE: dict[str, dict[str, Any]] = {
    Verdict.PASSED: {"fg": "green"},
    Verdict.FAILED: {"fg": "red", "bold": True},
    Verdict.INCONCLUSIVE: {"fg": "yellow"},
    Verdict.TIMED_OUT: {"fg": "red", "bold": True},
    Verdict.NOT_RUN: {"fg": "yellow"},
}


def _number(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.2e}"


def _verdict(result: VerifyResult, color: bool) -> str:
    text = result.verdict if result.passed else result.verdict.upper().replace("_", " ")
    return click.style(text, **_VERDICT_STYLE[result.verdict]) if color else text


def render_table(
    results: Sequence[VerifyResult],
    *,
    seed: int,
    replay: Callable[[VerifyResult], str],
    color: bool = False,
    stopped_by: str | None = None,
    quiet: bool = False,
    elapsed: float | None = None,
) -> str:
    """The terminal report: one table row per target, then each failure's details
    (the checker's report of the shrunk example) with the command that replays it,
    the skipped-example counts, and a summary line (naming the signal that stopped
    the run, if one did). ``quiet``: no table and no skipped-example counts."""
    rows = [
        [
            r.target,
            _verdict(r, color),
            r.examples,
            r.rejected,
            _number(r.max_abs_error),
            _number(r.max_rel_error),
            f"{r.seconds:.2f} s",
        ]
        for r in results
    ]
    headers = ["target", "verdict", "examples", "skipped", "max abs err", "max rel err", "time"]
    blocks = (
        [] if quiet else [tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)]
    )
    for r in results:
        if r.failure is not None or not r.passed:
            blocks.append(failure_block(r, replay(r), color=color))
    skipped = [f"{r.target}: {line}" for r in results for line in r.skip_lines]
    skipped += [f"{r.target}: {r.shapes}" for r in results if r.shapes]
    if skipped and not quiet:
        blocks.append("\n".join(skipped))
    # A pass whose search stopped at its time budget checked fewer examples than asked:
    # said even with quiet, never a silent shortening (a failure's block says it itself).
    spent = [f"{r.target}: {r.note}" for r in results if r.passed and r.budget_spent and r.note]
    if spent:
        blocks.append("\n".join(spent))
    from gradcheck.frontend.report import small_gradient_note

    small = [f"{r.target}: {n}" for r in results if (n := small_gradient_note(r)) is not None]
    if small and not quiet:  # (a pass whose max rel err looks like an alarm in the table)
        blocks.append("\n".join(small))
    summary = _summary(results, seed, elapsed)
    if stopped_by is not None:
        summary += f"; {stopped_by} stopped the run"
    blocks.append(summary)
    return "\n\n".join(blocks)


def failure_block(result: VerifyResult, replay: str, *, color: bool = False) -> str:
    """The report of a target that did not pass, ending with ``replay``, the command
    that runs it again: :func:`gradcheck.report`'s text (the failing check's report
    and its inputs, where the search found it, the largest error it saw; or why
    nothing failed and nothing passed), its headline in colour. The pytest plugin
    shows the same block."""
    from gradcheck.frontend.report import target_text

    text = target_text(result, replay=replay)
    if color and result.failure is not None:
        head, _, rest = text.partition("\n")
        text = f"{click.style(head, fg='red', bold=True)}\n{rest}"
    return text


def report_text(check_result: Any) -> str:
    """The checker's own report of the failing check, then the (shrunk) inputs
    themselves, named, and the upstream gradient; without the check's seed (a run's
    seed replays it)."""
    from gradcheck.frontend.report import check_text

    return check_text(check_result, seed=False)


def _summary(results: Sequence[VerifyResult], seed: int, elapsed: float | None = None) -> str:
    """``"3 passed, 1 failed in 2.41 s (seed 7)"``: the run's own time where it is
    known (``elapsed``, what the user waited), with the targets' summed time beside it
    when several ran at once; else the targets' summed time."""
    counts = {v: sum(r.verdict == v for r in results) for v in _VERDICT_STYLE}
    said = [f"{n} {v.replace('_', ' ')}" for v, n in counts.items() if n]
    seconds = sum(r.seconds for r in results)
    if elapsed is None:
        return f"{', '.join(said)} in {seconds:.2f} s (seed {seed})"
    # (no new number literal: Hypothesis mines the literals of local modules, an editable
    # install of gradcheck included, into its draws; see tests/frontend/test_report.py)
    side_by_side = seconds > elapsed
    together = f"; {seconds:.2f} s of targets' time, run side by side" if side_by_side else ""
    return f"{', '.join(said)} in {elapsed:.2f} s (seed {seed}{together})"


def render_json(
    results: Sequence[VerifyResult],
    *,
    seed: int,
    replay: Callable[[VerifyResult], str],
    extra: dict[str, Any] | None = None,
) -> str:
    """The JSON document described in this module's docstring; ``extra`` adds
    top-level fields (``"baseline"``: the comparison with ``--baseline``, documented in
    :mod:`gradcheck.frontend.baseline`)."""
    targets = []
    for r in results:
        entry = r.to_dict()
        entry["replay"] = replay(r)
        targets.append(entry)
    document = {
        "version": JSON_VERSION,
        "passed": all(r.passed for r in results),
        "seed": seed,
        "targets": targets,
        **(extra or {}),
    }
    return json.dumps(document, indent=2, allow_nan=False)


def render_target_list(rows: Sequence[dict[str, Any]], *, as_json: bool = False) -> str:
    """The targets a module offers (``gradcheck list``): name, kind, inputs,
    parameters and the declared description."""
    if as_json:
        return json.dumps({"version": JSON_VERSION, "targets": list(rows)}, indent=2)
    table = [
        [
            row["target"],
            row["kind"],
            f"{row['arity']}{'+' if row['variadic'] else ''} ({', '.join(row['inputs'])})",
            ", ".join(row["parameters"]) or "-",
            ", ".join(f"{k}={v}" for k, v in row["described"].items()) or "-",
        ]
        for row in rows
    ]
    return tabulate(
        table,
        headers=["target", "kind", "inputs", "parameters", "described"],
        tablefmt="simple",
        disable_numparse=True,
    )
