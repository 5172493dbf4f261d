"""``gradcheck.adapters``, the path users write (``@gradcheck.adapters.framework("torch")``).

The package lives in :mod:`gradcheck.checking.adapters`; importing this name gives that
very package (this module replaces itself in ``sys.modules``), so its names, private ones
included, and the identity of its objects are the same under both paths.
"""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("gradcheck.checking.adapters")
