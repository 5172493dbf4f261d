"""The fifth user round of issue 34: every pair of `tests/support/user_round5_ops.py`
(a bug and its correct twin) through every documented way to ask for a check, on
seeds 0, 1, 2, with the paths, the table and the report checks of
`benchmarks/user_round4.py` (one piece of code: this script gives it the fifth round's
pairs). A bug must fail and its twin pass on every path, and a failure's report must
name the op and its inputs as the user did, show v, and replay with one seed.

    OMP_NUM_THREADS=1 python benchmarks/user_round5.py [--seeds 0,1,2] [--out DIR]
        [--paths cli,json,...] [--pairs gate,pow_log]
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import user_round4 as rounds

#: name: (bug, twin, settings the pair needs beyond its @describe (verify's keywords),
#: the names of its inputs, check's inputs as Python source of the seed ``s``, check's
#: keywords)
PAIRS: dict[str, tuple[str, str, dict, tuple[str, ...], str, dict]] = {
    "cube_argmax": (
        "BadCubeArgmax",
        "GoodCubeArgmax",
        {},
        ("x",),
        "(np.array([[-1.5, 0.7, -0.2], [0.4, -0.9, 1.1]]) + 0.1 * s,)",
        {},
    ),
    "gate": (
        "bad_gate",
        "good_gate",
        {"shapes": ["n,3"]},
        ("x", "proj.weight", "proj.bias"),
        "(np.random.default_rng(s).normal(size=(4, 3)),)",
        {},
    ),
    "shift_scale": (
        "bad_shift_scale",
        "good_shift_scale",
        {},
        ("params['scale']", "params['shift']", "x"),
        "({'scale': np.array([0.5, -1.5]) + 0.1 * s, 'shift': np.array([0.2, 0.3])},"
        " np.array([0.3, -0.8]))",
        {},
    ),
    "scale_exp": (
        "BadScaleExp",
        "GoodScaleExp",
        {},
        ("x", "b"),
        "(np.random.default_rng(s).normal(size=(4, 3)), np.array([0.1, -0.4, 0.3]))",
        {},
    ),
    "normalize": (
        "BadNormalize",
        "GoodNormalize",
        {},
        ("x",),
        "(np.random.default_rng(s).uniform(0.5, 2.0, size=(3, 4)),)",
        {},
    ),
    "pow_log": (
        "bad_pow_log",
        "good_pow_log",
        {},
        ("x", "y"),
        "(np.array([0.5, 2.0, 3.0]) + 0.1 * s, np.array([-1.0, 0.3, 2.0]), np.array([2, 3, 1]))",
        {},
    ),
    "softplus2": (
        "bad_softplus2",
        "good_softplus2",
        {"order": 2},
        ("x", "v"),
        "(np.array([-0.5, 1.2]) + 0.1 * s,)",
        {"order": 2},
    ),
    "complex_square": (
        "BadComplexSquare",
        "GoodComplexSquare",
        {"dtype": "complex128"},
        ("z",),
        "(np.array([0.5 + 1.0j, -1.2 + 0.3j]) + 0.1 * s,)",
        {},
    ),
}


def main() -> None:
    if "--pairs" in sys.argv:  # (a subset: --pairs a,b; the other options are round 4's)
        at = sys.argv.index("--pairs")
        chosen = sys.argv[at + 1].split(",")
        del sys.argv[at : at + 2]
        for pair in set(PAIRS) - set(chosen):
            del PAIRS[pair]
    rounds.OPS = rounds.ROOT / "tests" / "support" / "user_round5_ops.py"
    rounds.MOD = "user_round5_ops"
    rounds.PAIRS = PAIRS
    # the pairs whose bug a module-wide run (no flags: the described settings only)
    # must catch, and those a module offers (every one: the functions are described)
    rounds.MODULE_WIDE = set(PAIRS) - {"gate", "softplus2", "complex_square"}
    rounds.LISTED = set(PAIRS)
    rounds.main()


if __name__ == "__main__":
    main()
