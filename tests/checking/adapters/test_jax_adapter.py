"""JAX targets (issue 19, item 6): functions of jax arrays, custom_vjp and custom_jvp
functions, checked with gradcheck's numerics against a float64 reference."""

from __future__ import annotations

import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402
from click.testing import CliRunner  # noqa: E402

import gradcheck  # noqa: E402
from gradcheck.checking.adapters import framework_of  # noqa: E402
from gradcheck.checking.checker import check  # noqa: E402
from gradcheck.checking.signature import op_signature  # noqa: E402
from gradcheck.cli import main  # noqa: E402

OPS = """
import jax
import jax.numpy as jnp


@jax.custom_vjp
def softplus(x):
    return jnp.logaddexp(x, 0.0)


def _softplus_fwd(x):
    return softplus(x), x


def _softplus_bwd(x, g):
    return (g * jax.nn.sigmoid(x),)


softplus.defvjp(_softplus_fwd, _softplus_bwd)


@jax.custom_vjp
def wrong_softplus(x):
    return jnp.logaddexp(x, 0.0)


def _wrong_bwd(x, g):
    return (g * jax.nn.sigmoid(-x),)  # sigmoid(x) is the derivative


wrong_softplus.defvjp(lambda x: (wrong_softplus(x), x), _wrong_bwd)


@jax.custom_jvp
def log1pexp(x):
    return jnp.logaddexp(x, 0.0)


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * jax.nn.sigmoid(x)


@jax.custom_jvp
def wrong_log1pexp(x):
    return jnp.logaddexp(x, 0.0)


@wrong_log1pexp.defjvp
def _wrong_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return wrong_log1pexp(x), t * jax.nn.sigmoid(x) * 1.01  # 1% too large


def tanh(x):
    return jnp.tanh(x)


def pick(logits, labels, scale):
    return scale * jnp.take_along_axis(logits, labels[:, None], axis=1).sum()


jitted = jax.jit(lambda x: jnp.sin(x) * x)


def values_and_argmax(x):
    return jnp.tanh(x), jnp.argmax(x), wrong_softplus(x)
"""


@pytest.fixture(scope="module")
def ops(tmp_path_factory):
    folder = tmp_path_factory.mktemp("jax_user")
    (folder / "jax_user_ops.py").write_text(OPS)
    sys.path.insert(0, str(folder))
    import jax_user_ops

    yield jax_user_ops
    sys.path.remove(str(folder))
    sys.modules.pop("jax_user_ops", None)


def test_jax_functions_are_recognised(ops):
    for f in (ops.softplus, ops.log1pexp, ops.tanh, ops.jitted, ops.pick):
        assert framework_of(f) == "jax"
    assert op_signature(ops.softplus).input_names == ("x",)
    assert op_signature(ops.pick).given({"scale": 1}).input_names == ("logits", "labels")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_wrong_custom_vjp_is_caught_and_a_right_one_passes(ops, dtype):
    wrong = gradcheck.verify(ops.wrong_softplus, dtype=dtype, max_examples=10, seed=0)
    assert wrong.verdict == "failed" and wrong.failure.failure.kind == "mismatch"
    right = gradcheck.verify(ops.softplus, dtype=dtype, max_examples=10, seed=0)
    assert right.verdict == "passed", right.note


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_custom_jvp_rules_are_checked_in_reverse_mode(ops, dtype):
    assert gradcheck.verify(ops.log1pexp, dtype=dtype, max_examples=10, seed=0).passed
    wrong = gradcheck.verify(ops.wrong_log1pexp, dtype=dtype, max_examples=10, seed=0)
    assert wrong.verdict == "failed"


def test_no_false_alarm_in_float16_where_check_grads_has_one(ops):
    from jax.test_util import check_grads

    alarms = 0
    for seed in range(3):
        x16 = np.random.default_rng(seed).uniform(-2, 2, 16).astype(np.float16)
        for f in (ops.softplus, ops.log1pexp, ops.tanh):
            assert check(f, x16).verdict == "passed"
            try:
                check_grads(f, (jnp.asarray(x16),), order=1, modes=["rev"])
            except AssertionError:
                alarms += 1  # JAX's own check, on the same correct op and input
    assert alarms > 0
    assert gradcheck.verify(ops.tanh, dtype="float16", max_examples=10, seed=0).passed


def test_64_bit_types_do_not_leak_into_the_users_process(ops):
    before = jax.config.jax_enable_x64
    result = check(ops.softplus, np.linspace(-2, 2, 5))  # float64: a float64 check
    assert result.verdict == "passed" and result.inputs[0].dtype == np.float64
    assert jax.config.jax_enable_x64 == before
    assert jnp.asarray(np.ones(2)).dtype == (jnp.float64 if before else jnp.float32)


def test_integer_inputs_and_positional_parameters(ops):
    result = gradcheck.verify(
        ops.pick,
        shapes=["n,3", "n"],
        integers={1: (0, 3)},
        kwargs={"scale": 2.0},
        max_examples=10,
        seed=0,
    )
    assert result.verdict == "passed", result.note


def test_the_cli(ops, monkeypatch):
    monkeypatch.chdir(ops.__file__.rsplit("/", 1)[0])
    args = ["verify", "jax_user_ops:wrong_softplus", "--dtype", "float32", "--seed", "0"]
    out = CliRunner().invoke(main, [*args, "--max-examples", "10"])
    assert out.exit_code == 1 and "mismatch" in out.output


def test_several_outputs(ops):
    x = np.linspace(-2, 2, 5)
    result = check(ops.values_and_argmax, x)
    assert result.failure.kind == "mismatch" and result.failure.output == 2
    assert check(lambda x: (jnp.tanh(x), jnp.argmax(x)), x).verdict == "passed"


def _log_cosh_value(x):
    return jnp.logaddexp(x, -x) - jnp.log(2.0)


# (user round 7: two custom_jvp objects of one function, named by the module)
stopped_log_cosh = jax.custom_jvp(_log_cosh_value)
stopped_log_cosh.defjvp(
    lambda p, t: (stopped_log_cosh(p[0]), t[0] * jnp.tanh(jax.lax.stop_gradient(p[0])))
)


def test_a_custom_jvp_is_named_by_its_module_s_name_not_its_function_s():
    # The custom_jvp object carries the wrapped function's __qualname__: reports named
    # it `_log_cosh_value` (the bug and its twin alike), and the describe path's
    # replay command checked that plain function, which has no bug.
    failed = check(stopped_log_cosh, np.array([0.3, -1.2]), order=2)
    head = str(failed).splitlines()[0]
    assert head.startswith(f"gradcheck: {__name__}:stopped_log_cosh failed"), head
    found = gradcheck.verify(stopped_log_cosh, order=2, max_examples=10, seed=0)
    assert found.verdict == "failed"
    assert f"Replay: gradcheck.verify({__name__}.stopped_log_cosh, seed=0)" in str(found)
