"""Gather rows of a table (an embedding lookup), and the classic bug in its backward.

``table[index]`` picks rows; an index may repeat (the same word twice in a sentence).
The gradient of a row is then the *sum* of the upstream gradients of every place it
was picked. ``np.add.at`` accumulates repeats; ``g[index] += grad`` silently keeps only
one of them, because a buffered fancy-index assignment writes each row once.

Check them::

    gradcheck verify examples/gather.py:GatherRows        # passes
    gradcheck verify examples/gather.py:GatherRowsBuggy   # fails on row 2 (picked twice)
"""

from __future__ import annotations

import numpy as np

import gradcheck
from gradcheck import Operation

#: Rows picked by the described example; row 2 is picked twice.
INDEX = [0, 2, 2, 4]


@gradcheck.describe(shapes=["5,3"], kwargs={"index": INDEX})
class GatherRows(Operation):
    def __call__(self, table, index=(0,)):
        self.variables = (table,)
        self.index = np.asarray(index, dtype=np.intp)
        return table.data[self.index]

    def backward_var(self, grad, index, **kwargs):
        g = np.zeros_like(self.variables[0].data)
        np.add.at(g, self.index, grad)  # repeated rows accumulate
        return g


@gradcheck.describe(shapes=["5,3"], kwargs={"index": INDEX})
class GatherRowsBuggy(Operation):
    def __call__(self, table, index=(0,)):
        self.variables = (table,)
        self.index = np.asarray(index, dtype=np.intp)
        return table.data[self.index]

    def backward_var(self, grad, index, **kwargs):
        g = np.zeros_like(self.variables[0].data)
        g[self.index] += grad  # BUG: a repeated row keeps only its last gradient
        return g
