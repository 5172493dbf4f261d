"""Project configuration: the ``[tool.gradcheck]`` table of ``pyproject.toml``.

::

    [tool.gradcheck]
    max-examples = 50          # defaults for every target below
    seed = 0

    [[tool.gradcheck.targets]]
    target = "mypkg.ops:Softplus"
    domain = [-5, 5]

    [[tool.gradcheck.targets]]
    target = "mypkg.ops:Matmul"
    shapes = ["n,k", "k,m"]
    dtype = "float32"
    rtol = 1e-3

Keys are the long options of ``gradcheck verify`` without the dashes, the repeatable
``--shape``, ``--constant`` and ``--boolean`` in the plural. Reading and
validating happen here, once; the command line, the pytest plugin and the CI workflow
all take the result. Every problem is a :class:`ConfigError` naming the file and the
key.
"""

from __future__ import annotations

import difflib
import math
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gradcheck.defaults import DEFAULT_REGRESSION_FACTOR, MAX_SECONDS, MIN_MEMORY
from gradcheck.errors import ConfigError, InvalidDescription
from gradcheck.frontend.files import read_text, unreadable_number
from gradcheck.search.precedence import layered
from gradcheck.search.settings import RUN, SETTINGS, names_taken_by
from gradcheck.search.validators import (
    normalize_memory,
    normalize_seconds,
    normalize_setting,
    normalize_shapes,
)

__all__ = [
    "ConfigError",
    "ProjectConfig",
    "TargetConfig",
    "find_pyproject",
    "load_config",
    "normalize_memory",
    "normalize_seconds",
    "MAX_SECONDS",
    "MIN_MEMORY",
    "OPTION_KEYS",
    "RUN_LIMITS",
]

#: Settings of the run around the checks (``gradcheck verify``'s time and memory limits), not of
#: :func:`gradcheck.verify`: under their Python names.
RUN_LIMITS = names_taken_by(RUN)
#: Settings a target (or the defaults) may carry: the rows of the settings table
#: (:mod:`gradcheck.search.settings`) that the configuration takes, every setting of
#: :func:`gradcheck.verify` and the run's limits, spelled as the long options
#: (``max-examples``).
OPTION_KEYS = tuple(row.config_key for row in SETTINGS if row.config_key is not None)

#: The largest configuration file read (a pyproject.toml is a few kB).
CONFIG_SIZE_LIMIT = 4 << 20

#: Settings that only make sense for the whole project.
PROJECT_KEYS = ("targets", "regression-factor", "html")


@dataclass(frozen=True)
class TargetConfig:
    """One entry of ``[[tool.gradcheck.targets]]``: what to check and how.

    ``options`` holds only the keys given in the file, in the Python spelling of
    :func:`gradcheck.verify`'s keywords (``max-examples`` becomes ``max_examples``).
    """

    target: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProjectConfig:
    """The validated ``[tool.gradcheck]`` table of one file."""

    path: Path
    defaults: dict[str, Any] = field(default_factory=dict)
    targets: tuple[TargetConfig, ...] = ()
    regression_factor: float = DEFAULT_REGRESSION_FACTOR
    #: Whether the table has a ``targets`` key (``targets = []`` lists none: a run of
    #: the configuration then checks nothing, rather than the engine's own ops).
    lists_targets: bool = False
    #: ``html``: where a run of the configuration also writes its HTML report
    #: (``--html``), resolved against the file's folder; None for no report.
    html: Path | None = None

    def options_for(self, entry: TargetConfig) -> dict[str, Any]:
        """The defaults overlaid with the entry's own settings."""
        return layered(project=self.defaults, entry=entry.options)


def is_regression_factor(value: Any) -> bool:
    """A regression factor is a finite number >= 1 (the one check, for the file and
    ``--regression-factor``)."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 1
    )


def find_pyproject(start: Path | None = None) -> Path | None:
    """The project's configuration file, found as ruff finds its own: the first
    ``pyproject.toml`` with a ``[tool.gradcheck]`` table in ``start`` (default: the
    working directory) or its parents, up to the repository root (the first folder
    with a ``.git``); None if there is none. A ``pyproject.toml`` without the table (a
    sub-package's own) is passed over; one that cannot be read is an error.

    Raises
    ------
    ConfigError
        A ``pyproject.toml`` on the way is not valid TOML (or not UTF-8...).
    """
    here = (start or Path(os.getcwd())).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            tool = _read_toml(candidate).get("tool")
            if isinstance(tool, dict) and "gradcheck" in tool:
                return candidate
        if (folder / ".git").exists():
            break
    return None


def _read_toml(file: Path) -> dict[str, Any]:
    """A TOML file's document; every way it cannot be read is one ConfigError."""
    text = read_text(file, what="configuration file", limit=CONFIG_SIZE_LIMIT, error=ConfigError)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(
            f"{file}: not a configuration gradcheck reads: nested too deeply"
        ) from None
    except ValueError as exc:  # a number of more than 4300 digits...
        raise ConfigError(
            f"{file}: not a configuration gradcheck reads: {unreadable_number(exc)}"
        ) from None


def load_config(path: Path | str | None = None) -> ProjectConfig | None:
    """Read and validate ``[tool.gradcheck]``.

    With ``path`` None, the file :func:`find_pyproject` finds is read, and a project
    without one gives None. An explicit ``path`` must exist and may be
    a ``pyproject.toml`` (the ``[tool.gradcheck]`` table) or a file holding the table's
    contents at top level (say ``gradcheck.toml``), or a ``[tool.gradcheck]`` table.

    Raises
    ------
    ConfigError
        The file is missing or not valid TOML, or a key or value is wrong.
    """
    explicit = path is not None
    file = Path(path) if path is not None else find_pyproject()
    if file is None:
        return None
    document = _read_toml(file)
    # Another file holds the table's keys at top level, or a [tool.gradcheck] table of
    # its own (a copy of a pyproject.toml's).
    nested = isinstance(document.get("tool"), dict) and "gradcheck" in document["tool"]
    if file.name == "pyproject.toml" or not explicit or nested:
        table = document.get("tool", {}).get("gradcheck")
        where = "[tool.gradcheck]"
        if table is None:
            if explicit:
                raise ConfigError(f"{file}: has no [tool.gradcheck] table")
            return None
    else:
        table, where = document, "the top level"
    return _parse(file, table, where)


def _parse(file: Path, table: Any, where: str) -> ProjectConfig:
    if not isinstance(table, dict):
        raise ConfigError(f"{file}: {where} must be a table")
    _reject_unknown(file, where, table, OPTION_KEYS + PROJECT_KEYS)
    defaults = _options(file, where, {k: v for k, v in table.items() if k in OPTION_KEYS})
    factor = table.get("regression-factor", DEFAULT_REGRESSION_FACTOR)
    if not is_regression_factor(factor):
        raise ConfigError(
            f"{file}: {where} key 'regression-factor' must be a number >= 1, got {factor!r}"
        )
    html = table.get("html")
    if html is not None and (not isinstance(html, str) or not html.strip()):
        raise ConfigError(f"{file}: {where} key 'html' must be a file path, got {html!r}")
    raw_targets = table.get("targets", [])
    if not isinstance(raw_targets, list):
        raise ConfigError(f"{file}: {where} key 'targets' must be an array of tables")
    targets = []
    for n, entry in enumerate(raw_targets, 1):
        place = f"{where} targets entry {n}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{file}: {place} must be a table")
        _reject_unknown(file, place, entry, ("target", *OPTION_KEYS))
        name = entry.get("target")
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(
                f"{file}: {place} needs a 'target' key naming the op, e.g. "
                f'target = "mymodule:MyOp"'
            )
        options = _options(file, place, {k: v for k, v in entry.items() if k != "target"})
        targets.append(TargetConfig(name.strip(), options))
    return ProjectConfig(
        file,
        defaults,
        tuple(targets),
        float(factor),
        "targets" in table,
        None if html is None else file.parent / html,
    )


def _reject_unknown(file: Path, where: str, table: dict[str, Any], known: tuple[str, ...]) -> None:
    for key in table:
        if key not in known:
            close = difflib.get_close_matches(key.replace("_", "-"), known, n=1)
            hint = (
                f" (did you mean '{close[0]}'?)" if close else f"; known keys: {', '.join(known)}"
            )
            raise ConfigError(f"{file}: {where} has an unknown key '{key}'{hint}")


def _options(file: Path, where: str, raw: dict[str, Any]) -> dict[str, Any]:
    """Validate option values with the same checks as ``@gradcheck.describe`` and the
    command line (:mod:`gradcheck.search.description`); return them normalized, under their
    Python names."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        try:
            out[key.replace("-", "_")] = _NORMALIZERS[key](value)
        except InvalidDescription as exc:
            # "mode must be one of ..." reads "key 'mode' must be one of ...".
            text = str(exc)
            for name in (key.replace("-", "_"), key):
                if text.startswith(name + " "):
                    text = text[len(name) + 1 :]
                    break
            else:
                text = f": {text}"
            raise ConfigError(f"{file}: {where} key '{key}' {text}".replace(" :", ":")) from None
    return out


def _shapes(value: Any) -> tuple[Any, ...]:
    # A TOML string is not a list of shapes, though it is a sequence.
    shapes = normalize_shapes(value)
    specs = [s for s in shapes if isinstance(s, str)]
    if specs:
        # The spec syntax belongs to the strategies (imported only when shapes are given).
        from hypothesis.errors import InvalidArgument

        from gradcheck.strategies import parse_shape_spec

        for spec in specs:
            try:
                parse_shape_spec(spec)
            except InvalidArgument as exc:
                raise InvalidDescription(str(exc)) from None
    return shapes


def _normalizer(name: str) -> Callable[[Any], Any]:
    if name == "shapes":
        return _shapes  # the specs' syntax too, before the run
    return lambda value: normalize_setting(name, value)


_NORMALIZERS: dict[str, Callable[[Any], Any]] = {
    key: _normalizer(key.replace("-", "_")) for key in OPTION_KEYS
}
