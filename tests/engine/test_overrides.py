"""NumPy's functions on tensors: the op families register their overrides
(gradcheck._utils.overrides), and the names that moved up keep their old paths."""

from __future__ import annotations

import subprocess
import sys

import numpy as np


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip()


def test_a_family_registers_its_overrides_when_it_is_imported():
    # Importing one family fills the table with its functions, before any NumPy call
    # on a tensor (nothing else is loaded: the table holds what the families put in).
    out = _run(
        "import numpy as np\n"
        "from gradcheck._utils import overrides\n"
        "print(len(overrides.UFUNCS), len(overrides.FUNCTIONS))\n"
        "import gradcheck.ops.exp_log as f\n"
        "print(overrides.UFUNCS[np.exp] is f.exp, np.sin in overrides.UFUNCS)\n"
    )
    assert out.splitlines() == ["0 0", "True False"]


def test_a_numpy_call_on_a_tensor_loads_the_families_it_needs():
    # A program that imported the tensor module alone still gets every override.
    out = _run(
        "import numpy as np\n"
        "from gradcheck.tensor_base import Tensor\n"
        "t = Tensor([0.0, 1.0])\n"
        "y = np.sum(np.sin(t))\n"
        "y.backward()\n"
        "print(type(y).__name__, t.grad.tolist())\n"
    )
    assert out == "Tensor [1.0, 0.5403023058681398]"


def test_a_registered_pair_is_not_replaced_by_a_family_loaded_later():
    out = _run(
        "import numpy as np\n"
        "from gradcheck._utils import overrides\n"
        "def mine(x): return 'mine'\n"
        "overrides.register(np.exp, mine)\n"
        "import gradcheck.ops.exp_log\n"
        "from gradcheck.tensor_base import Tensor\n"
        "print(np.exp(Tensor([1.0])))\n"
    )
    assert out == "mine"


def test_the_tables_keep_their_mygrad_paths():
    import gradcheck.interop as interop
    import gradcheck.tensor_base as tb
    from gradcheck._utils import overrides

    assert tb.implements_numpy_override is overrides.implements_numpy_override
    assert tb._REGISTERED_UFUNC is overrides.UFUNCS is interop.UFUNCS
    assert tb._REGISTERED_UFUNC[np.add] is __import__("gradcheck").add
    assert interop.register is overrides.register


def test_names_that_moved_up_are_still_read_at_their_old_paths():
    from gradcheck.checking import adapters, resolve, target
    from gradcheck.checking.adapters import bridge

    assert target.resolve_target is resolve.resolve_target
    assert adapters.bridge_target is bridge.bridge_target
    assert adapters.resolve_foreign is resolve.resolve_foreign
    import gradcheck

    assert gradcheck.resolve_target is resolve.resolve_target
