"""[tool.gradcheck]: reading, validation and one-line errors."""

from __future__ import annotations

import textwrap

import pytest

from gradcheck.errors import ConfigError
from gradcheck.frontend.config import find_pyproject, load_config


def write(tmp_path, text, name="pyproject.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_defaults_and_targets_are_read(tmp_path):
    path = write(
        tmp_path,
        """
        [project]
        name = "x"

        [tool.gradcheck]
        max-examples = 20
        seed = 3
        regression-factor = 2

        [[tool.gradcheck.targets]]
        target = "ops:Softplus"
        domain = [-5, 5]

        [[tool.gradcheck.targets]]
        target = "ops:MatMul"
        shapes = ["n,k", "k,m"]
        dtype = "float32"
        rtol = 1e-3
        kwargs = { transpose = true }
        domain = [[-1, 1], [0.5, 2.0]]
        """,
    )
    config = load_config(path)
    assert config.defaults == {"max_examples": 20, "seed": 3}
    assert config.regression_factor == 2.0
    assert [t.target for t in config.targets] == ["ops:Softplus", "ops:MatMul"]
    # Values come out normalized by the validators @gradcheck.describe uses.
    assert config.options_for(config.targets[0]) == {
        "max_examples": 20,
        "seed": 3,
        "domain": (-5.0, 5.0),
    }
    second = config.options_for(config.targets[1])
    assert second["shapes"] == ("n,k", "k,m") and second["dtype"] == "float32"
    assert second["domain"] == ((-1.0, 1.0), (0.5, 2.0))
    assert second["kwargs"] == {"transpose": True}


def test_the_nearest_pyproject_is_found(tmp_path, monkeypatch):
    write(tmp_path, "[tool.gradcheck]\nseed = 1\n")
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert load_config().defaults == {"seed": 1}


def test_a_pyproject_without_the_table_is_passed_over(tmp_path, monkeypatch):
    # a sub-package with a pyproject.toml of its own (ruff skips such files too)
    write(tmp_path, "[tool.gradcheck]\nseed = 1\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    write(sub, '[project]\nname = "sub"\n[tool.ruff]\nline-length = 90\n')
    monkeypatch.chdir(sub / ".." / "sub")
    config = load_config()
    assert config is not None and config.path == tmp_path.resolve() / "pyproject.toml"
    assert find_pyproject(sub) == tmp_path.resolve() / "pyproject.toml"


def test_the_search_stops_at_the_repository_root(tmp_path, monkeypatch):
    write(tmp_path, "[tool.gradcheck]\nseed = 1\n")  # outside the repository
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pkg").mkdir()
    monkeypatch.chdir(repo / "pkg")
    assert load_config() is None
    write(repo, "[tool.gradcheck]\nseed = 2\n")
    assert load_config().defaults == {"seed": 2}


def test_a_malformed_pyproject_on_the_way_up_is_an_error(tmp_path, monkeypatch):
    write(tmp_path, "[tool.gradcheck]\nseed = 1\n")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", "[project\n")
    monkeypatch.chdir(tmp_path / "sub")
    with pytest.raises(ConfigError, match=r"sub/pyproject.toml: not valid TOML"):
        load_config()


def test_a_project_without_the_table_has_no_config(tmp_path, monkeypatch):
    write(tmp_path, '[project]\nname = "x"\n')
    monkeypatch.chdir(tmp_path)
    assert load_config() is None


def test_a_standalone_file_holds_the_table_at_top_level(tmp_path):
    path = write(tmp_path, 'seed = 4\n[[targets]]\ntarget = "m:Op"\n', name="gradcheck.toml")
    config = load_config(path)
    assert config.defaults == {"seed": 4} and config.targets[0].target == "m:Op"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[tool.gradcheck]\nmax_exampels = 3\n",
            "unknown key 'max_exampels' (did you mean 'max-examples'?)",
        ),
        ("[tool.gradcheck]\nwhatever = 3\n", "unknown key 'whatever'; known keys:"),
        (
            "[tool.gradcheck]\nmax-examples = 0\n",
            "key 'max-examples' must be an integer >= 1, got 0",
        ),
        (
            "[tool.gradcheck]\nmode = 'slow'\n",
            "key 'mode' must be one of auto, full, fast, got 'slow'",
        ),
        ("[tool.gradcheck]\ndtype = 'int8'\n", "key 'dtype' must be float64, float32 or float16"),
        ("[tool.gradcheck]\natol = -1\n", "key 'atol' must be a finite number >= 0"),
        ("[tool.gradcheck]\ndomain = [3, 1]\n", "key 'domain' needs LO < HI, got 3:1"),
        ("[tool.gradcheck]\nshapes = 'n,k'\n", "key 'shapes' must be a list with one shape"),
        ("[tool.gradcheck]\nbroadcast = 1\n", "key 'broadcast' must be true or false"),
        (
            "[tool.gradcheck]\nregression-factor = 0.5\n",
            "'regression-factor' must be a number >= 1",
        ),
        ("[tool.gradcheck]\ntargets = 3\n", "key 'targets' must be an array of tables"),
        ("[[tool.gradcheck.targets]]\ndomain = [0, 1]\n", "targets entry 1 needs a 'target' key"),
        (
            "[[tool.gradcheck.targets]]\ntarget = 'm:Op'\nsead = 1\n",
            "targets entry 1 has an unknown key 'sead' (did you mean 'seed'?)",
        ),
        ("[tool.gradcheck\n", "not valid TOML"),
    ],
)
def test_bad_files_get_one_line_naming_file_and_key(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    msg = str(info.value)
    assert message in msg
    assert str(path) in msg
    assert "\n" not in msg
    assert info.value.exit_code == 2


def test_a_missing_explicit_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.toml")


def test_an_explicit_pyproject_without_the_table_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match=r"has no \[tool.gradcheck\] table"):
        load_config(write(tmp_path, "[project]\nname = 'x'\n"))


def test_config_values_use_the_same_validators_as_describe(tmp_path):
    path = write(
        tmp_path,
        """
        [tool.gradcheck]
        domain = "0:"
        avoid = [0]
        dtype = "f4"
        """,
    )
    config = load_config(path)
    assert config.defaults == {
        "domain": (0.0, float("inf")),
        "avoid": (0.0,),
        "dtype": "float32",
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("shapes = ['n,,k']\n", "key 'shapes'"),
        ("avoid = ['x']\n", "key 'avoid' must be a list of numbers"),
        ("seed = -1\n", "key 'seed' must be an integer >= 0, got -1"),
        ("rtol = true\n", "key 'rtol' must be a number, got True"),
    ],
)
def test_more_bad_values(tmp_path, text, message):
    path = write(tmp_path, "[tool.gradcheck]\n" + text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert message in str(info.value) and str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_a_standalone_file_may_hold_a_tool_gradcheck_table(tmp_path):
    path = write(tmp_path, "[tool.gradcheck]\nseed = 5\n", name="ci.toml")
    assert load_config(path).defaults == {"seed": 5}


def test_the_keys_for_real_ops_inputs(tmp_path):
    path = write(
        tmp_path,
        """
        [[tool.gradcheck.targets]]
        target = "losses:Focal"
        kwargs = { gamma = 2.0 }
        shapes = ["n,3", "n"]
        integers = { 1 = [0, 3] }
        constants = [1]
        unique = true
        min-dims = 1

        [[tool.gradcheck.targets]]
        target = "losses:Masked"
        integers = ["2:0:4"]
        booleans = [1]
        """,
    )
    focal, masked = load_config(path).targets
    assert focal.options["integers"] == {1: (0, 3)} and focal.options["constants"] == (1,)
    assert focal.options["unique"] is True and focal.options["min_dims"] == 1
    assert masked.options == {"integers": {2: (0, 4)}, "booleans": (1,)}
    bad = write(tmp_path, '[tool.gradcheck]\nunique = "yes"\n', name="bad.toml")
    with pytest.raises(ConfigError, match="key 'unique' must be true or false"):
        load_config(bad)


# Malformed files: one ConfigError naming the file (issue 22, item 7).
MALFORMED = {
    "not-utf8": b"[tool.gradcheck]\n# caf\xe9 \xff\nmax-examples = 3\n",
    "utf16": "[tool.gradcheck]\nmax-examples = 3\n".encode("utf-16"),
    "deep-array": ("[tool.gradcheck]\navoid = " + "[" * 10000 + "]" * 10000 + "\n").encode(),
    "deep-table": ("[tool.gradcheck]\nkwargs = " + "{a = " * 3000 + "1" + "}" * 3000).encode(),
    "huge-number": ("[tool.gradcheck]\nseed = 1" + "0" * 5000 + "\n").encode(),
    "absurd-max-examples": b"[tool.gradcheck]\nmax-examples = 1000000000000000000000000000000\n",
}


@pytest.mark.parametrize("content", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_file_is_one_error_naming_it(tmp_path, content):
    path = tmp_path / "pyproject.toml"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert "set_int_max_str_digits" not in message


def test_the_bound_on_max_examples_is_said(tmp_path):
    path = write(tmp_path, "[tool.gradcheck]\nmax-examples = 9223372036854775807\n")
    with pytest.raises(ConfigError, match="at most 1,000,000"):
        load_config(path)


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="FIFOs")
@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_path_that_is_not_a_regular_file_is_refused_without_reading(tmp_path, kind):
    import os

    if kind == "fifo":  # reading it would wait for a writer forever
        path = tmp_path / "p.toml"
        os.mkfifo(path)
    elif kind == "directory":
        path = tmp_path
    else:
        path = "/dev/zero"  # reading it would never end
    with pytest.raises(ConfigError, match=r"not a regular file|a directory"):
        load_config(path)
