"""Plain text for a :class:`~gradcheck.checking.result.CheckResult` and a
:class:`~gradcheck.search.verifier.VerifyResult`, pytest-approx style.

The CLI and the pytest plugin both show this text: a one-line headline naming the
failure kind and the input, ``Mismatched elements: k / n``, the largest absolute and
relative differences, a small aligned table of the worst elements, what analytic and
numeric are (products with the upstream gradient ``v``, shown), then the seed and
settings that replay the check and the inputs' values. :func:`report` is the text of
a whole result, as ``gradcheck verify`` prints it and ``str(result)`` gives it.
Rendering only: every number comes from the result.

Inputs are named as the user named them (:attr:`CheckResult.input_names`): ``input x``,
``input linear.weight``, ``input v``; ``input 2`` where no name is known.

This module sits below the search in the import layers (``str(result)`` renders with
it), so it reads a VerifyResult by its attributes and imports nothing above the
result types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcheck.checking.tolerance import tolerance_for
from gradcheck.checking.vocabulary import COMPARISON_KINDS, Kind

if TYPE_CHECKING:  # (the results' module imports this one: str(result) is its text)
    from gradcheck.checking.result import CheckResult, Element

__all__ = ["format_result", "format_table", "inputs_text", "report"]


def _num(x: float) -> str:
    return f"{x:.10g}"


def _err(x: float) -> str:
    return f"{x:.3g}"


def format_table(elements: Sequence[Element]) -> str:
    """An aligned table ``Index | Analytic | Numeric | Abs err | Rel err``.

    Examples
    --------
    >>> from gradcheck.checking.result import Element
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


def _label(result: CheckResult, i: int) -> str:
    """``input x`` for a named input, ``input 2`` for one without a name."""
    name = result.input_name(i)
    return name if name.startswith("input ") else f"input {name}"


def _products_line(result: CheckResult) -> str:
    """What the analytic and numeric columns are: ``vᵀJ`` with the upstream gradient
    shown below the inputs (``u`` at order 2, where ``v`` is an input); the derivative
    itself where the output is a scalar and ``v`` is 1 (as a check draws it there)."""
    order2 = _failed_at_order_2(result)
    u = "u" if order2 else "v"
    upstream = np.asarray(result.upstream)
    if upstream.size == 1 and float(upstream.ravel()[0]) == 1.0:
        what = "the backward's output" if order2 else "the output"
        return (
            f"Analytic and numeric are derivatives of {what} itself: it is a scalar, and "
            f"the upstream gradient {u} is 1"
        )
    what = " of the backward (x, v) -> vᵀJ" if order2 else ""
    return (
        f"Analytic and numeric are {u}ᵀJ{what}, with the upstream gradient {u} shown "
        f"below, not J itself"
    )


def format_result(result: CheckResult, *, seed: bool = True) -> str:
    """The report of one check, as the CLI and the pytest plugin print it. ``seed``:
    whether to show the check's seed (a run's report shows the run's, that replays
    it, instead).

    Examples
    --------
    >>> import numpy as np
    >>> import gradcheck as mg
    >>> print(format_result(mg.check(lambda x: x * x, np.array([1.0, 2.0]))))
    gradcheck: ...<lambda> passed (max abs err ..., max rel err ..., error ratio ...)
    seed: 0; settings: mode=full ...
    ... forward and 2 backward calls in ... s
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
            shown = ", ".join(f"{_label(result, i)} at {idx}" for i, idx in result.kinks[:5])
            lines.append(
                f"Not differentiable at: {shown}" + (" ..." if len(result.kinks) > 5 else "")
            )
    else:
        where = "" if f.input is None else f" ({_label(result, f.input)})"
        lines.append(f"gradcheck: {result.target} failed: {f.kind}{where}")
        lines.append(f.message)
        if f.kind in COMPARISON_KINDS:
            if f.size:
                lines.append(f"Mismatched elements: {f.mismatched} / {f.size}")
            lines.append(f"Max absolute difference: {_err(result.max_abs_error)}")
            lines.append(
                f"Max relative difference: {_err(result.max_rel_error)} (an element's error "
                "over the largest of its |numeric|, atol / rtol and what finite differences "
                "resolve there, and of its |analytic| where they cannot tell the gradient "
                "from 0)"
            )
            if f.worst:
                lines.append(format_table(f.worst))
            if result.upstream is not None:
                lines.append(_products_line(result))
            hint = _float32_hint(result) or _parameter_hint(result)
            if hint:
                lines.append(hint)
    labels = [_label(result, i) for i, a in enumerate(result.inputs) if a.dtype.kind in "iub"]
    if labels:
        # (check takes every integer and boolean array as a constant)
        lines.append(
            f"Constants, not differentiated (integer or boolean arrays): {', '.join(labels)}; "
            "pass floats to check their gradient"
        )
    shapes = ", ".join(
        f"{_named_only(result, i)}{a.dtype}{list(a.shape)}" for i, a in enumerate(result.inputs)
    )
    settings = " ".join(f"{k}={v}" for k, v in result.settings.items() if v is not None)
    params = f"; params: {result.params}" if result.params else ""
    # A failure found around the check (the op exited, its process died, it ran out
    # of time) has no check settings and no calls counted.
    settings = f"; settings: {settings}" if settings else ""
    said = f"seed: {result.seed}{settings}" if seed else settings.removeprefix("; ")
    lines.append(f"{said}; inputs: {shapes}{params}" if said else f"inputs: {shapes}{params}")
    if result.forward_calls or result.backward_calls:
        lines.append(
            f"{result.forward_calls} forward and {result.backward_calls} backward calls in "
            f"{result.seconds:.3f} s"
        )
    return "\n".join(lines)


#: The largest relative error that a float64 backward computing in float32 shows
#: (a few float32 ulps, 2^-24 each, summed over a few terms).
_FLOAT32_SIZED = 2.0**-20


def _float32_hint(result: CheckResult) -> str:
    """A line for a float64 mismatch whose every error is of float32's rounding size:
    the usual cause is a backward that computes in float32 (torch's Python-number
    constants take its default dtype), which the numbers alone do not tell."""
    f = result.failure
    floats = [a.dtype for a in result.inputs if a.dtype.kind in "fc"]
    if f is None or f.kind != Kind.MISMATCH or not f.worst or not floats:
        return ""
    if any(d not in (np.float64, np.complex128) for d in floats):
        return ""
    worst = max(e.rel_error for e in f.worst)
    if not 0 < worst <= _FLOAT32_SIZED or result.max_rel_error > _FLOAT32_SIZED:
        return ""
    return (
        f"Every error is of float32's rounding size (relative {_err(worst)}): a backward "
        "that computes in float32 gives such errors (torch.tensor() and torch.where() of "
        "Python numbers take torch's default dtype, float32; so do NumPy float32 "
        "constants); compute in the input's dtype, or pass rtol= if this precision is "
        "what you accept"
    )


def _parameter_hint(result: CheckResult) -> str:
    """For an input that received no gradient: it may be a parameter of the op (a
    number its backward gives no gradient, as ``return grad_x, None``) drawn as a
    tensor for want of a value, which the failure alone does not tell."""
    f = result.failure
    if f is None or f.kind != Kind.MISSING_GRADIENT or f.input is None:
        return ""
    name = result.input_name(f.input)
    if name.startswith("input "):
        return ""
    return (
        f"If {name} is a parameter of the op (a number, not a tensor input), give it a "
        f"value: --kwargs '{{\"{name}\": ...}}' on the command line, kwargs= in verify, "
        f"describe and the config, {name}= in check"
    )


def _failed_at_order_2(result: CheckResult) -> bool:
    """Whether the failing check is the gradient of the backward, whose inputs end
    with ``v`` (an order-2 check fails at order 1 first where the backward is wrong)."""
    return result.failure is not None and (result.failure.order or 1) >= 2


def _named_only(result: CheckResult, i: int) -> str:
    name = result.input_name(i)
    return "" if name.startswith("input ") else f"{name} "


def _array(a: Any) -> str:
    text = np.array2string(np.asarray(a), precision=17, threshold=64, separator=", ")
    return text.replace("\n", "\n  ")


def inputs_text(result: CheckResult) -> str:
    """The check's inputs with their values, named, then the upstream gradient the
    check drew (``v``; ``u`` at order 2, where ``v`` is an input), in one format."""
    lines = []
    for i, a in enumerate(result.inputs):
        name = result.input_name(i)
        lines.append(f"{name} ({a.dtype}{list(a.shape)}):\n  {_array(a)}")
    if result.upstream is not None and result.failure is not None:
        u = result.upstream
        which = "u" if _failed_at_order_2(result) else "v"
        head = f"{which}, the upstream gradient ({u.dtype}{list(u.shape)}"
        pieces = [] if which == "u" else _upstream_pieces(u, result.upstream_outputs)
        if pieces:
            parts = all(label.startswith("the ") for label, _ in pieces)
            what = "the output's real and imaginary parts" if parts else "the outputs' pieces"
            lines.append(f"{head}: {what}, raveled and joined, as upstream= takes it):")
            for label, piece in pieces:
                text = _array(piece).replace("\n", "\n  ")
                lines.append(f"  {label}:\n    {text}")
        else:
            lines.append(f"{head}):\n  {_array(u)}")
    return "\n".join(lines)


def _upstream_pieces(u: np.ndarray, outputs: Sequence[Any]) -> list[tuple[str, np.ndarray]]:
    """``v`` of an op of several outputs split into each output's piece, shaped as the
    output (empty where it has one output, or where the layout does not fit ``v``)."""
    sizes = [int(np.prod(shape)) for _, shape in outputs]
    if len(outputs) < 2 or u.ndim != 1 or sum(sizes) != u.size:
        return []
    starts = np.cumsum([0, *sizes])
    return [
        (label, u[a:b].reshape(shape)) for (label, shape), a, b in zip(outputs, starts, starts[1:])
    ]


def check_text(result: CheckResult, *, seed: bool = True) -> str:
    """The report of one check with its inputs' values: ``str(check_result)``."""
    return f"{format_result(result, seed=seed)}\n{inputs_text(result)}".rstrip("\n")


def report(result: Any, *, replay: str | None = None) -> str:
    """The text ``gradcheck verify`` prints for ``result`` (what ``str(result)`` gives).

    For a :class:`~gradcheck.CheckResult` (:func:`gradcheck.check`): the report of the
    check, then its inputs and, for a failure, the upstream gradient. For a
    :class:`~gradcheck.VerifyResult` (:func:`gradcheck.verify`): a line with the
    verdict; for a failure, the shrunk example's report (without its check's seed:
    the run's seed replays it), where the search found it, the largest error seen
    during the search with its example (a failure shrinks to a small input, where the
    bug may look small), and the command that replays the run: ``replay`` (the
    command line's, with the options given), else ``gradcheck.verify`` with the seed.

    Examples
    --------
    >>> import numpy as np
    >>> import gradcheck as mg
    >>> print(mg.report(mg.check(lambda x: x * x, np.array([1.0, 2.0]))))
    gradcheck: ...<lambda> passed (max abs err ..., max rel err ..., error ratio ...)
    seed: 0; settings: mode=full ...; inputs: x float64[2]
    ... forward and 2 backward calls in ... s
    x (float64[2]):
      [1., 2.]
    """
    if not hasattr(result, "examples"):  # a CheckResult (a VerifyResult counts examples)
        return check_text(result)
    if replay is None:
        replay = (
            f"gradcheck.verify({result.target.replace(':', '.')}, seed={result.seed}) "
            f"with the same settings"
        )
    return target_text(result, replay=replay)


#: A pass's max rel err from this size up (or its rtol, if larger) reads as an alarm
#: in the table, and is explained beneath it (a display threshold, not the verdict's:
#: a float64 pass at an element near 0 commonly shows 1e-6, which alarms no one).
ALARMING_REL_ERR = 1e-3


def small_gradient_note(result: Any) -> str | None:
    """For a target that passed with a max rel err that looks like an alarm (above
    :data:`ALARMING_REL_ERR` and its rtol): why that number is no alarm. A pass
    puts every element within rtol of its size or, where finite differences resolve
    less (a gradient near 0, one changing fast: their error estimate, the rounding
    floor, atol), within what they resolve: only such an element's relative error
    can exceed rtol. None otherwise.

    >>> from types import SimpleNamespace as R
    >>> small_gradient_note(R(passed=True, max_rel_error=1e-9, error_ratio=0.1, settings={}))
    >>> print(small_gradient_note(R(passed=True, max_rel_error=0.088, error_ratio=0.99,
    ...                             settings={"dtype": "float64"})))
    max rel err 8.80e-02 is above rtol 1e-07: at an element ... at most 0.99 (below 1 passes)
    """
    rel = getattr(result, "max_rel_error", float("nan"))
    if not result.passed or not np.isfinite(rel):
        return None
    settings = getattr(result, "settings", None) or {}
    dtype = str(settings.get("dtype") or "float64")
    dtype = {"complex128": "float64", "complex64": "float32"}.get(dtype, dtype)
    rtol = tolerance_for(dtype, None, settings.get("rtol")).rtol
    if rel <= max(rtol, ALARMING_REL_ERR):
        return None
    return (
        f"max rel err {rel:.2e} is above rtol {rtol:g}: at an element that finite "
        f"differences resolve no finer (a gradient near 0, or one changing fast there), "
        f"whose allowed error is what they resolve; error / tolerance at most "
        f"{result.error_ratio:.2f} (below 1 passes)"
    )


def target_text(result: Any, *, replay: str) -> str:
    """The block of one target of a run (a VerifyResult), as :func:`report` says."""
    verdict = result.verdict.replace("_", " ")
    if result.failure is None:
        head = f"{result.target}: {verdict}"
        errs = f"max abs err {_err(result.max_abs_error)}, max rel err {_err(result.max_rel_error)}"
        said = f"{head} ({result.examples} examples, {errs})"
        if result.passed:
            spent = [f"Note: {result.note}"] if getattr(result, "budget_spent", False) else []
            small = small_gradient_note(result)
            spent += [] if small is None else [small]
            return "\n".join(
                [said, *result.skip_lines, *([result.shapes] if result.shapes else []), *spent]
            )
        return f"{head}: {result.note}\nReplay: {replay}"
    lines = [check_text(result.failure, seed=False)]
    if result.found:
        lines.append(f"Found {result.found}.")
    worst = result.worst
    if worst is not None and worst is not result.failure:
        lines.append(
            f"Largest error seen{_the_tables(result, result.worst_example)}: max rel err "
            f"{_err(worst.max_rel_error)}, max abs err {_err(worst.max_abs_error)} (error "
            f"ratio {_err(worst.error_ratio)}), at {result.worst_example}, before shrinking "
            f"to the example above:"
        )
        lines.append("  " + format_result(worst, seed=False).split("\n", 2)[1])
        lines.append("  " + inputs_text(worst).replace("\n", "\n  "))
        # In Python with the v shown (one seed per report: the run's, below).
        inputs = "*inputs, upstream=v"
        k = worst.failure.order if worst.failure is not None else None
        if k is not None and k > 2:  # v_3..v_k come from the seed
            inputs = f"*inputs[:-{k - 1}], upstream=v, order={k}"
        elif _failed_at_order_2(worst):
            inputs = "*inputs[:-1], upstream=v, order=2"
        elif worst.settings.get("order") == 2:  # (order 1 failed first, with that v)
            inputs = "*inputs, upstream=v, order=2"
        lines.append(
            f"  It replays with the run (Replay below), or alone in Python: "
            f"gradcheck.check(<target>, {inputs}) with the same settings"
        )
    lines.extend(_elsewhere(result))
    if result.note:
        lines.append(f"Note: {result.note}")
    lines.append(f"Replay: {replay}")
    return "\n".join(lines)


def _maxima(result: Any) -> list[tuple[str, float, str]]:
    """The table's errors of a run with the example each was seen at: (name, value,
    example), where it was measured."""
    return [
        (name, value, at)
        for name, value, at in (
            ("max abs err", result.max_abs_error, getattr(result, "max_abs_error_at", "")),
            ("max rel err", result.max_rel_error, getattr(result, "max_rel_error_at", "")),
        )
        if at and value == value  # (nan: not measured)
    ]


def _the_tables(result: Any, example: str) -> str:
    """``" (the run's max rel err)"``: which of the table's errors ``example`` had."""
    names = [name for name, _, at in _maxima(result) if at == example]
    return f" (the run's {' and '.join(names)})" if names else ""


def _elsewhere(result: Any) -> list[str]:
    """A line for each of the table's errors seen at an example that the report does
    not show (the table's errors are the largest over every example checked, and the
    largest absolute and relative errors may be two examples')."""
    shown = {"the reported example", result.worst_example if result.worst else ""}
    return [
        f"The run's {name}, {_err(value)}, was seen at {at} ("
        + (
            "it replays with a run of that seed)."
            if " with seed " in at
            else "it replays with the run: Replay below)."
        )
        for name, value, at in _maxima(result)
        if at not in shown
    ]
