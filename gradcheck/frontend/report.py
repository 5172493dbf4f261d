"""Plain text for a :class:`~gradcheck.checking.result.CheckResult`, pytest-approx style.

The CLI and the pytest plugin both show this text: a one-line headline naming the
failure kind and the input, ``Mismatched elements: k / n``, the largest absolute and
relative differences, a small aligned table of the worst elements, then the seed and
settings that replay the check. Rendering only: every number comes from the result.
"""

from __future__ import annotations

from collections.abc import Sequence

from gradcheck.checking.result import CheckResult, Element
from gradcheck.checking.vocabulary import Kind

__all__ = ["format_result", "format_table"]


def _num(x: float) -> str:
    return f"{x:.10g}"


def _err(x: float) -> str:
    return f"{x:.3g}"


def format_table(elements: Sequence[Element]) -> str:
    """An aligned table ``Index | Analytic | Numeric | Abs err | Rel err``.

    Examples
    --------
    >>> e = Element(0, (1, 2), 1.5, 1.0, 0.5, 0.5, 10.0)
    >>> print(format_table([e]))
    Index   | Analytic | Numeric | Abs err | Rel err
    (1, 2)  | 1.5      | 1       | 0.5     | 0.5
    """
    header = ("Index", "Analytic", "Numeric", "Abs err", "Rel err")
    rows = [
        (str(e.index), _num(e.analytic), _num(e.numeric), _err(e.abs_error), _err(e.rel_error))
        for e in elements
    ]
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(len(header))]
    widths[0] = max(widths[0], 7)
    lines = [
        " | ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
        for row in [header, *rows]
    ]
    return "\n".join(lines)


def format_result(result: CheckResult) -> str:
    """The report of one check, as the CLI and the pytest plugin print it.

    Examples
    --------
    >>> import numpy as np
    >>> import gradcheck as mg
    >>> print(format_result(mg.check(lambda x: x * x, np.array([1.0, 2.0]))))
    gradcheck: ...<lambda> passed (max abs err ..., max rel err ..., error ratio ...)
    seed: 0; settings: mode=full ...
    7 forward and 2 backward calls in ... s
    """
    lines: list[str] = []
    f = result.failure
    if f is None:
        verdict = result.verdict
        extra = f"; {len(result.kinks)} element(s) at a kink" if result.kinks else ""
        if result.note and not result.kinks:
            extra += f"; {result.note}"
        if result.below_floor:
            extra += f"; {result.below_floor} element(s) below what finite differences resolve here"
        lines.append(
            f"gradcheck: {result.target} {verdict} (max abs err {_err(result.max_abs_error)}, "
            f"max rel err {_err(result.max_rel_error)}, error ratio "
            f"{_err(result.error_ratio)}{extra})"
        )
        if result.kinks:
            shown = ", ".join(f"input {i} at {idx}" for i, idx in result.kinks[:5])
            lines.append(
                f"Not differentiable at: {shown}" + (" ..." if len(result.kinks) > 5 else "")
            )
    else:
        where = "" if f.input is None else f" (input {f.input})"
        lines.append(f"gradcheck: {result.target} failed: {f.kind}{where}")
        lines.append(f.message)
        if f.kind in (Kind.MISMATCH, Kind.MISSING_GRADIENT):
            if f.size:
                lines.append(f"Mismatched elements: {f.mismatched} / {f.size}")
            lines.append(f"Max absolute difference: {_err(result.max_abs_error)}")
            lines.append(
                f"Max relative difference: {_err(result.max_rel_error)} "
                "(to the largest gradient element)"
            )
            if f.worst:
                lines.append(format_table(f.worst))
    shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in result.inputs)
    settings = " ".join(f"{k}={v}" for k, v in result.settings.items() if v is not None)
    params = f"; params: {result.params}" if result.params else ""
    # A failure found around the check (the op exited, its process died, it ran out
    # of time) has no check settings and no calls counted.
    settings = f"; settings: {settings}" if settings else ""
    lines.append(f"seed: {result.seed}{settings}; inputs: {shapes}{params}")
    if result.forward_calls or result.backward_calls:
        lines.append(
            f"{result.forward_calls} forward and {result.backward_calls} backward calls in "
            f"{result.seconds:.3f} s"
        )
    return "\n".join(lines)
