"""How many tensors an op takes, read from its signature.

The arity of a target is the number of positional parameters of its ``__call__`` (for
an :class:`Operation` subclass; ``self`` excluded) or of the function, that have no
default. Parameters with defaults and keyword-only parameters are the op's parameters
(``axis=``, ``keepdims=``...). This is the one place that reads it, for the checker,
the strategies and the CLI alike.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gradcheck.operation import Operation

__all__ = ["OpSignature", "op_signature"]


@dataclass(frozen=True)
class OpSignature:
    """What a target's signature says about its inputs.

    Attributes
    ----------
    arity : int
        The number of tensor inputs without a default.
    variadic : bool
        True when it also takes ``*args`` (any number of further tensors).
    parameters : tuple[str, ...]
        The names of the op's other (keyword) parameters.
    input_names : tuple[str, ...]
        The names of the tensor inputs, in order.
    required : tuple[str, ...]
        The keyword-only parameters without a default (the op cannot run without them).
    any_keyword : bool
        True when it also takes ``**kwargs`` (any keyword parameter).
    """

    arity: int
    variadic: bool
    parameters: tuple[str, ...]
    input_names: tuple[str, ...]
    required: tuple[str, ...] = field(default=(), repr=False)
    any_keyword: bool = field(default=False, repr=False)


def op_signature(target: type[Operation] | Callable[..., Any]) -> OpSignature:
    """Read the inputs and parameters of an ``Operation`` subclass or a function.

    Examples
    --------
    >>> from gradcheck.ops.reductions import Sum
    >>> op_signature(Sum)
    OpSignature(arity=1, variadic=False, parameters=('axis', 'keepdims'), input_names=('a',))
    >>> op_signature(lambda x, y: x * y).arity
    2
    """
    foreign = None
    if isinstance(target, type) and not issubclass(target, Operation):
        from gradcheck.checking.adapters import foreign_forward

        foreign = foreign_forward(target)  # a torch Function, a MyGrad Operation
    if isinstance(target, type) and issubclass(target, Operation):
        func: Callable[..., Any] = target.__call__
        skip_first = 1
    elif foreign is not None:
        func, skip_first = foreign
    elif callable(target):
        func = target
        skip_first = 0
    else:
        raise TypeError(f"{target!r} is neither an Operation subclass nor a function")
    params = list(inspect.signature(func).parameters.values())
    params = params[skip_first:]
    inputs: list[str] = []
    others: list[str] = []
    required: list[str] = []
    variadic = any_keyword = False
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            variadic = True
        elif p.kind is p.VAR_KEYWORD:
            any_keyword = True
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty:
            inputs.append(p.name)
        else:
            others.append(p.name)
            if p.default is p.empty:
                required.append(p.name)
    return OpSignature(
        len(inputs), variadic, tuple(others), tuple(inputs), tuple(required), any_keyword
    )
