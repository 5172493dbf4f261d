"""``gradcheck.cli``: the command line, at the path ``gradcheck.cli:main`` names.

The module lives in :mod:`gradcheck.frontend.cli`; importing this name gives that very
module (it replaces itself in ``sys.modules``), so its names, private ones included, are
the same under both paths. ``python -m gradcheck.cli`` runs the command.
"""

import importlib
import sys

_cli = importlib.import_module("gradcheck.frontend.cli")
if __name__ == "__main__":  # pragma: no cover
    _cli.main()
else:
    sys.modules[__name__] = _cli
