"""A MyGrad (or gradcheck) ``Operation`` whose ``__call__`` takes a number positionally (``p``) and
keeps it out of ``self.variables``: run without a value for it, ``p`` is drawn as a
tensor, and the backward fails with MyGrad's ``InvalidGradient`` (a gradient that is a
Tensor). That is a usage error that names the parameter and how to give it, not a
failed check (it failed as ``backward_error`` with no hint)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("mygrad")

from click.testing import CliRunner

import gradcheck
from gradcheck.cli import main

SOURCE = """
import numpy as np
from mygrad.operation_base import Operation


class AbsPower(Operation):
    def __call__(self, x, p):
        self.variables = (x,)
        self.p = p
        return np.abs(x.data) ** p

    def backward_var(self, grad, index, **kwargs):
        (x,) = self.variables
        return grad * self.p * np.sign(x.data) * np.abs(x.data) ** (self.p - 1)


class WrongAbsPower(AbsPower):
    def backward_var(self, grad, index, **kwargs):
        (x,) = self.variables
        return grad * np.sign(x.data) * np.abs(x.data) ** (self.p - 1)  # p dropped
"""


@pytest.fixture
def ops(tmp_path, monkeypatch):
    (tmp_path / "mgparam_ops.py").write_text(SOURCE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("mgparam_ops", None)


def run(*args: str):
    return CliRunner().invoke(main, ["verify", *args, "--max-examples", "20", "--seed", "0"])


def test_a_parameter_drawn_as_a_tensor_is_a_usage_error_that_says_how_to_give_it(ops):
    result = run("mgparam_ops:AbsPower")
    assert result.exit_code == 2, result.output
    assert "keeps p out of self.variables" in result.output
    assert """--kwargs '{"p": <value>}'""" in result.output
    assert 'describe(kwargs={"p": ...})' in result.output


def test_with_its_value_the_op_is_checked_and_its_bug_still_fails(ops):
    assert run("mgparam_ops:AbsPower", "--kwargs", '{"p": 2.5}').exit_code == 0
    wrong = run("mgparam_ops:WrongAbsPower", "--kwargs", '{"p": 2.5}')
    assert wrong.exit_code == 1 and "mismatch (input x)" in wrong.output, wrong.output


def test_check_says_the_same(ops):
    import mgparam_ops

    x = np.array([0.7, -1.3])
    with pytest.raises(gradcheck.errors.CheckUsageError, match="p is a parameter of the op"):
        gradcheck.check(mgparam_ops.AbsPower, x, np.array([2.5, 2.5]))
    assert gradcheck.check(mgparam_ops.AbsPower, x, p=2.5).passed


class OwnAbsPower(gradcheck.Operation):
    def __call__(self, x, p):
        self.variables = (x,)
        self.p = p
        return np.abs(x.data) ** p

    def backward_var(self, grad, index, **kwargs):
        (x,) = self.variables
        return grad * self.p * np.sign(x.data) * np.abs(x.data) ** (self.p - 1)


class OwnForgotY(gradcheck.Operation):
    """A real bug: y is a tensor input left out of self.variables, and x's gradient
    is an ndarray: the check fails, as before."""

    def __call__(self, x, y):
        self.variables = (x,)
        self.y = y
        return x.data * y.data

    def backward_var(self, grad, index, **kwargs):
        return grad * self.y.data


def test_gradcheck_s_own_operation_says_the_same():
    # it failed as 'not_array (input x): the gradient of input x is a Tensor'
    x = np.array([0.7, -1.3])
    with pytest.raises(gradcheck.errors.CheckUsageError, match="so gradcheck gives it no"):
        gradcheck.check(OwnAbsPower, x, np.array([2.5, 2.5]))
    assert gradcheck.check(OwnAbsPower, x, p=2.5).passed
    forgot = gradcheck.check(OwnForgotY, x, np.array([2.0, 3.0]))
    assert forgot.failure is not None and forgot.failure.kind == "missing_gradient", forgot
