"""The outputs of fast mode's screened directions, kept for the refinement that may
follow along the same direction (:class:`KeptMoves`).

Fast mode screens a direction at the steps h0 and 4·h0 (:meth:`Evaluator.directional
<gradcheck.checking.numerical.Evaluator.directional>`), two of the levels that
:meth:`~gradcheck.checking.numerical.Evaluator.refine` computes where the screen does
not settle it; its bisection screens two halves, then refines the first, four rows
back. The outputs at those points are the same numbers (the same inputs to the bit),
so the refinement takes them from here instead of two forward calls a level.
"""

from __future__ import annotations

import numpy as np

#: Rows kept at most; fewer where four would hold more than :data:`MAX_SIZE` floats,
#: but at least the two of one screened direction (as many floats as a refinement's
#: own buffers of two levels).
ROWS = 4
MAX_SIZE = 1 << 24


class KeptMoves:
    """f at x + h·d and x - h·d for the last few rows (input, h, d) screened."""

    def __init__(self) -> None:
        #: (input, h, direction, slot) per kept row, oldest first; its outputs in
        #: ``outputs[slot]`` (plus, then minus, flat).
        self.rows: list[tuple[int, float, np.ndarray, int]] = []
        self.outputs: np.ndarray | None = None

    def keep(
        self,
        i: int,
        h: float,
        directions: np.ndarray,
        plus: np.ndarray,
        minus: np.ndarray,
        ok: np.ndarray,
    ) -> None:
        """Keep the outputs at x ± h·d (``plus``, ``minus``: one flat row each) of each
        row d of ``directions`` (moves of input ``i``) whose outputs had the right shape
        (``ok``), the oldest kept row making way."""
        if self.outputs is None:
            size = plus.shape[-1]
            slots = max(2, min(ROWS, MAX_SIZE // max(2 * size, 1)))
            self.outputs = np.empty((slots, 2, size))
        slots = len(self.outputs)
        for r in np.flatnonzero(ok):
            if len(self.rows) == slots:
                self.rows.pop(0)  # the oldest row's slot is free now
            taken = {slot for *_, slot in self.rows}
            slot = next(k for k in range(slots) if k not in taken)
            self.outputs[slot, 0] = plus[r]
            self.outputs[slot, 1] = minus[r]
            self.rows.append((i, h, np.array(directions[r], dtype=np.float64), slot))

    def find(self, i: int, h: float, along: np.ndarray) -> np.ndarray | None:
        """The outputs at x + h·along and x - h·along (two flat rows) where a kept row
        is the same input, step and direction, else None."""
        for j, k, direction, slot in reversed(self.rows):
            if j == i and k == h and np.array_equal(direction, along):
                assert self.outputs is not None
                return self.outputs[slot]
        return None
