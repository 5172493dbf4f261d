"""Target resolution: what the checker checks, from what the user gave.

:func:`resolve_target` turns an op (an :class:`~gradcheck.Operation` subclass, a
function of Tensors, or another framework's op) into the
:class:`~gradcheck.checking.target.Target` that everything downstream uses. It sits
above the modules it chooses between: the table of frameworks
(:mod:`gradcheck.checking.adapters`), each framework's module (which builds its target
with :mod:`~gradcheck.checking.adapters.bridge`), and :mod:`gradcheck.checking.target`
(gradcheck's own ops), none of which imports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gradcheck.checking.adapters import framework_named, framework_of, require
from gradcheck.checking.adapters.bridge import op_name
from gradcheck.checking.signature import arrange, arranged_class, op_signature
from gradcheck.checking.target import Target, join_tensors, joined_array, qualname
from gradcheck.engine.operation import Operation
from gradcheck.engine.tensor_base import Tensor, execute_op
from gradcheck.engine.ufuncs._ufunc_creators import MyGradUfunc
from gradcheck.errors import NotATarget

__all__ = ["resolve_target", "resolve_foreign"]


def resolve_target(obj: Any) -> Target:
    """Resolve an ``Operation`` subclass or a function of Tensors into a :class:`Target`.

    Parameters
    ----------
    obj : type[Operation] or callable
        An op class (applied with :func:`gradcheck.execute_op`) or a function that
        takes Tensors (and keyword parameters) and returns a Tensor; or a
        ``torch.autograd.Function`` subclass, a function of torch tensors, a
        ``mygrad.Operation`` subclass or a function of MyGrad tensors
        (see :func:`gradcheck.checking.adapters.framework_of`).

    Raises
    ------
    NotATarget
        ``obj`` is neither.

    Examples
    --------
    >>> import numpy as np
    >>> import gradcheck as mg
    >>> t = resolve_target(lambda x: mg.tanh(x) * x)
    >>> t.signature.arity
    1
    >>> t.forward([np.array([0.0, 1.0])])
    array([0.        , 0.76159416])
    """
    if isinstance(obj, Target):
        return obj
    framework = framework_of(obj)
    if framework is not None:  # a torch or MyGrad op: run through its framework
        foreign: Target = resolve_foreign(obj, framework)
        return foreign
    # (a ufunc, gradcheck.add say, is a class that is called as a function)
    if isinstance(obj, type) and not isinstance(obj, MyGradUfunc):
        if not issubclass(obj, Operation):
            raise NotATarget(
                f"{qualname(obj)} is a class but not an Operation subclass; "
                f"a target is an Operation subclass or a function of Tensors"
            )
        if obj.__call__ is Operation.__call__:
            raise NotATarget(f"{qualname(obj)} does not implement __call__ (its forward)")
        op_type: type[Operation] = obj
        sig = op_signature(obj)
        arranged = arranged_class(op_type, sig)
        positional = frozenset(sig.input_names)

        def build(tensors: Sequence[Tensor], params: Mapping[str, Any]) -> Tensor:
            # A positional parameter given in params: the op runs with it in its place.
            op = arranged if params and not positional.isdisjoint(params) else op_type
            return execute_op(op, *tensors, op_kwargs=dict(params))

        def evaluate(tensors: Sequence[Tensor], params: Mapping[str, Any]) -> np.ndarray:
            # No execute_op here: no graph is wanted, and this is the hot path.
            if params and not positional.isdisjoint(params):
                args, kwargs = arrange(sig, tensors, params)
                return np.asarray(op_type()(*args, **kwargs))
            return np.asarray(op_type()(*tensors, **params))

        return Target(qualname(obj), sig, obj, build, evaluate)
    if callable(obj):
        try:
            signature = op_signature(obj)
        except (TypeError, ValueError) as exc:
            raise NotATarget(f"cannot read the signature of {qualname(obj)}: {exc}") from None
        func = obj

        positional_f = frozenset(signature.input_names)

        def call(tensors: Sequence[Tensor], params: Mapping[str, Any]) -> Any:
            if params and not positional_f.isdisjoint(params):
                args, kwargs = arrange(signature, tensors, params)
                return func(*args, **kwargs)
            return func(*tensors, **params)

        def build_f(tensors: Sequence[Tensor], params: Mapping[str, Any]) -> Any:
            out = call(tensors, params)
            return join_tensors(out) if isinstance(out, (tuple, list)) else out

        def evaluate_f(tensors: Sequence[Tensor], params: Mapping[str, Any]) -> np.ndarray:
            out = call(tensors, params)
            if isinstance(out, Tensor):
                return out.data
            if isinstance(out, (tuple, list)):
                return joined_array(out)
            return np.asarray(out)

        return Target(qualname(obj), signature, obj, build_f, evaluate_f)
    raise NotATarget(
        f"{obj!r} ({type(obj).__name__}) is not an op: a target is an Operation "
        f"subclass or a function of Tensors"
    )


def resolve_foreign(obj: Any, kind: str) -> Any:
    """The :class:`~gradcheck.checking.target.Target` of a framework's op or function."""
    fw = framework_named(kind)
    require(fw.packages[0], needed_for=f"checking the {fw.label} target {op_name(obj)}")
    return fw.bridge().target(obj)
