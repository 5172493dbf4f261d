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

Keys are the long options of ``gradcheck verify`` without the dashes. Reading and
validating happen here, once; the command line, the pytest plugin and the CI workflow
all take the result. Every problem is a :class:`ConfigError` naming the file and the
key.
"""

from __future__ import annotations

import difflib
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gradcheck.errors import GradcheckError

__all__ = [
    "ConfigError",
    "ProjectConfig",
    "TargetConfig",
    "find_pyproject",
    "load_config",
    "OPTION_KEYS",
]

MODES = ("auto", "full", "fast")
DTYPES = ("float16", "float32", "float64")

#: Settings a target (or the defaults) may carry, and what each must be.
OPTION_KEYS = (
    "shapes",
    "domain",
    "dtype",
    "kwargs",
    "max-examples",
    "seed",
    "mode",
    "atol",
    "rtol",
    "broadcast",
)
#: Settings that only make sense for the whole project.
PROJECT_KEYS = ("targets", "regression-factor")


class ConfigError(GradcheckError):
    """A configuration file cannot be read or holds a bad key or value."""

    exit_code = 2


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
    regression_factor: float = 1.5

    def options_for(self, entry: TargetConfig) -> dict[str, Any]:
        """The defaults overlaid with the entry's own settings."""
        return {**self.defaults, **entry.options}


def find_pyproject(start: Path | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` in ``start`` (default: the working directory) or
    its parents, or None."""
    here = (start or Path(os.getcwd())).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(path: Path | str | None = None) -> ProjectConfig | None:
    """Read and validate ``[tool.gradcheck]``.

    With ``path`` None, the nearest ``pyproject.toml`` is read, and a project without
    one (or without the table) gives None. An explicit ``path`` must exist and may be
    a ``pyproject.toml`` (the ``[tool.gradcheck]`` table) or a file holding the table's
    contents at top level (say ``gradcheck.toml``).

    Raises
    ------
    ConfigError
        The file is missing or not valid TOML, or a key or value is wrong.
    """
    explicit = path is not None
    file = Path(path) if explicit else find_pyproject()
    if file is None:
        return None
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read the configuration file ({exc.strerror})") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    if file.name == "pyproject.toml" or not explicit:
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
    factor = table.get("regression-factor", 1.5)
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor >= 1:
        raise ConfigError(
            f"{file}: {where} key 'regression-factor' must be a number >= 1, got {factor!r}"
        )
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
    return ProjectConfig(file, defaults, tuple(targets), float(factor))


def _reject_unknown(file: Path, where: str, table: dict[str, Any], known: tuple[str, ...]) -> None:
    for key in table:
        if key not in known:
            close = difflib.get_close_matches(key.replace("_", "-"), known, n=1)
            hint = (
                f" (did you mean '{close[0]}'?)" if close else f"; known keys: {', '.join(known)}"
            )
            raise ConfigError(f"{file}: {where} has an unknown key '{key}'{hint}")


def _options(file: Path, where: str, raw: dict[str, Any]) -> dict[str, Any]:
    """Validate option values; return them under their Python names."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        problem = _check_value(key, value)
        if problem:
            raise ConfigError(f"{file}: {where} key '{key}' {problem}, got {value!r}")
        out[key.replace("-", "_")] = value
    return out


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _is_domain(x: Any) -> bool:
    return isinstance(x, list) and len(x) == 2 and all(_is_number(v) for v in x) and x[0] < x[1]


def _check_value(key: str, value: Any) -> str | None:
    """What is wrong with ``value`` for ``key``, or None."""
    if key == "shapes":
        if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
            return 'must be an array of shape specs, one per input, e.g. ["n,k", "k,m"]'
    elif key == "domain":
        if not (
            _is_domain(value)
            or (isinstance(value, list) and value and all(_is_domain(d) for d in value))
        ):
            return "must be [lo, hi] with lo < hi, or one such pair per input"
    elif key == "dtype":
        if value not in DTYPES:
            return f"must be one of {', '.join(DTYPES)}"
    elif key == "kwargs":
        if not isinstance(value, dict):
            return "must be a table of the op's keyword arguments"
    elif key == "max-examples":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return "must be a positive integer"
    elif key == "seed":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return "must be a non-negative integer"
    elif key == "mode":
        if value not in MODES:
            return f"must be one of {', '.join(MODES)}"
    elif key in ("atol", "rtol"):
        if not _is_number(value) or value < 0:
            return "must be a non-negative number"
    elif key == "broadcast":
        if not isinstance(value, bool):
            return "must be true or false"
    return None
