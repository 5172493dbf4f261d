"""``gradcheck.diagnostics``, the path users import ``diagnose`` from.

The module lives in :mod:`gradcheck.checking.diagnostics`; importing this name gives that
very module (this one replaces itself in ``sys.modules``), so its names, private ones
included, and the identity of its classes are the same under both paths.
"""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("gradcheck.checking.diagnostics")
