"""The checks of the settings' values: one ``normalize_<name>`` per kind of value
(shapes, domains, dtypes, tolerances, indices, sizes...), and
:func:`normalize_setting`, the one check of a setting's value by its row of the
settings table (:mod:`gradcheck.search.settings`), for ``describe``, ``verify``, the
configuration file and the command line. :mod:`gradcheck.search.description`
re-exports them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gradcheck.checking.vocabulary import MAX_ORDER, MODES
from gradcheck.defaults import MAX_EXAMPLES, MAX_MIN_DIMS, MAX_SECONDS, MIN_MEMORY
from gradcheck.errors import GradcheckError, InvalidDescription
from gradcheck.search.settings import COMPILE_BACKENDS, setting

Domain = tuple[float, float]


class Interval(tuple):  # type: ignore[type-arg]
    """A domain ``(lo, hi)`` that also says which of its finite bounds belong to it.

    It is a pair, and unpacks and compares as one (``lo, hi = interval``); ``closed``
    is ``(lo belongs, hi belongs)``. Written ``[0:`` (x >= 0), ``(0:1]``, ``[-1:1]``;
    ``0:1`` and a plain tuple are open. The search draws a closed bound itself, and
    values just inside every finite bound.

    >>> Interval(0.0, 1.0, closed=(True, False))
    Interval('[0:1)')
    >>> lo, hi = Interval(0.0, math.inf, closed=(True, False)); (lo, hi)
    (0.0, inf)
    """

    closed: tuple[bool, bool]

    def __new__(
        cls, lo: float, hi: float, *, closed: tuple[bool, bool] = (False, False)
    ) -> Interval:
        self = super().__new__(cls, (lo, hi))
        # an infinite bound is never drawn: it cannot be closed
        self.closed = (bool(closed[0]) and math.isfinite(lo), bool(closed[1]) and math.isfinite(hi))
        return self

    def __getnewargs_ex__(self) -> tuple[tuple[float, float], dict[str, Any]]:
        return (self[0], self[1]), {"closed": self.closed}

    @property
    def text(self) -> str:
        """The ``--domain`` spelling: ``[0:1)``, ``0:`` (open bounds have no bracket
        unless the other one is closed)."""
        lo, hi = self
        left = f"{lo:g}" if math.isfinite(lo) else ""
        right = f"{hi:g}" if math.isfinite(hi) else ""
        if not any(self.closed):
            return f"{left}:{right}"
        return f"{'[' if self.closed[0] else '('}{left}:{right}{']' if self.closed[1] else ')'}"

    def __repr__(self) -> str:
        return f"Interval({self.text!r})"


def normalize_shapes(shapes: Any) -> tuple[str | tuple[int | str, ...], ...]:
    """Check the container of shape specs; each spec itself is parsed by
    :func:`gradcheck.strategies.parse_shape_spec` when inputs are drawn. A size
    alone is a 1-d shape, as for NumPy.

    >>> normalize_shapes(["n,k", (2, "k"), 3, ()])
    ('n,k', (2, 'k'), (3,), ())
    """
    if isinstance(shapes, str) or not isinstance(shapes, Sequence):
        raise InvalidDescription(
            f"shapes must be a list with one shape per input, e.g. ['n,k', 'k,m'], got {shapes!r}"
        )
    out: list[Any] = []
    for spec in shapes:
        if isinstance(spec, Mapping):
            out.append(_tree_of_shapes(spec))
        elif isinstance(spec, str):
            out.append(spec)
        elif isinstance(spec, (int, np.integer)) and not isinstance(spec, bool) and spec >= 0:
            out.append((int(spec),))  # 3: a 1-d shape, as NumPy reads it
        elif isinstance(spec, Sequence) and all(
            isinstance(s, (int, str)) and not isinstance(s, bool) for s in spec
        ):
            out.append(tuple(spec))
        else:
            raise InvalidDescription(
                f"each shape must be a string like 'n,k' or a tuple of sizes and names, "
                f"got {spec!r}"
            )
    return tuple(out)


def _tree_of_shapes(spec: Any) -> Any:
    """A tree input's shapes (issue 38): a dict whose values are shapes, dicts or lists
    of them, each shape normalized as :func:`normalize_shapes` does its items.

    >>> _tree_of_shapes({"dense": {"w": "n,k", "b": 3}, "out": ["k"]})
    {'dense': {'w': 'n,k', 'b': (3,)}, 'out': ['k']}
    """
    if isinstance(spec, Mapping):
        if not all(isinstance(k, str) for k in spec):
            raise InvalidDescription(f"the keys of a tree of shapes must be strings, got {spec!r}")
        return {k: _tree_of_shapes(v) for k, v in spec.items()}
    if isinstance(spec, list):
        return [_tree_of_shapes(v) for v in spec]
    return normalize_shapes([spec])[0]


def _bound(text: Any, default: float) -> float:
    if isinstance(text, str) and not text.strip():
        return default
    if text is None:
        return default
    return float(text)


def _domain_pair(value: Any, what: str) -> Domain:
    closed = tuple(getattr(value, "closed", (False, False)))
    if isinstance(value, str):
        text, closed = _brackets(value.strip(), what)
        parts = text.split(":")
        if len(parts) != 2:
            raise InvalidDescription(
                f"{what} must look like LO:HI (e.g. -1:1, 0: for x > 0, or [0: for x >= 0 "
                f"with the bound itself), got {value!r}"
            )
        value = parts
    try:
        lo, hi = value
        lo, hi = _bound(lo, -math.inf), _bound(hi, math.inf)
    except (TypeError, ValueError):
        raise InvalidDescription(
            f"{what} must be two numbers LO:HI (e.g. -1:1), got {value!r}"
        ) from None
    if math.isnan(lo) or math.isnan(hi) or not lo < hi:
        raise InvalidDescription(f"{what} needs LO < HI, got {lo:g}:{hi:g}")
    if any(closed):
        return Interval(lo, hi, closed=(closed[0], closed[1]))
    return (lo, hi)


def _brackets(text: str, what: str) -> tuple[str, tuple[bool, bool]]:
    """``"[0:1)"`` -> ``("0:1", (True, False))``: a bracket closes its bound, a
    parenthesis or none leaves it open."""
    left = text[:1] in "[(" and bool(text)
    right = text[-1:] in "])" and bool(text)
    closed = (left and text[0] == "[", right and text[-1] == "]")
    inner = text[1 if left else 0 : len(text) - 1 if right else len(text)]
    if any(c in inner for c in "[]()"):
        raise InvalidDescription(
            f"{what}: brackets go around the interval ([0:1), (0:1]), got {text!r}"
        )
    for side, bound in zip(closed, inner.split(":")[:2]):
        if side and not bound.strip():
            raise InvalidDescription(
                f"{what}: only a finite bound can be closed, got {text!r} (e.g. [0: for "
                f"x >= 0, (0:1] for 0 < x <= 1)"
            )
    return inner, closed


def normalize_domain(domain: Any) -> Domain | tuple[Domain, ...]:
    """``(lo, hi)``, ``"lo:hi"`` or a sequence of those (one per input) as floats;
    ``None`` for a bound, or for a whole input's domain, means no bound (as ``0:``
    and ``:`` on the command line).

    >>> normalize_domain("-1:2")
    (-1.0, 2.0)
    >>> normalize_domain([(0, 1), "1:3"])
    ((0.0, 1.0), (1.0, 3.0))
    >>> normalize_domain([None, (0.0, 1.0)])
    ((-inf, inf), (0.0, 1.0))
    >>> normalize_domain((None, 1))
    (-inf, 1.0)
    """
    if isinstance(domain, str):
        return _domain_pair(domain, "domain")
    if _per_input(domain):
        pairs = tuple(
            _domain_pair((None, None) if d is None else d, f"domain of input {i}")
            for i, d in enumerate(domain)
        )
        return pairs[0] if len(pairs) == 1 else pairs
    return _domain_pair(domain, "domain")


def _per_input(domain: Any) -> bool:
    """A sequence of domains, one per input (``None``: that input has no bound),
    rather than one pair of bounds (``(0, None)``, ``[-1, 1]``)."""
    if not isinstance(domain, Sequence) or not domain:
        return False
    if len(domain) == 2 and all(_is_bound(d) for d in domain):
        return False  # (lo, hi), either of them None
    return all(d is None or isinstance(d, str) or (_is_sequence(d) and len(d) == 2) for d in domain)


def _is_bound(value: Any) -> bool:
    return value is None or (
        isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    )


def _is_sequence(value: Any) -> bool:
    return isinstance(value, Sequence) or (isinstance(value, np.ndarray) and value.ndim == 1)


#: dtypes a torch or JAX target may be checked in besides NumPy's real floats.
OTHER_DTYPES = ("complex128", "complex64", "bfloat16")


def normalize_dtype(dtype: Any) -> str:
    """The name of a floating NumPy dtype, or one of :data:`OTHER_DTYPES` (complex
    and bfloat16 inputs, for torch and JAX targets).

    >>> normalize_dtype("f4")
    'float32'
    >>> normalize_dtype("complex128")
    'complex128'
    >>> normalize_dtype(np.float16)
    'float16'
    """
    if isinstance(dtype, str) and dtype in OTHER_DTYPES:
        return dtype
    if str(dtype).startswith("torch.") and not isinstance(dtype, str):
        name = str(dtype).removeprefix("torch.")  # torch.float32, as a torch user writes it
        if name in OTHER_DTYPES:
            return name
        dtype = name
    if getattr(dtype, "__name__", None) == "bfloat16" or str(dtype) == "torch.bfloat16":
        return "bfloat16"
    try:
        dt: np.dtype[Any] = np.dtype(dtype)
    except TypeError:
        raise InvalidDescription(
            f"dtype {dtype!r} is not a NumPy dtype; use float64, float32 or float16"
        ) from None
    if dt.kind == "c" and dt.name in OTHER_DTYPES:
        return dt.name
    if dt.kind != "f" or dt.itemsize > 8:
        raise InvalidDescription(
            f"dtype must be float64, float32 or float16 (or, for torch and JAX targets, "
            f"complex128, complex64 or bfloat16), got {dt}"
        )
    return dt.name


def normalize_order(value: Any) -> int:
    """1 (the gradient), 2 (the gradient of the backward too), up to
    :data:`~gradcheck.checking.vocabulary.MAX_ORDER`."""
    if isinstance(value, bool) or value not in range(1, MAX_ORDER + 1):
        raise InvalidDescription(f"order must be an integer from 1 to {MAX_ORDER}, got {value!r}")
    return int(value)


def normalize_modes(value: Any) -> tuple[str, ...]:
    """A tuple of ``"rev"`` and ``"fwd"`` (``"rev,fwd"`` as a string too).

    >>> normalize_modes("rev,fwd")
    ('rev', 'fwd')
    """
    items = value.split(",") if isinstance(value, str) else value
    try:
        out = tuple(dict.fromkeys(str(m).strip() for m in items))
    except TypeError:
        out = ()
    if not out or any(m not in ("rev", "fwd") for m in out):
        raise InvalidDescription(f"modes must be rev, fwd or rev,fwd, got {value!r}")
    return out


def normalize_device(value: Any) -> str:
    """A torch device name (``"cuda"``, ``"cuda:1"``, ``"cpu"``)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidDescription(f"device must be a device name such as 'cuda', got {value!r}")
    return value.strip()


def normalize_skip_on(value: Any) -> tuple[str, ...]:
    """Exception classes or their names (``"module:Name"``, a builtin's name; one or a
    list) as their names. A name is checked for its form only: the module it names
    is the user's, imported where the op runs (the check), not where settings are read.

    >>> normalize_skip_on(["ZeroDivisionError", "numpy.linalg:LinAlgError"])
    ('ZeroDivisionError', 'numpy.linalg:LinAlgError')
    """
    from gradcheck.checking.outside import exception_class, exception_name

    items = [value] if isinstance(value, (str, type)) else value
    if not isinstance(items, Sequence) or not items:
        raise InvalidDescription(
            f"skip_on takes an exception class or 'module:ExceptionName' (a builtin by its "
            f"name alone), or a list of them, got {value!r}"
        )
    names = []
    for item in items:
        if isinstance(item, type) and issubclass(item, BaseException):
            names.append(exception_name(item))
            continue
        text = item.strip() if isinstance(item, str) else ""
        module, sep, name = text.rpartition(":")
        dotted = [*module.split("."), *name.split(".")] if sep else [name]
        if not name or not all(part.isidentifier() for part in dotted):
            raise InvalidDescription(
                f"skip_on: {item!r} is not an exception: write 'module:ExceptionName' "
                f"(numpy.linalg:LinAlgError) or a builtin exception's name"
            )
        if not sep:
            try:
                exception_class(name)  # a builtin: known here
            except GradcheckError as exc:
                raise InvalidDescription(str(exc)) from None
        names.append(text)
    return tuple(dict.fromkeys(names))


def normalize_reference_forward(value: Any) -> Any:
    """A reference forward: a function, or ``"module:function"`` (loaded when checked,
    in the process that checks)."""
    if callable(value):
        return value
    if isinstance(value, str):
        module, sep, name = value.strip().partition(":")
        if sep and module and name and ":" not in name and " " not in value.strip():
            return value.strip()
    raise InvalidDescription(
        f"reference_forward must be a function or 'module:function' (numpy:tanh), got {value!r}"
    )


def normalize_compiled(value: Any) -> str | None:
    """``compiled``: a backend name; True means ``"aot_eager"``, False None."""
    if value is False:
        return None
    if value is True:
        return "aot_eager"
    if isinstance(value, str) and value.strip() in COMPILE_BACKENDS:
        return value.strip()
    raise InvalidDescription(
        f"compiled must be true or one of {', '.join(COMPILE_BACKENDS)}, got {value!r}"
    )


def normalize_batched(value: Any) -> bool:
    """``batched``: true or false."""
    return normalize_broadcast(value, "batched")


def normalize_time_budget(value: Any) -> float:
    """Seconds: a finite number > 0, at most :data:`~gradcheck.defaults.MAX_SECONDS`."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value <= 0:
        raise InvalidDescription(f"time_budget must be a positive number of seconds, got {value!r}")
    if value > MAX_SECONDS:
        raise InvalidDescription(
            f"time_budget must be at most {MAX_SECONDS:.0f} seconds (a year), got {value:g}"
        )
    return float(value)


def normalize_nondet_tol(value: Any) -> float:
    """A finite number >= 0."""
    return normalize_tolerance(value, "nondet_tol")


def normalize_kwargs(kwargs: Any) -> dict[str, Any]:
    """A dict with string keys (the op's keyword parameters)."""
    if not isinstance(kwargs, Mapping) or not all(isinstance(k, str) for k in kwargs):
        raise InvalidDescription(
            f'kwargs must be a mapping of parameter names to values, e.g. {{"axis": 0}}, '
            f"got {kwargs!r}"
        )
    return dict(kwargs)


def normalize_mode(mode: Any) -> str:
    """One of ``"auto"``, ``"full"``, ``"fast"``."""
    if mode not in MODES:
        raise InvalidDescription(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return str(mode)


def normalize_avoid(points: Any) -> tuple[float, ...]:
    """A tuple of finite floats (the points an op is not differentiable at)."""
    if isinstance(points, (int, float)) and not isinstance(points, bool):
        points = (points,)
    try:
        out = tuple(float(p) for p in points)
    except (TypeError, ValueError):
        raise InvalidDescription(
            f"avoid must be a list of numbers (e.g. [0.0]), got {points!r}"
        ) from None
    if not all(math.isfinite(p) for p in out):
        raise InvalidDescription(f"avoid must hold finite numbers, got {points!r}")
    return out


def normalize_tolerance(value: Any, name: str = "tolerance") -> float:
    """A finite float >= 0 (``atol``, ``rtol``).

    >>> normalize_tolerance(1e-6, "rtol")
    1e-06
    """
    if isinstance(value, bool):
        raise InvalidDescription(f"{name} must be a number, got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InvalidDescription(f"{name} must be a number, got {value!r}") from None
    if not (out >= 0 and math.isfinite(out)):
        raise InvalidDescription(f"{name} must be a finite number >= 0, got {value!r}")
    return out


def _integer(value: Any, name: str, low: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InvalidDescription(f"{name} must be an integer >= {low}, got {value!r}")
    if value < low:
        raise InvalidDescription(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def normalize_max_examples(value: Any) -> int:
    """An integer from 1 to :data:`MAX_EXAMPLES` (examples per target)."""
    count = _integer(value, "max_examples", 1)
    if count > MAX_EXAMPLES:
        raise InvalidDescription(
            f"max_examples must be at most {MAX_EXAMPLES:,} (a run that long would not end), "
            f"got {count:.3g}"
        )
    return count


def normalize_seed(value: Any) -> int:
    """An integer >= 0 (the seed of a run)."""
    return _integer(value, "seed", 0)


def normalize_broadcast(value: Any, name: str = "broadcast") -> bool:
    """``True`` or ``False``; anything else (``1``, ``"yes"``) is refused rather than
    guessed (``broadcast``, ``unique``)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidDescription(f"{name} must be true or false, got {value!r}")
    return bool(value)


def normalize_indices(value: Any, name: str = "constants") -> tuple[int, ...]:
    """Indices of tensor inputs (``constants``, ``booleans``): an int or a sequence of
    ints >= 0, sorted, without repeats.

    >>> normalize_indices([2, 0])
    (0, 2)
    """
    items = [value] if isinstance(value, (int, np.integer, str)) else value
    try:
        out = [_integer(int(v) if isinstance(v, str) else v, name, 0) for v in items]
    except (TypeError, ValueError):
        raise InvalidDescription(
            f"{name} must be a list of input indices (e.g. [1]), got {value!r}"
        ) from None
    except InvalidDescription:
        raise InvalidDescription(
            f"{name} must be a list of input indices >= 0 (e.g. [1]), got {value!r}"
        ) from None
    return tuple(sorted(set(out)))


def normalize_integers(value: Any) -> dict[int, tuple[int, int]]:
    """``{input: (lo, hi)}`` with ints ``lo < hi``, from a mapping, from
    ``"I:LO:HI"`` strings (the command line's ``--integers``), or from a list with one
    ``(lo, hi)`` or ``None`` (not an integer input) per input.

    >>> normalize_integers({1: (0, 3)})
    {1: (0, 3)}
    >>> normalize_integers(["1:0:3", "2:-1:2"])
    {1: (0, 3), 2: (-1, 2)}
    >>> normalize_integers([None, (0, 3)])
    {1: (0, 3)}
    """
    if isinstance(value, str):
        value = [value]
    pairs: list[tuple[Any, Any]] = []
    if isinstance(value, Mapping):
        pairs = list(value.items())
    elif isinstance(value, Sequence):
        for position, item in enumerate(value):
            if item is None:
                continue  # one entry per input: this one is not an integer input
            if isinstance(item, Sequence) and not isinstance(item, str) and len(item) == 2:
                pairs.append((position, item))
                continue
            parts = item.split(":") if isinstance(item, str) else None
            if parts is None or len(parts) != 3:
                raise InvalidDescription(
                    f"integers must look like I:LO:HI (input I drawn from range(LO, HI), "
                    f"e.g. 1:0:3), or be one (lo, hi) or None per input, got {item!r}"
                )
            pairs.append((parts[0], parts[1:]))
    else:
        raise InvalidDescription(
            f"integers must map input indices to (lo, hi), e.g. {{1: (0, 3)}}, got {value!r}"
        )
    out: dict[int, tuple[int, int]] = {}
    for index, bounds in pairs:
        try:
            i = int(index)
            lo, hi = (int(b) for b in bounds)
        except (TypeError, ValueError):
            raise InvalidDescription(
                f"integers must map input indices to integer bounds (lo, hi), e.g. "
                f"{{1: (0, 3)}}, got {index!r}: {bounds!r}"
            ) from None
        if i < 0 or lo >= hi:
            raise InvalidDescription(
                f"integers needs an input index >= 0 and LO < HI (values are drawn from "
                f"range(LO, HI)), got {i}:{lo}:{hi}"
            )
        out[i] = (lo, hi)
    return out


def normalize_min_dims(value: Any) -> int:
    """An integer from 0 to :data:`~gradcheck.defaults.MAX_MIN_DIMS` (the fewest
    dimensions of a drawn shape)."""
    out = _integer(value, "min_dims", 0)
    if out > MAX_MIN_DIMS:
        raise InvalidDescription(f"min_dims must be at most {MAX_MIN_DIMS}, got {value!r}")
    return out


def normalize_seconds(value: Any) -> float:
    """A time limit of the run (``timeout``, ``example_timeout``): a finite number of
    seconds > 0 and at most :data:`~gradcheck.defaults.MAX_SECONDS`."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value <= 0:
        raise InvalidDescription(f"must be a positive number of seconds, got {value!r}")
    if value > MAX_SECONDS:
        raise InvalidDescription(
            f"must be at most {MAX_SECONDS:.0f} seconds (a year), got {value:g}"
        )
    return float(value)


_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def normalize_memory(value: Any) -> int:
    """A memory limit per worker process, in bytes: a number of bytes, or a size such
    as ``"512M"``, ``"4G"``, ``"1.5GiB"``; ``"none"`` (0) for no limit.

    >>> normalize_memory("4G"), normalize_memory(2**30), normalize_memory("none")
    (4294967296, 1073741824, 0)
    """
    if isinstance(value, str):
        text = value.strip().upper().removesuffix("B").removesuffix("I")
        if text == "NONE":
            return 0
        unit = text[-1:] if text[-1:] in _UNITS else ""
        try:
            number = float(text[: len(text) - len(unit)])
        except ValueError:
            number = math.nan
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        number, unit = float(value), ""
    else:
        number, unit = math.nan, ""
    size = number * _UNITS[unit] if math.isfinite(number) else math.nan
    if not MIN_MEMORY <= size <= 2**62:
        raise InvalidDescription(
            f"must be a size of at least 256M (bytes, or with K, M, G, T: '4G'), or 'none', "
            f"got {value!r}"
        )
    return int(size)


# (the checks that name their setting in their message)
def normalize_atol(value: Any) -> float:
    """``atol``: a finite number >= 0."""
    return normalize_tolerance(value, "atol")


def normalize_rtol(value: Any) -> float:
    """``rtol``: a finite number >= 0."""
    return normalize_tolerance(value, "rtol")


def normalize_unique(value: Any) -> bool:
    """``unique``: true or false."""
    return normalize_broadcast(value, "unique")


def normalize_booleans(value: Any) -> tuple[int, ...]:
    """``booleans``: input indices."""
    return normalize_indices(value, "booleans")


def normalize_constants(value: Any) -> tuple[int, ...]:
    """``constants``: input indices."""
    return normalize_indices(value, "constants")


def normalize_setting(name: str, value: Any) -> Any:
    """``value`` checked and normalized as the setting ``name``'s row of the table
    (:mod:`gradcheck.search.settings`) says: by ``normalize_<its normalize>`` of this
    module. The one check of a setting's value, for ``describe``, ``verify``, the
    configuration file and the command line.

    >>> normalize_setting("modes", "rev,fwd")
    ('rev', 'fwd')

    Raises
    ------
    InvalidDescription
        The value is not one the setting takes; ``exc.field`` names the setting.
    KeyError
        No setting is called ``name``.
    """
    row = setting(name)
    if row.normalize is None:
        return value
    check = globals()[f"normalize_{row.normalize}"]
    try:
        return check(value)
    except InvalidDescription as exc:
        exc.field = name
        raise
