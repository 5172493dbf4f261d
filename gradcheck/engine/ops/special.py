"""Special functions: logsumexp.

The functions; their rules are in :mod:`gradcheck.ops._rules.special`, re-exported here.
"""

from __future__ import annotations

from typing import Any

from gradcheck.engine._utils.overrides import register_family
from gradcheck.engine.operation import Operation  # noqa: F401 (re-exported: MyGrad's modules hold them)
from gradcheck.engine.ops._rules.special import (  # noqa: F401 (re-exported)
    LogSumExp,
    _stable_logsumexp,
)
from gradcheck.engine.tensor_base import Tensor, execute_op

__all__ = ["logsumexp"]


def logsumexp(
    a: Any, axis: Any = None, keepdims: bool = False, *, constant: bool | None = None
) -> Tensor:
    """``log(sum(exp(a)))`` over ``axis`` (None: all; an int or a tuple), computed
    without overflow. Its gradient is the softmax of ``a`` over ``axis``.

    Examples
    --------
    >>> import gradcheck as mg
    >>> mg.logsumexp(mg.Tensor([1000.0, 1000.0]))
    Tensor(1000.69314718)
    """
    return execute_op(
        LogSumExp, a, op_kwargs={"axis": axis, "keepdims": keepdims}, constant=constant
    )


# NumPy's functions of these names run these on tensors (see gradcheck.interop).
register_family(globals())
