"""Upstream gradients in another memory layout than C order, for a share of checks.

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
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

import numpy as np

__all__ = ["STRIDED", "noncontiguous", "strided", "strided_for"]

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
