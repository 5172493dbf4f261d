"""A reference forward: does the op compute the function it is meant to?

The gradient checks compare the backward with the forward's own finite differences,
so an op whose forward is wrong (a missing term, a wrong constant) passes them with a
backward just as wrong. ``check(reference_forward=fn)`` also compares the forward with
``fn``, a NumPy function of the same inputs and keyword parameters (torch's OpInfo
``ref``, MyGrad's ``true_func``), on the same example, within the output dtype's
tolerance; a disagreement is its own failure kind, ``forward_mismatch``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from gradcheck.checking.outputs import Outputs
from gradcheck.checking.result import Failure
from gradcheck.checking.target import Target, qualname
from gradcheck.checking.tolerance import Tolerance
from gradcheck.checking.vocabulary import Kind
from gradcheck.errors import CheckUsageError, TargetRaised

__all__ = ["reference_name", "load_reference", "forward_disagreement", "disagreement"]

#: How many of the worst elements a forward_mismatch report lists.
WORST_SHOWN = 5
#: Outputs of at most this many elements are shown in full, the op's and the reference's.
SHOWN_IN_FULL = 24


def reference_name(value: Any) -> str:
    """``"module:function"`` for a reference given as a string or a function (how the
    settings of a result record it, for the replay)."""
    if isinstance(value, str):
        return value
    module = getattr(value, "__module__", None) or "?"
    return f"{module}:{getattr(value, '__qualname__', None) or qualname(value)}"


def load_reference(value: Any) -> Callable[..., Any]:
    """The reference function: ``value`` itself when callable, else the function a
    ``"module:function"`` string names (imported now)."""
    if callable(value):
        return value
    if not isinstance(value, str) or value.count(":") != 1 or not all(value.split(":")):
        raise CheckUsageError(
            f"reference_forward must be a function or 'module:function', not {value!r}"
        )
    module_name, attribute = value.split(":")
    try:
        found: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError) as exc:
        raise CheckUsageError(
            f"reference_forward {value!r} cannot be loaded ({type(exc).__name__}: {exc}); "
            f"name a function of the op's inputs as module:function"
        ) from None
    if not callable(found):
        raise CheckUsageError(f"reference_forward {value!r} is not a function")
    return found


def forward_disagreement(
    tgt: Target,
    xs: Sequence[np.ndarray],
    params: Mapping[str, Any],
    constants: Sequence[int],
    reference: Any,
    tolerances: Callable[[np.dtype], Tolerance],
) -> Failure | None:
    """A ``forward_mismatch`` failure when the op's output at ``xs`` differs from the
    reference's beyond ``tolerances(output dtype)`` (a :class:`Tolerance`: its atol,
    where scaled, relative to the largest |reference|); None when they agree, or when
    the op's forward raises (the gradient check reports that)."""
    fn, name = load_reference(reference), reference_name(reference)
    try:
        graph = tgt.apply(xs, params, constants=constants)
    except TargetRaised:
        return None
    got = np.asarray(graph.output.data)
    try:
        with np.errstate(all="ignore"):  # (its inf and nan are compared, not warned of)
            value = fn(*[np.array(x) for x in xs], **params)
    except Exception as exc:
        raise CheckUsageError(
            f"reference_forward {name} raised on the op's inputs "
            f"({type(exc).__name__}: {exc}); it must take the op's inputs and keyword "
            f"parameters, as NumPy arrays, and return its output(s)"
        ) from None
    layout = graph.outputs
    if isinstance(value, (tuple, list)):
        values = [np.asarray(v) for v in value]
        expected = Outputs.of(values).flatten(values) if values else np.zeros(0)
    else:
        expected = np.asarray(value)
    if expected.shape != got.shape:
        return Failure(
            Kind.FORWARD_MISMATCH,
            f"the forward's output ({_shape(layout, got)}) is not the shape of what the "
            f"reference forward {name} returns ({list(expected.shape)})",
        )
    return disagreement(
        got,
        expected,
        layout,
        f"the forward differs from the reference forward {name}",
        tolerances(got.dtype),
        Kind.FORWARD_MISMATCH,
    )


def _shape(layout: Outputs | None, out: np.ndarray) -> str:
    if layout is None:
        return f"{out.dtype}{list(out.shape)}"
    return ", ".join(layout.kind(k) for k in range(len(layout.shapes)))


def disagreement(
    got: np.ndarray,
    expected: np.ndarray,
    layout: Outputs | None,
    headline: str,
    tolerances: Tolerance,
    kind: str,
    names: tuple[str, str] = ("the op", "the reference"),
    at_input: int | None = None,
) -> Failure | None:
    """A failure of ``kind`` when ``got`` differs from ``expected`` (arrays of one
    shape) beyond ``tolerances`` (its atol, where scaled, relative to the largest
    |expected|): ``headline``, the worst element with both values (``names`` says
    whose), the worst few in a table, both arrays when small; None when they agree."""
    g, e = got.astype(np.float64).ravel(), expected.astype(np.float64).ravel()
    finite = np.isfinite(g) & np.isfinite(e)
    # Non-finite values agree only with the same non-finite value (nan with nan).
    same = (g == e) | (np.isnan(g) & np.isnan(e))
    scale = float(np.max(np.abs(e[finite]), initial=0.0))
    allowed = tolerances.allowed(e, scale)
    with np.errstate(invalid="ignore"):
        diff = np.where(finite, np.abs(g - e), np.where(same, 0.0, np.inf))
    bad = np.flatnonzero(diff > allowed)
    if bad.size == 0:
        return None
    worst = bad[np.argsort(-diff[bad], kind="stable")][:WORST_SHOWN]
    rows = [
        ("Index", names[0].split()[-1].capitalize(), names[1].split()[-1].capitalize(), "Abs err")
    ]
    rows += [(_where(layout, got, int(j)), _num(g[j]), _num(e[j]), _num(diff[j])) for j in worst]
    widths = [max(len(r[c]) for r in rows) for c in range(4)]
    table = "\n".join(
        " | ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows
    )
    j = int(worst[0])
    return Failure(
        kind,
        f"{headline} at {bad.size} of {g.size} elements; worst at "
        f"{_where(layout, got, j)}: {names[0]} gives {_num(g[j])}, {names[1]} "
        f"{_num(e[j])} (allowed difference "
        f"{_num(float(allowed[j]))}: rtol {tolerances.rtol:g}, atol {tolerances.atol:g}"
        f"{f' of the largest |{names[1].split()[-1]}|' if tolerances.atol_scaled else ''})\n"
        f"Mismatched elements: {bad.size} / {g.size}\n{table}{_both(got, expected, names)}",
        input=at_input,
        mismatched=int(bad.size),
        size=int(g.size),
    )


def _where(layout: Outputs | None, out: np.ndarray, flat: int) -> str:
    """The element at ``flat`` of the (joined) output: its index, and its output's
    number for an op with several outputs."""
    if layout is None:
        return str(tuple(int(i) for i in np.unravel_index(flat, out.shape)))
    for k, size in zip(layout.indices, layout.sizes()):
        if flat < size:
            index = np.unravel_index(flat, layout.shapes[k] or ())
            return f"output {k} {tuple(int(i) for i in index)}"
        flat -= size
    return str(flat)


def _both(got: np.ndarray, expected: np.ndarray, names: tuple[str, str]) -> str:
    """Both arrays in full, when small enough to read."""
    if got.size > SHOWN_IN_FULL:
        return ""
    show = functools.partial(np.array2string, precision=6, separator=", ")
    width = max(len(n) for n in names)
    return f"\n{names[0]:<{width}}: {show(got)}\n{names[1]:<{width}}: {show(expected)}"


def _num(x: float) -> str:
    return f"{x:.6g}"
