"""The numeric verdict as named stages (gradcheck.checking.verdict), one tolerance
object (gradcheck.checking.tolerance) and one table of thresholds
(gradcheck.checking.thresholds): issue 39, item 3."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import gradcheck as mg
from gradcheck.checking import thresholds, verdict
from gradcheck.checking.compare import Comparison
from gradcheck.checking.tolerance import DEFAULT_TOLERANCES, Tolerance, tolerance_for

CHECKING = Path(verdict.__file__).parent


# -- one tolerance object ---------------------------------------------------------------
def test_a_tolerance_is_frozen_and_in_the_api_order_atol_then_rtol():
    tol = Tolerance(1e-3, 1e-5, False)
    assert (tol.atol, tol.rtol, tol.atol_scaled) == (1e-3, 1e-5, False)
    assert [f.name for f in dataclasses.fields(Tolerance)] == ["atol", "rtol", "atol_scaled"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        tol.atol = 1.0  # type: ignore[misc]


def test_the_default_atol_scales_with_the_gradient_and_a_given_one_is_absolute():
    default = tolerance_for(np.dtype(np.float64), None, None)
    assert default == DEFAULT_TOLERANCES["float64"] == Tolerance(1e-9, 1e-7, True)
    assert default.absolute(1e6) == pytest.approx(1e-3)  # 1e-9 of the gradient's scale
    given = tolerance_for(np.dtype(np.float64), 1e-6, None)
    assert given == Tolerance(1e-6, 1e-7, False)  # rtol still the dtype's
    assert given.absolute(1e6) == 1e-6
    only_rtol = tolerance_for(np.dtype(np.float32), None, 1e-2)
    assert only_rtol == Tolerance(1e-5, 1e-2, True)
    assert tolerance_for("bfloat16", None, None) == Tolerance(5e-2, 5e-2, True)


def test_allowed_is_the_absolute_part_plus_rtol_times_the_expected_value():
    tol = Tolerance(atol=0.5, rtol=0.1, atol_scaled=True)
    expected = np.array([1.0, -4.0])
    assert np.array_equal(tol.allowed(expected, 4.0), 0.5 * 4.0 + 0.1 * np.abs(expected))


def test_a_given_atol_is_absolute_in_a_check():
    # |analytic - numeric| = 1e-3 at a gradient of size 1e6: beyond an absolute atol of
    # 1e-4 (with rtol 0), within the default, which scales with the gradient
    class Off(mg.Operation):
        def __call__(self, x):
            self.variables = (x,)
            return 1e6 * x.data

        def backward_var(self, grad, index, **kwargs):
            return grad * 1e6 + 1e-3

    x = np.array([0.5, 1.5])
    assert mg.check(Off, x, upstream=np.ones(2)).verdict == "passed"
    failed = mg.check(Off, x, upstream=np.ones(2), atol=1e-4, rtol=0.0)
    assert failed.verdict == "failed" and failed.failure.kind == "mismatch"


# -- one table of thresholds ------------------------------------------------------------
VERDICT_MODULES = (
    "checker.py",
    "check_inputs.py",
    "run.py",
    "verdict.py",
    "low_precision.py",
    "structure.py",
    "compare.py",
    "longer_steps.py",
    "numerical.py",
    "levels.py",
    "forward_rounding.py",
    "computed_in.py",
)


def _module_level_names(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        targets += [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    names.add(name.id)
    return names


def _is_number(node: ast.AST) -> bool:
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return isinstance(node, ast.BinOp)  # (1 << 16, LEVEL_RATIO**2: arithmetic)
    values = value if isinstance(value, tuple) else (value,)
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def test_the_verdicts_public_numbers_are_defined_in_the_thresholds_table_only():
    table = _module_level_names(CHECKING / "thresholds.py")
    assert {"REPEAT_ULPS", "WIDE_ULPS", "OWN_SCALE_RATIO", "LEVEL_RATIO"} <= table
    for name in VERDICT_MODULES:
        path = CHECKING / name
        assert _module_level_names(path) & table == set(), name
        public_numbers = [
            target.id
            for node in ast.parse(path.read_text()).body
            if isinstance(node, ast.Assign) and _is_number(node.value)
            for target in node.targets
            if isinstance(target, ast.Name) and not target.id.startswith("_")
        ]
        assert public_numbers == [], f"{name}: numbers of the verdict belong in thresholds.py"


def test_every_threshold_says_why():
    lines = (CHECKING / "thresholds.py").read_text().splitlines()
    for k, line in enumerate(lines):
        if line and line[0].isupper() and " = " in line:
            above = lines[k - 1] if k else ""
            assert above.startswith("#:") or above[:1].isupper(), line


def test_the_old_paths_of_the_thresholds_still_give_the_same_numbers():
    from gradcheck.checking import checker, compare, structure

    assert checker.FULL_MODE_MAX_SIZE == thresholds.FULL_MODE_MAX_SIZE == 4096
    assert compare.WORST_ELEMENTS == thresholds.WORST_ELEMENTS
    assert structure.REPEAT_ULPS == thresholds.REPEAT_ULPS == 4


# -- the verdict as named stages ------------------------------------------------------------
STAGES = [
    "first_comparison",
    "noise_remeasured",
    "refined_at_own_scale",
    "float64_rerun",
    "ties_not_a_gradient",
]


def test_numerics_is_the_sequence_of_the_stages():
    # (numerics runs the stages in _compared, and then reads the result)
    calls = [
        node.func.id
        for node in ast.walk(ast.parse(inspect.getsource(verdict._compared)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    ]
    assert [c for c in calls if c in STAGES] == STAGES
    for name in STAGES:
        hints = inspect.get_annotations(getattr(verdict, name), eval_str=True)
        assert hints["comparison"] is Comparison and hints["return"] is Comparison


def _comparison(dtype, analytic, numeric) -> Comparison:
    x = np.ones(len(analytic), dtype)
    tol = tolerance_for(np.dtype(dtype), None, None)
    c = Comparison(0, x, np.asarray(analytic, np.float64), tol, 1.0)
    n = np.asarray(numeric, np.float64)
    zeros = np.zeros(n.size)
    from gradcheck.checking.compare import judge_full

    estimated = (n, zeros, np.zeros(n.size, bool), zeros, zeros)
    judge_full(c, estimated)
    c.estimated = estimated
    return c


def test_the_later_stages_leave_a_comparison_they_have_nothing_to_say_about():
    agrees = _comparison(np.float64, [1.0, 2.0], [1.0, 2.0])
    assert not agrees.mismatched
    # nothing to re-measure where it agrees, nor to refine where nothing was re-measured
    assert verdict.noise_remeasured(None, agrees, None, [], [None]) is agrees  # type: ignore[arg-type]
    assert verdict.refined_at_own_scale(None, agrees, False) is agrees  # type: ignore[arg-type]
    # the float64 reruns are for float32 and float16 gradients
    mismatched = _comparison(np.float64, [1.0, 3.0], [1.0, 2.0])
    assert mismatched.mismatched
    assert verdict.float64_rerun(None, None, mismatched, None, False) is mismatched  # type: ignore[arg-type]
    # a float32 mismatch with tolerances the user chose, and no estimates: as it was
    mismatched.x = mismatched.x.astype(np.float32)
    mismatched.estimated = None
    assert verdict.float64_rerun(None, None, mismatched, None, True) is mismatched  # type: ignore[arg-type]
    # a mismatch on an element whose value no other element shares: no tie to look along
    untied = _comparison(np.float64, [1.0, 3.0], [1.0, 2.0])
    untied.x = np.array([0.5, 1.5])
    ev = SimpleNamespace(work=[untied.x])
    assert verdict.ties_not_a_gradient(ev, untied, (None, untied.analytic)) is untied  # type: ignore[arg-type]


def test_a_remeasured_comparison_spends_its_estimates_at_the_own_scale_stage():
    c = _comparison(np.float64, [1.0, 3.0], [1.0, 2.0])
    c.remeasured = True
    out = verdict.refined_at_own_scale(None, c, True)  # type: ignore[arg-type]
    assert out is c and out.estimated is None  # (user tolerances: no own-scale refinement)
