"""One settings order (gradcheck.search.precedence), used by every caller."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import gradcheck
from gradcheck.cli import main
from gradcheck.search.precedence import LAYERS, layered


def test_a_stronger_layer_wins_whatever_the_order_of_the_keywords():
    assert layered(call={"seed": 3}, defaults={"seed": 0}) == {"seed": 3}
    assert layered(options={"seed": 2}, baseline={"seed": 1}, entry={"seed": 0}) == {"seed": 2}
    assert layered(marker={"mode": "fast"}, options={"mode": "full"}) == {"mode": "fast"}


def test_none_hides_nothing():
    assert layered(defaults={"seed": 0, "mode": "auto"}, call={"seed": None}) == {
        "seed": 0,
        "mode": "auto",
    }
    assert layered(defaults=None, project={"dtype": "float32"}) == {"dtype": "float32"}


def test_an_unknown_layer_is_an_error():
    with pytest.raises(TypeError, match="commandline"):
        layered(commandline={"seed": 1})


def test_the_layers_are_in_the_documented_order():
    assert LAYERS[0] == "defaults" and LAYERS[-1] == "call"
    assert LAYERS.index("described") < LAYERS.index("project") < LAYERS.index("entry")
    assert LAYERS.index("entry") < LAYERS.index("baseline") < LAYERS.index("options")


# Each caller merges through layered(): no settings dict is merged by hand elsewhere.
CALLERS = {
    "gradcheck/search/verifier.py": "resolved_options",
    "gradcheck/frontend/verify_run.py": "_job_settings",
    "gradcheck/pytest_plugin.py": "_settings",
    "gradcheck/frontend/config.py": "options_for",
}


@pytest.mark.parametrize("path, function", sorted(CALLERS.items()))
def test_each_caller_merges_settings_with_layered(path: str, function: str):
    tree = ast.parse((Path(gradcheck.__file__).parent.parent / path).read_text())
    (found,) = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function]
    calls = [
        n.func.id
        for n in ast.walk(found)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    ]
    assert "layered" in calls
    # no {**a, **b} merge of settings beside it
    spreads = [n for n in ast.walk(found) if isinstance(n, ast.Dict) and None in n.keys]
    assert spreads == []


@gradcheck.describe(max_examples=7, dtype="float32")
def described(x):
    return x * x


def test_verify_takes_the_call_over_the_description_over_the_defaults():
    result = gradcheck.verify(described, max_examples=2, seed=0)
    assert result.settings["max_examples"] == 2  # the call
    assert result.settings["dtype"] == "float32"  # the description
    assert result.settings["mode"] == "auto"  # the defaults


def test_the_cli_seed_comes_from_the_option_then_the_baseline_then_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "sq.py").write_text(
        "import gradcheck\n\n@gradcheck.describe\ndef sq(x):\n    return x * x\n"
    )
    (tmp_path / "pyproject.toml").write_text(
        "[tool.gradcheck]\nseed = 5\nmax-examples = 2\n"
        '[[tool.gradcheck.targets]]\ntarget = "sq:sq"\n'
    )

    def seed_of(*args: str) -> int:
        out = CliRunner().invoke(main, ["verify", "--format", "json", *args])
        assert out.exit_code == 0, out.output
        return json.loads(out.stdout)["targets"][0]["seed"]

    assert seed_of() == 5  # the file's
    baseline = {
        "gradcheck_baseline": 1,
        "seed": 9,
        "targets": {
            "sq:sq": {
                "verdict": "passed",
                "passed": True,
                "examples": 2,
                "error_ratio": 0.0,
                "seed": 8,
            }
        },
    }
    (tmp_path / "b.json").write_text(json.dumps(baseline))
    assert seed_of("--baseline", "b.json") == 8  # the baseline's, over the file's
    assert seed_of("--baseline", "b.json", "--seed", "3") == 3  # the option, over both
