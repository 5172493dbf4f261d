"""The Hypothesis entry point's old path, for environments installed before it moved.

The hook is ``_gradcheck_entry_points:_hypothesis_setup_hook`` now (a top-level module
of the distribution, which imports nothing of gradcheck's: see its docstring). The
metadata of an environment installed earlier still names this module; reinstalling
gradcheck there (``pip install -e .``) makes this module unused.
"""

from __future__ import annotations


def _register() -> None:
    """Register ``tensors()`` as the strategy for :class:`gradcheck.Tensor`, as the
    entry point does."""
    from _gradcheck_entry_points import _hypothesis_setup_hook

    _hypothesis_setup_hook()
