"""Hypothesis plugin: makes ``st.from_type(gradcheck.Tensor)`` draw from
:func:`gradcheck.strategies.tensors`.

Declared in ``pyproject.toml`` under ``[project.entry-points.hypothesis]``; Hypothesis
calls :func:`_register` when it is imported, for an installed gradcheck (entry points
belong to installed distributions). Call it yourself to get the same registration
from a source checkout.
"""

from __future__ import annotations


def _register() -> None:
    """Register ``tensors()`` as the strategy for :class:`gradcheck.Tensor`.

    Imports happen here, not at module level: Hypothesis runs this hook while it is
    itself being imported.

    Examples
    --------
    >>> from hypothesis import find, strategies as st
    >>> import gradcheck as mg
    >>> _register()
    >>> find(st.from_type(mg.Tensor), lambda t: t.size > 1)
    Tensor([0., 0.])
    """
    from hypothesis import strategies as st

    from gradcheck.strategies.tensors import tensors
    from gradcheck.tensor_base import Tensor

    st.register_type_strategy(Tensor, tensors())
