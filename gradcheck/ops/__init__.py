"""The engine's differentiable operations, one module per family as in NumPy's
documentation. Every public function here is also exported from ``gradcheck``."""

from gradcheck.ops.arithmetic import (
    add,
    divide,
    multiply,
    negative,
    power,
    square,
    subtract,
    true_divide,
)
from gradcheck.ops.exp_log import exp, log
from gradcheck.ops.hyperbolic import tanh
from gradcheck.ops.indexing import get_item
from gradcheck.ops.linalg import matmul
from gradcheck.ops.misc import abs, absolute, sqrt
from gradcheck.ops.reductions import mean, sum
from gradcheck.ops.shape import reshape, transpose
from gradcheck.ops.trigonometric import cos, sin

__all__ = [
    "abs",
    "absolute",
    "add",
    "cos",
    "divide",
    "exp",
    "get_item",
    "log",
    "matmul",
    "mean",
    "multiply",
    "negative",
    "power",
    "reshape",
    "sin",
    "sqrt",
    "square",
    "subtract",
    "sum",
    "tanh",
    "transpose",
    "true_divide",
]

# --- elementwise, reductions, creation (issue 6, items 1, 2, 7) -------------------------
# Each family module lists its public functions in its __all__; the names above that
# they re-export are not repeated.
from gradcheck.ops import arithmetic as _arithmetic
from gradcheck.ops import creation as _creation
from gradcheck.ops import exp_log as _exp_log
from gradcheck.ops import hyperbolic as _hyperbolic
from gradcheck.ops import misc as _misc
from gradcheck.ops import reductions as _reductions
from gradcheck.ops import trigonometric as _trigonometric
from gradcheck.ops.arithmetic import *  # noqa: F403
from gradcheck.ops.creation import *  # noqa: F403
from gradcheck.ops.exp_log import *  # noqa: F403
from gradcheck.ops.hyperbolic import *  # noqa: F403
from gradcheck.ops.misc import *  # noqa: F403
from gradcheck.ops.reductions import *  # noqa: F403
from gradcheck.ops.trigonometric import *  # noqa: F403

for _family in (
    _arithmetic,
    _exp_log,
    _trigonometric,
    _hyperbolic,
    _misc,
    _reductions,
    _creation,
):
    __all__ += [name for name in _family.__all__ if name not in __all__]
del _family
# --- end of elementwise, reductions, creation -------------------------------------------
