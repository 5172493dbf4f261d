"""The numbers behind `gradcheck plot` (no matplotlib needed) and the plot command."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import gradcheck as mg
from gradcheck import Operation
from gradcheck.checking.diagnostics import diagnose, loglog_slope
from gradcheck.cli import main
from gradcheck.search.verifier import draw_example

X = np.random.default_rng(5).normal(size=(3, 4))


class Square(Operation):
    def __call__(self, x, scale=1.0):
        self.variables = (x,)
        self.scale = scale
        return x.data**2

    def backward_var(self, grad, index, **kwargs):
        return grad * 2 * self.variables[0].data * self.scale


@given(
    power=st.sampled_from([1, 2, 3]),
    coef=st.floats(1e-3, 1e3),
    start=st.floats(-8, -3),
)
def test_loglog_slope_recovers_a_power_law(power, coef, start):
    h = np.logspace(start, start + 4, 12)
    assert loglog_slope(h, coef * h**power) == pytest.approx(power, abs=1e-9)


def test_loglog_slope_ignores_points_below_the_floor():
    h = np.logspace(-8, -1, 15)
    r = np.maximum(h**2, 1e-12)  # rounding plateau below 1e-12
    assert loglog_slope(h, r, floor=1e-10) == pytest.approx(2)
    assert np.isnan(loglog_slope(h, np.zeros_like(h)))


def test_right_gradient_has_taylor_slope_two():
    d = diagnose(Square, X, seed=1)
    assert d.slope == pytest.approx(2, abs=0.05) and d.gradient_right is True


def test_step_curve_is_a_v_around_the_chosen_step():
    # (x² has no truncation error: a central difference is exact for it)
    d = diagnose(lambda x: mg.sin(x) * x, X, seed=1)
    # the V: smallest error near the chosen step, far smaller than at either end
    best = d.steps[np.argmin(d.errors)]
    assert 1e-3 < best / d.chosen_step < 1e3
    assert d.errors.min() < 1e-6 * min(d.errors[0], d.errors[-1])


@pytest.mark.parametrize("relative_error", [1e-1, 1e-5])
def test_wrong_gradient_has_taylor_slope_one(relative_error):
    d = diagnose(Square, X, params={"scale": 1 + relative_error}, seed=2)
    assert d.slope == pytest.approx(1, abs=0.05) and d.gradient_right is False
    # the step curve cannot go below the gradient's own error
    assert d.errors.min() > 0.5 * relative_error * abs(d.directional)


def test_linear_op_has_no_slope():
    d = diagnose(lambda x: x * 3.0, X)
    assert np.isnan(d.slope) and d.gradient_right is None


def test_draw_example_follows_the_description_and_the_seed():
    @mg.describe(shapes=["2,5"], domain=(1, 2))
    def log(x):
        return mg.log(x)

    arrays, params = draw_example(log, seed=7)
    again, _ = draw_example(log, seed=7)
    assert arrays[0].shape == (2, 5) and np.all((arrays[0] >= 1) & (arrays[0] <= 2))
    np.testing.assert_array_equal(arrays[0], again[0])
    _, params = draw_example(Square, seed=0, kwargs={"scale": 2.0})
    assert params == {"scale": 2.0}


@pytest.fixture
def ops_dir(tmp_path, monkeypatch):
    (tmp_path / "plot_ops.py").write_text(
        "import gradcheck as mg\n\n"
        "@mg.describe(shapes=['3,4'])\n"
        "def cube(x):\n    return x * x * x\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    sys.modules.pop("plot_ops", None)


def test_plot_writes_a_png(ops_dir, monkeypatch):
    pytest.importorskip("matplotlib")
    from hypothesis import configuration

    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    environment = dict(os.environ)
    before = getattr(configuration, "__hypothesis_home_directory", None)
    out = CliRunner().invoke(main, ["plot", "plot_ops:cube", "-o", "cube.png", "--seed", "1"])
    assert out.exit_code == 0, out.output
    assert dict(os.environ) == environment  # nothing left for later processes
    # Hypothesis's home is ours while the command draws, and set back afterwards
    assert getattr(configuration, "__hypothesis_home_directory", None) == before
    assert not (ops_dir / ".hypothesis").exists()
    assert "Taylor slope 2.00" in out.output
    assert (ops_dir / "cube.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_names_the_extra(ops_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = CliRunner().invoke(main, ["plot", "plot_ops:cube", "-o", "cube.png"])
    assert out.exit_code == 2
    assert (
        "pip install matplotlib (or, from a clone of gradcheck, pip install '.[plot]')"
        in out.output
    )
    assert not (ops_dir / "cube.png").exists()


def test_plot_of_a_module_with_several_targets_is_a_usage_error(ops_dir):
    pytest.importorskip("matplotlib")  # without it, the missing extra is reported first
    (ops_dir / "two_ops.py").write_text(
        "import gradcheck as mg\n\n@mg.describe\ndef a(x):\n    return x\n\n"
        "@mg.describe\ndef b(x):\n    return x\n"
    )
    out = CliRunner().invoke(main, ["plot", "two_ops", "-o", "x.png"])
    assert out.exit_code == 2 and "plot one" in out.output
    sys.modules.pop("two_ops", None)


def test_plot_of_a_wrong_gradient_exits_1(ops_dir):
    pytest.importorskip("matplotlib")
    (ops_dir / "wrong_ops.py").write_text(
        "import gradcheck as mg\n\n"
        "class Cube(mg.Operation):\n"
        "    def __call__(self, x):\n        self.variables = (x,)\n        return x.data ** 3\n"
        "    def backward_var(self, grad, index, **kw):\n"
        "        return grad * 2 * self.variables[0].data ** 2\n"
    )
    args = ["plot", "wrong_ops:Cube", "-o", "cube.png", "--domain", "0.5:2"]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 1, out.output
    assert "the gradient looks WRONG" in out.output
    assert (ops_dir / "cube.png").exists()
    sys.modules.pop("wrong_ops", None)


def test_plot_to_a_path_that_cannot_be_written_is_one_line_before_drawing(ops_dir):
    pytest.importorskip("matplotlib")  # without it, the missing extra is reported first
    (ops_dir / "f.txt").write_text("x")
    out = CliRunner().invoke(main, ["plot", "plot_ops:cube", "-o", "f.txt/p.png"])
    assert out.exit_code == 2
    assert out.output.startswith("Error: f.txt/p.png: cannot write the image")
    assert len(out.output.strip().splitlines()) == 1


def test_plot_imports_the_users_module_in_a_child_not_in_the_command(ops_dir):
    # a module that ends its process at import (or an op that does) must not end the
    # command silently (exit 0, no image): plot loads and runs it in a child
    pytest.importorskip("matplotlib")
    (ops_dir / "exits_ops.py").write_text(
        "import os\nimport gradcheck as mg\n\n@mg.describe\ndef cube(x):\n    return x**3\n\n"
        "os._exit(0)\n"
    )
    import subprocess

    out = subprocess.run(
        [sys.executable, "-m", "gradcheck", "plot", "exits_ops:cube", "-o", "x.png"],
        cwd=ops_dir, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ops_dir), *sys.path])},
    )  # fmt: skip
    assert out.returncode != 0, out.stdout + out.stderr
    assert "ended" in out.stderr and not (ops_dir / "x.png").exists()
