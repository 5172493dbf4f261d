"""gradcheck: is the gradient of your differentiable operation right?

A reverse-mode autodiff engine on NumPy with MyGrad's API (``import gradcheck as mg``),
and tools that check the gradients an op's ``backward`` produces.
"""

from __future__ import annotations

# subpackages mirroring mygrad.linalg, mygrad.nnet, mygrad.random
from gradcheck import linalg, nnet, random
from gradcheck.check import check
from gradcheck.description import describe
from gradcheck.errors import GradcheckError, InvalidBackprop, InvalidGradient, SkipGradient
from gradcheck.graph import no_autodiff
from gradcheck.numerical import numerical_gradient
from gradcheck.operation import BroadcastableOp, Operation, is_invalid_gradient
from gradcheck.ops import *
from gradcheck.ops import __all__ as _ops_all
from gradcheck.result import CheckResult, Failure
from gradcheck.target import Target, resolve_target
from gradcheck.tensor import Tensor, astensor, execute_op, tensor
from gradcheck.verify import VerifyResult, verify

__version__ = "0.1.0"

__all__ = [
    "BroadcastableOp",
    "GradcheckError",
    "InvalidBackprop",
    "InvalidGradient",
    "Operation",
    "SkipGradient",
    "Tensor",
    "astensor",
    "execute_op",
    "is_invalid_gradient",
    "no_autodiff",
    "tensor",
    "describe",
    "verify",
    "VerifyResult",
    *_ops_all,
    "linalg",
    "nnet",
    "random",
    "check",
    "CheckResult",
    "Failure",
    "Target",
    "resolve_target",
    "numerical_gradient",
]
