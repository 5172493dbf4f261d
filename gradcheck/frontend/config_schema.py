"""The JSON Schema of ``[tool.gradcheck]`` (``gradcheck/schemas/config.schema.json``),
generated: each setting's key from its row of the settings table
(:mod:`gradcheck.search.settings`), the project's own keys and the shared definitions
from here.

The shipped file is this module's output; tests/search/test_settings_table.py compares them.
After changing a row, regenerate it::

    python -m gradcheck.frontend.config_schema
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gradcheck.search.settings import SETTINGS

__all__ = ["config_schema", "schema_text", "SCHEMA_FILE"]

#: The shipped file.
SCHEMA_FILE = Path(__file__).resolve().parent.parent / "schemas" / "config.schema.json"

_INTERVAL_TEXT = {"type": "string", "pattern": "^[^:]*:[^:]*$"}


def _definitions() -> dict[str, Any]:
    index = {"type": "integer", "minimum": 0}
    return {
        "index": index,
        "bound": {
            "description": "a number, or a string: a number, or empty for no bound",
            "type": ["number", "string"],
        },
        "interval": {
            "description": 'LO:HI as a string ("0:" for x >= 0) or as two bounds',
            "anyOf": [
                _INTERVAL_TEXT,
                {"type": "array", "minItems": 2, "maxItems": 2, "items": {"$ref": "#/$defs/bound"}},
            ],
        },
        "indices": {
            "anyOf": [
                {"$ref": "#/$defs/index"},
                {"type": "array", "items": {"$ref": "#/$defs/index"}},
            ]
        },
        "target": {
            "type": "object",
            "$ref": "#/$defs/options",
            "required": ["target"],
            "properties": {
                "target": {
                    "description": "the op, as on the command line: module:Name, "
                    "path/to/file.py:Name, or a module",
                    "type": "string",
                    "pattern": "\\S",
                }
            },
            "unevaluatedProperties": False,
        },
        "options": {
            "type": "object",
            "properties": {
                row.config_key: dict(row.schema or {})
                for row in SETTINGS
                if row.config_key is not None
            },
        },
    }


def config_schema() -> dict[str, Any]:
    """The schema, as a dict."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "[tool.gradcheck] of pyproject.toml",
        "description": "gradcheck's project configuration (gradcheck/frontend/config.py): "
        "settings for every target, and the targets to check. Keys are the long options of "
        "`gradcheck verify` without the dashes. Generated from the settings table "
        "(gradcheck/search/settings.py) by gradcheck/frontend/config_schema.py.",
        "type": "object",
        "$ref": "#/$defs/options",
        "properties": {
            "regression-factor": {
                "description": "how much a target's error ratio may grow past the baseline's "
                "before it is a regression (--regression-factor)",
                "type": "number",
                "minimum": 1,
            },
            "html": {
                "description": "also write the run's HTML report to this path, relative to "
                "the file's folder (--html)",
                "type": "string",
                "pattern": "\\S",
            },
            "targets": {
                "description": "the targets `gradcheck verify` (and `pytest --gradcheck`) "
                "check, each with its own settings over the ones above",
                "type": "array",
                "items": {"$ref": "#/$defs/target"},
            },
        },
        "unevaluatedProperties": False,
        "$defs": _definitions(),
    }


def schema_text() -> str:
    """The file's text: :func:`config_schema` as JSON, two spaces of indent."""
    return json.dumps(config_schema(), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    """Write :func:`schema_text` to :data:`SCHEMA_FILE` (or to the path given)."""
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else SCHEMA_FILE
    target.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
