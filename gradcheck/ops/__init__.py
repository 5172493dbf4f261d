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

# -- structural ops: linear algebra, shape, joining, tiling, indexing, sorting ---------
from gradcheck.ops.indexing import diagonal, set_item, take
from gradcheck.ops.joining import concatenate, stack
from gradcheck.ops.linalg import dot, einsum, multi_matmul, tensordot, trace
from gradcheck.ops.shape import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_to,
    expand_dims,
    flatten,
    moveaxis,
    ravel,
    squeeze,
    swapaxes,
)
from gradcheck.ops.sorting import sort
from gradcheck.ops.special import logsumexp
from gradcheck.ops.tiling import flip, pad, repeat, roll, tile

__all__ += [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_to",
    "concatenate",
    "diagonal",
    "dot",
    "einsum",
    "expand_dims",
    "flatten",
    "flip",
    "logsumexp",
    "moveaxis",
    "multi_matmul",
    "pad",
    "ravel",
    "repeat",
    "roll",
    "set_item",
    "sort",
    "squeeze",
    "stack",
    "swapaxes",
    "take",
    "tensordot",
    "tile",
    "trace",
]
