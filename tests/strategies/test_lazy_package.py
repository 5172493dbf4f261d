"""``gradcheck.strategies`` imports each public name's module when it is first asked
for: a search (and the zygote a torch target's worker forks from) needs the inputs'
and shapes' modules alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import gradcheck.strategies as strategies

ROOT = Path(__file__).resolve().parents[2]
UNUSED = ("graphs", "indices")


def test_a_search_imports_none_of_the_other_strategies() -> None:
    script = (
        "import sys, warnings; warnings.simplefilter('ignore')\n"
        "import gradcheck.strategies.inputs\n"
        "from gradcheck.search.verifier import verify\n"
        "from gradcheck.builtin_targets import multiply\n"
        "assert verify(multiply, max_examples=3, seed=0).verdict == 'passed'\n"
        f"print(sorted(m for m in {UNUSED!r} if 'gradcheck.strategies.' + m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", strategies.__all__)
def test_every_public_name_is_there_when_asked_for(name: str) -> None:
    """Each name is what its module defines, never a module (``gradients`` and
    ``tensors`` are also their modules' names)."""
    import types
    from importlib import import_module

    for module in ("graphs", "indices", "tensors", "gradients"):  # (bound, in any order)
        import_module(f"gradcheck.strategies.{module}")
    value = getattr(strategies, name)
    assert not isinstance(value, types.ModuleType)
    assert name in dir(strategies)
    if name in strategies._MODULES:
        assert value is getattr(
            import_module(f"gradcheck.strategies.{strategies._MODULES[name]}"), name
        )


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        strategies.nothing  # noqa: B018
