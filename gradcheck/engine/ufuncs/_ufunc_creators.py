"""The ufunc types: how an elementwise op becomes a NumPy-style universal function.

A gradcheck ufunc (``gradcheck.add``, ``gradcheck.exp``...) is a class, made by
:class:`ufunc_creator` from a rule (an :class:`~gradcheck.operation.Operation` whose
``numpy_ufunc`` names the NumPy ufunc it differentiates) and a documented stub that
gives the ufunc its name, signature and docstring. Its metaclass makes the class
callable with NumPy's conventions, ``f(x1[, x2], out=None, *, where=True, dtype=None,
constant=None)``, and gives it the attributes of a :class:`numpy.ufunc` (``nin``,
``nout``, ``nargs``, ``ntypes``, ``types``, ``identity``, ``signature``), as MyGrad's
ufuncs have. Every one of them is a virtual subclass of :class:`ufunc`:
``issubclass(gradcheck.add, gradcheck.ufunc)`` is True.

Calling a ufunc without ``out``, ``where`` or ``dtype`` is the engine's per-op path
(one ``execute_op`` of the rule). With any of them the rule runs inside
:class:`UfuncCall`, which computes the value with the NumPy ufunc itself (so that
``where=``, ``dtype=`` and ``out=`` mean exactly what they mean in NumPy) and masks
the gradient where ``where`` is False. ``out=`` a tensor writes the result into that
tensor as ``out[...] = result`` does: its previous value stays in the graph, and where
``where`` is False it is what the output holds, and what the gradient reaches.
"""

from __future__ import annotations

import inspect
from abc import ABCMeta
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import numpy as np

from gradcheck.engine.execution import _pair, _single
from gradcheck.engine.operation import BroadcastableOp, Operation
from gradcheck.engine.tensor_base import Tensor, _execute, assign_in_place, execute_op

__all__ = [
    "ufunc",
    "MyGradUfunc",
    "MyGradUnaryUfunc",
    "MyGradBinaryUfunc",
    "MyGradBinaryUfuncNoMask",
    "UfuncCall",
    "ufunc_creator",
]

T = TypeVar("T")

# Type codes of loops on complex, datetime, timedelta and object data: the engine's
# ufuncs differentiate real numbers only, so their ``types`` leave these loops out.
_UNSUPPORTED_CODES = frozenset("FDGMmO")


class ufunc(metaclass=ABCMeta):
    """The abstract type of every gradcheck ufunc; it cannot be subclassed.

    Each ufunc (``gradcheck.add``, ``gradcheck.sin``...) is a class of its own,
    registered as a virtual subclass of this one. The attributes mirror those of a
    :class:`numpy.ufunc`.

    Examples
    --------
    >>> import gradcheck as mg
    >>> issubclass(mg.add, mg.ufunc)
    True
    >>> mg.add.nin, mg.add.nout, mg.add.identity
    (2, 1, 0)
    """

    nin: ClassVar[int]
    nout: ClassVar[int]
    nargs: ClassVar[int]
    ntypes: ClassVar[int]
    types: ClassVar[list[str]]
    identity: ClassVar[Any]
    signature: ClassVar[str | None]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        raise TypeError("gradcheck.ufunc cannot be subclassed; make a ufunc with ufunc_creator")


def _not_implemented(method: str) -> Callable[..., Any]:
    def method_of(cls: MyGradUfunc, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"{cls.__name__}.{method} is not implemented for gradcheck ufuncs (nor for "
            f"MyGrad's); apply numpy.{cls.__name__}.{method} to the tensors' data"
        )

    method_of.__name__ = method
    method_of.__doc__ = "Not implemented (as in MyGrad): raises NotImplementedError."
    return method_of


class MyGradUfunc(type):
    """The metaclass of the gradcheck ufuncs: the class is the ufunc; calling it
    applies the op.

    The ufunc methods of NumPy (``at``, ``accumulate``, ``outer``, ``reduce``,
    ``reduceat``) exist and raise NotImplementedError, as MyGrad's do.
    """

    #: NumPy's ``out=``, ``where=`` and ``dtype=`` mean the same to these functions:
    #: a NumPy ufunc call on tensors passes them on (``gradcheck._utils.overrides``).
    takes_numpy_keywords = True

    _wrapped_op: type[Operation]
    #: ``_wrapped_op`` when it is neither ``scalar_only`` nor a view op (read when the
    #: ufunc is made), else None: a call without ``out``, ``where``, ``dtype`` and
    #: ``constant`` then takes the engine's shortest path (``execution._single`` or
    #: ``_pair``), the same tensor as ``_execute``'s.
    _plain_op: type[Operation] | None
    _decorated_func: Callable[..., Any]

    def __repr__(cls) -> str:
        # MyGrad's repr, so that code and ids written for MyGrad's ufuncs hold
        return f"<mygrad-ufunc '{cls.__name__}'>"

    @property
    def __signature__(cls) -> inspect.Signature:
        # the stub's signature, computed when first asked for (not at import)
        return inspect.signature(cls._decorated_func)

    at = _not_implemented("at")
    accumulate = _not_implemented("accumulate")
    outer = _not_implemented("outer")
    reduce = _not_implemented("reduce")
    reduceat = _not_implemented("reduceat")


class MyGradUnaryUfunc(MyGradUfunc):
    """The type of the ufuncs of one input: ``f(x, out=None, *, where=True,
    dtype=None, constant=None)``."""

    def __call__(
        cls,
        x: Any,
        out: Any = None,
        *,
        where: Any = True,
        dtype: Any = None,
        constant: bool | None = None,
    ) -> Tensor:
        # the engine's per-op path: keep the common case (no out, where, dtype) first
        if out is None and where is True and dtype is None:
            if constant is None and (rule := cls._plain_op) is not None:
                return _single(rule, x)
            return _execute(cls._wrapped_op, (x,), (), None, constant)
        return _call(cls._wrapped_op, (x,), out, where, dtype, constant, None)


class _UnaryUfuncWithParams(MyGradUnaryUfunc):
    """A unary ufunc whose op takes further keyword parameters
    (``absolute(x, nan_to_num=True)``)."""

    def __call__(
        cls,
        x: Any,
        out: Any = None,
        *,
        where: Any = True,
        dtype: Any = None,
        constant: bool | None = None,
        **params: Any,
    ) -> Tensor:
        if out is None and where is True and dtype is None:
            return _execute(cls._wrapped_op, (x,), (), params, constant)
        return _call(cls._wrapped_op, (x,), out, where, dtype, constant, params)


class MyGradBinaryUfunc(MyGradUfunc):
    """The type of the ufuncs of two inputs: ``f(x1, x2, out=None, *, where=True,
    dtype=None, constant=None)``."""

    def __call__(
        cls,
        x1: Any,
        x2: Any,
        out: Any = None,
        *,
        where: Any = True,
        dtype: Any = None,
        constant: bool | None = None,
    ) -> Tensor:
        if out is None and where is True and dtype is None:
            if constant is None and (rule := cls._plain_op) is not None:
                return _pair(rule, x1, x2)
            return _execute(cls._wrapped_op, (x1, x2), (), None, constant)
        return _call(cls._wrapped_op, (x1, x2), out, where, dtype, constant, None)


class MyGradBinaryUfuncNoMask(MyGradUfunc):
    """The type of the generalized ufuncs of two inputs (``matmul``), which take no
    ``where``: ``f(x1, x2, out=None, *, dtype=None, constant=None)``."""

    def __call__(
        cls,
        x1: Any,
        x2: Any,
        out: Any = None,
        *,
        dtype: Any = None,
        constant: bool | None = None,
    ) -> Tensor:
        if out is None and dtype is None:
            return _execute(cls._wrapped_op, (x1, x2), (), None, constant)
        return _call(cls._wrapped_op, (x1, x2), out, True, dtype, constant, None)


def _call(
    rule: type[Operation],
    inputs: tuple[Any, ...],
    out: Any,
    where: Any,
    dtype: Any,
    constant: bool | None,
    params: dict[str, Any] | None,
) -> Tensor:
    """A ufunc call with ``out``, ``where`` or ``dtype`` (see :class:`UfuncCall`)."""
    if isinstance(out, tuple):  # NumPy's form of out=, as __array_ufunc__ passes it
        if len(out) != 1:
            raise ValueError(
                f"a gradcheck ufunc has one output, so out= takes one array or tensor, "
                f"got a tuple of {len(out)}"
            )
        (out,) = out
    if isinstance(where, Tensor):
        where = where._data
    op_kwargs = {"rule": rule, "where": where, "dtype": dtype, "params": params}
    if not isinstance(out, Tensor):
        op_kwargs["out"] = out
        return execute_op(UfuncCall, *inputs, op_kwargs=op_kwargs, constant=constant)
    # out= a tensor: `out[...] = f(...)`, where the masked-out places keep (and send
    # their gradient to) out's previous value, an input of the op
    if where is not True:
        inputs = (*inputs, out)
    value = execute_op(UfuncCall, *inputs, op_kwargs=op_kwargs, constant=constant)
    assign_in_place(out, Ellipsis, value)
    return out


class UfuncCall(BroadcastableOp):
    """A ufunc's rule applied with NumPy's ``where=``, ``dtype=`` and ``out=``.

    The value is the NumPy ufunc's (``rule.numpy_ufunc``) given those arguments; the
    rule also runs on the inputs, for the state its ``backward_var`` reads. Each
    input's gradient is the rule's, zero where ``where`` is False. With ``out=`` a
    tensor and a mask, that tensor's previous value is a further input: the output
    is that value where ``where`` is False, and so is its gradient there.
    """

    def __call__(
        self,
        *tensors: Tensor,
        rule: type[Operation],
        where: Any = True,
        dtype: Any = None,
        params: dict[str, Any] | None = None,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        self.variables = tensors
        ufunc_ = rule.numpy_ufunc  # type: ignore[attr-defined]
        nin = ufunc_.nin
        inputs = tensors[:nin]
        datas = [t._data for t in inputs]
        if len(tensors) > nin:  # the previous value of the tensor written to
            out = tensors[nin]._data.copy()
        kwargs: dict[str, Any] = {"out": out, "dtype": dtype}
        if where is not True:
            kwargs["where"] = where
        value = ufunc_(*datas, **kwargs)
        self.rule = rule()
        if params:
            self.rule(*inputs, **params)
        else:
            self.rule(*inputs)
        self.nin = nin
        self.mask = None if where is True else np.asarray(where, dtype=bool)
        return value

    def backward_var(self, grad: np.ndarray, index: int, **kwargs: Any) -> np.ndarray:
        mask = self.mask
        if index == self.nin:  # out's previous value: what the mask kept
            return np.where(mask, 0, grad)  # type: ignore[arg-type]  # (an input only with a mask)
        # The rule reads its inputs through its own variables: point them where this
        # op's are (backprop points an input written in place since, `out=` one of
        # the inputs, at the value it had when this op read it).
        self.rule.variables = self.variables[: self.nin]
        backed = np.asarray(self.rule.backward_var(grad, index))
        if mask is not None:
            backed = backed * mask
        return backed


def _types_of(numpy_ufunc: np.ufunc) -> list[str]:
    return [code for code in numpy_ufunc.types if not _UNSUPPORTED_CODES & set(code)]


_CALL_PARAMETERS = """\
out : numpy.ndarray or Tensor, optional
    Where the result goes, as NumPy's ``out=``: an array is written and becomes the
    result's data; a tensor is written in place (``out[...] = result``).
where : array_like of bool, optional
    Compute only where True; elsewhere the result keeps ``out``'s values (and is
    undefined without ``out``, as in NumPy). The gradient is zero there.
dtype : data-type, optional
    The dtype of the computation and of the result (NumPy's ``dtype=``).
"""


def _documented(doc: str | None, numpy_ufunc: np.ufunc) -> str | None:
    """The stub's docstring with the entries of ``out``, ``where`` and ``dtype``
    added before ``constant``'s in its Parameters section, unless it has them."""
    if doc is None or "\n    out : " in doc:
        return doc
    at = doc.find("\n    constant : ")
    if at < 0:
        return doc
    entries = _CALL_PARAMETERS
    if numpy_ufunc.signature is not None:  # a generalized ufunc: no where=
        entries = entries.replace(entries[entries.index("where :") : entries.index("dtype :")], "")
    block = "".join(f"\n    {line}" if line else "\n" for line in entries.rstrip("\n").split("\n"))
    return doc[:at] + block + doc[at:]


def _create_ufunc(rule: type[Operation], stub: Callable[..., Any]) -> MyGradUfunc:
    numpy_ufunc: np.ufunc = rule.numpy_ufunc  # type: ignore[attr-defined]
    if numpy_ufunc.nin == 1:
        # keyword parameters of the op itself (absolute's nan_to_num) need **params
        code = stub.__code__
        keywords = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
        params = set(keywords) - {"where", "dtype", "constant"}
        metaclass: type[MyGradUfunc] = _UnaryUfuncWithParams if params else MyGradUnaryUfunc
    elif numpy_ufunc.signature is None:
        metaclass = MyGradBinaryUfunc
    else:
        metaclass = MyGradBinaryUfuncNoMask
    types = _types_of(numpy_ufunc)
    namespace = {
        "_wrapped_op": rule,
        "_plain_op": None if rule.scalar_only or rule.can_return_view else rule,
        "_decorated_func": stub,
        "nin": numpy_ufunc.nin,
        "nout": numpy_ufunc.nout,
        "nargs": numpy_ufunc.nargs,
        "ntypes": len(types),
        "types": types,
        "identity": numpy_ufunc.identity,
        "signature": numpy_ufunc.signature,
        "resolve_dtypes": numpy_ufunc.resolve_dtypes,
        "__module__": stub.__module__,
        "__qualname__": stub.__qualname__,
        "__doc__": _documented(stub.__doc__, numpy_ufunc),
        # (as written in the stub; typing.get_type_hints resolves them in its module)
        "__annotations__": dict(stub.__annotations__),
    }
    made = metaclass(stub.__name__, (object,), namespace)
    ufunc.register(made)  # type: ignore[arg-type]  # a class, of the metaclass MyGradUfunc
    return made


class ufunc_creator:
    """Decorate a documented stub to make it a ufunc that applies ``mygrad_op``.

    The ufunc takes the stub's name, signature, docstring and annotations; the stub's
    body is never run.

    Parameters
    ----------
    mygrad_op : type[Operation]
        The rule: an :class:`~gradcheck.operation.Operation` whose class attribute
        ``numpy_ufunc`` is the NumPy ufunc (of one or two inputs, one output) that it
        computes and differentiates.
    at_op, accumulate_op, outer_op, reduce_op, reduceat_op : None
        Ops for the ufunc's methods: not supported (as in MyGrad), so any of them
        given raises NotImplementedError.

    Raises
    ------
    TypeError
        ``mygrad_op`` is not such a rule.

    Examples
    --------
    >>> import numpy as np
    >>> import gradcheck as mg
    >>> from gradcheck.ops.trigonometric import Sin
    >>> @ufunc_creator(Sin)
    ... def my_sin(x, out=None, *, where=True, dtype=None, constant=None) -> mg.Tensor:
    ...     '''The sine, elementwise.'''
    >>> isinstance(my_sin, MyGradUnaryUfunc), my_sin.nin, my_sin.__name__
    (True, 1, 'my_sin')
    >>> my_sin(mg.Tensor([0.0, 1.0]), where=[True, False], out=np.full(2, 7.0))
    Tensor([0., 7.])
    """

    def __init__(
        self,
        mygrad_op: type[Operation],
        *,
        at_op: type[Operation] | None = None,
        accumulate_op: type[Operation] | None = None,
        outer_op: type[Operation] | None = None,
        reduce_op: type[Operation] | None = None,
        reduceat_op: type[Operation] | None = None,
    ) -> None:
        numpy_ufunc = getattr(mygrad_op, "numpy_ufunc", None)
        if not (
            isinstance(mygrad_op, type)
            and issubclass(mygrad_op, Operation)
            and isinstance(numpy_ufunc, np.ufunc)
            and numpy_ufunc.nin in (1, 2)
            and numpy_ufunc.nout == 1
        ):
            raise TypeError(
                f"ufunc_creator takes an Operation subclass whose `numpy_ufunc` is a "
                f"NumPy ufunc of one or two inputs and one output; got {mygrad_op!r}"
            )
        if any(op is not None for op in (at_op, accumulate_op, outer_op, reduce_op, reduceat_op)):
            raise NotImplementedError(
                "ops for the ufunc methods (at=, reduce=...) are not supported"
            )
        self.op = mygrad_op

    def __call__(self, decorated_func: T) -> T:
        return _create_ufunc(self.op, decorated_func)  # type: ignore[arg-type,return-value]
