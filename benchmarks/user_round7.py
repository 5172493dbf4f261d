"""The seventh user round of issue 34: every pair of `tests/support/user_round7_ops.py`
(a bug and its correct twin) through every documented way to ask for a check, on
seeds 0, 1, 2, with the paths, the table and the report checks of
`benchmarks/user_round4.py` (cli, json, junit, config, module, list, check,
describe, fixture, marker, pytest) and round 6's `order2` (gradcheck verify NAME
--order 2, for the torch and JAX pairs: a bug fails, at order 1 already where its
first derivative is wrong, and a twin passes) and `float32` (gradcheck verify NAME
--dtype float32, for the pairs of real inputs). A bug must fail and its twin pass on
every path, and a failure's report must name the op and its inputs as the user did,
show v, and replay with one seed.

    OMP_NUM_THREADS=1 python benchmarks/user_round7.py [--seeds 0,1,2] [--out DIR]
        [--paths cli,json,...,order2,float32] [--pairs layer_norm,abs2]
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import user_round4 as rounds
import user_round6 as round6

_RNG = "np.random.default_rng(s)"
#: name: (bug, twin, settings the pair needs beyond its @describe (verify's keywords),
#: the names of its inputs, check's inputs as Python source of the seed ``s``, check's
#: keywords)
PAIRS: dict[str, tuple[str, str, dict, tuple[str, ...], str, dict]] = {
    "layer_norm": (
        "BadLayerNorm",
        "GoodLayerNorm",
        {},
        ("x", "gamma", "beta"),
        f"({_RNG}.normal(size=(3, 4)), {_RNG}.normal(size=4), {_RNG}.normal(size=4))",
        {},
    ),
    "huber": (
        "bad_huber",
        "good_huber",
        {},
        ("pred", "target"),
        f"({_RNG}.normal(size=(3, 4)), {_RNG}.normal(size=(1, 4)))",
        {"delta": 0.5},
    ),
    "cumprod": (
        "BadCumprod",
        "GoodCumprod",
        {},
        ("x",),
        "(np.array([0.5, 0.0, -1.5, 2.0]) + 0.0 * s,)",
        {"dim": 0},
    ),
    "gru": (
        "BadGRU",
        "GoodGRU",
        {},
        ("x", "h", "x2h.weight", "x2h.bias", "h2h.weight", "h2h.bias"),
        f"({_RNG}.normal(size=(2, 3)) * 3, {_RNG}.normal(size=(2, 4)))",
        {},
    ),
    "cosine": (
        "bad_cosine",
        "good_cosine",
        {},
        ("x", "y"),
        f"({_RNG}.normal(size=(3, 4)), {_RNG}.normal(size=(3, 4)))",
        {"axis": 0},
    ),
    "masked_mean": (
        "BadMaskedMean",
        "GoodMaskedMean",
        {},
        ("x",),
        f"({_RNG}.normal(size=(3, 4)), np.array([[1, 0, 1, 1], [0, 1, 1, 0], [1, 1, 0, 1]], bool))",
        {},
    ),
    "conv2d": (
        "BadConv2d",
        "GoodConv2d",
        {},
        ("x", "k"),
        f"({_RNG}.normal(size=(4, 5)), {_RNG}.normal(size=(2, 3)))",
        {},
    ),
    "log_cosh": (
        "bad_log_cosh",
        "good_log_cosh",
        {},
        ("x", "v"),
        "(np.array([0.3, -1.2, 2.0]) + 0.1 * s,)",
        {"order": 2},
    ),
    "mish": ("BadMish", "GoodMish", {}, ("x",), "(np.array([-1.5, 0.3, 2.0]) + 0.1 * s,)", {}),
    "abs2": (
        "BadAbs2",
        "GoodAbs2",
        {"dtype": "complex128"},
        ("z",),
        "(np.array([0.3 - 1.2j, -0.7 + 0.4j]) + 0.1 * s,)",
        {},
    ),
}
#: the pairs of torch or JAX ops (order 2 needs one)
ORDER2 = {"cumprod", "gru", "cosine", "log_cosh", "mish", "abs2"}
#: the pairs of real inputs (`--dtype float32` replaces abs2's complex128)
FLOAT32 = set(PAIRS) - {"abs2"}


def main() -> None:
    if "--pairs" in sys.argv:  # (a subset: --pairs a,b; the other options are round 4's)
        at = sys.argv.index("--pairs")
        chosen = sys.argv[at + 1].split(",")
        del sys.argv[at : at + 2]
        for pair in set(PAIRS) - set(chosen):
            del PAIRS[pair]
    rounds.OPS = rounds.ROOT / "tests" / "support" / "user_round7_ops.py"
    rounds.MOD = "user_round7_ops"
    rounds.PAIRS = PAIRS
    rounds.FLAGS["kwargs"] = "--kwargs"
    rounds.toml_value = round6.toml_value
    # the pairs whose bug a module-wide run (no flags: the described settings only)
    # must catch (abs2 needs --dtype complex128), and those a module offers (every one)
    rounds.MODULE_WIDE = set(PAIRS) - {"abs2"}
    rounds.LISTED = set(PAIRS)
    rounds.EXTRA[:] = [
        ("order2", round6.variant(["--order", "2"], "order2", ORDER2)),
        ("float32", round6.variant(["--dtype", "float32"], "float32", FLOAT32)),
    ]
    rounds.PATHS += ["order2", "float32"]
    rounds.main()


if __name__ == "__main__":
    main()
