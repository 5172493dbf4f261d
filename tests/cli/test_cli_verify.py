"""`gradcheck verify` through click's test runner: verdicts, output, exit codes, and a
one-line message for every usage and load error."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

import gradcheck
from gradcheck.cli import main

FAST = ["--max-examples", "10", "--seed", "1"]


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_correct_op_passes(workdir: Path) -> None:
    result = run("verify", "user_ops:Square", *FAST)
    assert result.exit_code == 0, result.output
    assert re.search(r"user_ops:Square\s+passed\s+10\s+0", result.stdout)
    assert "1 passed" in result.stdout
    assert result.stderr == ""


def test_wrong_op_fails_naming_input_element_and_replay(workdir: Path) -> None:
    result = run("verify", "user_ops:WrongSquare", *FAST)
    assert result.exit_code == 1
    out = result.stdout
    assert re.search(r"user_ops:WrongSquare\s+FAILED", out)
    assert "mismatch" in out
    assert "input x" in out  # which input, by its name in the forward
    assert "index" in out  # the worst elements
    (replay,) = [line for line in out.splitlines() if line.startswith("Replay: ")]
    assert shlex.split(replay[len("Replay: ") :]) == [
        "gradcheck",
        "verify",
        "user_ops:WrongSquare",
        "--max-examples",
        "10",
        "--seed",
        "1",
    ]


def test_replay_command_reproduces_the_failure(workdir: Path) -> None:
    first = json.loads(
        run("verify", "user_ops:WrongSquare", "--max-examples", "20", "--format", "json").stdout
    )
    (target,) = first["targets"]
    words = shlex.split(target["replay"])
    assert words[:2] == ["gradcheck", "verify"]
    again = json.loads(run(*words[1:], "--format", "json").stdout)
    assert again["targets"][0]["failure"]["inputs"] == target["failure"]["inputs"]
    assert again["seed"] == first["seed"]


def test_json_matches_the_documented_schema(workdir: Path) -> None:
    result = run("verify", "user_ops:Square", "user_ops:WrongSquare", *FAST, "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["version"] == 1
    assert doc["passed"] is False
    assert doc["seed"] == 1
    types = {
        "target": str,
        "passed": bool,
        "verdict": str,
        "examples": int,
        "rejected": int,
        "max_abs_error": float,
        "max_rel_error": float,
        "seconds": float,
        "replay": str,
    }
    for entry in doc["targets"]:
        for key, kind in types.items():
            assert isinstance(entry[key], kind), (key, entry[key])
    ok, bad = doc["targets"]
    assert (ok["target"], ok["verdict"], ok["failure"]) == ("user_ops:Square", "passed", None)
    assert bad["verdict"] == "failed" and bad["passed"] is False
    assert bad["failure"]["kind"] == "mismatch"
    assert isinstance(bad["failure"]["message"], str)
    worst = bad["failure"]["worst"][0]
    assert {"index", "analytic", "numeric", "abs_error", "rel_error"} <= set(worst)


def test_json_stdout_stays_clean_when_the_module_prints(workdir: Path, capfd) -> None:
    (workdir / "chatty.py").write_text(
        "print('loading chatty')\ndef op(x):\n    print('forward!')\n    return x * x\n"
    )
    result = run("verify", "chatty:op", *FAST, "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["passed"] is True
    # the import and the forward run in worker processes, whose file descriptor 2 is
    # this process's (and so is their descriptor 1: never this process's stdout)
    worker = capfd.readouterr()
    assert "loading chatty" in worker.err and "loading chatty" not in result.stdout
    assert "forward!" in worker.err and "forward!" not in worker.out


def test_described_op_needs_no_flags_and_flags_override(workdir: Path) -> None:
    assert run("verify", "user_ops:Log", *FAST).exit_code == 0
    assert run("verify", "user_ops:MatMul", *FAST).exit_code == 0
    # Overriding the declared domain with one where log is undefined: every example
    # is skipped (its output is not finite), and the run is inconclusive.
    overridden = run("verify", "user_ops:Log", *FAST, "--domain=-2:-1")
    assert overridden.exit_code == 1
    assert "output not finite there" in overridden.stdout
    assert overridden.stderr == ""  # NumPy's warnings from log(-x): only with --verbose


def test_shapes_kwargs_and_dtype_reach_the_op(workdir: Path) -> None:
    args = ["--shape", "n,k", "--kwargs", '{"axis": 1}', "--dtype", "float32", "--format", "json"]
    result = run("verify", "user_ops:Sum", *FAST, *args)
    assert result.exit_code == 0, result.output
    settings = json.loads(result.stdout)["targets"][0]["settings"]
    assert settings["shapes"] == ["n,k"]
    assert settings["kwargs"] == {"axis": 1}
    assert settings["dtype"] == "float32"


def test_zero_d_shape(workdir: Path) -> None:
    assert run("verify", "user_ops:Square", *FAST, "--shape", "").exit_code == 0


def test_whole_module_and_function_targets(workdir: Path) -> None:
    result = run("verify", "user_ops:cube_function", "user_ops:Log", *FAST)
    assert result.exit_code == 0, result.output
    assert "user_ops:cube_function" in result.stdout


def test_op_that_raises_is_a_failure_with_its_exception(workdir: Path) -> None:
    result = run("verify", "user_ops:Raises", *FAST)
    assert result.exit_code == 1
    assert "forward_error" in result.stdout
    assert "ValueError: the forward is broken" in result.stdout


def test_op_whose_output_is_never_finite_is_inconclusive(workdir: Path) -> None:
    # A non-finite output is outside the op's domain: skipped and counted, never a
    # failure; with every example skipped, the run is inconclusive (exit 1).
    result = run("verify", "user_ops:ReturnsNan", *FAST)
    assert result.exit_code == 1
    assert "inconclusive" in result.stdout
    assert "examples skipped: output not finite there" in result.stdout


def test_not_differentiable_examples_are_skipped_and_counted(workdir: Path) -> None:
    args = ["verify", "user_ops:Absolute", "--seed", "2", "--max-examples", "30"]
    (entry,) = json.loads(run(*args, "--format", "json").stdout)["targets"]
    assert entry["passed"] and entry["examples"] == 30 and entry["rejected"] > 0
    table = run(*args)
    assert table.exit_code == 0
    assert (
        f"user_ops:Absolute: {entry['rejected']} examples skipped: not differentiable there"
        in table.stdout
    )
    # Declaring the kink keeps values away from it: nothing to skip.
    (avoided,) = json.loads(run(*args, "--avoid", "0", "--format", "json").stdout)["targets"]
    assert avoided["passed"] and avoided["rejected"] == 0


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["no_such_module:Op"], ["no module named 'no_such_module'"]),
        (["user_ops:Nope"], ["has no attribute 'Nope'"]),
        (["user_ops:NOT_AN_OP"], ["is a int", "not an Operation subclass"]),
        (["user_ops:Square", "--shape", "n,?"], ["'--shape'", "bad shape spec"]),
        (["user_ops:Square", "--shape", "n", "--shape", "n"], ["'--shape'", "got 2 shapes"]),
        (["user_ops:MatMul", "--shape", "n,k"], ["'--shape'", "got 1 shape", "(a, b)"]),
        (["user_ops:Sum", "--kwargs", "{axis: 0}"], ["'--kwargs'", "not valid JSON"]),
        (["user_ops:Sum", "--kwargs", "[0]"], ["'--kwargs'", "JSON object"]),
        (["user_ops:Sum", "--kwargs", '{"axes": 0}'], ["'--kwargs'", "no parameter 'axes'"]),
        (["user_ops:Square", "--domain", "3:1"], ["'--domain'", "LO < HI"]),
        (["user_ops:Square", "--domain", "a:b"], ["'--domain'", "LO:HI"]),
        (
            ["user_ops:MatMul", "--domain", "0:1", "--domain", "0:1", "--domain", "0:1"],
            ["'--domain'", "got 3 domains"],
        ),
        (["user_ops:wrong_shape_count"], ["describe", "got 3 shapes"]),
        (["user_ops:needs_factor"], ["needs its parameter 'factor'", "--kwargs"]),
        (["user_ops:Square", "--dtype", "int8"], ["'--dtype'", "int8"]),
        (["user_ops:Square", "--max-examples", "0"], ["'--max-examples'"]),
        (["user_ops:Square", "--mode", "slow"], ["'--mode'"]),
    ],
)
def test_usage_and_load_errors_are_one_line_exit_2(
    workdir: Path, args: list[str], words: list[str]
) -> None:
    result = run("verify", *args, "--seed", "1")
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    for word in words:
        assert word in lines[0]


def test_verbose_shows_the_traceback_of_a_load_error(workdir: Path) -> None:
    (workdir / "broken.py").write_text("import math\nmath.sqrt(-1)\n")
    result = run("verify", "broken:X", "--verbose")
    assert result.exit_code == 2
    assert "Traceback" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: cannot import module 'broken': ValueError: math domain error"
    )


def test_no_colour_without_a_tty(workdir: Path) -> None:
    result = run("verify", "user_ops:WrongSquare", *FAST)
    assert "\x1b[" not in result.stdout


def test_version_and_help() -> None:
    version = run("--version")
    assert version.exit_code == 0 and gradcheck.__version__ in version.stdout
    top = run("--help")
    assert top.exit_code == 0 and "gradcheck verify mymodule:MyOp" in top.stdout
    sub = run("verify", "--help")
    assert sub.exit_code == 0 and "--shape SPEC" in sub.stdout and "Examples" in sub.stdout
    assert run().exit_code == 2  # no command: a usage error (test_cli_subprocess)


def test_unknown_command_is_one_line() -> None:
    result = run("verfy")
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1


def test_list_shows_targets_and_arity(workdir: Path) -> None:
    result = run("list", "user_ops")
    assert result.exit_code == 0
    assert re.search(r"user_ops:MatMul\s+Operation\s+2 \(a, b\)", result.stdout)
    assert re.search(r"user_ops:cube_function\s+function\s+1 \(x\)", result.stdout)
    assert "NOT_AN_OP" not in result.stdout
    doc = json.loads(run("list", "user_ops", "--format", "json").stdout)
    by_name = {t["target"]: t for t in doc["targets"]}
    assert by_name["user_ops:Log"]["described"] == {"domain": [0.1, 10.0]}
    assert by_name["user_ops:Sum"]["parameters"] == ["axis"]


def test_list_bad_module_is_exit_2(workdir: Path) -> None:
    result = run("list", "no_such_module")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: no module named 'no_such_module'")


def test_no_target_runs_the_builtin_ops() -> None:
    result = run("verify", "--max-examples", "1", "--seed", "0", "--format", "json")
    doc = json.loads(result.stdout)
    names = [t["target"] for t in doc["targets"]]
    assert "gradcheck.builtin_targets:matmul" in names and len(names) > 10
    assert doc["passed"], [t for t in doc["targets"] if not t["passed"]]
    assert result.exit_code == 0


def test_empty_inputs_are_inconclusive_not_passed(workdir: Path) -> None:
    result = run("verify", "user_ops:WrongSquare", *FAST, "--shape", "0")
    assert result.exit_code == 1, result.output
    assert "inconclusive" in result.stdout
    assert "skipped: nothing to compare" in result.stdout


@pytest.mark.parametrize(
    ("option", "value"), [("--rtol", "inf"), ("--atol", "nan"), ("--atol", "-1")]
)
def test_tolerances_on_the_command_line_are_validated(workdir: Path, option, value) -> None:
    result = CliRunner().invoke(main, ["verify", "user_ops:Square", option, value])
    assert result.exit_code == 2
    assert "finite number >= 0" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "args, option",
    [
        (["--atol", "nan"], "--atol"),
        (["--rtol", "inf"], "--rtol"),
        (["--max-examples", str(10**30)], "--max-examples"),
        (["--kwargs", '{"a": ' + "[" * 30000 + "]" * 30000 + "}"], "--kwargs"),
        (["--kwargs", '{"a": 1' + "0" * 5000 + "}"], "--kwargs"),
    ],
    ids=["atol-nan", "rtol-inf", "max-examples-huge", "kwargs-deep", "kwargs-huge-number"],
)
def test_an_absurd_option_is_one_line_naming_it(workdir: Path, args, option) -> None:
    result = run("verify", "user_ops:Square", "--seed", "1", *args)
    assert result.exit_code == 2
    assert option in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "set_int_max_str_digits" not in result.stderr
