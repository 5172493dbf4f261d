"""`gradcheck.verify`: the search over generated inputs, shrinking, rejection of
non-differentiable examples, reproducibility, and the op's own description."""

from __future__ import annotations

import signal
import sys

import numpy as np
import pytest

import gradcheck
from gradcheck import Operation
from gradcheck.errors import GradcheckError, InvalidDescription
from gradcheck.search.verifier import VerifyResult, verify


class Square(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data**2

    def backward_var(self, grad, index, **kwargs):
        return grad * 2 * self.variables[0].data


class WrongFromThirdElement(Operation):
    """x**2 whose gradient is wrong at flat index 2 and beyond: the smallest failing
    input has exactly three elements."""

    def __call__(self, x):
        self.variables = (x,)
        return x.data**2

    def backward_var(self, grad, index, **kwargs):
        g = grad * 2 * self.variables[0].data
        flat = g.reshape(-1).copy()
        flat[2:] *= 1.5
        return flat.reshape(g.shape)


class Absolute(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return np.abs(x.data)

    def backward_var(self, grad, index, **kwargs):
        return grad * np.sign(self.variables[0].data)


@gradcheck.describe(domain=(1.0, 2.0), shapes=["3"])
class InRangeOnly(Operation):
    """Raises on inputs outside its declared domain and shape."""

    def __call__(self, x):
        if x.shape != (3,) or not ((x.data >= 1) & (x.data <= 2)).all():
            raise ValueError(f"outside the declared inputs: {x.data!r}")
        self.variables = (x,)
        return np.log(x.data)

    def backward_var(self, grad, index, **kwargs):
        return grad / self.variables[0].data


def scale(x, factor=1.0):
    return x * factor


def test_correct_op_passes() -> None:
    calls = []
    result = verify(Square, max_examples=15, seed=0, progress=lambda k, n: calls.append((k, n)))
    assert isinstance(result, VerifyResult)
    assert (result.passed, result.verdict, result.examples) == (True, "passed", 15)
    assert result.failure is None
    assert 0 <= result.error_ratio < 1
    assert result.max_abs_error >= 0 and result.seconds > 0 and result.seed == 0
    assert calls[-1] == (15, 15) and len(calls) == 15
    assert result.target.endswith("Square")


def test_failure_is_shrunk_to_the_smallest_failing_input() -> None:
    result = verify(WrongFromThirdElement, max_examples=50, seed=3)
    assert (result.passed, result.verdict) == (False, "failed")
    failure = result.failure
    assert failure.failure.kind == "mismatch"
    (x,) = failure.inputs
    assert x.size == 3
    assert failure.failure.worst[0].index == np.unravel_index(2, x.shape)


def test_same_seed_same_result_other_seeds_still_catch_it() -> None:
    a = verify(WrongFromThirdElement, max_examples=30, seed=11)
    b = verify(WrongFromThirdElement, max_examples=30, seed=11)
    assert a.examples == b.examples
    np.testing.assert_array_equal(a.failure.inputs[0], b.failure.inputs[0])
    for seed in (1, 2, 5):
        assert not verify(WrongFromThirdElement, max_examples=30, seed=seed).passed


def test_description_is_used_and_arguments_override_it() -> None:
    assert verify(InRangeOnly, max_examples=10, seed=0).passed
    overridden = verify(InRangeOnly, max_examples=10, seed=0, domain=(3.0, 4.0))
    assert overridden.failure.failure.kind == "forward_error"
    assert overridden.settings["domain"] == (3.0, 4.0)


def test_kwargs_reach_the_function() -> None:
    result = verify(scale, kwargs={"factor": 3.0}, max_examples=5, seed=0)
    assert result.passed and result.settings["kwargs"] == {"factor": 3.0}


def test_named_shapes_are_shared() -> None:
    result = verify(lambda a, b: a @ b, shapes=["n,k", "k,m"], max_examples=10, seed=0)
    assert result.passed


def test_kinks_are_rejected_and_counted_not_failed() -> None:
    results = [verify(Absolute, domain=(-1, 1), max_examples=20, seed=s) for s in (1, 2)]
    assert all(r.passed for r in results)
    assert all(r.rejected > 0 for r in results)
    assert all(r.examples == 20 for r in results)


def test_near_kink_is_not_a_false_alarm() -> None:
    # Seed 0 draws x = 2.1e-6, within one finite-difference step of the kink: it is
    # rejected as not differentiable (a false alarm until the checker learnt that).
    assert verify(Absolute, domain=(-1, 1), max_examples=20, seed=0).passed


def test_unique_draws_distinct_values_and_is_part_of_the_description() -> None:
    drawn: list[np.ndarray] = []

    @gradcheck.describe(shapes=["n,k", "k"], unique=True)
    def product(a, b):
        drawn.append(np.concatenate([a.data.ravel(), b.data.ravel()]))
        return a * b

    assert verify(product, max_examples=20, seed=0).passed
    assert all(np.unique(values).size == values.size for values in drawn)
    # Without it (an argument overrides the description), Hypothesis draws repeats.
    drawn.clear()
    result = verify(product, max_examples=20, seed=0, unique=False)
    assert result.passed and result.settings["unique"] is False
    assert any(np.unique(values).size < values.size for values in drawn)


@pytest.mark.parametrize(
    ("kwargs", "field", "words"),
    [
        ({"shapes": ["n", "n"]}, "shapes", "got 2 shapes"),
        ({"shapes": ["n,?"]}, "shapes", "bad shape spec"),
        ({"domain": [(0, 1), (0, 1)]}, "domain", "got 2 domains"),
        ({"domain": (2, 1)}, "domain", "LO < HI"),
        ({"kwargs": {"nope": 1}}, "kwargs", "no parameter 'nope'"),
        ({"dtype": "int8"}, "dtype", "float"),
        ({"mode": "x"}, "mode", "mode"),
    ],
)
def test_invalid_settings_name_the_setting(kwargs: dict, field: str, words: str) -> None:
    with pytest.raises(InvalidDescription, match=words) as info:
        verify(Square, max_examples=2, seed=0, **kwargs)
    assert info.value.field == field
    assert info.value.exit_code == 2


def test_result_to_dict_is_json_ready() -> None:
    import json

    result = verify(WrongFromThirdElement, max_examples=20, seed=0)
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["verdict"] == "failed" and data["failure"]["kind"] == "mismatch"
    assert data["failure"]["inputs"][0]["shape"]


def test_every_example_not_differentiable_is_inconclusive(monkeypatch) -> None:
    import sys

    from gradcheck.checking.result import CheckResult

    # each example's check (gradcheck.search.example_check, beside the search's state)
    example_check = sys.modules["gradcheck.search.example_check"]
    monkeypatch.setattr(
        example_check,
        "_check",
        lambda tgt, arrays, options, seed, **kw: CheckResult("not differentiable", "op"),
    )
    result = verify(Square, max_examples=5, seed=0)
    assert (result.passed, result.verdict, result.examples) == (False, "inconclusive", 0)
    assert result.rejected > 0
    assert "not differentiable" in result.note


class _Square(Operation):
    def __call__(self, x):
        self.variables = (x,)
        return x.data**2

    def backward_var(self, grad, index, **kwargs):
        return grad * 2 * self.variables[0].data


class _Exits(_Square):
    def __call__(self, x):
        sys.exit(0)


class _Interrupts(_Square):
    def backward_var(self, grad, index, **kwargs):
        raise KeyboardInterrupt


def test_an_op_that_calls_sys_exit_fails_with_kind_exited_at_its_example():
    result = verify(_Exits, max_examples=3, seed=0)
    assert result.verdict == "failed"
    assert result.failure.failure.kind == "exited"
    assert "SystemExit(0)" in result.failure.failure.message
    assert "sys.exit" in result.failure.failure.message
    assert len(result.failure.inputs) == 1  # the (shrunk) example


def test_a_keyboard_interrupt_is_the_ops_unless_python_handles_sigint(monkeypatch):
    # Python's own handler installed: it may be a Ctrl-C, which must stop the caller.
    monkeypatch.setattr(signal, "getsignal", lambda s: signal.default_int_handler)
    with pytest.raises(KeyboardInterrupt):
        verify(_Interrupts, max_examples=3, seed=0)
    # Handled otherwise (gradcheck verify's coordinator, its workers): the op raised it.
    monkeypatch.setattr(signal, "getsignal", lambda s: signal.SIG_IGN)
    result = verify(_Interrupts, max_examples=3, seed=0)
    assert result.failure.failure.kind == "exited"
    assert "KeyboardInterrupt" in result.failure.failure.message


def test_on_example_sees_every_example_before_it_is_checked():
    seen = []
    result = verify(
        _Square, max_examples=4, seed=0, on_example=lambda arrays, s: seen.append(len(arrays))
    )
    assert result.passed and seen == [1] * result.examples


@pytest.mark.parametrize(
    "setting", [{"atol": float("nan")}, {"rtol": float("inf")}, {"max_examples": 10**30}]
)
def test_a_setting_that_would_compare_nothing_or_never_end_is_refused(setting):
    (key,) = setting
    with pytest.raises(InvalidDescription) as info:
        verify(_Square, seed=0, **setting)
    assert info.value.field == key


def test_an_engine_function_at_order_2_is_a_usage_error_not_a_flaky_failure():
    # check() refuses it (order 2 needs a torch or JAX target); inside a search the
    # refusal reached Hypothesis, which reported "the failure did not repeat"
    def f(x):
        return gradcheck.sin(x)

    with pytest.raises(GradcheckError, match="needs a torch or JAX target"):
        gradcheck.verify(f, order=2, max_examples=20, seed=0)
