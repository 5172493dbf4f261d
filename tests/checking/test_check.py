"""check(): every failure kind caught on a deliberately wrong op, and its correct twin
passing; the settings and parameters API; the result data and the text report."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import gradcheck as mg
from gradcheck import Operation, SkipGradient, check
from gradcheck.checking.result import FAILURE_KINDS
from gradcheck.errors import CheckUsageError, NotATarget
from gradcheck.frontend.report import format_result
from tests.support.checker_ops import Mul

X = np.array([0.3, -1.2, 2.0, 0.7])
Y = np.array([1.5, 0.4, -0.8, 2.2])


def sin_op(backward, forward=None):
    """An op computing sin (or ``forward``), with the given ``backward_var`` body."""

    def __call__(self, a):
        self.variables = (a,)
        return np.sin(a.data) if forward is None else forward(self, a)

    return type("Op", (Operation,), {"__call__": __call__, "backward_var": backward})


def correct_sin(self, grad, index, **kw):
    return grad * np.cos(self.variables[0].data)


def two_input_op(backward):
    def __call__(self, a, b):
        self.variables = (a, b)
        return a.data * b.data

    return type("Op2", (Operation,), {"__call__": __call__, "backward_var": backward})


def correct_mul(self, grad, index, **kw):
    a, b = self.variables
    return grad * (b.data if index == 0 else a.data)


_noise = np.random.default_rng(123)
_shared: dict[str, np.ndarray] = {}


def _cached_mul(self, grad, index, **kw):
    # Wrong: one cached array for both inputs (they alias each other).
    a, b = self.variables
    if "g" not in _shared:
        _shared["g"] = grad * (a.data + b.data)
    return _shared.pop("g") if index == 1 else _shared["g"]


class MutatesInputInForward(Operation):
    def __call__(self, a):
        self.variables = (a,)
        np.sin(a.data, out=a.data)  # wrong: overwrites the input
        return a.data.copy()

    def backward_var(self, grad, index, **kw):
        return grad * np.cos(np.arcsin(self.variables[0].data))


class ExtraGradient(Mul):
    """Overrides backward and writes a gradient to every input, constants too."""

    def backward(self, grad, **kwargs):
        for index, var in enumerate(self.variables):
            g = self.backward_var(grad, index)
            var.grad = g if var.grad is None else var.grad + g


class SkipsFirst(Operation):
    """a * 2 + 0 * b: skipping b is correct (the output does not depend on it)."""

    def __call__(self, a, b):
        self.variables = (a, b)
        return 2 * a.data + 0 * b.data

    def backward_var(self, grad, index, **kw):
        if index == 1:
            raise SkipGradient
        return 2 * grad


class RaisesInForward(Operation):
    def __call__(self, a):
        self.variables = (a,)
        raise RuntimeError("forward exploded")


class IntOutput(Operation):
    def __call__(self, a):
        self.variables = (a,)
        return np.round(a.data).astype(int)

    def backward_var(self, grad, index, **kw):
        return grad * 0.0


def framework_sin(*, reentrant: bool):
    """sin run as another framework's op that keeps its graph (as torch does with
    retain_graph): unless ``reentrant``, its backward scales what the forward saved in
    place (``ctx.cos *= grad``), so a second backward on the same graph differs."""
    from gradcheck.checking.adapters.bridge import bridge_target

    def run(arrays, constants, params):
        saved = {"cos": np.cos(arrays[0])}

        def backward(grad):
            if reentrant:
                return [grad * saved["cos"]]
            saved["cos"] *= 1.5  # a change of what the forward saved
            return [grad * saved["cos"] / 1.5]

        backward.repeatable = True
        return np.sin(arrays[0]), backward

    def sin(x):
        return x

    sin.__qualname__ = "framework_sin"
    return bridge_target(sin, run, lambda arrays, params: np.sin(arrays[0]))


def framework_sin_cos(*, handles_none: bool):
    """(sin x, cos x) run as another framework's op whose backward is handed None for
    an output without an upstream gradient (torch's undefined gradients); unless
    ``handles_none``, it returns no gradient when sin's is None."""
    from gradcheck.checking.adapters.bridge import bridge_target

    def run(arrays, constants, params):
        x = arrays[0]

        def backward(grads):
            g_sin, g_cos = grads
            if g_sin is None and not handles_none:
                return [None]
            total = np.zeros_like(x)
            if g_sin is not None:
                total = total + g_sin * np.cos(x)
            if g_cos is not None:
                total = total - g_cos * np.sin(x)
            return [total]

        backward.repeatable = True
        backward.undefined = True
        return (np.sin(x), np.cos(x)), backward

    def sin_cos(x):
        return x

    sin_cos.__qualname__ = "framework_sin_cos"
    return bridge_target(
        sin_cos, run, lambda arrays, params: (np.sin(arrays[0]), np.cos(arrays[0]))
    )


def framework_exp(*, compiled_off: bool, variant=None):
    """exp as another framework's op with a compiler; unless ``compiled_off`` is
    False, the compiled one's backward is 1% off."""
    from gradcheck.checking.adapters.bridge import bridge_target

    scale = 1.01 if compiled_off and variant is not None and variant.compiled else 1.0

    def run(arrays, constants, params):
        y = np.exp(arrays[0])
        return y, lambda grad: [grad * y * scale]

    def exp(x):
        return x

    exp.__qualname__ = "framework_exp"
    return bridge_target(
        exp,
        run,
        lambda arrays, params: np.exp(arrays[0]),
        variant=variant,
        derive=lambda other: framework_exp(compiled_off=compiled_off, variant=other),
    )


def framework_tanh_batched(*, wrong: str | None):
    """tanh as another framework's op with a vmap rule; under vmap, its output
    (``wrong="forward"``) or its gradient (``"grad"``) is 1% off from a loop's."""
    from gradcheck.checking.adapters import bridge_target
    from gradcheck.checking.adapters._torch_vmap import BatchedCase

    def run(arrays, constants, params):
        y = np.tanh(arrays[0])
        return y, lambda grad: [grad * (1 - y * y)]

    def batcher(batch, differentiable, params, rng, forward):
        ys = [[np.tanh(e[0])] for e in batch]
        vs = [rng.standard_normal(y[0].shape) for y in ys]
        gs = [[v * (1 - y[0] ** 2)] for v, y in zip(vs, ys)]
        off = {
            side: [[a * (1.01 if wrong == side else 1.0) for a in e] for e in found]
            for side, found in (("forward", ys), ("grad", gs))
        }
        return [
            BatchedCase("forward", ["output 0"], [None], ys, off["forward"]),
            BatchedCase("backward", ["input 0's gradient"], [0], gs, off["grad"], None, "rev"),
        ]

    batcher.rule = "vmap"

    def tanh(x):
        return x

    tanh.__qualname__ = "framework_tanh"
    return bridge_target(tanh, run, lambda arrays, params: np.tanh(arrays[0]), batcher=batcher)


def _square_raveled(order):
    """x**2 whose backward ravels x in ``order`` ("K": its memory order, which is not
    C order for a Fortran-ordered input) and reshapes in C order."""

    def backward(self, grad, index, **kw):
        x = self.variables[0].data
        return 2 * np.ravel(x, order=order).reshape(x.shape) * grad

    return sin_op(backward, forward=lambda self, a: a.data**2)


#: A matrix, which a check of an odd seed also hands over in Fortran order.
M = np.array([[0.3, -1.2, 2.0], [0.7, 1.1, -0.4]])

WRONG = {
    "forward_error": (RaisesInForward, (X,), {}),
    "forward_mismatch": (sin_op(correct_sin), (X,), {"reference_forward": np.cos}),
    "undefined_grad": (framework_sin_cos(handles_none=False), (X,), {}),
    "compiled_mismatch": (framework_exp(compiled_off=True), (X,), {"compiled": True}),
    "batched_forward": (framework_tanh_batched(wrong="forward"), (X,), {}),
    "batched_grad": (framework_tanh_batched(wrong="grad"), (X,), {}),
    "noncontiguous_input": (_square_raveled("K"), (M,), {"seed": 1}),
    "low_precision_output": (
        sin_op(correct_sin, forward=lambda self, a: np.sin(a.data).astype(np.float32)),
        (X,),
        {},
    ),
    "not_reentrant": (framework_sin(reentrant=False), (X,), {}),
    "backward_error": (
        sin_op(lambda self, grad, index, **kw: grad * undefined_name),  # noqa: F821
        (X,),
        {},
    ),
    "invalid_output": (IntOutput, (X,), {}),
    "missing_gradient": (
        two_input_op(
            lambda self, grad, index, **kw: (
                (_ for _ in ()).throw(SkipGradient)
                if index == 1
                else correct_mul(self, grad, index)
            )
        ),
        (X, Y),
        {},
    ),
    "extra_gradient": (ExtraGradient, (X, Y), {"constants": (1,)}),
    "not_array": (
        sin_op(lambda self, grad, index, **kw: correct_sin(self, grad, index).tolist()),
        (X,),
        {},
    ),
    "non_real_dtype": (
        sin_op(lambda self, grad, index, **kw: correct_sin(self, grad, index) + 0j),
        (X,),
        {},
    ),
    "wrong_dtype": (
        sin_op(lambda self, grad, index, **kw: correct_sin(self, grad, index).astype(np.float32)),
        (X,),
        {},
    ),
    "wrong_shape": (
        sin_op(lambda self, grad, index, **kw: correct_sin(self, grad, index)[:-1]),
        (X,),
        {},
    ),
    "nonfinite_gradient": (
        sin_op(lambda self, grad, index, **kw: correct_sin(self, grad, index) / 0.0),
        (X,),
        {},
    ),
    "mutated_input": (MutatesInputInForward, (X,), {}),
    "mutated_upstream": (
        sin_op(
            lambda self, grad, index, **kw: np.multiply(
                grad, np.cos(self.variables[0].data), out=grad
            )
        ),
        (X,),
        {},
    ),
    "aliased_gradient": (two_input_op(_cached_mul), (X, Y), {}),
    "nondeterministic": (
        sin_op(
            lambda self, grad, index, **kw: (
                correct_sin(self, grad, index) + _noise.normal(0, 1e-3, grad.shape) * grad
            )
        ),
        (X,),
        {},
    ),
    "nonlinear": (
        sin_op(lambda self, grad, index, **kw: np.abs(grad) * np.cos(self.variables[0].data)),
        (X,),
        {},
    ),
    "mismatch": (sin_op(lambda self, grad, index, **kw: -correct_sin(self, grad, index)), (X,), {}),
}

#: Each wrong op's correct twin.
RIGHT = {
    "forward_error": (sin_op(correct_sin), (X,), {}),
    "forward_mismatch": (sin_op(correct_sin), (X,), {"reference_forward": np.sin}),
    "undefined_grad": (framework_sin_cos(handles_none=True), (X,), {}),
    "compiled_mismatch": (framework_exp(compiled_off=False), (X,), {"compiled": True}),
    "batched_forward": (framework_tanh_batched(wrong=None), (X,), {}),
    "batched_grad": (framework_tanh_batched(wrong=None), (X,), {}),
    "noncontiguous_input": (_square_raveled("C"), (M,), {"seed": 1}),
    "low_precision_output": (
        sin_op(correct_sin, forward=lambda self, a: np.sin(a.data).astype(np.float32)),
        (X.astype(np.float32),),
        {},
    ),
    "not_reentrant": (framework_sin(reentrant=True), (X,), {}),
    "backward_error": (sin_op(correct_sin), (X,), {}),
    "invalid_output": (sin_op(correct_sin), (X,), {}),
    "missing_gradient": (SkipsFirst, (X, Y), {}),
    "extra_gradient": (Mul, (X, Y), {"constants": (1,)}),
    "not_array": (sin_op(correct_sin), (X,), {}),
    "non_real_dtype": (sin_op(correct_sin), (X,), {}),
    "wrong_dtype": (sin_op(correct_sin), (X,), {}),
    "wrong_shape": (sin_op(correct_sin), (X,), {}),
    "nonfinite_gradient": (sin_op(correct_sin), (X,), {}),
    "mutated_input": (sin_op(correct_sin), (X,), {}),
    "mutated_upstream": (sin_op(correct_sin), (X,), {}),
    "aliased_gradient": (two_input_op(correct_mul), (X, Y), {}),
    "nondeterministic": (sin_op(correct_sin), (X,), {}),
    "nonlinear": (sin_op(correct_sin), (X,), {}),
    "mismatch": (sin_op(correct_sin), (X,), {}),
}


def test_every_failure_kind_has_a_wrong_op_and_a_twin():
    assert set(WRONG) == set(FAILURE_KINDS) == set(RIGHT)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("kind", sorted(WRONG))
def test_wrong_op_is_caught_with_its_kind(kind):
    op, arrays, settings = WRONG[kind]
    _shared.clear()
    result = check(op, *arrays, **settings)
    assert result.verdict == "failed", format_result(result)
    assert not result.passed
    assert result.failure.kind == kind, format_result(result)
    assert result.failure.message
    report = format_result(result)
    assert kind in report.splitlines()[0]


@pytest.mark.parametrize("kind", sorted(RIGHT))
def test_correct_twin_passes(kind):
    op, arrays, settings = RIGHT[kind]
    result = check(op, *arrays, **settings)
    assert result.verdict == "passed", format_result(result)
    assert result.failure is None


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_a_wider_gradient_is_a_wrong_dtype_even_though_the_engine_casts_it(dtype):
    # backward_var returns float64 for a float32/float16 input (chainer#6212): the
    # engine stores it in the input's dtype (as MyGrad 2.x does), but the backward
    # computes in a precision its op does not have, and is reported.
    def in_float64(self, grad, index, **kw):
        return grad * np.cos(self.variables[0].data.astype(np.float64))

    wider = sin_op(in_float64)
    x = mg.Tensor(X.astype(dtype))
    mg.execute_op(wider, x).backward()
    assert x.grad.dtype == dtype  # cast by the engine...
    result = check(wider, X.astype(dtype))
    assert result.failure.kind == "wrong_dtype", format_result(result)  # ...and reported
    assert "float64" in result.failure.message and "wider" in result.failure.message
    # the same backward in the input's own dtype passes
    right = sin_op(lambda self, grad, index, **kw: grad * np.cos(self.variables[0].data))
    assert check(right, X.astype(dtype)).verdict == "passed"
    # and so does a gradient as wide as the upstream one: a float64 output of a
    # float32 and a float64 input hands its float64 gradient on to both
    mixed = check(two_input_op(correct_mul), X.astype(dtype), Y)
    assert mixed.verdict == "passed", format_result(mixed)


def test_a_narrower_gradient_is_a_wrong_dtype_even_though_the_engine_casts_it():
    narrow = WRONG["wrong_dtype"][0]
    x = mg.Tensor(X)
    mg.execute_op(narrow, x).backward()
    assert x.grad.dtype == np.float64  # cast back by the engine...
    result = check(narrow, X)
    assert result.failure.kind == "wrong_dtype"  # ...the precision lost is still reported
    assert "float32" in result.failure.message and "less precision" in result.failure.message


def test_failure_names_the_input():
    wrong = two_input_op(
        lambda self, grad, index, **kw: correct_mul(self, grad, index) * (1.01 if index else 1)
    )
    result = check(wrong, X, Y)
    assert result.failure.kind == "mismatch"
    assert result.failure.input == 1
    assert result.per_input[0].mismatched == 0
    assert result.per_input[1].mismatched == 4


def test_exception_report_has_the_ops_own_frame():
    result = check(*WRONG["backward_error"][:1], X)
    f = result.failure
    assert f.exception.startswith("NameError")
    assert f.frame is not None and "test_check.py" in f.frame and "undefined_name" in f.frame
    result = check(RaisesInForward, X)
    assert "forward exploded" in result.failure.message
    assert "test_check.py" in result.failure.frame


def _line_of(source_fragment: str) -> int:
    # the line of this file holding the fragment
    lines = pathlib.Path(__file__).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if source_fragment in line)


def user_matmul(x):
    return x @ np.ones((5, 5))  # shapes do not fit: raised in gradcheck's matmul, by NumPy


def user_adds_text(x):
    return x + "one"  # not a number: raised in gradcheck's Tensor


class UserReshape(Operation):
    def __call__(self, a):
        self.variables = (a,)
        return mg.reshape(a, (7,)).data  # raised in gradcheck's reshape, by NumPy

    def backward_var(self, grad, index, **kw):
        return grad


@pytest.mark.parametrize(
    ("op", "fragment"),
    [
        (user_matmul, "return x @ np.ones((5, 5))"),
        (user_adds_text, 'return x + "one"'),
        (UserReshape, "return mg.reshape(a, (7,)).data"),
    ],
)
def test_a_report_points_at_the_users_line_not_at_gradchecks(op, fragment):
    result = check(op, np.ones(3))
    assert result.failure.kind == "forward_error"
    where = f"{__file__}:{_line_of(fragment)} in "
    assert result.failure.frame.startswith(where), result.failure.frame
    assert f"at {where}" in format_result(result)


def test_a_gradcheck_op_that_raises_is_shown_at_its_own_frame():
    # No frame of the user's: the op is gradcheck's, its own innermost frame is shown.
    from gradcheck.ops.linalg import MatMul

    result = check(MatMul, np.ones(3), np.ones(5))
    assert result.failure.kind == "forward_error"
    assert "gradcheck/engine/ops/_rules/linalg.py:" in result.failure.frame.replace("\\", "/")
    assert "np.matmul(a._data, b._data)" in result.failure.frame


def test_mutated_input_says_forward_or_backward():
    assert "by the forward" in check(MutatesInputInForward, X).failure.message

    def backward(self, grad, index, **kw):
        g = correct_sin(self, grad, index)
        self.variables[0].data[0] = 99.0
        return g

    result = check(sin_op(backward), X)
    assert result.failure.kind == "mutated_input"
    assert "by the backward" in result.failure.message


def test_the_identity_is_not_an_aliasing_failure():
    # The output is the input tensor itself: its gradient is v, and the engine stores
    # a copy, so nothing aliases the caller's array.
    result = check(lambda x: +x, X)
    assert result.verdict == "passed", result.failure


def test_engine_rejection_in_a_function_target_is_classified():
    bad_shape = sin_op(lambda self, grad, index, **kw: correct_sin(self, grad, index)[:-1])

    def f(x):
        return mg.execute_op(bad_shape, x) * 2

    result = check(f, X)
    assert result.failure.kind == "wrong_shape"
    listy = sin_op(lambda self, grad, index, **kw: correct_sin(self, grad, index).tolist())
    assert check(lambda x: mg.execute_op(listy, x) * 2, X).failure.kind == "not_array"


def test_missing_gradient_for_an_input_the_output_does_not_depend_on_is_fine():
    result = check(SkipsFirst, X, Y)
    assert result.passed and result.verdict == "passed"


# -- settings and parameters -----------------------------------------------------------
def test_op_params_by_keyword_and_by_params():
    from tests.support.checker_ops import Clip

    x = np.array([-3.0, 0.2, 0.5, 3.0])
    r1 = check(Clip, x, lo=-2.0, hi=2.0)
    r2 = check(Clip, x, params={"lo": -2.0, "hi": 2.0})
    assert r1.verdict == r2.verdict == "passed"
    assert r1.params == r2.params == {"lo": -2.0, "hi": 2.0}


def test_params_whose_names_clash_with_settings_go_through_params():
    class Seeded(Operation):
        def __call__(self, a, seed=0):
            self.variables = (a,)
            self.seed = seed
            return a.data * seed

        def backward_var(self, grad, index, **kw):
            return grad * np.asarray(self.seed, dtype=grad.dtype)

    result = check(Seeded, X, params={"seed": 3.0}, seed=7)
    assert result.passed and result.params == {"seed": 3.0} and result.seed == 7


def test_unknown_keyword_is_a_usage_error():
    with pytest.raises(CheckUsageError, match="neither a setting"):
        check(sin_op(correct_sin), X, atoll=1e-3)


def test_wrong_number_of_inputs_is_a_usage_error():
    with pytest.raises(CheckUsageError, match="takes 2"):
        check(Mul, X)
    with pytest.raises(CheckUsageError, match="mode"):
        check(Mul, X, Y, mode="quick")


def test_not_an_op_is_rejected():
    with pytest.raises(NotATarget):
        check(42, X)


def test_constants_get_no_gradient_and_are_not_compared():
    result = check(Mul, X, Y, constants=(0,))
    assert result.passed
    assert [e.input for e in result.per_input] == [1]
    # integer inputs named as constants stay integer constants
    result = check(Mul, X, np.array([1, 2, 3, 4]), constants=(1,))
    assert result.passed and result.settings["constants"] == [1]
    assert result.inputs[1].dtype == np.int64


def test_dtype_setting_casts_the_inputs():
    result = check(sin_op(correct_sin), X, dtype=np.float32)
    assert result.passed
    assert result.inputs[0].dtype == np.float32


def test_same_seed_same_result_other_seed_other_v():
    wrong = WRONG["mismatch"][0]
    a, b, c = check(wrong, X, seed=1), check(wrong, X, seed=1), check(wrong, X, seed=2)
    assert a.worst == b.worst
    assert a.worst != c.worst


def test_modes_and_counters():
    x = np.linspace(-2, 2, 30)
    full = check(sin_op(correct_sin), x, mode="full")
    fast = check(sin_op(correct_sin), x, mode="fast")
    assert full.settings["mode"] == "full" and fast.settings["mode"] == "fast"
    assert full.forward_calls >= 2 * x.size
    assert fast.forward_calls < full.forward_calls
    # the first backward, then the repeat and the scaled backward on one fresh graph
    assert full.backward_calls == fast.backward_calls == 2
    assert check(sin_op(correct_sin), x).settings["mode"] == "full"  # auto, small


def test_complex_step():
    result = check(sin_op(correct_sin), X, complex_step=True)
    assert result.passed and result.max_rel_error < 1e-12
    wrong = WRONG["mismatch"][0]
    assert check(wrong, X, complex_step=True).failure.kind == "mismatch"
    with pytest.raises(CheckUsageError, match="complex"):
        check(lambda x: mg.absolute(x), X, complex_step=True)


# -- result data and report --------------------------------------------------------------
def test_to_dict_is_json_with_full_precision():
    result = check(WRONG["mismatch"][0], X)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["verdict"] == "failed" and data["failure"]["kind"] == "mismatch"
    assert data["error_ratio"] == result.error_ratio  # exact round trip
    assert data["inputs"][0]["data"] == X.tolist()
    assert data["failure"]["worst"][0]["analytic"] == result.failure.worst[0].analytic
    assert data["forward_calls"] == result.forward_calls


def test_report_is_pytest_approx_style():
    x = np.linspace(-1, 1, 12).reshape(3, 4)
    text = format_result(check(WRONG["mismatch"][0], x, seed=5))
    lines = text.splitlines()
    assert lines[0].startswith("gradcheck: ") and "failed: mismatch (input a)" in lines[0]
    assert "Mismatched elements: " in text and " / 12" in text
    assert "Max absolute difference" in text and "Max relative difference" in text
    header = next(line for line in lines if line.startswith("Index"))
    assert [c.strip() for c in header.split("|")] == [
        "Index",
        "Analytic",
        "Numeric",
        "Abs err",
        "Rel err",
    ]
    assert "seed: 5" in text


# --- found by `gradcheck verify` over the built-in library ----------------------------


def _absorbed(x, g):
    # d/dg = 1e-13 * x: moving g by a finite-difference step changes each output by
    # ~1e-18, below the half ulp of the outputs (~1): the outputs do not move at all.
    # (batchnorm's gamma where a channel is constant: the normalised values are
    # rounding noise next to beta.)
    return x * 1e-13 * g + 1.0


@pytest.mark.parametrize("mode", ["full", "fast"])
def test_a_derivative_below_the_outputs_resolution_is_not_a_mismatch(mode):
    x = np.array([1.0, -2.0, 3.0])
    result = check(_absorbed, x, np.array([0.5, 0.25, 2.0]), mode=mode, seed=3)
    assert result.passed, result.failure


def test_a_gradient_on_an_element_that_reaches_no_output_is_still_caught():
    # The same resolution floor must not hide a real bug: x[1] reaches no output, and
    # a gradient of 1e-6 to it is wrong (the floor there is ~eps * |f| / h, ~1e-12).
    class DropsSecond(Operation):
        def __call__(self, x):
            self.variables = (x,)
            return x.data[::2] + 1.0

        def backward_var(self, grad, index, **kwargs):
            out = np.zeros(self.variables[0].shape)
            out[::2] = grad
            out[1] = 1e-6 * grad[0]  # linear in grad, but x[1] reaches no output
            return out

    result = check(DropsSecond, np.array([1.0, 2.0, 3.0]), seed=0)
    assert result.failure is not None and result.failure.kind == "mismatch"
    assert [e.index for e in result.failure.worst] == [(1,)]


def _noisy_sin(relative: float):
    """sin whose backward is nondeterministic: each run's gradient off by ``relative``
    (Gaussian), as a backward summing with atomics is."""
    noise = np.random.default_rng(3)
    return sin_op(
        lambda self, grad, index, **kw: (
            correct_sin(self, grad, index) * (1 + relative * noise.standard_normal(grad.shape))
        )
    )


def test_nondet_tol_admits_a_nondeterministic_backward_in_the_scaled_run_too():
    # It was called "nonlinear": backward(-2v) differs from -2·backward(v) by the
    # nondeterminism, which nondet_tol declares.
    assert check(_noisy_sin(1e-13), X).failure.kind == "nondeterministic"
    assert check(_noisy_sin(1e-13), X, nondet_tol=1e-10).verdict == "passed"
    # beyond the tolerance it is still nondeterministic, and a nonlinear backward is
    # still nonlinear with a tolerance
    assert check(_noisy_sin(1e-6), X, nondet_tol=1e-10).failure.kind == "nondeterministic"
    nonlinear, arrays, _ = WRONG["nonlinear"]
    assert check(nonlinear, *arrays, nondet_tol=1e-10).failure.kind == "nonlinear"


def test_the_repeat_and_the_scaled_backward_share_a_graph_only_where_both_pass():
    assert check(sin_op(correct_sin), X).backward_calls == 2  # the first, the shared one
    for kind in ("nondeterministic", "nonlinear"):
        op, arrays, settings = WRONG[kind]
        result = check(op, *arrays, **settings)
        # they ran apart (two more backward calls) to say which of the two it is
        assert result.failure.kind == kind and result.backward_calls >= 3
