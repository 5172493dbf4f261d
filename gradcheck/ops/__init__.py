"""The engine's differentiable operations, one module per family as in NumPy's
documentation. Every public function of a family (its ``__all__``) is exported here and
from ``gradcheck``; ``gradcheck.linalg`` and ``gradcheck.nnet`` hold the rest."""

from gradcheck.ops import (
    arithmetic,
    creation,
    exp_log,
    hyperbolic,
    indexing,
    joining,
    linalg,
    misc,
    reductions,
    shape,
    sorting,
    special,
    tiling,
    trigonometric,
)
from gradcheck.ops.arithmetic import *
from gradcheck.ops.creation import *
from gradcheck.ops.exp_log import *
from gradcheck.ops.hyperbolic import *
from gradcheck.ops.indexing import *
from gradcheck.ops.joining import *
from gradcheck.ops.linalg import *
from gradcheck.ops.misc import *
from gradcheck.ops.reductions import *
from gradcheck.ops.shape import *
from gradcheck.ops.sorting import *
from gradcheck.ops.special import *
from gradcheck.ops.tiling import *
from gradcheck.ops.trigonometric import *

FAMILIES = (
    arithmetic,
    exp_log,
    trigonometric,
    hyperbolic,
    misc,
    reductions,
    linalg,
    shape,
    joining,
    tiling,
    indexing,
    sorting,
    special,
    creation,
)

__all__ = sorted({name for family in FAMILIES for name in family.__all__})
