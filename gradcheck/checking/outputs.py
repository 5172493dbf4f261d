"""Ops with several outputs, as the one output the checker sees.

An op may return a tuple or list: values and indices (``sort``), a result and a
count (sparsemax's support size), a result and ``None``. The checker checks one
output: :class:`Outputs` joins the floating-point ones, raveled, into one flat array,
so that a random upstream gradient on it is a random upstream gradient *per
differentiable output*, and the numerics compare the gradient of
``sum_k <v_k, f_k(x)>``; integer, boolean and ``None`` outputs are not differentiable
and are left out (they get no upstream gradient). :meth:`Outputs.split` cuts an
upstream gradient back into one per output for the op's backward, and a failure is
traced to the output it comes from by checking with the upstream gradient of one
output at a time (:mod:`gradcheck.checking.checker`). An op with one output does not
go through here at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Outputs"]


@dataclass(frozen=True)
class Outputs:
    """The layout of an op's outputs in the flat array the checker sees.

    Attributes
    ----------
    shapes : tuple
        Each output's shape (None for an output that is not an array).
    dtypes : tuple
        Each output's dtype (None for one that is not an array).
    differentiable : tuple of bool
        Whether each output is in the flat array: floating-point outputs (those a
        framework marked non-differentiable excepted).
    complex_of : tuple of bool, optional
        Where these are the real outputs of an op with complex outputs (each complex
        output seen as its real and imaginary parts, :mod:`.adapters.variants`):
        whether each of the op's own outputs was complex, so that a label names the
        op's output and the part, not a count of parts.
    """

    shapes: tuple[tuple[int, ...] | None, ...]
    dtypes: tuple[np.dtype | None, ...]
    differentiable: tuple[bool, ...]
    complex_of: tuple[bool, ...] | None = None

    @classmethod
    def of(
        cls,
        values: Sequence[Any],
        differentiable: Sequence[bool] | None = None,
        complex_of: Sequence[bool] | None = None,
    ) -> Outputs:
        """The layout of ``values`` (arrays, or anything with ``shape`` and ``dtype``;
        ``None``); ``differentiable`` narrows which floating outputs count;
        ``complex_of`` (which of the op's outputs were complex, where ``values`` are
        their parts) names them in labels."""
        shapes, dtypes = [], []
        for value in values:
            dtype = getattr(value, "dtype", None)
            shapes.append(None if dtype is None else tuple(value.shape))
            dtypes.append(None if dtype is None else np.dtype(dtype))
        wanted = [dt is not None and dt.kind == "f" for dt in dtypes]
        if differentiable is not None:
            wanted = [w and bool(d) for w, d in zip(wanted, differentiable)]
        joined = None
        if complex_of is not None and len(values) == len(complex_of) + sum(map(bool, complex_of)):
            joined = tuple(bool(c) for c in complex_of)
        return cls(tuple(shapes), tuple(dtypes), tuple(wanted), joined)

    @property
    def indices(self) -> list[int]:
        """The differentiable outputs."""
        return [k for k, d in enumerate(self.differentiable) if d]

    @property
    def dtype(self) -> np.dtype | None:
        """The dtype of the flat array (None when no output is differentiable)."""
        dts = [self.dtypes[k] for k in self.indices]
        return np.result_type(*dts) if dts else None

    def pieces(self) -> list[tuple[str, tuple[int, ...]]]:
        """Each differentiable output's label and shape, in the order of the joined
        array (an upstream gradient's pieces); empty for one output alone."""
        if len(self.indices) < 2:
            return []
        return [(self.label(k), tuple(self.shapes[k] or ())) for k in self.indices]

    def sizes(self) -> list[int]:
        return [int(np.prod(self.shapes[k])) for k in self.indices]  # type: ignore[arg-type]

    def flatten(self, values: Sequence[Any]) -> np.ndarray:
        """The differentiable outputs of ``values`` (arrays), raveled and joined."""
        parts = [np.ravel(np.asarray(values[k])) for k in self.indices]
        if not parts:
            return np.zeros(0)
        return np.concatenate(parts).astype(self.dtype, copy=False)

    def split(self, flat: np.ndarray, *, copy: bool = True) -> list[np.ndarray | None]:
        """``flat`` (an upstream gradient) cut into one array per output, each of its
        output's shape and dtype; None for the outputs that are not differentiable.
        With ``copy=False``, a piece of ``flat``'s dtype is a view of it (a change
        made in place to the piece shows in ``flat``)."""
        out: list[np.ndarray | None] = [None] * len(self.shapes)
        start = 0
        for k, size in zip(self.indices, self.sizes()):
            piece = np.asarray(flat[start : start + size]).reshape(self.shapes[k])
            out[k] = piece.astype(self.dtypes[k], copy=copy)
            start += size
        return out

    def only(self, k: int, flat: np.ndarray) -> np.ndarray:
        """``flat`` with every element outside output ``k`` set to zero."""
        masked = np.zeros_like(flat)
        start = 0
        for j, size in zip(self.indices, self.sizes()):
            if j == k:
                masked[start : start + size] = flat[start : start + size]
            start += size
        return masked

    def refit(self, flat: np.ndarray, other: Outputs) -> np.ndarray:
        """``flat`` (an upstream gradient of this layout) as the upstream gradient of
        the layout ``other`` of a run of the same op in which other outputs take part:
        each output's piece where it takes part in both, zeros where only in
        ``other``. A run with an input made a constant, say, where an output that
        depends on that input alone is no longer differentiable (torch's
        ``broadcast_tensors``, ``meshgrid``: output k of input k).

        >>> a = Outputs(((2,), (3,)), (np.dtype("f8"),) * 2, (True, True))
        >>> b = Outputs(((2,), (3,)), (np.dtype("f8"),) * 2, (False, True))
        >>> a.refit(np.arange(5.0), b)
        array([2., 3., 4.])
        """
        if other.indices == self.indices and other.shapes == self.shapes:
            return flat
        starts = np.cumsum([0, *self.sizes()])
        at = {k: (int(a), int(b)) for k, a, b in zip(self.indices, starts[:-1], starts[1:])}
        parts = []
        for k, size in zip(other.indices, other.sizes()):
            same = k in at and self.shapes[k] == other.shapes[k]
            parts.append(flat[at[k][0] : at[k][1]] if same else np.zeros(size, dtype=flat.dtype))
        return np.concatenate(parts) if parts else np.zeros(0, dtype=flat.dtype)

    def kind(self, k: int) -> str:
        """``"float64[4, 2]"``, or ``"None"`` for an output that is not an array."""
        dt, shape = self.dtypes[k], self.shapes[k]
        return "None" if dt is None else f"{dt}[{', '.join(map(str, shape or ()))}]"

    def label(self, k: int) -> str:
        """``"output 1 of 3 (float64[4, 2])"``; a part of a complex output is named as
        such (``"the imaginary part of the output (complex128[2])"``).

        >>> Outputs(((2,), (2,)), (np.dtype("f8"),) * 2, (True, True), (True,)).label(1)
        'the imaginary part of the output (complex128[2])'
        """
        if self.complex_of is None:
            return f"output {k} of {len(self.shapes)} ({self.kind(k)})"
        at, part, which = 0, "", 0
        for j, c in enumerate(self.complex_of):
            width = 2 if c else 1
            if k < at + width:
                part = ("the real part of ", "the imaginary part of ")[k - at] if c else ""
                which = j
                break
            at += width
        n = len(self.complex_of)
        kind = self.kind(k)
        dt = self.dtypes[k]
        if part and dt is not None:
            kind = kind.replace(str(dt), str(np.result_type(dt, np.complex64)), 1)
        named = "the output" if n == 1 else f"output {which} of {n}"
        return f"{part}{named} ({kind})"
