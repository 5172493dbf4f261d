"""Acceptance: `gradcheck verify` on a hold-out set of ops written after the CLI
(tests/support/holdout_ops.py) passes every correct op (``Ok``/``ok_``) and catches every
bug (``Bug``/``bug_``), for several seeds. One CLI run per seed checks the whole module;
each op's verdict is then its own test.

When first run, the set found three checker false alarms on correct ops, since fixed
in the checker: x / sum(x) on a 0-d input (gradient 0 up to rounding, judged at zero
tolerance), a float32 tanh near x = 5 (1 - tanh² loses precision to cancellation), and
relu within one finite-difference step of its kink."""

from __future__ import annotations

import ast
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gradcheck.cli import main

HERE = Path(__file__).resolve().parents[1] / "support"
SEEDS = (0, 1, 2)
OPS = [
    node.name
    for node in ast.parse((HERE / "holdout_ops.py").read_text()).body
    if isinstance(node, (ast.ClassDef, ast.FunctionDef))
]

_runs: dict[tuple[int, int], dict[str, dict]] = {}


def run_holdout(seed: int, max_examples: int, tmp: Path) -> dict[str, dict]:
    """Verdicts of `gradcheck verify holdout_ops --seed SEED` by op name."""
    key = (seed, max_examples)
    if key not in _runs:
        shutil.copy(HERE / "holdout_ops.py", tmp / "holdout_ops.py")
        cwd, path = os.getcwd(), list(sys.path)
        os.chdir(tmp)
        try:
            args = ["verify", "holdout_ops", "--seed", str(seed), "--format", "json"]
            result = CliRunner().invoke(main, [*args, "--max-examples", str(max_examples)])
        finally:
            os.chdir(cwd)
            sys.path[:] = path
            sys.modules.pop("holdout_ops", None)
        assert result.exit_code == 1, result.output  # the set holds bugs
        doc = json.loads(result.stdout)
        _runs[key] = {t["target"].split(":")[1]: t for t in doc["targets"]}
    return _runs[key]


def cases(seeds: tuple[int, ...]) -> list:
    return [pytest.param(seed, name, id=f"seed{seed}-{name}") for seed in seeds for name in OPS]


def check_verdict(entry: dict, name: str) -> None:
    correct = name.lower().startswith("ok")
    if correct:
        assert entry["passed"], f"false alarm on {name}: {entry['failure']}"
    else:
        assert entry["verdict"] == "failed", f"bug in {name} not caught: {entry}"
        assert entry["failure"]["kind"]


def test_the_set_has_both_kinds() -> None:
    assert sum(n.lower().startswith("ok") for n in OPS) >= 8
    assert sum(n.lower().startswith("bug") for n in OPS) >= 10


@pytest.mark.parametrize(("seed", "name"), cases(SEEDS))
def test_holdout(seed: int, name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    verdicts = run_holdout(seed, 30, tmp_path_factory.getbasetemp())
    assert set(verdicts) == set(OPS)
    check_verdict(verdicts[name], name)


@pytest.mark.slow
@pytest.mark.parametrize(("seed", "name"), cases((10, 11, 12, 13, 14)))
def test_holdout_default_examples(
    seed: int, name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    check_verdict(run_holdout(seed, 100, tmp_path_factory.getbasetemp())[name], name)
