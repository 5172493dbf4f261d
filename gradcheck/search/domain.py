"""Shapes outside an op's domain, learnt by the search.

Many real ops take only some shapes: a loss wants a matrix of logits, a layer norm
three dimensions, a pooling layer a batch of images; they raise (a ValueError, a
RuntimeError, an IndexError, an AssertionError...) at the 0-d input Hypothesis starts
from. A forward that raises at a drawn shape *whatever the values* (the example's,
:data:`RETRIES` other draws of values at the same shapes, and a value it ran at before
in every element) says that the shapes
are outside its domain: the example is skipped, like a point where the op is not
differentiable, and the shapes and the error are reported with a hint (give the
shapes, or the fewest dimensions). A forward that raises at some values only is a
failure, as before: the op breaks where it should run; so is one that runs at no
shape at all (the first such example is the failure, with the shapes in the note).

Broadcast shapes (inputs of different shapes, which a search draws for a share of the
examples of an op of several inputs) are learnt the same way, and as a whole: an op
that rejects :data:`BROADCAST_REFUSALS` of them and runs at none takes equal shapes
only (``refuses_broadcast``); the search then draws no more, and says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gradcheck.checking.result import Failure
from gradcheck.checking.vocabulary import Kind, Skip, Verdict
from gradcheck.errors import TargetRaised

__all__ = ["ShapeDomain", "RETRIES"]

#: Other draws of values at the shapes of an example whose forward raised.
RETRIES = 2
#: Shapes listed in a note (the rest are counted).
LISTED = 4
#: Distinct broadcast shapes (inputs of different shapes) the op must reject, and none
#: run, before a search takes it that the op wants equal shapes and draws no more.
BROADCAST_REFUSALS = 2


Shapes = tuple[tuple[int, ...], ...]


class ShapeDomain:
    """What one search has learnt about the shapes the op runs at."""

    def __init__(self, tgt: Any, options: Mapping[str, Any], constants: Sequence[int]) -> None:
        self.tgt, self.options, self.constants = tgt, options, list(constants)
        #: shapes the op raised at, whatever the values, and the error
        self.rejected: dict[Shapes, str] = {}
        #: the check of the first example whose shapes were rejected
        self.first: Any = None
        self._runs: set[Shapes] = set()
        #: a value of each input at which the op ran (the first element of the first
        #: example it ran at with no empty input), or None before one
        self._ran_at: list[np.ndarray] | None = None
        #: whether the op ran at some inputs of different shapes
        self.broadcast_ran = False
        #: the user gave the shapes: inputs of different shapes are theirs (a kernel
        #: beside an image), not broadcast shapes drawn, which the op may refuse
        self.given = options.get("shapes") is not None

    def outside(self, arrays: Sequence[np.ndarray], result: Any) -> bool:
        """True when ``result`` failed because the forward raised at the shapes of
        ``arrays`` and raises there at other values too: shapes outside the domain.
        Called with every example's result (it learns where the op runs too)."""
        failure = result.failure
        key = tuple(np.shape(a) for a in arrays)
        if failure is None or failure.kind != Kind.FORWARD_ERROR:
            self._ran(key, arrays)
            return False
        if "perturbed" in failure.message.split(" raised ")[0]:
            return False  # it ran at the example, then not a step away: values
        if key in self.rejected:
            return True
        if key in self._runs:
            return False
        for values in self._attempts(arrays):
            try:
                self._apply(values)
            except TargetRaised:
                continue
            self._ran(key)
            return False
        self.rejected[key] = failure.exception or failure.message.splitlines()[0]
        if self.first is None:
            self.first = result
        return True

    def _apply(self, values: list[np.ndarray]) -> None:
        """The op's forward at ``values``, as the check runs it: complex inputs as
        their real and imaginary parts, through the target of the complex op."""
        tgt, constants = self.tgt, self.constants
        if any(v.dtype.kind == "c" for v in values):
            from gradcheck.checking.adapters.variants import Variant
            from gradcheck.checking.check_inputs import _complex_as_real

            tgt, values, const, _ = _complex_as_real(tgt, values, set(constants), Variant())
            constants = sorted(const)
        with np.errstate(all="ignore"):  # (a log at 0 runs: -inf, no warning)
            tgt.apply(values, self.options.get("kwargs"), constants=constants)

    def raises_at_shapes(self, arrays: Sequence[np.ndarray], result: Any) -> bool:
        """True when ``result`` was skipped for a domain error (a LinAlgError...) that the
        forward raises at the shapes of ``arrays`` whatever the values: the shapes are
        outside the op's domain, not the values (NumPy's inverse of a matrix that is
        not square raises LinAlgError too), and are learnt as :meth:`outside` learns
        them."""
        if result.note != Skip.DOMAIN_ERROR:
            return False
        key = tuple(np.shape(a) for a in arrays)
        if key in self.rejected:
            return True
        if key in self._runs:
            return False
        raised: BaseException | None = None
        for values in self._attempts(arrays):
            try:
                self._apply(values)
            except TargetRaised as exc:
                raised = exc.exception
                continue
            self._ran(key)
            return False
        text = f"{type(raised).__name__}: {raised}"
        self.rejected[key] = text
        if self.first is None:  # (reported should the op run at no shape)
            failure = Failure(Kind.FORWARD_ERROR, f"the forward raised {text}", exception=text)
            self.first = replace(result, verdict=Verdict.FAILED, failure=failure, note="")
        return True

    def skipped(self, arrays: Sequence[np.ndarray], result: Any) -> None:
        """Learn from an example skipped after its forward ran (at a kink, with an
        output that is not finite, with nothing to compare) that the op runs at its
        shapes and values (a log at 0, whose output is -inf, runs there)."""
        if result.note not in (Skip.DOMAIN_ERROR, Skip.SHAPE) and result.failure is None:
            self._ran(tuple(np.shape(a) for a in arrays), arrays)

    def _ran(self, key: Shapes, arrays: Sequence[np.ndarray] = ()) -> None:
        self._runs.add(key)
        self.broadcast_ran = self.broadcast_ran or self.broadcast(key)
        if self._ran_at is None and arrays and all(np.size(a) for a in arrays):
            self._ran_at = [np.asarray(a).reshape(-1)[:1].copy() for a in arrays]

    def _attempts(self, arrays: Sequence[np.ndarray]) -> list[list[np.ndarray]]:
        """The values the forward is tried at again, at the shapes of ``arrays``:
        :data:`RETRIES` draws inside the declared domain, then each input filled with
        a value the op ran at. An op that raises at some values whatever the shape
        (a log that raises at negative numbers, checked over -1..1) runs at the
        latter: its error is the values', a failure, not a shape to skip (four
        elements of -1..1 are all positive once in 16 draws, and the shape read as
        outside the op's domain)."""
        attempts = [self._values(arrays, attempt) for attempt in range(RETRIES)]
        if self._ran_at is not None and len(self._ran_at) == len(arrays):
            attempts.append(
                [
                    np.full(np.shape(a), v[0], dtype=v.dtype)
                    if np.asarray(a).dtype == v.dtype
                    else r
                    for a, v, r in zip(arrays, self._ran_at, attempts[0])
                ]
            )
        return attempts

    def broadcast(self, key: Shapes) -> bool:
        """Whether ``key`` is a draw of broadcast shapes: inputs of different shapes
        where the user gave none (given shapes that differ are the op's own)."""
        return not self.given and _broadcast(key)

    @property
    def refuses_broadcast(self) -> bool:
        """The op raised at :data:`BROADCAST_REFUSALS` broadcast shapes and ran at
        none: it takes inputs of equal shapes only (the search draws no more)."""
        refused = sum(self.broadcast(key) for key in self.rejected)
        return not self.broadcast_ran and refused >= BROADCAST_REFUSALS

    def broadcast_error(self) -> str:
        """The op's error at the first broadcast shapes it rejected, and where."""
        key, error = next((k, e) for k, e in self.rejected.items() if self.broadcast(k))
        return f"{error[:160]} at {_shapes(key)}"

    @property
    def nowhere(self) -> bool:
        """The op ran at no shape drawn: its forward is broken (or every input is of
        the wrong kind), not a few shapes outside its domain."""
        return bool(self.rejected) and not self._runs

    def _values(self, arrays: Sequence[np.ndarray], attempt: int) -> list[np.ndarray]:
        """Other values at the same shapes and dtypes, inside the declared domain."""
        rng = np.random.default_rng(attempt)
        integers = self.options.get("integers") or {}
        out = []
        for i, a in enumerate(arrays):
            if a.dtype.kind == "b":
                out.append(rng.random(a.shape) < 0.5)
            elif a.dtype.kind in "iu":
                lo, hi = integers.get(i, (0, 2))
                out.append(rng.integers(lo, hi, size=a.shape).astype(a.dtype))
            else:
                lo, hi = _inside(self._domain(i))
                out.append(rng.uniform(lo, hi, size=a.shape).astype(a.dtype))
        return out

    def _domain(self, i: int) -> tuple[float, float]:
        domain = self.options.get("domain")
        if domain is None:
            return (-math.inf, math.inf)
        return domain[i] if isinstance(domain[0], tuple) else domain

    def _parameter_hint(self, errors: Iterable[str]) -> str:
        """Where an error quotes the name of an input after the first (``argument
        'dim' must be int, not Tensor``): that input is likely a parameter that is
        not a tensor, drawn as one for want of a value, and how to give it one."""
        names = getattr(getattr(self.tgt, "signature", None), "input_names", ())[1:]
        text = " ".join(errors)
        quoted = [n for n in names if f"'{n}'" in text or f'"{n}"' in text]
        if not quoted:
            return ""
        given = ", ".join(f'"{n}": ...' for n in quoted)
        return (
            f"; {' and '.join(quoted)}, named in the error, may be a parameter and not a "
            f"tensor: give its value with --kwargs '{{{given}}}' (describe(kwargs=...))"
        )

    def note(self) -> str:
        """What was skipped and what to do; empty when nothing was."""
        rejected = {
            k: e
            for k, e in self.rejected.items()
            if not (self.broadcast(k) and self.refuses_broadcast)
        }  # (an op that wants equal shapes: said in VerifyResult.shapes)
        if not rejected:
            return ""
        by_error: dict[str, list[Shapes]] = {}
        for shapes, error in rejected.items():
            by_error.setdefault(error[:160], []).append(shapes)
        parts = []
        for error, keys in list(by_error.items())[:LISTED]:
            listed = "; ".join(_shapes(k) for k in keys[:LISTED])
            more = f" and {len(keys) - LISTED} more" if len(keys) > LISTED else ""
            parts.append(f"{error} at {listed}{more}")
        if len(by_error) > LISTED:
            parts.append(f"{len(by_error) - LISTED} other errors")
        hint = (
            "give the shapes it takes (--shape, describe(shapes=...)), and labels or "
            "masks as such (--integers, --boolean)"
        ) + self._parameter_hint(rejected.values())
        ran = [min(len(s) for s in key) for key in self._runs if key]
        if ran and all(max(len(s) for s in key) < min(ran) for key in rejected):
            hint += (
                f", or the fewest dimensions (--min-dims {min(ran)}, describe(min_dims={min(ran)}))"
            )
        n = len(rejected)
        what = (
            f"at every value of every shape drawn ({n})"
            if self.nowhere
            else f"at every value of {n} drawn shape{'s' * (n != 1)}, skipped as outside the "
            f"op's domain"
        )
        return f"the forward raised {what}: {'; '.join(parts)}; {hint}"


def _inside(domain: tuple[float, float]) -> tuple[float, float]:
    """A bounded interval well inside ``domain``, where an op's values are plausible."""
    lo, hi = domain
    a = lo if math.isfinite(lo) else (hi - 2.0 if math.isfinite(hi) else -1.0)
    b = hi if math.isfinite(hi) else a + 2.0
    return a + 0.1 * (b - a), b - 0.1 * (b - a)


def _broadcast(key: Shapes) -> bool:
    """Whether the inputs' shapes differ."""
    return len(set(key)) > 1


def _shapes(key: Shapes) -> str:
    """``"(3,) and (2, 4)"``: the shape of each input."""
    return " and ".join(str(tuple(shape)) for shape in key)
