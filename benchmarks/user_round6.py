"""The sixth user round of issue 34: every pair of `tests/support/user_round6_ops.py`
(a bug and its correct twin) through every documented way to ask for a check, on
seeds 0, 1, 2, with the paths, the table and the report checks of
`benchmarks/user_round4.py` (cli, json, junit, config, module, list, check,
describe, fixture, marker, pytest), and two more: `order2` (gradcheck verify NAME
--order 2, for the torch and JAX pairs: a bug fails, at order 1 already, and a twin
passes at order 2 too) and `float32` (gradcheck verify NAME --dtype float32). A bug
must fail and its twin pass on every path, and a failure's report must name the op
and its inputs as the user did, show v, and replay with one seed.

    OMP_NUM_THREADS=1 python benchmarks/user_round6.py [--seeds 0,1,2] [--out DIR]
        [--paths cli,json,...,order2,float32] [--pairs swish,cis]
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import user_round4 as rounds

#: name: (bug, twin, settings the pair needs beyond its @describe (verify's keywords),
#: the names of its inputs, check's inputs as Python source of the seed ``s``, check's
#: keywords)
PAIRS: dict[str, tuple[str, str, dict, tuple[str, ...], str, dict]] = {
    "swish": ("BadSwish", "GoodSwish", {}, ("x",), "(np.array([-1.5, 0.7, 2.0]) + 0.1 * s,)", {}),
    "sin_cos": ("BadSinCos", "GoodSinCos", {}, ("x",), "(np.array([0.3, -1.2]) + 0.1 * s,)", {}),
    "cis": ("BadCis", "GoodCis", {}, ("x",), "(np.array([0.3, -1.2]) + 0.1 * s,)", {}),
    "soft_clip": (
        "bad_soft_clip",
        "good_soft_clip",
        {},
        ("x",),
        "(np.array([0.3, -0.8]) + 0.1 * s,)",
        {},
    ),
    "temp_softmax": (
        "BadTempSoftmax",
        "GoodTempSoftmax",
        {"kwargs": {"temperature": 0.5, "dim": 0}},
        ("x",),
        "(np.random.default_rng(s).normal(size=(3, 4)),)",
        {"temperature": 0.5, "dim": 0},
    ),
    "logsumexp": (
        "BadLogSumExp",
        "GoodLogSumExp",
        {},
        ("x",),
        "(np.random.default_rng(s).normal(size=(3, 4)),)",
        {},
    ),
    "log1p_guarded": (
        "bad_log1p_guarded",
        "good_log1p_guarded",
        {},
        ("x",),
        "(np.array([0.5, 2.0]) + 0.1 * s,)",
        {},
    ),
    "block": (
        "bad_block",
        "good_block",
        {"shapes": ["n,3"]},
        ("x", "inner.0.weight", "inner.0.bias", "head.weight", "head.bias"),
        "(np.random.default_rng(s).normal(size=(4, 3)),)",
        {},
    ),
    "max_shift": (
        "bad_max_shift",
        "good_max_shift",
        {},
        ("x",),
        "(np.array([0.3, 1.7, -0.4]) + 0.1 * s,)",
        {},
    ),
}
#: the pairs of torch or JAX ops (order 2 needs one)
ORDER2 = {"sin_cos", "cis", "soft_clip", "temp_softmax", "block"}


def toml_value(value) -> str:
    """A TOML value: an inline table for a dict (`kwargs = { dim = 0 }`)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def variant(extra: list[str], path: str, only: set[str] | None):
    """A path: `gradcheck verify BUG TWIN FLAGS EXTRA`, pair by pair."""

    def run_path(work: Path, seed: int, logs: Path, res: dict, defects: list) -> None:
        for pair, (bug, twin, settings, inputs, *_r) in rounds.PAIRS.items():
            if only is not None and pair not in only:
                res[(pair, path, seed)] = "n/a"
                continue
            targets = [f"{rounds.MOD}:{n}" for n in (bug, twin)]
            cmd = [*rounds.GRADCHECK, "verify", *targets, *rounds.flags(settings), *extra]
            cmd += ["--seed", str(seed), "--jobs", "1"]
            p = rounds.run(cmd, work, logs / f"{path}_{pair}_{seed}.txt")
            seen = {n: rounds.said(p.stdout, n, "?") for n in (bug, twin)}
            res[(pair, path, seed)] = rounds.judge(
                seen[bug] == "FAILED", seen[twin] == "passed", (seen, p.stderr[-200:])
            )
            found = rounds.blocks(p.stdout)
            if bug in found:
                defects += rounds.report_defects(path, bug, found[bug], inputs, seed)
            if re.search(r"\boutput \d+ of \d+", found.get(bug, "")) and pair == "cis":
                defects.append(f"{path} {bug}: a complex output named as one of several")

    return run_path


def main() -> None:
    if "--pairs" in sys.argv:  # (a subset: --pairs a,b; the other options are round 4's)
        at = sys.argv.index("--pairs")
        chosen = sys.argv[at + 1].split(",")
        del sys.argv[at : at + 2]
        for pair in set(PAIRS) - set(chosen):
            del PAIRS[pair]
    rounds.OPS = rounds.ROOT / "tests" / "support" / "user_round6_ops.py"
    rounds.MOD = "user_round6_ops"
    rounds.PAIRS = PAIRS
    rounds.FLAGS["kwargs"] = "--kwargs"
    rounds.toml_value = toml_value
    # the pairs whose bug a module-wide run (no flags: the described settings only)
    # must catch, and those a module offers (every one)
    rounds.MODULE_WIDE = set(PAIRS) - {"temp_softmax", "block"}
    rounds.LISTED = set(PAIRS)
    rounds.EXTRA[:] = [
        ("order2", variant(["--order", "2"], "order2", ORDER2)),
        ("float32", variant(["--dtype", "float32"], "float32", None)),
    ]
    rounds.PATHS += ["order2", "float32"]
    rounds.main()


if __name__ == "__main__":
    main()
