"""Two false alarms the sixth user round (issue 34) found in correct float64 ops, kept
here as strict xfails with their reproducers until the numerics say otherwise (they
are the numerics' to fix: `gradcheck/checking/level_scores.py` and the rounding
floor, not the report's). Each is reached by `gradcheck verify ... --order 2`.

1. An op of two outputs, ``(sin x, cos x)``, at a tiny x with ``v`` zero on the first
   output: the numeric gradient of ``cos`` is exactly 0 (``cos(x ± h)`` round to 1),
   the analytic ``-sin x = -x`` is right, and the floor taken is of the size of
   ``sin x`` (4.85e-268 at x = 2.09e-253), not of what ``cos`` near 1 resolves. With
   one output, or with ``v`` nonzero on both, it passes. (`--order 2` of the user's
   ``GoodSinCos``: its order-1 check, an output alone.)
2. torch's own ``softmax(x / 0.5, dim=0)`` at a saturated column (x = 100 and 0), order
   2: the elements of the order-2 gradient are all about 1e-87; torch's double
   backward loses some of them to ``y0·(1 - y0) = 0`` (analytic 0 against numeric
   1.4e-87), a rounding of the analytic that order 1 accepts at the same point (it
   passes), order 2 does not; and along ``v`` the numeric loses a term (``v0 - s``
   rounds to exactly 0) that the analytic keeps (the user's ``GoodTempSoftmax``:
   analytic -3.10e-87, right by hand, numeric 9.0e-88).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradcheck  # noqa: E402


def _sin_cos(x):
    return torch.sin(x), torch.cos(x)


def _softmax_t(x):
    return torch.softmax(x / 0.5, dim=0)


@pytest.mark.xfail(strict=True, reason="a false alarm of the numerics (see the docstring, 1)")
def test_cos_of_a_tiny_x_beside_a_sin_given_no_upstream_gradient():
    x = np.array(2.0856198492102104e-253)
    assert gradcheck.check(_sin_cos, x, upstream=np.array([0.0, 1.0])).passed


@pytest.mark.xfail(strict=True, reason="a false alarm of the numerics (see the docstring, 2)")
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_torch_softmax_at_a_saturated_column_at_order_2(seed):
    x = np.array([[[100.0], [100.0]], [[0.0], [0.0]]])
    assert gradcheck.check(_softmax_t, x, seed=seed).passed  # (order 1 passes)
    assert gradcheck.check(_softmax_t, x, order=2, seed=seed).passed
