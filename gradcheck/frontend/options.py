"""The options of ``gradcheck verify`` that give settings, made from the settings table.

Each row of :data:`gradcheck.search.settings.SETTINGS` with a ``flag`` becomes one click
option (:func:`setting_options`: its type, metavar, help); the same rows say which
options the replay command repeats (:data:`FLAGS`), how an option's value becomes the
setting's (:func:`settings_from_options`) and which option set a setting
(:data:`OPTION_OF_SETTING`, for error messages). Adding a setting to the command line
is adding a row to the table; this module needs no change unless the row's value is
read in a new way (a new ``cli_type`` or ``cli_value``).

Like :mod:`gradcheck.cli`, it imports neither NumPy nor the engine: ``gradcheck verify
--help`` is made from it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from gradcheck.errors import InvalidDescription
from gradcheck.frontend.files import unreadable_number
from gradcheck.search.settings import FIRST_RUN_OPTION, SETTINGS, Setting

__all__ = [
    "setting_options",
    "settings_from_options",
    "FLAGS",
    "SWITCHES",
    "SETTING_OF_OPTION",
    "OPTION_OF_SETTING",
    "CLI_ROWS",
]

F = TypeVar("F", bound=Callable[..., Any])

#: The rows with an option of ``gradcheck verify``, in ``--help``'s order.
CLI_ROWS: tuple[Setting, ...] = tuple(row for row in SETTINGS if row.flag is not None)
# Options of `verify` that configure a check, in the order a replay command lists them,
# with the flag that sets each (--seed: the replay adds the run's own).
FLAGS: dict[str, str] = {row.option: row.flag for row in CLI_ROWS if row.replayed}  # type: ignore[misc]
# The settings name (as in gradcheck.describe / gradcheck.verify) of each option whose
# name differs ("--shape" gives shapes: one per input; --forward-mode gives modes).
SETTING_OF_OPTION: dict[str, str] = {
    row.option: row.setting  # type: ignore[misc]
    for row in CLI_ROWS
    if row.option != row.setting
}
# The option of each setting whose name differs (--shape for shapes; modes has --modes:
# --forward-mode is another spelling of one of its values).
OPTION_OF_SETTING: dict[str, str] = {
    row.setting: row.option  # type: ignore[misc]
    for row in CLI_ROWS
    if row.option != row.setting and row.sets is None
}
# Flags that are on/off switches, and the flag that turns each off.
SWITCHES: dict[str, str] = {row.option: row.off_flag for row in CLI_ROWS if row.off_flag}  # type: ignore[misc]


# (ParamType is generic from click 8.2 on; ParamType[float] would not import under 8.1)
class _Tolerance(click.ParamType):  # type: ignore[type-arg, unused-ignore]
    """``--atol`` / ``--rtol``: a finite number >= 0, validated as in the config file
    (``inf`` would silently turn checking off, ``nan`` fail every op)."""

    name = "float"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        from gradcheck.search.validators import normalize_tolerance

        try:
            return normalize_tolerance(value, f"--{param.name}" if param else "tolerance")
        except InvalidDescription as exc:
            self.fail(str(exc), param, ctx)


class _Seconds(click.ParamType):  # type: ignore[type-arg, unused-ignore]
    """A time limit: a positive, finite number of seconds."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from gradcheck.search.validators import normalize_seconds

        try:
            return normalize_seconds(float(value))
        except ValueError:
            self.fail(f"must be a positive number of seconds, got {value!r}", param, ctx)
        except InvalidDescription as exc:
            self.fail(str(exc), param, ctx)


class _Memory(click.ParamType):  # type: ignore[type-arg, unused-ignore]
    """A memory limit: a size ('4G') or 'none' (0)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from gradcheck.search.validators import normalize_memory

        try:
            return normalize_memory(value)
        except InvalidDescription as exc:
            self.fail(str(exc), param, ctx)


_TYPES: dict[str, Any] = {
    "text": None,
    "switch": None,
    "float": float,
    "tolerance": _Tolerance(),
    "seconds": _Seconds(),
    "memory": _Memory(),
}


def _click_type(row: Setting) -> Any:
    kind = row.cli_type
    if isinstance(kind, tuple) and kind[0] == "range":
        return click.IntRange(min=kind[1], max=kind[2])
    if isinstance(kind, tuple) and kind[0] == "choice":
        return click.Choice(list(kind[1]))
    return _TYPES[kind]


def _option(row: Setting) -> Callable[[F], F]:
    """The click option of one row."""
    spec: dict[str, Any] = {"help": row.help}
    if row.metavar is not None:
        spec["metavar"] = row.metavar
    if row.multiple:
        spec["multiple"] = True
    if row.off_flag is not None:  # an on/off switch: None when neither is given
        return click.option(f"{row.flag}/{row.off_flag}", default=None, **spec)
    if row.flag_value is not None:  # `--compiled` alone means its flag value
        spec.update(is_flag=False, flag_value=row.flag_value)
    kind = _click_type(row)
    if kind is not None:
        spec["type"] = kind
    return click.option(row.flag, **spec)  # type: ignore[arg-type]


def setting_options(part: str) -> Callable[[F], F]:
    """The click options of the table's rows, as one decorator: ``part`` ``"checks"``
    for those ``--help`` lists before ``--format``, ``"run"`` for those from
    :data:`~gradcheck.search.settings.FIRST_RUN_OPTION` on."""
    split = next(i for i, row in enumerate(CLI_ROWS) if row.name == FIRST_RUN_OPTION)
    rows = CLI_ROWS[:split] if part == "checks" else CLI_ROWS[split:]

    def decorate(command: F) -> F:
        for row in reversed(rows):  # click lists the decorator applied last first
            command = _option(row)(command)
        return command

    return decorate


# --- option values ----------------------------------------------------------------


def parse_shapes(values: Sequence[str]) -> tuple[Any, ...] | None:
    """The ``--shape`` specs; one that starts with ``{`` is the JSON of a tree input's
    shapes (``{"dense": {"w": "n,k", "b": "k"}}``: one leaf per shape)."""
    if not values:
        return None
    from hypothesis.errors import InvalidArgument

    from gradcheck.checking.trees import of_specs
    from gradcheck.strategies import parse_shape_spec

    specs: list[Any] = []
    for value in values:
        spec: Any = value
        if value.lstrip().startswith("{"):
            try:
                spec = json.loads(value)
            except json.JSONDecodeError as exc:
                raise click.BadParameter(
                    f"{value!r} is not valid JSON ({exc}); a tree of shapes is written "
                    f'{{"dense": {{"w": "n,k", "b": "k"}}}}',
                    param_hint="'--shape'",
                ) from None
        for leaf in of_specs([spec])[0]:
            if not isinstance(leaf, str):
                raise click.BadParameter(
                    f'each shape in a tree of shapes is a string like "n,k", got {leaf!r}',
                    param_hint="'--shape'",
                )
            try:
                parse_shape_spec(leaf)
            except InvalidArgument as exc:
                raise click.BadParameter(str(exc), param_hint="'--shape'") from None
        specs.append(spec)
    return tuple(specs)


def parse_domain(values: Sequence[str]) -> Any:
    if not values:
        return None
    from gradcheck.search.validators import normalize_domain

    try:
        return normalize_domain(values[0] if len(values) == 1 else list(values))
    except InvalidDescription as exc:
        raise click.BadParameter(
            f"{exc} (give LO:HI once for all inputs or once per input)",
            param_hint="'--domain'",
        ) from None


def parse_kwargs(value: str | None) -> dict[str, Any] | None:
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else unreadable_number(exc)
        raise click.BadParameter(
            f"not valid JSON ({why}); give a JSON object, e.g. '{{\"axis\": 0}}'",
            param_hint="'--kwargs'",
        ) from None
    if not isinstance(parsed, dict):
        raise click.BadParameter(
            f"must be a JSON object of parameter names and values, e.g. "
            f"'{{\"axis\": 0}}', got {value!r}",
            param_hint="'--kwargs'",
        )
    return parsed


def parse_integers(values: Sequence[str]) -> dict[int, tuple[int, int]] | None:
    if not values:
        return None
    from gradcheck.search.validators import normalize_integers

    try:
        return normalize_integers(list(values))
    except InvalidDescription as exc:
        raise click.BadParameter(str(exc), param_hint="'--integers'") from None


#: How an option's value (as click parsed it) becomes its setting's: a row's
#: ``cli_value``. A repeatable option without one gives its values, or None for none.
VALUES: dict[str, Callable[[Any], Any]] = {
    "shapes": parse_shapes,
    "domain": parse_domain,
    "json": parse_kwargs,
    "integers": parse_integers,
    "forward_mode": lambda on: ("rev", "fwd") if on else ("rev",),
}


def settings_from_options(ctx: click.Context) -> dict[str, Any]:
    """The options given on the command line, parsed, as keyword arguments of verify()
    (and the run's time limits)."""
    out = {}
    for row in CLI_ROWS:
        option = row.option
        if not row.replayed or (
            ctx.get_parameter_source(option)  # type: ignore[arg-type]
            is not click.core.ParameterSource.COMMANDLINE
        ):
            continue
        value = ctx.params[option]  # type: ignore[index]
        if row.cli_value is not None:
            value = VALUES[row.cli_value](value)
        elif row.multiple:
            value = value or None
        out[row.setting] = value
    return out
