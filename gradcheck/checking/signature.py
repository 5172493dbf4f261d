"""How many tensors an op takes, read from its signature.

The arity of a target is the number of positional parameters of its ``__call__`` (for
an :class:`Operation` subclass; ``self`` excluded) or of the function, that have no
default. Parameters with defaults and keyword-only parameters are the op's parameters
(``axis=``, ``keepdims=``...). This is the one place that reads it, for the checker,
the strategies and the CLI alike.

A positional parameter without a default that is not a tensor (``alpha``, ``eps``,
``dim``: real ops have many) becomes a parameter when a value is given for it in
``kwargs``: :meth:`OpSignature.given` is the signature with those names moved out of
the tensor inputs, and :func:`arrange` passes each such value in its place, by
position (``torch.autograd.Function.apply`` takes no keywords reliably).
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gradcheck.checking.adapters import foreign_forward
from gradcheck.engine.operation import Operation
from gradcheck.errors import CheckUsageError

__all__ = ["OpSignature", "arrange", "arranged_class", "op_signature", "parameter_drawn"]


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
    positional : tuple[str, ...]
        Every parameter that can be passed by position, in order (tensor inputs,
        positional parameters given in kwargs, then those with a default).
    defaults : Mapping[str, Any]
        The default of each positional parameter that has one (to pass a later one
        by position).
    """

    arity: int
    variadic: bool
    parameters: tuple[str, ...]
    input_names: tuple[str, ...]
    required: tuple[str, ...] = field(default=(), repr=False)
    any_keyword: bool = field(default=False, repr=False)
    positional: tuple[str, ...] = field(default=(), repr=False)
    defaults: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def accepts(self, name: str) -> bool:
        """True when ``name`` may be given in kwargs: one of the op's parameters, or a
        positional parameter without a default (then not a tensor input)."""
        return name in self.parameters or name in self.input_names or self.any_keyword

    def given(self, names: Collection[str]) -> OpSignature:
        """The signature when the parameters in ``names`` are given values: the
        positional ones among them are no longer tensor inputs.

        >>> def loss(logits, labels, alpha, gamma=2.0):
        ...     ...
        >>> sig = op_signature(loss).given({"alpha"})
        >>> sig.arity, sig.input_names, sig.parameters
        (2, ('logits', 'labels'), ('alpha', 'gamma'))
        """
        moved = [n for n in self.input_names if n in names]
        if not moved:
            return self
        inputs = tuple(n for n in self.input_names if n not in names)
        return replace(
            self,
            arity=len(inputs),
            input_names=inputs,
            parameters=(*moved, *self.parameters),
        )


#: inspect.signature's parameters per function (a tenth of a small check's own time,
#: profiled, when a function is checked again and again: op_db, a test's loop), kept
#: with the defaults they were read with: a function whose defaults or signature are
#: replaced is read again.
_PARAMETERS: weakref.WeakKeyDictionary[Any, tuple[Any, Any, Any, tuple[Any, ...]]] = (
    weakref.WeakKeyDictionary()
)


def _parameters(func: Callable[..., Any]) -> tuple[inspect.Parameter, ...]:
    marks = (
        getattr(func, "__defaults__", None),
        getattr(func, "__kwdefaults__", None),
        getattr(func, "__signature__", None),
    )
    try:
        kept = _PARAMETERS.get(func)
    except TypeError:  # (not hashable or not weakly referable)
        kept = None
    if kept is not None and all(a is b for a, b in zip(kept, marks)):
        return kept[3]
    params = tuple(inspect.signature(func).parameters.values())
    try:
        _PARAMETERS[func] = (*marks, params)
    except TypeError:
        pass
    return params


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
    if not (isinstance(target, type) and issubclass(target, Operation)):
        # a torch Function or nn.Module, an alias of Function.apply, a MyGrad Operation
        foreign = foreign_forward(target)
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
    params = list(_parameters(func))[skip_first:]
    undifferentiated = _nondiff_argnums(target)
    inputs: list[str] = []
    others: list[str] = []
    required: list[str] = []
    positional: list[str] = []
    defaults: dict[str, Any] = {}
    variadic = any_keyword = False
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional.append(p.name)
            if p.default is not p.empty:
                defaults[p.name] = p.default
        if p.kind is p.VAR_POSITIONAL:
            variadic = True
        elif p.kind is p.VAR_KEYWORD:
            any_keyword = True
        elif (
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            and p.default is p.empty
            and len(positional) - 1 not in undifferentiated
        ):
            inputs.append(p.name)
        else:
            others.append(p.name)
            if p.default is p.empty:
                required.append(p.name)
    return OpSignature(
        len(inputs),
        variadic,
        tuple(others),
        tuple(inputs),
        tuple(required),
        any_keyword,
        tuple(positional),
        defaults,
    )


def _nondiff_argnums(target: Any) -> frozenset[int]:
    """The positions a ``jax.custom_jvp``/``custom_vjp`` declares not differentiable
    (``nondiff_argnums``): parameters of the op (given in kwargs), not tensor inputs.

    Its rule receives them apart from the primals, and JAX gives them no gradient, so
    drawing one as an input would compare a gradient JAX never computes."""
    if not type(target).__module__.startswith("jax"):
        return frozenset()
    try:
        return frozenset(int(i) for i in getattr(target, "nondiff_argnums", ()) or ())
    except (TypeError, ValueError):
        return frozenset()


def arrange(
    sig: OpSignature,
    tensors: Sequence[Any],
    params: Mapping[str, Any],
    *,
    by_position: bool = False,
) -> tuple[list[Any], dict[str, Any]]:
    """The positional and keyword arguments of a call of the op: each positional
    parameter in turn takes its value from ``params`` when given there, else the next
    tensor; further tensors follow (``*args``); the other parameters are keywords.

    With ``by_position``, every parameter that can be passed by position is (the
    ones not given before a given one take their defaults): for callers that take no
    keywords, such as ``torch.autograd.Function.apply``.

    >>> def f(v, z, scale=1.0, *, shift=0.0):
    ...     ...
    >>> arrange(op_signature(f), ["Z"], {"v": 2.5, "shift": 1.0})
    ([2.5, 'Z'], {'shift': 1.0})
    >>> arrange(op_signature(f), ["V", "Z"], {"shift": 1.0}, by_position=True)
    (['V', 'Z'], {'shift': 1.0})
    """
    placed = (n for n in sig.positional if n not in sig.defaults)  # (inputs, nondiff ones)
    if not params or not (by_position or any(name in params for name in placed)):
        return list(tensors), dict(params)  # the common case: tensors, then keywords
    rest = dict(params)
    args: list[Any] = []
    feed = iter(tensors)
    with_default = []
    missing = object()
    for name in sig.positional:
        if name in sig.defaults:
            with_default.append(name)
        elif name in rest:
            args.append(rest.pop(name))
        elif (tensor := next(feed, missing)) is not missing:
            args.append(tensor)
        else:
            return args, rest  # too few tensors: the op says which argument it misses
    more = list(feed)
    if by_position or more:
        # Up to the last one given (all of them when tensors follow, as *args).
        given = [i for i, name in enumerate(with_default) if name in rest]
        last = len(with_default) if more else (given[-1] + 1 if given else 0)
        for name in with_default[:last]:
            args.append(rest.pop(name) if name in rest else sig.defaults[name])
    args.extend(more)
    return args, rest


def arranged_class(op_type: type, sig: OpSignature) -> type:
    """A subclass of the op class ``op_type`` whose ``__call__`` takes the tensors
    and the parameters apart (``op(*tensors, **params)``) and calls the op's own
    ``__call__`` with them arranged (:func:`arrange`): for ``execute_op``, which
    would make a tensor of every positional argument, when a positional parameter is
    given in kwargs."""
    call = op_type.__call__

    def __call__(self: Any, *tensors: Any, **params: Any) -> Any:
        args, kwargs = arrange(sig, tensors, params)
        return call(self, *args, **kwargs)

    namespace = {"__call__": __call__, "__qualname__": op_type.__qualname__}
    return type(op_type.__name__, (op_type,), namespace)


def parameter_drawn(
    name: str, sig: OpSignature, unkept: Sequence[int], exc: Exception, *, framework: str
) -> CheckUsageError:
    """The usage error of an ``Operation`` (gradcheck's or MyGrad's) whose backward
    returned a Tensor for a gradient while drawn inputs ``unkept`` were left out of
    its ``self.variables``: positional parameters of its ``__call__`` (a float ``p``,
    drawn as a tensor for want of a value, that the backward computed with), which
    need a value."""
    names = [sig.input_names[i] for i in unkept]
    said = ", ".join(names)
    json_kwargs = ", ".join(f'"{n}": <value>' for n in names)
    py_kwargs = ", ".join(f'"{n}": ...' for n in names)
    error = " ".join(f"{type(exc).__name__}: {exc}".split())
    error = error if len(error) <= 120 else error[:117] + "..."
    return CheckUsageError(
        f"{name} keeps {said} out of self.variables, so {framework} gives it no "
        f"gradient, and its backward failed with {said} drawn as a tensor ({error}): "
        f"{said} is a parameter of the op, which needs a value: --kwargs "
        f"'{{{json_kwargs}}}', or @gradcheck.describe(kwargs={{{py_kwargs}}}) on the op "
        f"(check(op, x, {names[0]}=...)); a tensor input that needs no gradient is "
        f"--constant {unkept[0]}, and one that needs a gradient belongs in self.variables"
    )
