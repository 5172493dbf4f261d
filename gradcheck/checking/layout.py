"""Upstream gradients and inputs in another memory layout than C order, for a share
of checks.

A backward that assumes its upstream gradient is contiguous (torch's ``grad.view(-1)``,
strides read as if C-ordered, a NumPy ``ravel(order="K")``) is right for every
contiguous upstream gradient and wrong, or raising, for the others, which autograd
hands it in real use (the gradient of a transpose, of an expanded tensor). So the
checker hands the backward a non-contiguous upstream gradient, with the same values,
in a share of its checks (:func:`strided_for`: those of odd seeds, so that a failure
replays with its seed): every backward of such a check, the repeat, the scaled and
the constant-input runs alike, so that an op wrong only there fails as a mismatch (or
the error it raises), not as a nondeterministic one.

The checker sets :data:`STRIDED` around a check; the engine's targets get a
Fortran-ordered upstream gradient (:func:`noncontiguous`: NumPy, and the engine's own
copy of the upstream gradient, keep that order), a torch target a transposed or
strided copy of its upstream gradient tensors (:mod:`gradcheck.checking.adapters._torch`).

**Inputs.** A forward or backward that assumes its *input* is contiguous (torch's
``x.view(-1)``, which raises on a transposed tensor; ``torch.as_strided`` or
``x.numpy().ravel(order="K")`` reading the storage in C order) is as wrong for the
input autograd hands it after a transpose or a slice. The same share of checks, once
the check passed, runs the op once more on inputs that are non-contiguous views of
the same values (:func:`noncontiguous_inputs` around the run, which the targets read:
gradcheck's engine gets each input of two axes longer than 1 in Fortran order, which
its tensors keep; a torch op a transposed view, or every other element of a buffer
twice as long for an input with one long axis), and the output and every gradient
must be the ones of the contiguous inputs (``noncontiguous_input``, naming the
input).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "STRIDED",
    "INPUT_LAYOUTS",
    "InputLayouts",
    "noncontiguous",
    "noncontiguous_inputs",
    "strided",
    "strided_for",
]

#: Whether the backwards run now get non-contiguous upstream gradients.
STRIDED: ContextVar[bool] = ContextVar("gradcheck_strided_upstream", default=False)


def strided_for(seed: int) -> bool:
    """Whether the check of ``seed`` hands its backwards non-contiguous upstream
    gradients: half of the checks, those of odd seeds."""
    return seed % 2 == 1


@contextlib.contextmanager
def strided(on: bool) -> Iterator[None]:
    """Non-contiguous upstream gradients (``on``) for the backwards run within."""
    token = STRIDED.set(on)
    try:
        yield
    finally:
        STRIDED.reset(token)


def noncontiguous(v: np.ndarray) -> np.ndarray:
    """``v``'s values in Fortran order, which is not C-contiguous where two axes are
    longer than 1 (``v`` itself elsewhere: such an array has one layout only).

    >>> noncontiguous(np.arange(6.0).reshape(2, 3)).flags.c_contiguous
    False
    """
    if sum(n > 1 for n in np.shape(v)) < 2:
        return v
    return np.asfortranarray(v)


@dataclass
class InputLayouts:
    """The inputs a run hands its op as non-contiguous views (``chosen``, by index),
    and how each one that became one was laid out (``used``: ``"transposed, strides
    (1, 3)"``), which the target that made it records."""

    chosen: frozenset[int]
    used: dict[int, str] = field(default_factory=dict)

    def record(self, i: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> None:
        """Input ``i`` was handed over with ``strides`` (in elements)."""
        long = sorted((d for d, n in enumerate(shape) if n > 1), key=lambda d: strides[d])
        dense, size = True, 1  # (the long axes, fastest first, fill a buffer exactly)
        for d in long:
            dense, size = dense and strides[d] == size, size * shape[d]
        if dense and long == sorted(long, reverse=True):
            return  # (C order after all: one element, or the layout it had)
        how = "transposed" if dense else "a strided view of a buffer twice as long"
        self.used[i] = f"{how}: strides {strides} in elements"


#: The inputs the runs now hand their ops as non-contiguous views (None: none).
INPUT_LAYOUTS: ContextVar[InputLayouts | None] = ContextVar(
    "gradcheck_noncontiguous_inputs", default=None
)


@contextlib.contextmanager
def noncontiguous_inputs(chosen: frozenset[int]) -> Iterator[InputLayouts]:
    """Runs within hand the inputs ``chosen`` to their op as non-contiguous views of
    the same values; the record says which became one, and how."""
    layouts = InputLayouts(chosen)
    token = INPUT_LAYOUTS.set(layouts)
    try:
        yield layouts
    finally:
        INPUT_LAYOUTS.reset(token)
