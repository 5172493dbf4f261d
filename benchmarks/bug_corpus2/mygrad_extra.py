"""Held-out, second part: a gradient bug of a kind reported against MyGrad
``Operation``s written by users, beside its fix (``Bug<Name>`` and ``Fix<Name>``)."""

from __future__ import annotations

from mygrad.operation_base import Operation

import gradcheck


# 1. The Gram matrix x x^T whose backward is 2 g x: right only when the upstream
#    gradient is symmetric (it is for a loss of the Gram matrix's entries written
#    symmetrically, not in general); the gradient is (g + g^T) x.
def _gram(symmetrises: bool):
    class Gram(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return x.data @ x.data.T

        def backward_var(self, grad, index, **kwargs):
            (x,) = self.variables
            if symmetrises:
                return (grad + grad.T) @ x.data
            return 2 * grad @ x.data

    return gradcheck.describe(shapes=["n,k"])(Gram)


BugGramSymmetric = _gram(symmetrises=False)
FixGramSymmetric = _gram(symmetrises=True)
