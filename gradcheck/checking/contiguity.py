"""Non-contiguous inputs: does the op give the same output and gradients when its
inputs are non-contiguous views of the same values?

Autograd hands an op a transposed or sliced tensor whenever the layer before it
transposed or sliced; an op that assumes contiguity is right on the contiguous
inputs a check draws and wrong, or raising, in training. torch's ``.view`` raises on
such a tensor ("view size is not compatible with input tensor's size and stride");
``torch.as_strided``, a pointer walked in C order, ``x.numpy().ravel(order="K")``
read the elements in another order. In the checks that get non-contiguous upstream
gradients (:func:`~gradcheck.checking.layout.strided_for`), where the check passed,
the op runs once more with every input of two elements or more laid out otherwise
(:func:`~gradcheck.checking.layout.noncontiguous_inputs`); its output and each
gradient must be the ones the check confirmed, within the dtype's tolerances, else
the check fails with kind ``noncontiguous_input``, naming the input (the first that,
alone non-contiguous, gives the difference) and how it was laid out. An output that
differs only below the range's floor (:func:`_at_the_range_floor`: what another order
of the same arithmetic may lose to underflow) says nothing of the layout.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcheck.checking.adapters import FRAMEWORKS, framework_of
from gradcheck.checking.layout import noncontiguous_inputs
from gradcheck.checking.result import Failure
from gradcheck.checking.target import Target, user_frame
from gradcheck.checking.vocabulary import Kind
from gradcheck.errors import TargetRaised, exception_text

__all__ = ["candidates", "noncontiguous_disagreement"]

#: ``off(expected, got, like, which)``: the largest difference of ``got`` from
#: ``expected`` (the output, ``which`` None, or input ``which``'s gradient) when beyond
#: the tolerances of ``like``'s dtype, else None.
Off = Callable[[Any, Any, np.ndarray, "int | None"], "float | None"]


def candidates(tgt: Target, xs: Sequence[np.ndarray]) -> frozenset[int]:
    """The inputs that can be handed over non-contiguous: every one of two elements
    or more for an op of a framework whose ops see layouts (torch lays out each
    itself; none for JAX's); for gradcheck's engine, whose tensors keep a Fortran
    order but copy a strided view into a contiguous array, those with two axes
    longer than 1. None for complex inputs, which reach the op joined from their
    parts (the op's inputs are not the checker's, one for one)."""
    if tgt.variant is not None and any(tgt.variant.complex_inputs):
        return frozenset()
    if tgt.foreign:
        # (read when the op was resolved; a Target made by hand may not say)
        name = tgt.framework if tgt.framework is not None else framework_of(tgt.obj)
        if not any(f.name == name and f.layouts for f in FRAMEWORKS):
            return frozenset()
        return frozenset(i for i, x in enumerate(xs) if x.size >= 2)
    return frozenset(i for i, x in enumerate(xs) if sum(n > 1 for n in x.shape) >= 2)


@dataclass(frozen=True)
class _Difference:
    """What differed on non-contiguous inputs: a sentence, and what it is of."""

    said: str
    input: int | None = None
    exception: str | None = None
    frame: str | None = None


def _run(
    tgt: Target,
    xs: Sequence[np.ndarray],
    params: Mapping[str, Any],
    constants: Sequence[int],
    v: np.ndarray,
    outputs: Any,
    chosen: frozenset[int],
    value: np.ndarray,
    grads: Sequence[Any],
    off: Off,
) -> tuple[dict[int, str], _Difference | None]:
    """The op on ``xs`` with the inputs ``chosen`` non-contiguous: how each one that
    became non-contiguous was laid out, and what differs from ``value`` and
    ``grads`` (None: nothing)."""
    with noncontiguous_inputs(chosen) as layouts:
        try:
            out, got = tgt.run(
                [x.copy() for x in xs], params, v.copy(), constants=constants, outputs=outputs
            )
        except TargetRaised as exc:
            text = exception_text(exc.exception)
            frame = user_frame(exc.exception.__traceback__)
            said = f"the {exc.phase} raised {text}" + (f"\n  at {frame}" if frame else "")
            return layouts.used, _Difference(said, exception=text, frame=frame)
    out = np.asarray(out)
    diff = _off(off, value, out, value, None)
    if diff is not None and _at_the_range_floor(value, out):
        # (another order of the same arithmetic lost what lies at the range's floor;
        # a backward that uses the output (a product's y / x) loses it too: the run
        # says nothing of the layout)
        return layouts.used, None
    if diff is not None:
        said = f"the output differs from the one with contiguous inputs (max difference {diff:.3g})"
        return layouts.used, _Difference(said)
    for j, (g, e) in enumerate(zip(got, grads)):
        if j in constants or (g is None and e is None):
            continue
        diff = _off(off, e, g, xs[j], j)
        if diff is not None and not _at_the_range_floor(e, g):
            said = (
                f"the gradient of input {j} differs from the one with contiguous inputs "
                f"(max difference {diff:.3g})"
            )
            return layouts.used, _Difference(said, input=j)
    return layouts.used, None


def _off(off: Off, expected: Any, got: Any, like: np.ndarray, which: int | None) -> float | None:
    """``off``, with ``got`` infinite where it is not finite and ``expected`` is (an op
    that read the gaps of a strided buffer; a nan would compare as no difference):
    ``off`` judges an infinite difference too (an output that rounding alone takes
    out of the op's domain, where the other order did not)."""
    if expected is not None and got is not None and np.shape(expected) == np.shape(got):
        if _same_numbers(np.asarray(expected), np.asarray(got)):
            return None  # (the same numbers: no difference, whatever the tolerances)
        finite = np.isfinite(np.asarray(expected))
        lost = finite & ~np.isfinite(np.asarray(got))
        if np.any(lost):
            got = np.where(lost, np.inf, np.asarray(got, np.float64))
    return off(expected, got, like, which)


def _at_the_range_floor(expected: Any, got: Any) -> bool:
    """Whether ``expected`` and ``got`` (of one shape) differ only at elements where
    both lie below the dtype's smallest normal number over its eps (2**-970 in
    float64): there a value's own rounding, eps of it, is below the smallest normal,
    and an intermediate of its size or smaller (a partial product, a term) rounds on
    the subnormal grid, absolutely, or to 0: another order of the same arithmetic
    may lose it whole. torch's prod of a 96-element vector holding 2.9e-210 and
    2.9e-155 beside 4.0s is 3.34e-308 over a contiguous input (its lanes multiply
    each small factor by 4s first) and 0 over a strided one (2.9e-210·4·2.9e-155
    underflows), its true value 3.38e-308: no move of the inputs' last bits shows
    that, and a right op failed ``noncontiguous_input``."""
    if expected is None or got is None or np.shape(expected) != np.shape(got):
        return False
    a, b = np.asarray(expected), np.asarray(got)
    if a.dtype.kind not in "fc" or b.dtype.kind not in "fc":
        return False
    info = np.finfo(np.result_type(a.dtype, b.dtype))
    floor = float(info.tiny) / float(info.eps)
    with np.errstate(invalid="ignore"):
        differ = ~((a == b) | (np.isnan(a) & np.isnan(b)))
        small = (np.abs(a) < floor) & (np.abs(b) < floor)
    return bool(np.any(differ)) and bool(np.all(small[differ]))


def _same_numbers(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether real arrays ``a`` and ``b`` of one shape hold the same numbers (no NaN:
    a NaN is never the same; a difference of 0 is within every tolerance). The usual
    case, an op that reads a layout as it reads another, told by one comparison."""
    return a.dtype.kind in "biuf" and b.dtype.kind in "biuf" and bool((a == b).all())


def noncontiguous_disagreement(
    tgt: Target,
    xs: Sequence[np.ndarray],
    params: Mapping[str, Any],
    constants: Sequence[int],
    v: np.ndarray,
    outputs: Any,
    value: np.ndarray,
    grads: Sequence[Any],
    off: Off,
) -> tuple[Failure | None, int]:
    """A ``noncontiguous_input`` failure when the op on non-contiguous views of
    ``xs`` raises, or gives another output than ``value`` or other gradients than
    ``grads`` for the same upstream gradient ``v``; None when it does not, or when no
    input could be laid out otherwise. With how many runs (each a forward and a
    backward) it took."""
    chosen = candidates(tgt, xs)
    if not chosen:
        return None, 0
    args = (tgt, xs, params, constants, v, outputs)
    used, found = _run(*args, chosen, value, grads, off)
    runs = 1
    if found is None or not used:
        return None, runs
    # The first input that alone gives a difference; else all of them together.
    blamed = sorted(used)
    for i in sorted(used):
        runs += 1
        alone, again = _run(*args, frozenset({i}), value, grads, off)
        if again is not None and alone:
            blamed, used, found = [i], alone, again
            break
    named = " and ".join(f"input {i} ({used[i]})" for i in blamed)
    one = len(blamed) == 1
    message = (
        f"with {named} a non-contiguous view of the same values (the contiguous "
        f"{'input' if one else 'inputs'} passed), {found.said}\n  the op reads its inputs "
        f"as if contiguous: torch's .view() on an input (use .reshape() or .contiguous()), "
        f"as_strided, data_ptr, or a ravel in the storage's order"
    )
    if one:
        message = f"input {blamed[0]}: {message}"
    failure = Failure(
        Kind.NONCONTIGUOUS_INPUT,
        message,
        input=blamed[0] if one else found.input,
        exception=found.exception,
        frame=found.frame,
    )
    return failure, runs
