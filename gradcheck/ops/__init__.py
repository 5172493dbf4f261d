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
