"""``gradcheck merge``: the outputs of the shards of one run (``verify --shard K/N``)
put back together as the unsharded run's.

Each shard's JSON report, baseline and JUnit file carries the shard's manifest
(:mod:`gradcheck.frontend.shards`). Merging reads the files (each kind recognised by
its content), checks that they are the shards of one run, every shard once (the same
seed, settings digest, target list and versions; each of 1..N present exactly once
for each kind of file given), and writes one document of each kind with the targets
in the unsharded run's order. In a deep run (``--seeds S``) several shards may each
hold a range of one target's seeds: their entries become the target's one entry, as
the unsharded run combines its seeds (:func:`gradcheck.frontend.deep.combine_entries`),
once every seed of it is found in exactly one shard. The exit status is the one the
unsharded run would have had: 1 when a target did not pass or regressed against the
baseline the shards were compared with, 0 when every target passed.
"""

from __future__ import annotations

import copy
import json
import math
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from gradcheck.checking.vocabulary import Verdict
from gradcheck.errors import MergeError, printable
from gradcheck.frontend.baseline import compare
from gradcheck.frontend.deep import combine_entries, deciding, respan_note, seed_of
from gradcheck.frontend.files import read_text

__all__ = ["MergeError", "Merged", "ShardFile", "merge_files", "read_shard_file"]

#: The largest file read (a JSON report of thousands of targets with their failures).
SIZE_LIMIT = 256 << 20

#: The JUnit properties a shard writes (the manifest's fields but the target list).
JUNIT_PREFIX = "gradcheck.shard."


@dataclass
class ShardFile:
    """One shard's output file, read."""

    path: str
    #: "report" (JSON report), "baseline" or "junit".
    kind: str
    manifest: dict[str, Any]
    document: Any


_KIND_NAMES = {"report": "JSON report", "baseline": "baseline", "junit": "JUnit file"}


def read_shard_file(path: str | Path) -> ShardFile:
    """Read one file and recognise its kind; refuse a file that is not a shard's."""
    text = read_text(path, what="shard file", limit=SIZE_LIMIT, error=MergeError)
    if text.lstrip().startswith("<"):
        return _junit(str(path), text)
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise MergeError(f"{path}: neither JSON nor JUnit XML ({exc})") from None
    if not isinstance(document, dict):
        raise MergeError(f"{path}: not a gradcheck JSON report or baseline")
    if "gradcheck_baseline" in document:
        kind = "baseline"
    elif isinstance(document.get("targets"), list) and "version" in document:
        kind = "report"
    else:
        raise MergeError(f"{path}: not a gradcheck JSON report (--format json) or baseline")
    manifest = document.get("shard")
    if not isinstance(manifest, dict):
        raise MergeError(
            f"{path}: not the output of a shard (no 'shard' field): write shards with "
            f"gradcheck verify --shard K/N"
        )
    return ShardFile(str(path), kind, _checked_manifest(str(path), manifest), document)


def _junit(path: str, text: str) -> ShardFile:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise MergeError(f"{path}: not valid XML ({exc})") from None
    props = {
        p.get("name", ""): p.get("value", "")
        for p in root.iter("property")
        if p.get("name", "").startswith(JUNIT_PREFIX)
    }
    if not props:
        raise MergeError(
            f"{path}: not the JUnit file of a shard (no {JUNIT_PREFIX}* properties): "
            f"write shards with gradcheck verify --shard K/N"
        )
    raw: dict[str, Any] = {k.removeprefix(JUNIT_PREFIX): v for k, v in props.items()}
    try:
        manifest = {
            "index": int(raw["index"]),
            "count": int(raw["count"]),
            "seed": int(raw["seed"]),
            "plan": raw["plan"],
            "versions": json.loads(raw["versions"]),
            "targets": json.loads(raw["targets"]),
            "positions": json.loads(raw["positions"]),
        }
        if "seeds" in raw:  # written since shards split a deep run's seeds
            manifest["seeds"] = int(raw["seeds"])
            manifest["ranges"] = json.loads(raw["ranges"])
    except (KeyError, ValueError) as exc:
        raise MergeError(f"{path}: a damaged shard manifest ({exc})") from None
    return ShardFile(path, "junit", _checked_manifest(path, manifest), root)


def _checked_manifest(path: str, manifest: dict[str, Any]) -> dict[str, Any]:
    index, count = manifest.get("index"), manifest.get("count")
    positions = manifest.get("positions")
    if "seeds" not in manifest and isinstance(positions, list):
        # a shard of a run of one seed per target, each whole
        manifest = {**manifest, "seeds": 1, "ranges": [[0, 1, 0] for _ in positions]}
    seeds, ranges = manifest.get("seeds"), manifest.get("ranges")
    if not (
        isinstance(index, int)
        and isinstance(count, int)
        and 1 <= index <= count
        and isinstance(manifest.get("seed"), int)
        and isinstance(manifest.get("plan"), str)
        and isinstance(manifest.get("versions"), dict)
        and isinstance(manifest.get("targets"), list)
        and all(isinstance(t, str) for t in manifest["targets"])
        and isinstance(manifest.get("positions"), list)
        and all(
            isinstance(p, int) and 0 <= p < len(manifest["targets"]) for p in manifest["positions"]
        )
        and isinstance(seeds, int)
        and seeds >= 1
        and isinstance(ranges, list)
        and len(ranges) == len(manifest["positions"])
        and all(
            isinstance(r, list)
            and len(r) == len(("first", "stop", "seed"))
            and all(isinstance(x, int) for x in r)
            and 0 <= r[0] < r[1] <= seeds
            for r in ranges
        )
    ):
        raise MergeError(f"{path}: a damaged shard manifest")
    return manifest


def _check_together(files: Sequence[ShardFile]) -> None:
    """Refuse files that are not the shards of one run, or an incomplete set."""
    first = files[0]
    for other in files[1:]:
        for key, what in [
            ("count", "number of shards"),
            ("seed", "seed"),
            ("seeds", "seeds per target (--seeds)"),
            ("plan", "targets or settings (the configuration)"),
            ("versions", "versions"),
            ("targets", "targets"),
        ]:
            a, b = first.manifest[key], other.manifest[key]
            if a != b:
                detail = f" ({a} and {b})" if key in ("count", "seed", "seeds") else ""
                if key == "versions":
                    changed = [f"{k} {a.get(k)} vs {b.get(k)}" for k in a if a.get(k) != b.get(k)]
                    detail = f" ({', '.join(changed)})"
                raise MergeError(
                    f"{other.path} and {first.path} are not shards of one run: their "
                    f"{what} differ{detail}"
                )
    count = first.manifest["count"]
    for kind in ("report", "baseline", "junit"):
        given = [f for f in files if f.kind == kind]
        if not given:
            continue
        seen: dict[int, str] = {}
        for f in given:
            index = f.manifest["index"]
            if index in seen:
                raise MergeError(
                    f"{f.path} and {seen[index]} are both shard {index}/{count} "
                    f"({_KIND_NAMES[kind]}s)"
                )
            seen[index] = f.path
        missing = [str(i) for i in range(1, count + 1) if i not in seen]
        if missing:
            raise MergeError(
                f"shard{'s' * (len(missing) > 1)} {', '.join(missing)} of {count} missing: "
                f"{_KIND_NAMES[kind]}s given for shard{'s' * (len(seen) > 1)} "
                f"{', '.join(str(i) for i in sorted(seen))}"
            )


@dataclass
class Merged:
    """The merged run: each kind of document that was given, merged."""

    manifest: dict[str, Any]
    report: dict[str, Any] | None = None
    baseline: dict[str, Any] | None = None
    junit: bytes | None = None
    #: Per target (in the run's order): (target, verdict, passed, examples, ratio, seconds).
    rows: list[dict[str, Any]] = field(default_factory=list)
    regressions: list[str] = field(default_factory=list)
    junit_failures: int = 0

    @property
    def passed(self) -> bool:
        return (
            all(row["passed"] for row in self.rows)
            and not self.regressions
            and self.junit_failures == 0
        )

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1


def merge_files(paths: Iterable[str | Path]) -> Merged:
    """Read, check and merge the shards' files."""
    files = [read_shard_file(p) for p in paths]
    if not files:
        raise MergeError(
            "no files to merge: name the shards' JSON reports, baselines or JUnit files"
        )
    _check_together(files)
    manifest = {k: v for k, v in files[0].manifest.items() if k not in ("index", "positions")}
    order = {name: i for i, name in enumerate(manifest["targets"])}
    merged = Merged(manifest)
    reports = _by_index(files, "report")
    baselines = _by_index(files, "baseline")
    junits = _by_index(files, "junit")
    if reports:
        merged.report = _merge_reports(reports, order, manifest["seeds"])
        merged.rows = [_row(t) for t in merged.report["targets"]]
        comparison = merged.report.get("baseline")
        if comparison:
            merged.regressions = [r["target"] for r in comparison["regressions"]]
    if baselines:
        merged.baseline = _merge_baselines(baselines, order, manifest["seeds"])
        if not merged.rows:
            merged.rows = [
                _row({"target": name, **entry})
                for name, entry in merged.baseline["targets"].items()
            ]
    if junits:
        merged.junit, merged.junit_failures = _merge_junit(junits, manifest)
    return merged


def _by_index(files: Sequence[ShardFile], kind: str) -> list[ShardFile]:
    return sorted((f for f in files if f.kind == kind), key=lambda f: f.manifest["index"])


def _row(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        "target": entry.get("target"),
        "verdict": entry.get("verdict"),
        "passed": bool(entry.get("passed")),
        "examples": entry.get("examples"),
        "error_ratio": entry.get("error_ratio"),
        "seconds": entry.get("seconds"),
        "replay": entry.get("replay"),
    }


def _in_order(items: list[Any], order: dict[str, int], name: Any) -> list[Any]:
    return sorted(items, key=lambda item: order.get(name(item), len(order)))


def _placed(
    files: Sequence[ShardFile],
    items: Callable[[ShardFile], Iterable[Any]],
    combine: Callable[[list[Any], list[tuple[int, int, int]]], Any] | None = None,
) -> list[Any]:
    """The items of every shard (``items(file)``, in the shard's order) in the run's
    order, by the positions its manifest records; where a deep run's shards each
    checked a range of one target's seeds, its items (in seed order) are one,
    ``combine(items, seeds)`` with ``(count, first seed, last seed)`` of each."""
    placed: list[tuple[int, list[int], str, Any]] = []
    for f in files:
        own = list(items(f))
        positions = f.manifest["positions"]
        if len(own) != len(positions):
            raise MergeError(
                f"{f.path}: holds {len(own)} targets where its manifest places {len(positions)}"
            )
        placed += zip(positions, f.manifest["ranges"], [f.path] * len(own), own)
    placed.sort(key=lambda entry: (entry[0], entry[1][0]))
    seeds = files[0].manifest["seeds"] if files else 1
    out: list[Any] = []
    at = 0
    while at < len(placed):
        end = at
        while end < len(placed) and placed[end][0] == placed[at][0]:
            end += 1
        group = placed[at:end]
        _check_seeds(group, seeds, files[0].manifest["targets"])
        if len(group) == 1 or combine is None:
            out += [entry[3] for entry in group]
        else:
            counts = [
                (stop - first, seed_of(base, first), seed_of(base, stop - 1))
                for _, (first, stop, base), _, _ in group
            ]
            out.append(combine([entry[3] for entry in group], counts))
        at = end
    return out


def _check_seeds(
    group: list[tuple[int, list[int], str, Any]], seeds: int, names: list[str]
) -> None:
    """Refuse a target whose seeds the shards do not check exactly once, all of them."""
    expected = 0
    for position, (first, stop, _), path, _ in group:
        if first != expected:
            name = printable(names[position])
            if first < expected:
                raise MergeError(f"{path}: checked seeds of {name} that another shard checked")
            raise MergeError(
                f"seeds {expected}..{first - 1} of {name} (of {seeds}) in no shard given: "
                f"a shard is missing"
            )
        expected = stop
    if expected != seeds:
        name = printable(names[group[0][0]])
        raise MergeError(
            f"seeds {expected}..{seeds - 1} of {name} (of {seeds}) in no shard given: "
            f"a shard is missing"
        )


def _merge_reports(files: Sequence[ShardFile], order: dict[str, int], seeds: int) -> dict[str, Any]:
    targets = _placed(files, lambda f: f.document["targets"], combine_entries)
    first = files[0].document
    document: dict[str, Any] = {
        "version": first["version"],
        "passed": all(t.get("passed") for t in targets),
        "seed": first["seed"],
        "targets": targets,
    }
    interrupted = [f.document["interrupted"] for f in files if "interrupted" in f.document]
    if interrupted:
        document["interrupted"] = interrupted[0]
    comparisons = [f.document["baseline"] for f in files if "baseline" in f.document]
    if comparisons:
        document["baseline"] = _merge_comparisons(comparisons, order)
        if seeds > 1:
            _recompare_split(document["baseline"], files, targets)
    return document


def _merge_comparisons(parts: Sequence[dict[str, Any]], order: dict[str, int]) -> dict[str, Any]:
    """The shards' comparisons with one baseline, as the unsharded run's: each shard
    compared its own targets, and all report the same vanished ones (the baseline's
    targets planned in no shard)."""

    def union(key: str) -> list[Any]:
        seen: list[Any] = []
        for part in parts:
            seen.extend(x for x in part.get(key, []) if x not in seen)
        return seen

    regressions = _in_order(union("regressions"), order, lambda r: r["target"])
    out = dict(parts[0])
    out.update(
        {
            "passed": not regressions,
            "regressions": regressions,
            "fixed": _in_order(union("fixed"), order, str),
            "new": _in_order(union("new"), order, str),
            "vanished": union("vanished"),
            "settings_changed": {
                k: v for part in parts for k, v in part.get("settings_changed", {}).items()
            },
            "error_ratios": {
                k: v for part in parts for k, v in part.get("error_ratios", {}).items()
            },
        }
    )
    return out


def _recompare_split(
    comparison: dict[str, Any], files: Sequence[ShardFile], targets: list[dict[str, Any]]
) -> None:
    """Compare again, by the baseline's rule, each target whose seeds several shards
    checked: each shard compared its own part, but the verdict is the whole's (a part
    that passes a target that failed in the baseline does not make it fixed while
    another part fails). What the baseline said of the target is read back from the
    parts: its error ratio, and whether it passed (a part that passes is fixed or the
    baseline passed; one that does not is a regression or the baseline did not)."""
    parts: dict[str, list[tuple[bool, dict[str, Any]]]] = {}
    for f in files:
        own = f.document.get("baseline") or {}
        for entry in f.document["targets"]:
            # a part the run did not reach was not compared: it says nothing
            compared = entry.get("verdict") != Verdict.NOT_RUN
            parts.setdefault(entry.get("target"), []).append(
                (bool(entry.get("passed")), own if compared else {})
            )
    merged = {str(t.get("target")): t for t in targets}
    for name, seen in parts.items():
        ratios = comparison.get("error_ratios", {})
        if len(seen) == 1 or name not in ratios or name not in merged:
            continue  # held whole by one shard, or new: as that shard compared it
        passed, own = next((part for part in seen if part[1]), seen[0])
        if not own:
            continue
        fixed = name in own.get("fixed", [])
        regressed = any(r.get("target") == name for r in own.get("regressions", []))
        old = {"passed": not fixed if passed else regressed}
        old["error_ratio"] = ratios[name]["baseline"]
        now = merged[name]
        ratio = now.get("error_ratio")  # "nan" where nothing was measured
        result = SimpleNamespace(
            target=name,
            passed=bool(now.get("passed")),
            verdict=now.get("verdict"),
            error_ratio=float(ratio) if isinstance(ratio, int | float | str) else math.nan,
            settings={},
        )
        again = compare(
            [cast(Any, result)], {"targets": {name: old}}, factor=comparison["regression_factor"]
        )
        comparison["regressions"] = [
            r for r in comparison["regressions"] if r.get("target") != name
        ] + [{"target": r.target, "reason": r.reason} for r in again.regressions]
        comparison["fixed"] = [t for t in comparison["fixed"] if t != name] + again.fixed
        ratios[name] = {**ratios[name], "now": now.get("error_ratio")}
    order = {name: i for i, name in enumerate(merged)}
    comparison["regressions"] = _in_order(comparison["regressions"], order, lambda r: r["target"])
    comparison["fixed"] = _in_order(comparison["fixed"], order, str)
    comparison["passed"] = not comparison["regressions"]


def _merge_baselines(
    files: Sequence[ShardFile], order: dict[str, int], seeds: int
) -> dict[str, Any]:
    first = files[0].document
    document = {k: v for k, v in first.items() if k not in ("shard", "targets")}
    if seeds == 1:
        entries = [(name, entry) for f in files for name, entry in f.document["targets"].items()]
    else:
        # A baseline leaves out the targets a stopped run did not reach, so its
        # entries are found by name, each with the range of seeds its shard checked.
        parts: dict[str, list[tuple[int, tuple[int, int, int], Any]]] = {}
        for f in files:
            held = {
                f.manifest["targets"][p]: r
                for p, r in zip(f.manifest["positions"], f.manifest["ranges"])
            }
            for name, entry in f.document["targets"].items():
                first_, stop, base = held.get(name, [0, seeds, 0])
                span = (stop - first_, seed_of(base, first_), seed_of(base, stop - 1))
                parts.setdefault(name, []).append((first_, span, entry))
        entries = []
        for name, group in parts.items():
            group.sort(key=lambda part: part[0])
            entries.append((name, combine_entries([g[2] for g in group], [g[1] for g in group])))
    document["targets"] = dict(_in_order(entries, order, lambda pair: pair[0]))
    return document


def _case_verdict(case: ET.Element) -> str:
    """A testcase's verdict, as the shard's run wrote it (``junit_xml``): a failure's
    type, ``not_run`` for a skipped one; a regression of a passing target passed."""
    failure = case.find("failure")
    if failure is not None and failure.get("type") != "regression":
        return failure.get("type", Verdict.FAILED)
    return Verdict.NOT_RUN if case.find("skipped") is not None else Verdict.PASSED


def _combine_cases(cases: list[ET.Element], seeds: list[tuple[int, int, int]]) -> ET.Element:
    """One target's testcases of ranges of its seeds as the testcase of all of them:
    the deciding seed's (its failure's report, as the merged JSON report's), with the
    seconds of all; a regression of a part that passed is kept when the target passed."""
    verdict, at = deciding([_case_verdict(c) for c in cases])
    out = copy.deepcopy(cases[at])
    out.set("time", f"{sum(float(c.get('time', '0')) for c in cases):.3f}")
    whole = (sum(s[0] for s in seeds), seeds[0][1], seeds[-1][2])
    report = out.find("failure")
    if report is not None and report.text:  # its last line: the note (result_text)
        text, mark, note = report.text.rpartition("\nNote: ")
        own = note if mark else None
        again = respan_note(own, seeds[at], whole, failed=verdict == Verdict.FAILED)
        if again:
            report.text = f"{text if mark else report.text}\nNote: {again}"
    if verdict == Verdict.PASSED and out.find("failure") is None:
        regressed = next((c.find("failure") for c in cases if c.find("failure") is not None), None)
        if regressed is not None:
            out.insert(0, copy.deepcopy(regressed))
    return out


def _merge_junit(files: Sequence[ShardFile], manifest: dict[str, Any]) -> tuple[bytes, int]:
    cases = _placed(files, lambda f: f.document.iter("testcase"), _combine_cases)
    suites = [s for f in files for s in f.document.iter("testsuite")]
    name = suites[0].get("name", "gradcheck") if suites else "gradcheck"
    # counted from the merged cases: the parts of a target split over shards are one
    failures = sum(1 for c in cases if c.find("failure") is not None)
    root = ET.Element("testsuites", name=name)
    suite = ET.SubElement(
        root,
        "testsuite",
        name=name,
        tests=str(len(cases)),
        failures=str(failures),
        errors=str(sum(int(s.get("errors", "0")) for s in suites)),
        skipped=str(sum(1 for c in cases if c.find("skipped") is not None)),
        time=f"{sum(float(s.get('time', '0')) for s in suites):.3f}",
    )
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="seed", value=str(manifest["seed"]))
    ET.SubElement(properties, "property", name="shards", value=str(manifest["count"]))
    for case in cases:
        suite.append(case)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n", failures


def render_merged(merged: Merged, *, quiet: bool = False) -> str:
    """The merged run as text: a table of the targets (unless ``quiet``), the failures
    with their replay commands, the regressions, and a summary line."""
    from tabulate import tabulate

    lines: list[str] = []
    rows = merged.rows
    if rows and not quiet:
        table = [
            [
                printable(str(r["target"])),
                r["verdict"],
                r["examples"],
                _number(r["error_ratio"]),
                _number(r["seconds"]),
            ]
            for r in rows
        ]
        lines.append(
            tabulate(
                table,
                headers=["target", "verdict", "examples", "error ratio", "seconds"],
                tablefmt="simple",
                disable_numparse=True,
            )
        )
    failed = [r for r in rows if not r["passed"]]
    for r in failed:
        replay = f"\n  Replay: {printable(r['replay'])}" if r.get("replay") else ""
        lines.append(f"FAILED {printable(str(r['target']))}: {r['verdict']}{replay}")
    for target in merged.regressions:
        lines.append(f"regression: {printable(target)} (see the shard's report)")
    count = merged.manifest["count"]
    passed = len(rows) - len(failed)
    summary = f"{passed} passed"
    if failed:
        summary = f"{len(failed)} failed, " + summary
    if merged.regressions:
        summary += f", {len(merged.regressions)} regressed"
    lines.append(f"{summary} ({count} shards merged, seed {merged.manifest['seed']})")
    return "\n\n".join(lines) if not quiet else "\n".join(lines)


def _number(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:.3g}"
    return "-" if value is None else str(value)
