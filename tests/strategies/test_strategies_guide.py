"""The code in docs/strategies.md runs (its blocks in order, in one namespace)."""

from __future__ import annotations

import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "strategies.md"


def test_the_guide_runs():
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 4
    # The first block is the ten-line promise: imports, the op, the test.
    namespace: dict[str, object] = {"__name__": "guide"}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), namespace)
    assert "test_logcosh_gradient" in namespace
