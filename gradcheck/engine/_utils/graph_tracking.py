"""Whether ops record the graph, under MyGrad's name for it (``TRACK_GRAPH``).

gradcheck keeps the switch in :data:`gradcheck.graph.NO_AUTODIFF_DEPTH`, a context
variable (each thread and asyncio task has its own); ``TRACK_GRAPH`` reads it: True
outside every :data:`no_autodiff` block of the calling thread and task.
"""

from __future__ import annotations

from typing import Any

from gradcheck.engine.graph import _NoAutodiff, is_tracking, no_autodiff

__all__ = ["no_autodiff"]  # and TRACK_GRAPH, computed on each read (below)

_NoAutoDiff = _NoAutodiff  # MyGrad's name for the class of `no_autodiff`


def __getattr__(name: str) -> Any:
    # (a module attribute computed on each read: the switch is per thread and task)
    if name == "TRACK_GRAPH":
        return is_tracking()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
