"""``gradcheck.pytest_plugin``, the path ``pytest -p gradcheck.pytest_plugin`` names.

The plugin lives in :mod:`gradcheck.frontend.pytest_plugin`; importing this name gives
that very module (this one replaces itself in ``sys.modules``), so pytest registers one
plugin whichever path loaded it, and nothing heavy is imported here either.
"""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("gradcheck.frontend.pytest_plugin")
