"""Regression baselines: record a run's results, and compare a later run with them.

A gradient can get *worse* and still pass: a "simplified" backward whose error grew
from 1% to 60% of the tolerance is one more change away from failing. A baseline
records, per target, the verdict and the worst error relative to the tolerance
(``error_ratio``), so that a pull request can be compared with main.

The file (``gradcheck verify --save-baseline FILE``) is readable JSON, sorted keys,
floats at full precision (Python's ``repr``, which reads back exactly), nothing
executable::

    {
      "gradcheck_baseline": 1,
      "gradcheck_version": "0.1.0",
      "versions": {"gradcheck": "0.1.0", "hypothesis": "6.170.17", "numpy": "2.3.5",
                   "python": "3.11.7"},
      "seed": 1234,
      "targets": {
        "mymodule:MyOp": {
          "verdict": "passed", "passed": true, "examples": 100, "rejected": 0,
          "error_ratio": 0.0123, "max_abs_error": 2.1e-11, "max_rel_error": 3.4e-12,
          "seed": 1234, "settings": {"dtype": "float64", "max_examples": 100, ...}
        }
      }
    }

**The comparison rule** (:func:`compare`), per target in both runs:

- a target that passed in the baseline and does not pass now is a regression;
- a target that passed in both is a regression when
  ``new_ratio > factor * max(old_ratio, RATIO_FLOOR)``. The floor
  (:data:`RATIO_FLOOR`, 5% of the tolerance) keeps noise from counting: a correct op's
  ratio is often 1e-3 or less, and growing from 1e-6 to 1e-5 of the tolerance means
  nothing, while growing from 20% to 40% of it does.

Targets only in the new run ("new") or only in the baseline ("vanished") are reported
but are not failures: adding or removing an op is a decision, not a regression. A target
that failed in the baseline and passes now is reported as fixed.

For the numbers to be comparable the two runs must check the same examples: the
baseline stores each target's seed, and ``--baseline`` reuses it (unless ``--seed`` is
given), with the settings from the same configuration. The same seed draws the same
examples only under the same Hypothesis (and the same NumPy and Python, for the
numbers): the baseline records their versions, and ``--baseline`` warns when this run's
differ (the comparison still runs; save the baseline again after an upgrade).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gradcheck.checking.result import jsonable
from gradcheck.defaults import RATIO_FLOOR
from gradcheck.errors import BaselineError, OutputError, printable
from gradcheck.frontend.files import OutputFile, read_text, unreadable_number
from gradcheck.search.verifier import VerifyResult

__all__ = [
    "BASELINE_VERSION",
    "RATIO_FLOOR",
    "BaselineError",
    "Comparison",
    "Regression",
    "baseline_document",
    "baseline_text",
    "compare",
    "load_baseline",
    "save_baseline",
]

BASELINE_VERSION = 1
#: The largest baseline read (one target takes about 500 bytes).
BASELINE_SIZE_LIMIT = 64 << 20


# The fields each target entry must hold, and their JSON types.
_ENTRY_FIELDS: dict[str, tuple[type, ...]] = {
    "verdict": (str,),
    "passed": (bool,),
    "examples": (int,),
    "error_ratio": (int, float, str),  # "nan" when nothing was measured
    "seed": (int,),
}


def _entry(result: VerifyResult) -> dict[str, Any]:
    return {
        "verdict": result.verdict,
        "passed": result.passed,
        "examples": result.examples,
        "rejected": result.rejected,
        "error_ratio": result.error_ratio,
        "max_abs_error": result.max_abs_error,
        "max_rel_error": result.max_rel_error,
        "seed": result.seed,
        "seconds": result.seconds,
        "settings": result.settings,
    }


def baseline_document(
    results: Sequence[VerifyResult], *, seed: int, shard: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The baseline of a run, as a JSON-ready dict (non-finite floats as strings);
    ``shard``: the manifest of a shard's run (:mod:`gradcheck.frontend.shards`)."""
    from gradcheck import __version__

    document: dict[str, Any] = {
        "gradcheck_baseline": BASELINE_VERSION,
        "gradcheck_version": __version__,
        "versions": current_versions(),
        "seed": seed,
        "targets": {r.target: _entry(r) for r in results},
    }
    if shard is not None:
        document["shard"] = dict(shard)
    return jsonable(document)


def current_versions() -> dict[str, str]:
    """The versions a baseline's numbers depend on: the examples Hypothesis draws from
    a seed change between its releases (error ratios 100x apart, same seed, under
    Hypothesis 6.100 and 6.170), and NumPy's and Python's arithmetic may too."""
    import platform

    import hypothesis
    import numpy

    from gradcheck import __version__

    return {
        "gradcheck": __version__,
        "hypothesis": hypothesis.__version__,
        "numpy": numpy.__version__,
        "python": platform.python_version(),
    }


def version_mismatches(document: Mapping[str, Any]) -> list[str]:
    """``name saved-version -> this-version`` for each version recorded in a baseline
    that differs from this process's (none for a baseline that records none)."""
    saved = document.get("versions")
    if not isinstance(saved, dict):
        return []
    now = current_versions()
    return [
        f"{name} {saved[name]} -> {now[name]}"
        for name in now
        if isinstance(saved.get(name), str) and saved[name] != now[name]
    ]


def baseline_text(
    results: Sequence[VerifyResult], *, seed: int, shard: Mapping[str, Any] | None = None
) -> str:
    """The baseline file of a run (sorted keys, two-space indent, a final newline)."""
    document = baseline_document(results, seed=seed, shard=shard)
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def save_baseline(path: Path | str, results: Sequence[VerifyResult], *, seed: int) -> None:
    """Write the baseline of a run to ``path``: atomically (a failed write leaves the
    previous file as it was), its folder created if missing.

    Raises
    ------
    OutputError
        The file cannot be written.
    """
    out = OutputFile(path, what="baseline", error=OutputError)
    out.write(baseline_text(results, seed=seed).encode("utf-8"))


def load_baseline(path: Path | str) -> dict[str, Any]:
    """Read and check a baseline file.

    Raises
    ------
    BaselineError
        One line naming the file and what is wrong with it.
    """
    text = read_text(path, what="baseline", limit=BASELINE_SIZE_LIMIT, error=BaselineError)
    try:
        document = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}: not valid JSON ({exc})") from None
    except RecursionError:
        raise BaselineError(f"{path}: not a gradcheck baseline: nested too deeply") from None
    except ValueError as exc:  # NaN, Infinity; an integer of more than 4300 digits
        raise BaselineError(f"{path}: not a gradcheck baseline: {unreadable_number(exc)}") from None
    if not isinstance(document, dict) or "gradcheck_baseline" not in document:
        raise BaselineError(
            f"{path}: not a gradcheck baseline (no 'gradcheck_baseline' key; write one "
            f"with --save-baseline)"
        )
    if document["gradcheck_baseline"] != BASELINE_VERSION:
        raise BaselineError(
            f"{path}: baseline version {document['gradcheck_baseline']!r} is not "
            f"supported (this gradcheck reads version {BASELINE_VERSION})"
        )
    seed: Any = document.get("seed")
    targets = document.get("targets")
    if not _is_int(seed) or seed < 0 or not isinstance(targets, dict):
        raise BaselineError(
            f"{path}: needs an integer 'seed' >= 0 and a 'targets' object "
            f"(got seed {printable(repr(seed))})"
        )
    versions = document.get("versions", {})
    if not isinstance(versions, dict) or not all(isinstance(v, str) for v in versions.values()):
        raise BaselineError(f"{path}: 'versions' must be an object of version strings")
    for name, entry in targets.items():
        _check_entry(path, name, entry)
    return document


def _check_entry(path: Path | str, name: str, entry: Any) -> None:
    """One target of a baseline, checked whole: its name (a target spec, printable)
    and every field (the seed >= 0, a known verdict, counts and ratios >= 0)."""
    from gradcheck.checking.vocabulary import Verdict

    shown = printable(name)
    if not name or shown != name or name != name.strip():
        raise BaselineError(
            f"{path}: target name '{shown}' is not a target (control characters or "
            f"blanks); save the baseline again with --save-baseline"
        )
    if not isinstance(entry, dict):
        raise BaselineError(f"{path}: target '{name}' must be an object")
    verdicts = {v for k, v in vars(Verdict).items() if k.isupper()}
    for key, types in _ENTRY_FIELDS.items():
        value: Any = entry.get(key)
        ok = _is_int(value) if types == (int,) else isinstance(value, types)
        if key == "error_ratio" and isinstance(value, str):
            ok = value in ("nan", "inf")
        elif key == "error_ratio" and ok:
            ok = value >= 0
        if key in ("seed", "examples") and ok:
            ok = value >= 0
        if key == "verdict" and ok:
            ok = value in verdicts
        if not ok:
            raise BaselineError(
                f"{path}: target '{name}' has no valid '{key}' (got {printable(repr(value))})"
            )


def _no_constant(name: str) -> Any:
    raise ValueError(f'{name} is not JSON (a baseline writes a non-finite number as "nan")')


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _ratio(value: Any) -> float:
    return float(value)  # "nan" and "inf" included


@dataclass(frozen=True)
class Regression:
    """One target that got worse: ``reason`` says how."""

    target: str
    reason: str


@dataclass
class Comparison:
    """A run compared with a baseline.

    ``regressions`` fail the run; ``fixed``, ``new`` and ``vanished`` are information.
    ``lines`` are the per-target lines of the report, in the run's order.
    """

    factor: float
    regressions: list[Regression] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    vanished: list[str] = field(default_factory=list)
    ratios: dict[str, tuple[float, float]] = field(default_factory=dict)
    settings_changed: dict[str, list[str]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.regressions

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                "passed": self.passed,
                "regression_factor": self.factor,
                "ratio_floor": RATIO_FLOOR,
                "regressions": [{"target": r.target, "reason": r.reason} for r in self.regressions],
                "fixed": self.fixed,
                "new": self.new,
                "vanished": self.vanished,
                "settings_changed": self.settings_changed,
                "error_ratios": {k: {"baseline": a, "now": b} for k, a, b in self._ratio_rows()},
            }
        )

    def _ratio_rows(self) -> list[tuple[str, float, float]]:
        return [(k, a, b) for k, (a, b) in self.ratios.items()]

    def render(self) -> str:
        """The comparison as text: one line per finding, then a summary."""
        lines = [f"regression: {r.target}: {r.reason}" for r in self.regressions]
        lines += [f"fixed: {t}: passes now (failed in the baseline)" for t in self.fixed]
        lines += [f"new: {t}: not in the baseline (not a failure)" for t in self.new]
        lines += [
            f"vanished: {t}: in the baseline but not run (not a failure)" for t in self.vanished
        ]
        lines += [
            f"settings changed: {t}: {', '.join(keys)} differ from the baseline's "
            f"(not a failure; the error ratios may not be like for like)"
            for t, keys in self.settings_changed.items()
        ]
        n = len(self.regressions)
        lines.append(
            f"baseline: {n} regression{'s' * (n != 1)} in {len(self.ratios)} compared "
            f"target{'s' * (len(self.ratios) != 1)} (limit: error ratio x{self.factor:g}, "
            f"floor {RATIO_FLOOR:g})"
        )
        return "\n".join(lines)


def compare(
    results: Sequence[VerifyResult], baseline: Mapping[str, Any], *, factor: float
) -> Comparison:
    """Compare a run with a baseline document (:func:`load_baseline`) by the rule in the
    module docstring.

    Examples
    --------
    >>> from gradcheck.search.verifier import VerifyResult
    >>> def result(ratio):
    ...     return VerifyResult("m:Op", True, "passed", 10, 0, None, 0.0, 0.0, ratio, 0.1, 1)
    >>> old = {"targets": {"m:Op": {"passed": True, "error_ratio": 0.2}}}
    >>> compare([result(0.25)], old, factor=1.5).passed
    True
    >>> compare([result(0.4)], old, factor=1.5).regressions[0].reason
    'error ratio grew from 0.2 to 0.4 (x2, more than x1.5)'
    >>> tiny = {"targets": {"m:Op": {"passed": True, "error_ratio": 1e-6}}}
    >>> compare([result(1e-4)], tiny, factor=1.5).passed  # noise under the floor
    True
    """
    old_targets = baseline["targets"]
    out = Comparison(factor=factor)
    seen = set()
    for r in results:
        seen.add(r.target)
        old = old_targets.get(r.target)
        if old is None:
            out.new.append(r.target)
            continue
        old_ratio, new_ratio = _ratio(old["error_ratio"]), r.error_ratio
        out.ratios[r.target] = (old_ratio, new_ratio)
        changed = _changed_settings(old.get("settings"), r.settings)
        if changed:
            out.settings_changed[r.target] = changed
        if old["passed"] and not r.passed:
            out.regressions.append(Regression(r.target, f"passed in the baseline, {r.verdict} now"))
        elif not old["passed"] and r.passed:
            out.fixed.append(r.target)
        elif old["passed"] and r.passed and _grew(old_ratio, new_ratio, factor):
            growth = new_ratio / max(old_ratio, RATIO_FLOOR)
            out.regressions.append(
                Regression(
                    r.target,
                    f"error ratio grew from {old_ratio:.3g} to {new_ratio:.3g} "
                    f"(x{growth:.3g}, more than x{factor:g})",
                )
            )
    out.vanished = [name for name in old_targets if name not in seen]
    return out


def _changed_settings(old: Any, new: Mapping[str, Any]) -> list[str]:
    """The settings whose values differ (compared in their JSON form)."""
    if not isinstance(old, dict):
        return []
    now = jsonable(dict(new))
    return sorted(k for k in set(old) | set(now) if old.get(k) != now.get(k))


def _grew(old: float, new: float, factor: float) -> bool:
    if math.isnan(new):
        return False  # nothing measured now (every example rejected...): no evidence
    if math.isnan(old):
        old = 0.0
    return new > factor * max(old, RATIO_FLOOR)
