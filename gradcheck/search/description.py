"""`describe`: how an op declares the inputs it should be checked on.

An op knows best which inputs make sense for it: ``log`` wants positive numbers, a
matrix product wants shapes ``(n, k)`` and ``(k, m)``, a reduction wants an ``axis``.
The one way to say so is the :func:`describe` decorator, which works the same on an
:class:`~gradcheck.Operation` subclass and on a plain function of tensors::

    import gradcheck

    @gradcheck.describe(domain=(0.1, 10.0))
    class Log(gradcheck.Operation):
        ...

    @gradcheck.describe(shapes=["n,k", "k,m"])
    def matmul(a, b):
        return a @ b

``gradcheck verify mymodule:Log`` then needs no flags; a flag given on the command line
(or an argument given to :func:`gradcheck.verify`) overrides the declared value.

On a function, ``describe`` is also the *marker* that makes it a target when a whole
module is checked (``gradcheck verify mymodule``): every op class and op instance defined
in the module is a target (:func:`gradcheck.frontend.discovery.discover`), but only the
functions decorated with ``describe`` are (a module has many helper functions that are
not ops). ``@gradcheck.describe`` with no arguments
marks a function without describing anything.

The description is stored on the object as ``__gradcheck__`` (a :class:`Description`);
read it with :func:`description_of`. The value checks here are the ones the command
line and :func:`gradcheck.verify` use too, so an invalid value is reported the same way
wherever it comes from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

from gradcheck.checking.check_settings import DESCRIBED
from gradcheck.errors import InvalidDescription
from gradcheck.search.settings import DESCRIBE, names_taken_by
from gradcheck.search.validators import (
    Domain,
    Interval,
    normalize_avoid,
    normalize_batched,
    normalize_broadcast,
    normalize_compiled,
    normalize_device,
    normalize_domain,
    normalize_dtype,
    normalize_indices,
    normalize_integers,
    normalize_kwargs,
    normalize_max_examples,
    normalize_memory,
    normalize_min_dims,
    normalize_mode,
    normalize_modes,
    normalize_nondet_tol,
    normalize_order,
    normalize_reference_forward,
    normalize_seconds,
    normalize_seed,
    normalize_setting,
    normalize_shapes,
    normalize_skip_on,
    normalize_time_budget,
    normalize_tolerance,
)

__all__ = [
    "Interval",
    "Description",
    "describe",
    "description_of",
    "normalize_avoid",
    "normalize_broadcast",
    "normalize_indices",
    "normalize_integers",
    "normalize_min_dims",
    "normalize_order",
    "normalize_modes",
    "normalize_device",
    "normalize_nondet_tol",
    "normalize_skip_on",
    "normalize_reference_forward",
    "normalize_compiled",
    "normalize_batched",
    "normalize_domain",
    "normalize_dtype",
    "normalize_kwargs",
    "normalize_max_examples",
    "normalize_mode",
    "normalize_seed",
    "normalize_shapes",
    "normalize_time_budget",
    "normalize_tolerance",
    "normalize_seconds",
    "normalize_memory",
    "normalize_setting",
]

T = TypeVar("T")

#: The attribute :func:`describe` sets (the checker reads the settings it takes from it).
ATTRIBUTE = DESCRIBED


@dataclass(frozen=True)
class Description:
    """The declared input description of an op; ``None`` means "not declared".

    Attributes
    ----------
    shapes : tuple of str or tuple, optional
        One shape spec per input, as for ``--shape``: ``"n,k"``, ``"3,4"``, ``""``
        (0-d), or a tuple of ints and names. Names are shared between inputs.
    domain : (lo, hi) or tuple of (lo, hi), optional
        The interval values are drawn from, for all inputs or one per input.
    dtype : str, optional
        A floating dtype name: ``"float64"``, ``"float32"`` or ``"float16"``.
    kwargs : dict, optional
        The op's parameters (``axis=``...). A positional parameter without a default
        named here (``alpha``, ``eps``) is not a tensor input: its value is passed in
        its place, by position.
    atol, rtol : float, optional
        Tolerances of the comparison (defaults depend on the dtype).
    broadcast : bool, optional
        Draw broadcastable (rather than equal) shapes for the inputs.
    max_examples : int, optional
        How many generated examples to check.
    mode : {"auto", "full", "fast"}, optional
        How the numeric gradient is compared (see :func:`gradcheck.check`).
    avoid : tuple of float, optional
        Points where the op is not differentiable (0 for ``abs``): drawn values keep
        a small margin from each.
    unique : bool, optional
        Draw distinct values, a small margin apart, across all inputs: ties are where
        ``max``, ``sort``, ``maximum`` and friends are not differentiable.
    integers : dict of int to (lo, hi), optional
        Tensor inputs (by index among the tensor inputs, as for ``shapes``) drawn as
        int64 in ``range(lo, hi)``: class labels, indices. They are constants.
    booleans : tuple of int, optional
        Tensor inputs drawn as booleans (masks). They are constants.
    constants : tuple of int, optional
        Tensor inputs that need no gradient (``requires_grad=False`` in torch,
        ``constant=True`` in MyGrad): drawn as usual, checked to receive none.
    min_dims : int, optional
        The fewest dimensions a drawn shape has (2 for an op of matrices).
    order : int, optional
        2: check the gradient of the backward too (torch and JAX targets).
    modes : tuple of str, optional
        ``("rev",)``, ``("fwd",)`` or both: reverse mode, forward mode (the ``jvp``).
    device : str, optional
        Where a torch target runs (``"cuda"``).
    nondet_tol : float, optional
        How far repeated backwards may differ (torch's ``nondet_tol``).
    skip_on : tuple of str, optional
        Exceptions (``"module:Name"``, or a builtin's name) that say an input is
        outside the op's domain: an example where the forward raises one is skipped.
    reference_forward : callable or str, optional
        A NumPy reference of the forward (``"module:function"`` or the function).
    compiled : str, optional
        Compare the op compiled (torch.compile's backend, or ``jax.jit``) with eager.
    batched : bool, optional
        Run a torch op under ``torch.func.vmap`` against a loop over the batch.
    time_budget : float, optional
        Seconds the search may spend generating examples before it stops (and says
        so); a failure found in time is still shrunk.
    """

    shapes: tuple[str | tuple[int | str, ...], ...] | None = None
    domain: Domain | tuple[Domain, ...] | None = None
    dtype: str | None = None
    kwargs: Mapping[str, Any] | None = None
    atol: float | None = None
    rtol: float | None = None
    broadcast: bool | None = None
    max_examples: int | None = None
    mode: str | None = None
    avoid: tuple[float, ...] | None = None
    unique: bool | None = None
    integers: Mapping[int, tuple[int, int]] | None = None
    booleans: tuple[int, ...] | None = None
    constants: tuple[int, ...] | None = None
    min_dims: int | None = None
    order: int | None = None
    modes: tuple[str, ...] | None = None
    device: str | None = None
    nondet_tol: float | None = None
    skip_on: tuple[str, ...] | None = None
    reference_forward: Any = None
    compiled: str | None = None
    batched: bool | None = None
    time_budget: float | None = None

    def merged(self, **overrides: Any) -> Description:
        """A copy where every override that is not ``None`` replaces the declared
        value (how command-line flags override an op's own description)."""
        from gradcheck.search.precedence import layered

        return replace(self, **layered(call=overrides))

    def as_dict(self) -> dict[str, Any]:
        """The declared values only (``None`` left out)."""
        values = {name: getattr(self, name) for name in _field_names(type(self))}
        return {k: v for k, v in values.items() if v is not None}


_FIELD_NAMES: dict[Any, tuple[str, ...]] = {}


def _field_names(cls: Any) -> tuple[str, ...]:
    """The fields of a description's class, read once (``check`` reads a description
    at every example of a search)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


def describe(
    target: T | None = None,
    *,
    shapes: Sequence[str | Sequence[int | str]] | None = None,
    domain: Any = None,
    dtype: Any = None,
    kwargs: Mapping[str, Any] | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    broadcast: bool | None = None,
    max_examples: int | None = None,
    mode: str | None = None,
    avoid: Sequence[float] | None = None,
    unique: bool | None = None,
    integers: Mapping[int, tuple[int, int]] | None = None,
    booleans: Sequence[int] | None = None,
    constants: Sequence[int] | None = None,
    min_dims: int | None = None,
    order: int | None = None,
    modes: Sequence[str] | None = None,
    device: str | None = None,
    nondet_tol: float | None = None,
    skip_on: Any = None,
    reference_forward: Any = None,
    compiled: Any = None,
    batched: bool | None = None,
    time_budget: float | None = None,
) -> Any:
    """Declare how an op should be checked, and mark a function as a target.

    Use as ``@describe`` or ``@describe(...)`` on an ``Operation`` subclass or on a
    function of tensors. Values are checked now, so a typo fails at import, with a
    message naming the argument.

    Parameters
    ----------
    shapes : sequence of str, tuple or dict, optional
        One shape per input: ``"n,k"`` (named sizes are shared between inputs),
        ``"3,4"``, ``(3, "k")``, ``3`` (1-d), ``""`` or ``()`` for a 0-d input; for an
        input that is a tree of arrays (a JAX function's parameter dict), a dict of
        shapes, dicts and lists of them (``{"dense": {"w": "n,k", "b": "k"}}``): each
        leaf is an input of its own, named by its path (``params['dense']['w']``),
        and ``integers``, ``booleans``, ``constants`` and per-input domains count
        leaves.
    domain : (lo, hi) or sequence of (lo, hi), optional
        Bounds with ``lo < hi`` (``None`` for no bound): one pair for every input or
        one pair per input, where ``None`` is an input without bounds
        (``[None, (0.0, 1.0)]``, as ``--domain : --domain 0:1``). A bound is open
        (values stay inside it) unless the domain is written ``"[0:"`` (x >= 0: the
        bound itself is drawn too), ``"(0:1]"``, ``"[-1:1]"``, or is an
        :class:`Interval` with ``closed=``.
    dtype : str or numpy dtype, optional
        A floating dtype (``"float32"``, ``np.float32``, ``torch.float32``).
    kwargs : mapping, optional
        Parameters passed to the op; a positional parameter without a default named
        here is not a tensor input (its value is passed in its place).
    atol, rtol : float, optional
        Tolerances, non-negative.
    broadcast : bool, optional
        Draw mutually broadcastable shapes instead of equal ones.
    max_examples : int, optional
        Number of generated examples (at least 1).
    mode : {"auto", "full", "fast"}, optional
        Full (element by element) or fast (random directions) numeric comparison.
    avoid : sequence of float, optional
        Points where the op is not differentiable (kinks: 0 for ``abs`` or ``relu``);
        values are drawn a small margin away from them. Without it, examples that hit
        a kink are skipped and counted, never failed.
    unique : bool, optional
        Draw distinct values (a small margin apart) across all inputs, for ops that
        are not differentiable at ties (``max``, ``sort``, ``maximum``).
    integers : mapping of int to (lo, hi), optional
        ``{i: (lo, hi)}``: tensor input ``i`` (counted among the tensor inputs, as for
        ``shapes``) is drawn as int64 in ``range(lo, hi)`` and is a constant (class
        labels, indices). Also one ``(lo, hi)`` or ``None`` per input:
        ``[None, (0, 3)]``.
    booleans : sequence of int, optional
        Tensor inputs drawn as boolean masks (constants).
    constants : sequence of int, optional
        Tensor inputs that need no gradient (``requires_grad=False`` for torch,
        ``constant=True`` for MyGrad); the check also makes sure they receive none.
    min_dims : int, optional
        The fewest dimensions of a drawn shape, for ops that reject smaller ones
        (``min_dims=2`` for an op of matrices).
    order : int, optional
        2: check order 1, then the gradient of the backward too (torch's
        ``gradgradcheck``), for torch and JAX targets; ``N`` (JAX, up to
        :data:`~gradcheck.checking.vocabulary.MAX_ORDER`): every order up to ``N``.
    modes : sequence of {"rev", "fwd"}, optional
        Check the backward (``"rev"``, the default), the ``jvp`` (``"fwd"``), or both.
    device : str, optional
        Run a torch target on this device (``"cuda"``).
    nondet_tol : float, optional
        How far a second backward on the same graph may differ (default 0: the same
        bits), for ops documented nondeterministic.
    skip_on : exception class or str, or a sequence of them, optional
        Exceptions that say an input is outside the op's domain (a class,
        ``"module:Name"``, or a builtin's name such as ``"ZeroDivisionError"``): an
        example where the forward raises one is skipped and counted, as one whose
        output is not finite. NumPy's and torch's ``LinAlgError`` (a singular matrix)
        always are; any other exception is a failure.
    reference_forward : callable or str, optional
        What the forward is meant to compute: a NumPy function of the same inputs
        (arrays) and keyword parameters, or ``"module:function"`` naming one. Every
        example also compares the op's output with it (kind ``forward_mismatch``).
    compiled : {"aot_eager", "eager", "inductor"} or True, optional
        Also run a torch op under ``torch.compile`` with this backend (True:
        ``"aot_eager"``), a JAX op under ``jax.jit``: its output and gradients must
        agree with the eager op's (kind ``compiled_mismatch``).
    batched : bool, optional
        Run a torch op, its backward and (with forward mode) its jvp under
        ``torch.func.vmap`` over a small batch: each element must agree with a plain
        call on it (kinds ``batched_forward``, ``batched_grad``). Default: on for a
        ``torch.autograd.Function`` that declares a vmap rule.
    time_budget : float, optional
        Seconds the search may spend drawing and checking new examples: when they are
        spent, it checks no new one and the result says so (its ``note``: how many of
        the examples were checked). A failure found before is still shrunk and
        reported; a target that must not run past a limit at all takes
        ``--timeout``.

    Returns
    -------
    The decorated class or function, unchanged except for its ``__gradcheck__``
    attribute.

    Examples
    --------
    >>> import gradcheck
    >>> @gradcheck.describe(domain=(0.5, 2.0), dtype="float32")
    ... def reciprocal(x):
    ...     return 1 / x
    >>> description_of(reciprocal).as_dict()
    {'domain': (0.5, 2.0), 'dtype': 'float32'}
    >>> description_of(lambda x: x) is None
    True
    """
    given = locals()  # the keywords: one per row of the table that describe() takes
    description = Description(
        **{
            name: normalize_setting(name, given[name])
            for name in names_taken_by(DESCRIBE)
            if given[name] is not None
        }
    )

    def decorate(obj: T) -> T:
        if not callable(obj):
            raise InvalidDescription(
                f"describe() decorates an Operation subclass or a function, not {obj!r}"
            )
        setattr(obj, ATTRIBUTE, description)
        return obj

    if target is not None:
        return decorate(target)
    return decorate


def description_of(target: Any) -> Description | None:
    """The :class:`Description` declared with :func:`describe` on ``target``, or
    ``None`` when it has none. A subclass inherits its base class's description."""
    found = getattr(target, ATTRIBUTE, None)
    return found if isinstance(found, Description) else None


def is_described(target: Callable[..., Any]) -> bool:
    """True when ``target`` was decorated with :func:`describe`."""
    return description_of(target) is not None


# --- value checks, shared with the command line, gradcheck.verify and the project ---
# configuration (gradcheck.frontend.config): one validator per setting, so a value is accepted or
# refused, with the same words, wherever it is given.
