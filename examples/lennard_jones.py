"""The soft-core Lennard-Jones energy of a set of particles, with hand-written forces.

For particles at ``positions`` (shape ``(n, 3)``), each pair at distance ``r`` adds
``4 epsilon (1/s**2 - 1/s)`` with ``s = (r/sigma)**6 + alpha``. The soft core
(``alpha > 0``, used in free-energy simulations) keeps the energy finite when two
particles meet; with ``alpha = 0`` this is the usual 12-6 potential. The gradient of
the energy is minus the forces, written out pair by pair the way a simulation code
does.

Check it::

    gradcheck verify examples/lennard_jones.py:LennardJones
"""

from __future__ import annotations

import numpy as np

import gradcheck
from gradcheck import Operation


@gradcheck.describe(shapes=["5,3"], domain=(-2.0, 2.0))
class LennardJones(Operation):
    def __call__(self, positions, epsilon=1.0, sigma=1.0, alpha=0.5):
        self.variables = (positions,)
        x = positions.data
        i, j = np.triu_indices(len(x), k=1)  # each pair once
        self.pairs = (i, j)
        self.delta = x[i] - x[j]
        r2 = np.sum(self.delta**2, axis=-1)
        self.r2, self.params = r2, (epsilon, sigma, alpha)
        s = (r2 / sigma**2) ** 3 + alpha
        return np.sum(4 * epsilon * (1 / s**2 - 1 / s))

    def backward_var(self, grad, index, **kwargs):
        epsilon, sigma, alpha = self.params
        i, j = self.pairs
        s = (self.r2 / sigma**2) ** 3 + alpha
        de_ds = 4 * epsilon * (-2 / s**3 + 1 / s**2)
        ds_dr2 = 3 * self.r2**2 / sigma**6
        # d r2 / d x_i = 2 (x_i - x_j) = -d r2 / d x_j
        pair_force = (grad * de_ds * ds_dr2 * 2)[:, None] * self.delta
        g = np.zeros_like(self.variables[0].data)
        np.add.at(g, i, pair_force)
        np.add.at(g, j, -pair_force)
        return g
