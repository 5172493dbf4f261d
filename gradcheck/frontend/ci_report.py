"""Reports CI systems show natively: JUnit XML and GitHub Actions annotations.

Both render :class:`~gradcheck.search.verifier.VerifyResult`s computed elsewhere (and the
baseline :class:`~gradcheck.frontend.baseline.Comparison`, when there is one); nothing here
measures or decides anything.

- :func:`junit_xml`: one ``<testcase>`` per target (``classname`` the module part of
  the target, ``name`` the op, ``time`` its seconds), a ``<failure>`` holding the report
  text for a target that failed, was inconclusive or regressed against the baseline.
  Written with :mod:`xml.etree.ElementTree`, which escapes text and attributes;
  characters XML 1.0 cannot hold at all (control characters an op's error message may
  carry) are replaced.
- :func:`github_annotations`: ``::error title=...::message`` workflow commands, one per
  failing or regressed target, ``::notice`` for new and vanished targets. A message is
  escaped as the runner expects (``%`` → ``%25``, CR → ``%0D``, LF → ``%0A``), and a
  property value also has ``:`` → ``%3A`` and ``,`` → ``%2C``.
- :func:`job_summary`: the Markdown a GitHub job shows on its summary page
  (``$GITHUB_STEP_SUMMARY``): a table of the targets, the failures with their replay
  commands, the regressions against the baseline.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gradcheck.checking.vocabulary import Verdict
from gradcheck.frontend.loading import split_spec
from gradcheck.search.verifier import VerifyResult

__all__ = [
    "escape_data",
    "escape_property",
    "github_annotations",
    "job_summary",
    "junit_xml",
    "result_text",
    "source_location",
]

# XML 1.0 allows tab, LF, CR and everything from U+0020 except surrogates and two
# non-characters; anything else cannot be written even escaped.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def result_text(result: VerifyResult, replay: str | None = None) -> str:
    """The plain-text report of a target that did not pass (the table's failure block,
    without colour): with ``replay``, the whole of it (where the search found the
    failure, the largest error it saw, the command that replays it), as the command
    line prints it; the note last (``gradcheck merge`` reads it there)."""
    from gradcheck.frontend.render import report_text
    from gradcheck.frontend.report import target_text

    if replay is not None:
        text = target_text(dataclasses.replace(result, note=""), replay=replay)
    elif result.failure is not None:
        text = report_text(result.failure)
    else:
        text = f"{result.target}: {result.verdict}"
    if result.note:
        text += f"\nNote: {result.note}"
    return text


def _headline(result: VerifyResult) -> str:
    found = result.failure.failure if result.failure is not None else None
    if found is not None:
        return f"{result.target}: {found.kind}: {found.message}"
    return f"{result.target}: {result.verdict}" + (f": {result.note}" if result.note else "")


def junit_xml(
    results: Sequence[VerifyResult],
    *,
    seed: int,
    regressions: Mapping[str, str] | None = None,
    suite_name: str = "gradcheck",
    shard: Mapping[str, Any] | None = None,
    replay: Callable[[VerifyResult], str] | None = None,
) -> bytes:
    """A JUnit XML document (UTF-8 bytes) with one testcase per target; a failure's
    text is the command line's report of it, with the command ``replay`` gives.

    ``regressions`` maps a target to the reason it regressed against a baseline; such a
    target gets a failure of type ``regression`` even if its checks passed.
    """
    regressions = regressions or {}
    skipped = [r for r in results if r.verdict == Verdict.NOT_RUN]
    failures = sum(
        1 for r in results if (not r.passed or r.target in regressions) and r not in skipped
    )
    total = sum(r.seconds for r in results)
    root = ET.Element("testsuites", name=suite_name)
    suite = ET.SubElement(
        root,
        "testsuite",
        name=suite_name,
        tests=str(len(results)),
        failures=str(failures),
        errors="0",
        skipped=str(len(skipped)),
        time=f"{total:.3f}",
    )
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="seed", value=str(seed))
    for key, value in (shard or {}).items():  # a shard's manifest, for gradcheck merge
        text = value if isinstance(value, str) else json.dumps(value)
        ET.SubElement(properties, "property", name=f"gradcheck.shard.{key}", value=text)
    for r in results:
        module, name = split_spec(r.target)
        case = ET.SubElement(
            suite,
            "testcase",
            classname=_xml_text(module),
            name=_xml_text(name or r.target),
            time=f"{r.seconds:.3f}",
        )
        if r.verdict == Verdict.NOT_RUN:  # the run was stopped before it finished
            ET.SubElement(case, "skipped", message=_xml_text(f"not run: {r.note}"))
        elif not r.passed:
            failure = ET.SubElement(
                case, "failure", message=_xml_text(_headline(r)), type=r.verdict
            )
            failure.text = _xml_text(result_text(r, None if replay is None else replay(r)))
        elif r.target in regressions:
            reason = _xml_text(f"regression against the baseline: {regressions[r.target]}")
            failure = ET.SubElement(case, "failure", message=reason, type="regression")
            failure.text = reason
        if r.skip_lines or r.shapes:
            out = ET.SubElement(case, "system-out")
            out.text = "\n".join([*r.skip_lines, *([r.shapes] if r.shapes else [])])
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def write_junit_xml(path: Path | str, document: bytes) -> None:
    """Write a document made by :func:`junit_xml`: atomically, its folder created if
    missing (:class:`gradcheck.frontend.files.OutputFile`)."""
    from gradcheck.errors import OutputError
    from gradcheck.frontend.files import OutputFile

    OutputFile(path, what="JUnit report", error=OutputError).write(document + b"\n")


# --- GitHub Actions -----------------------------------------------------------------


def escape_data(text: str) -> str:
    """Escape a workflow command's message.

    >>> escape_data("50% off\\nnext line")
    '50%25 off%0Anext line'
    """
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value (``title=``, ``file=``).

    >>> escape_property("m:Op, again")
    'm%3AOp%2C again'
    """
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, message: str, **properties: str | int | None) -> str:
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items()
        if value is not None
    )
    return f"::{kind}{' ' + props if props else ''}::{escape_data(message)}"


def source_location(obj: Any) -> tuple[str | None, int | None]:
    """The file (relative to the working directory, as GitHub wants it when the job
    runs at the repository root) and line where a target is defined, when known."""
    try:
        file = inspect.getsourcefile(obj)
        _, line = inspect.getsourcelines(obj)
    except (TypeError, OSError):
        return None, None
    if file is None:
        return None, None
    try:
        file = os.path.relpath(file)
    except ValueError:  # another drive on Windows
        pass
    if file.startswith(".."):
        return None, None  # outside the checkout: GitHub cannot point at it
    return file.replace(os.sep, "/"), line


def github_annotations(
    results: Sequence[VerifyResult],
    *,
    regressions: Mapping[str, str] | None = None,
    new: Sequence[str] = (),
    vanished: Sequence[str] = (),
    locations: Mapping[str, tuple[str | None, int | None]] | None = None,
) -> list[str]:
    """Workflow command lines for a run: an error per failing or regressed target
    (pointing at the op's source when ``locations`` knows it), a notice per new or
    vanished target."""
    regressions = regressions or {}
    locations = locations or {}
    lines = []
    for r in results:
        file, line = locations.get(r.target, (None, None))
        if r.verdict == Verdict.NOT_RUN:
            continue  # the run was stopped: nothing to say about the op
        if not r.passed:
            lines.append(
                _command(
                    "error",
                    result_text(r),
                    file=file,
                    line=line,
                    title=f"gradcheck: {r.target} {r.verdict}",
                )
            )
        elif r.target in regressions:
            lines.append(
                _command(
                    "error",
                    f"{r.target}: {regressions[r.target]}",
                    file=file,
                    line=line,
                    title=f"gradcheck: {r.target} regressed",
                )
            )
    for name in new:
        lines.append(_command("notice", f"{name}: not in the baseline", title="gradcheck"))
    for name in vanished:
        lines.append(_command("notice", f"{name}: in the baseline but not run", title="gradcheck"))
    return lines


def _cell(text: str) -> str:
    # A Markdown table cell: one line, and a '|' that does not end the cell.
    return " ".join(text.split()).replace("|", "\\|")


def _fenced(text: str) -> str:
    # A code block whose fence is longer than any run of backticks in the text.
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _worst(result: VerifyResult) -> str:
    # The largest absolute error, and how far it is from its tolerance (< 1 passes).
    if math.isnan(result.max_abs_error):
        return "-"
    text = f"{result.max_abs_error:.2e}"
    if not math.isnan(result.error_ratio):
        text += f" (error/tol {result.error_ratio:.2g})"
    return text


_MARK = {Verdict.PASSED: "✅", Verdict.FAILED: "❌", Verdict.TIMED_OUT: "❌"}


def job_summary(
    results: Sequence[VerifyResult],
    *,
    seed: int,
    replay: Callable[[VerifyResult], str],
    regressions: Mapping[str, str] | None = None,
) -> str:
    """The run as GitHub-flavoured Markdown, for ``$GITHUB_STEP_SUMMARY``: a headline,
    a table of the targets (verdict, examples, worst error, time), each target that did
    not pass with its report and replay command, and the regressions against the
    baseline (``regressions``: target -> reason)."""
    from gradcheck.frontend.render import _summary as run_summary

    regressions = regressions or {}
    lines = [f"### gradcheck: {run_summary(results, seed)}", ""]
    lines += ["| target | verdict | examples | worst error | time |", "|---|---|---:|---:|---:|"]
    for r in results:
        verdict = f"{_MARK.get(r.verdict, '⚠️')} {r.verdict.replace('_', ' ')}"
        if r.target in regressions:
            verdict += " (regressed)"
        row = [f"`{_cell(r.target)}`", verdict, str(r.examples), _worst(r), f"{r.seconds:.2f} s"]
        lines.append(f"| {' | '.join(row)} |")
    failing = [r for r in results if not r.passed and r.verdict != Verdict.NOT_RUN]
    if failing:
        lines += ["", "#### Failures"]
        for r in failing:
            lines += ["", f"**`{_cell(r.target)}`** {r.verdict.replace('_', ' ')}", ""]
            lines += [_fenced(result_text(r)), "", "Replay:", "", _fenced(replay(r))]
    if regressions:
        lines += ["", "#### Regressions against the baseline", ""]
        lines += ["| target | how |", "|---|---|"]
        lines += [f"| `{_cell(t)}` | {_cell(why)} |" for t, why in regressions.items()]
    return "\n".join(lines) + "\n"
