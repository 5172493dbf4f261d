"""The HTML report of a run (``gradcheck verify --html report.html``): one self-contained
file, the page a user opens from a CI artifact to see where a gradient is wrong.

It holds the run's summary, a table of every target, the regressions against the
baseline, and for each failure: the checker's report, two charts drawn as inline SVG
(:mod:`gradcheck.frontend.svg`), the shrunk input and the replay command. The charts:

- **error against step size**: ``|D(h) - <g, d>|`` of the central difference along a
  random direction (:func:`gradcheck.checking.diagnostics.diagnose`, the curve of
  ``gradcheck plot``): a V whose bottom is near the checker's step when the gradient is
  right, a flat floor at the gradient's error when it is wrong;
- **analytic against numeric, per element** of the failing input
  (:func:`gradcheck.checking.diagnostics.element_gradients`): where the two differ.

Both are computed here, at the shrunk example, by running the op again in this process
(only for the targets that failed). The page has no script and loads nothing: styles
and charts are inline.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Any

import numpy as np

from gradcheck import __version__
from gradcheck.checking.vocabulary import Verdict
from gradcheck.frontend.svg import Series, chart
from gradcheck.search.verifier import VerifyResult

__all__ = ["MAX_ELEMENTS", "html_report"]

#: The elements of a failing input the per-element chart shows at most (the first ones).
MAX_ELEMENTS = 2000

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1120px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.passed { color: #176117; } .failed, .timed_out { color: #b00020; font-weight: bold; }
.inconclusive, .not_run { color: #8a6d00; }
pre { background: #f6f6f6; padding: 8px; overflow-x: auto; font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
figure { margin: 0; } figcaption { font-size: 12px; color: #555; max-width: 520px; }
section.target { border-top: 2px solid #ddd; }
"""


def _number(value: float) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.2e}"


def _anchor(name: str) -> str:
    return "t-" + "".join(c if c.isalnum() else "-" for c in name)


def _verdict(r: VerifyResult) -> str:
    return f'<span class="{escape(r.verdict)}">{escape(r.verdict.replace("_", " "))}</span>'


def _step_chart(obj: Any, check: Any, constants: Sequence[int]) -> tuple[str, str]:
    from gradcheck.checking.diagnostics import diagnose

    d = diagnose(obj, *check.inputs, params=check.params, seed=check.seed, constants=constants)
    svg = chart(
        [Series("|central difference - <g, d>|", d.steps, d.errors, "#1f77b4")],
        title="Finite-difference error against step size",
        xlabel="step h",
        ylabel="error of the derivative along d",
        log_x=True,
        log_y=True,
        vlines=[(d.chosen_step, f"the checker's step {d.chosen_step:.1e}", "#d62728")],
    )
    if d.gradient_right is None:
        verdict = "the Taylor slope is undecided (linear along d?)"
    else:
        verdict = f"Taylor slope {d.slope:.2f}: the gradient looks " + (
            "right" if d.gradient_right else "WRONG"
        )
    caption = (
        "Along a random direction d: a V whose bottom is near the checker's step (dashed) "
        "when the gradient is right; a flat floor at the gradient's error when it is "
        f"wrong. {verdict}."
    )
    return svg, caption


def _element_chart(obj: Any, check: Any, constants: Sequence[int]) -> tuple[str, str]:
    from gradcheck.checking.diagnostics import element_gradients

    failing = check.failure.input if check.failure.input is not None else 0
    analytic, numeric = element_gradients(
        obj,
        *check.inputs,
        wrt=failing,
        params=check.params,
        seed=check.seed,
        constants=constants,
        upstream=getattr(check, "upstream", None),
    )
    if analytic.size != numeric.size:
        raise ValueError(
            f"the analytic gradient has {analytic.size} elements, the input {numeric.size}"
        )
    shown = min(analytic.size, MAX_ELEMENTS)
    index = np.arange(shown)
    svg = chart(
        [
            Series("analytic (backward)", index, analytic[:shown], "#1f77b4", "both"),
            Series("numeric (finite differences)", index, numeric[:shown], "#ff7f0e", dash="4 2"),
        ],
        title=f"Gradient of {_named(check, failing)}, element by element",
        xlabel="element (flat index)"
        + (f", the first {shown} of {analytic.size}" if shown < analytic.size else ""),
        ylabel="d<v, f>/dx",
    )
    worst = int(np.argmax(np.abs(analytic - numeric))) if analytic.size else 0
    which = (
        "the check's upstream gradient v (in the report)"
        if getattr(check, "upstream", None) is not None
        else f"an upstream gradient v drawn with seed {check.seed}"
    )
    caption = (
        f"{_named(check, failing)} at the shrunk example, {which}; the largest difference "
        f"is at flat index {worst}."
    )
    return svg, caption


def _charts(check: Any, obj: Any) -> str:
    constants = [int(i) for i in check.settings.get("constants", ()) or ()]
    figures = []
    for draw in (_step_chart, _element_chart):
        try:
            svg, caption = draw(obj, check, constants)
        except Exception as exc:  # the op's own error: say why there is no chart
            figures.append(
                f'<p class="no-chart">{escape(draw.__name__.strip("_").replace("_", " "))} '
                f"not drawn: {escape(type(exc).__name__)}: {escape(str(exc))}</p>"
            )
            continue
        figures.append(f"<figure>{svg}<figcaption>{escape(caption)}</figcaption></figure>")
    return f'<div class="charts">{"".join(figures)}</div>'


def _named(check: Any, index: int) -> str:
    """Input ``index`` of a check as the report names it (``input x``)."""
    name = check.input_name(index) if hasattr(check, "input_name") else f"input {index}"
    return name if name.startswith("input ") else f"input {name}"


def charts_of(failures: Sequence[tuple[str, Any]]) -> dict[str, str]:
    """The charts (HTML) of each failing check, by target name: ``failures`` are
    ``(target, check)`` pairs. The charts run the op again, so this runs where the
    targets are imported, in a worker process, never in the command."""
    from gradcheck.frontend.loading import load_targets

    out = {}
    for name, check in failures:
        try:
            (target,) = load_targets(name)
        except Exception as exc:  # the op's module: say why there are no charts
            out[name] = (
                f'<p class="no-chart">charts not drawn: {escape(type(exc).__name__)}: '
                f"{escape(str(exc))}</p>"
            )
            continue
        out[name] = _charts(check, target.obj)
    return out


def _section(r: VerifyResult, charts: str | None, replay: str) -> str:
    from gradcheck.frontend.report import inputs_text, target_text

    kind = "failure" if r.failure else "not-passed"
    head = f'<section class="target {kind}" id="{_anchor(r.target)}">'
    parts = [head, f"<h2>{escape(r.target)}: {_verdict(r)}</h2>"]
    if r.failure is not None:
        # The command line's block (named inputs, v, where it was found, the largest
        # error seen), its replay line apart (below).
        text = target_text(r, replay=replay).rsplit("\nReplay: ", 1)[0]
        parts.append(f'<pre class="report">{escape(text)}</pre>')
        if r.failure.inputs:
            parts.append(charts or '<p class="no-chart">charts not drawn</p>')
        parts.append("<h3>Shrunk input</h3>")
        parts.append(f'<pre class="input">{escape(inputs_text(r.failure))}</pre>')
    else:
        parts.append(f'<pre class="report">{escape(r.note or r.verdict)}</pre>')
    parts.append("<h3>Replay</h3>")
    parts.append(f'<pre class="replay"><code>{escape(replay)}</code></pre>')
    parts.append("</section>")
    return "\n".join(parts)


def html_report(
    results: Sequence[VerifyResult],
    *,
    seed: int,
    replay: Callable[[VerifyResult], str],
    charts: Mapping[str, str],
    regressions: Mapping[str, str] | None = None,
) -> str:
    """The report's HTML document; ``charts`` maps a target's name to its failure's
    charts (:func:`charts_of`, drawn in a worker: one missing says so),
    ``regressions`` a regressed target's name to how it regressed."""
    from gradcheck.frontend.render import _summary as run_summary

    regressions = regressions or {}
    summary = run_summary(results, seed)
    rows = []
    for r in results:
        name = escape(r.target)
        if not r.passed and r.verdict != Verdict.NOT_RUN:
            name = f'<a href="#{_anchor(r.target)}">{name}</a>'
        rows.append(
            f"<tr><td><code>{name}</code></td><td>{_verdict(r)}"
            f"{' (regressed)' if r.target in regressions else ''}</td>"
            f'<td class="num">{r.examples}</td><td class="num">{r.rejected}</td>'
            f'<td class="num">{_number(r.max_abs_error)}</td>'
            f'<td class="num">{_number(r.max_rel_error)}</td>'
            f'<td class="num">{_number(r.error_ratio)}</td>'
            f'<td class="num">{r.seconds:.2f} s</td></tr>'
        )
    body = [
        f'<h1>gradcheck report</h1><p class="summary">{escape(summary)}</p>',
        '<table class="targets"><thead><tr><th>target</th><th>verdict</th><th>examples</th>'
        "<th>skipped</th><th>max abs err</th><th>max rel err</th><th>error / tolerance</th>"
        "<th>time</th></tr></thead><tbody>",
        *rows,
        "</tbody></table>",
    ]
    if regressions:
        body.append("<h2>Regressions against the baseline</h2><table><tbody>")
        body += [
            f"<tr><td><code>{escape(t)}</code></td><td>{escape(why)}</td></tr>"
            for t, why in regressions.items()
        ]
        body.append("</tbody></table>")
    for r in results:
        if not r.passed and r.verdict != Verdict.NOT_RUN:
            body.append(_section(r, charts.get(r.target), replay(r)))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>gradcheck: {escape(summary)}</title>"
        f"<style>{_STYLE}</style></head><body>\n"
        + "\n".join(body)
        + f'\n<p class="footer">gradcheck {escape(__version__)}</p></body></html>\n'
    )
