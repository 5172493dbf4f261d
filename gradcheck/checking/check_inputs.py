"""What :func:`gradcheck.check` makes of its arguments: the settings validated, the
inputs as arrays (and the op's parameters among them), the variant of the target that
the check runs (complex inputs as their real parts, bfloat16 values in float32 arrays,
a device), and the inputs' names in its messages.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from numbers import Real
from typing import Any

import numpy as np

from gradcheck.checking.adapters.variants import Variant, split_complex
from gradcheck.checking.compiled import BACKENDS
from gradcheck.checking.result import CheckResult, Failure
from gradcheck.checking.target import Target
from gradcheck.checking.trees import paths as leaf_paths
from gradcheck.checking.vocabulary import MAX_ORDER, MODES
from gradcheck.engine.tensor_base import Tensor
from gradcheck.errors import (
    CheckUsageError,
)

#: The dtypes ``check(dtype=...)`` takes besides NumPy's real floats: complex inputs
#: (two real inputs each, see :mod:`gradcheck.checking.adapters.variants`), bfloat16
#: (checked as float32 arrays holding bfloat16 values); torch and JAX targets only.
OTHER_DTYPES: tuple[str, ...] = ("complex128", "complex64", "bfloat16")
#: The derivatives ``check(modes=...)`` compares: reverse mode (the backward) and
#: forward mode (the jvp).
AD_MODES: tuple[str, ...] = ("rev", "fwd")


def _validate(
    order: int,
    modes: Sequence[str],
    nondet_tol: Any,
    mode: str,
    reference: str,
    atol: Any,
    rtol: Any,
) -> None:
    """:func:`check`'s settings, each a :class:`CheckUsageError` naming it when wrong."""
    if isinstance(order, bool) or order not in range(1, MAX_ORDER + 1):
        raise CheckUsageError(f"order must be an integer from 1 to {MAX_ORDER}, not {order!r}")
    if not modes or any(m not in AD_MODES for m in modes):
        raise CheckUsageError(f"modes must be 'rev', 'fwd' or both, not {tuple(modes)!r}")
    # (numbers.Real declares no comparisons in the stubs: the ignores below)
    if not (isinstance(nondet_tol, Real) and 0 <= nondet_tol < math.inf):  # type: ignore[operator]
        raise CheckUsageError(f"nondet_tol must be a finite number >= 0, not {nondet_tol!r}")
    if mode not in MODES:
        raise CheckUsageError(f"mode must be 'auto', 'full' or 'fast', not {mode!r}")
    if reference not in ("float64", "native"):
        raise CheckUsageError(f"reference must be 'float64' or 'native', not {reference!r}")
    for name, tol in (("atol", atol), ("rtol", rtol)):
        if tol is not None and not (isinstance(tol, Real) and tol >= 0 and math.isfinite(tol)):  # type: ignore[operator]
            raise CheckUsageError(f"{name} must be a finite number >= 0, not {tol!r}")


def _backend(compiled: Any) -> str | None:
    """``compiled=`` as a backend name (True: ``aot_eager``), None for eager."""
    if compiled is None or compiled is False:
        return None
    if compiled is True:
        return "aot_eager"
    if isinstance(compiled, str) and compiled in BACKENDS:
        return compiled
    raise CheckUsageError(
        f"compiled must be True, {', '.join(repr(b) for b in BACKENDS)} or None, not {compiled!r}"
    )


def _inputs(
    tgt: Target,
    arrays: Sequence[Any],
    dtype: Any,
    params: Mapping[str, Any],
    constants: Sequence[int],
    given: int | None = None,
) -> tuple[list[np.ndarray], set[int]]:
    """:func:`check`'s inputs as arrays, and the constants (named; not floating:
    integer and boolean arrays, labels, indices and masks, as torch's gradcheck takes
    them; or the target's constant fixed inputs). ``given``: how many inputs the op is
    given (its trees' leaves are ``arrays``)."""
    xs = _as_arrays(tgt, arrays, dtype, params, given)
    bad = [i for i in constants if not 0 <= i < len(xs)]
    if bad:
        raise CheckUsageError(f"constants={tuple(constants)} names inputs that do not exist")
    const = {i for i in constants} | {i for i, a in enumerate(xs) if a.dtype.kind not in "fc"}
    const |= {len(xs) - len(tgt.fixed) + k for k, f in enumerate(tgt.fixed) if f.constant}
    return xs, const


def _merge_params(
    tgt: Target, params: Mapping[str, Any] | None, op_params: Mapping[str, Any]
) -> dict[str, Any]:
    merged = dict(params or {})
    for name, value in op_params.items():
        if not tgt.signature.accepts(name):
            raise CheckUsageError(
                f"check() got {name}=, which is neither a setting of check() nor a "
                f"parameter of {tgt.name} (its parameters: "
                f"{', '.join(tgt.signature.parameters) or 'none'}); "
                f"pass op parameters whose names clash with settings as params={{...}}"
            )
        merged[name] = value
    return merged


def _as_arrays(
    tgt: Target,
    arrays: Sequence[Any],
    dtype: Any,
    params: Mapping[str, Any],
    given: int | None = None,
) -> list[np.ndarray]:
    sig = tgt.signature.given(params)
    n = len(arrays) if given is None else given
    # An op that brings inputs along (a module's parameters) takes them as given
    # after its own inputs, or appends their values.
    fixed = len(tgt.fixed) if n == sig.arity + len(tgt.fixed) and tgt.fixed else 0
    if n - fixed < sig.arity or (n - fixed > sig.arity and not sig.variadic):
        want = f"at least {sig.arity}" if sig.variadic else str(sig.arity)
        brought = f" and its {len(tgt.fixed)} parameters after them" if tgt.fixed else ""
        raise CheckUsageError(
            f"{tgt.name} takes {want} tensor input(s) "
            f"({', '.join(sig.input_names) or 'none named'}){brought}; check() got {n}"
        )
    missing = [name for name in sig.required if name not in params]
    if missing:
        # (not a failure of the op: verify refuses the same before any example)
        example = ", ".join(f"{name}=..." for name in missing)
        raise CheckUsageError(
            f"{tgt.name} needs its parameter{'s' * (len(missing) > 1)} "
            f"{', '.join(map(repr, missing))}: give {example} (or params={{...}})"
        )
    out = []
    for a in arrays:
        x = np.array(a.data if isinstance(a, Tensor) else a)
        if dtype is not None and x.dtype.kind == "f":
            x = x.astype(dtype)
        out.append(x)
    if tgt.fixed and not fixed:
        # in the inputs' floating dtype (the module runs in it)
        like = next((x.dtype for x in out if x.dtype.kind == "f"), None)
        for f in tgt.fixed:
            value = np.array(f.value)
            out.append(
                value.astype(like) if like is not None and value.dtype.kind == "f" else value
            )
    return out


def _as_variant(
    tgt: Target,
    xs: list[np.ndarray],
    const: set[int],
    variant: Variant,
    order: int,
    modes: Sequence[str],
) -> tuple[Target, list[np.ndarray], set[int], Any]:
    """The target checked as ``variant``; complex inputs as their real and imaginary
    parts (``parts`` says how, None without complex inputs)."""
    if any(x.dtype.kind == "c" for x in xs):
        # (at every order and in both modes: the adapters differentiate the parts)
        return _complex_as_real(tgt, xs, const, variant)
    return tgt.derive(variant), xs, const, None


def _bfloat16_values(x: np.ndarray) -> np.ndarray:
    """A float input as float32 holding the nearest bfloat16 values (round to nearest
    even on the top 16 bits)."""
    if x.dtype.kind != "f":
        return x
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(x), out, x.astype(np.float32))


def _complex_as_real(
    tgt: Target, xs: list[np.ndarray], const: set[int], variant: Variant
) -> tuple[Target, list[np.ndarray], set[int], list[tuple[int, str]]]:
    """The target, inputs and constants with each complex input as two real inputs
    (its real and imaginary parts), and for each real input the (input, part) it is."""
    if not tgt.foreign:
        raise CheckUsageError(
            f"{tgt.name} is gradcheck's own op, whose tensors are real: complex inputs "
            f"need a torch or JAX target"
        )
    mask = tuple(x.dtype.kind == "c" for x in xs)
    real: list[np.ndarray] = []
    parts: list[tuple[int, str]] = []
    constants: set[int] = set()
    for i, x in enumerate(xs):
        pieces = list(split_complex(x)) if mask[i] else [x]
        names = ["real part", "imaginary part"] if mask[i] else [""]
        for piece, name in zip(pieces, names):
            if i in const:
                constants.add(len(real))
            parts.append((i, name))
            real.append(piece)
    derived = tgt.derive(replace(variant, complex_inputs=mask))
    return derived, real, constants, parts


def _complex_named(
    result: CheckResult, parts: list[tuple[int, str]], names: Sequence[str] = ()
) -> CheckResult:
    """A failure at a real input of a complex op named as the part of the op's input,
    where the op's input has no name of the user's (``z.imag`` says it already)."""
    failure = result.failure
    if failure is None or failure.input is None or failure.input >= len(parts):
        return result
    i, part = parts[failure.input]
    if part and not (i < len(names) and names[i]):
        note = f"(input {failure.input} is the {part} of complex input {i}) "
        result.failure = replace(failure, message=note + failure.message)
    return result


def _input_names(
    tgt: Target, params: Mapping[str, Any], n: int, order: int, trees: Sequence[Any] = ()
) -> list[str]:
    """The names of a check's ``n`` inputs as the user named them: the forward's
    parameters (a tree input's leaves by their paths, ``params['dense']['w']``), then
    the parameters a module brings along (``linear.weight``), and ``v`` for the
    upstream gradient that order 2 appends (``v_3``, ``v_4`` for those of higher
    orders); "" where not known (the extra inputs of a variadic op)."""
    own = list(tgt.signature.given(params).input_names)
    if trees:
        own = leaf_paths(own, trees)
    brought = [f.name for f in tgt.fixed]
    count = n - len(brought)
    names = own[:count] + [""] * (count - len(own)) + brought
    upstream = ["v", *(f"v_{k}" for k in range(3, order + 1))] if order >= 2 else []
    return [*names, *upstream]


_INPUT_INDEX = re.compile(r"\binput (\d+)\b")


def _named_failure(failure: Failure, names: Sequence[str]) -> Failure:
    """``failure`` with its message's ``input i`` named; the text of an exception the
    op raised, and the frame, stay the op's own words."""
    message = failure.message
    own = [t for t in (failure.exception, failure.frame) if t and t in message]
    cut = min((message.index(t) for t in own), default=len(message))
    return replace(failure, message=_named(message[:cut], names) + message[cut:])


def _named(message: str, names: Sequence[str]) -> str:
    """``message`` with each ``input i`` named as the user named the input."""

    def name(match: re.Match[str]) -> str:
        i = int(match.group(1))
        return f"input {names[i]}" if i < len(names) and names[i] else match.group(0)

    return _INPUT_INDEX.sub(name, message)


def fitted_upstream(upstream: Any, shape: tuple[int, ...] | None) -> np.ndarray:
    """``upstream`` as a float array, of ``shape`` where that is known."""
    v = np.array(upstream.data if isinstance(upstream, Tensor) else upstream, dtype=np.float64)
    if shape is not None and v.shape != tuple(shape):
        raise CheckUsageError(
            f"upstream has the shape {v.shape}, but the output's is {tuple(shape)}; give "
            f"one value per element of the output"
        )
    return v
