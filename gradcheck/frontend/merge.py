"""``gradcheck merge``: the outputs of the shards of one run (``verify --shard K/N``)
put back together as the unsharded run's.

Each shard's JSON report, baseline and JUnit file carries the shard's manifest
(:mod:`gradcheck.frontend.shards`). Merging reads the files (each kind recognised by
its content), checks that they are the shards of one run, every shard once (the same
seed, settings digest, target list and versions; each of 1..N present exactly once
for each kind of file given), and writes one document of each kind with the targets
in the unsharded run's order. The exit status is the one the unsharded run would have
had: 1 when a target did not pass or regressed against the baseline the shards were
compared with, 0 when every target passed.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gradcheck.errors import MergeError, printable
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
    except (KeyError, ValueError) as exc:
        raise MergeError(f"{path}: a damaged shard manifest ({exc})") from None
    return ShardFile(path, "junit", _checked_manifest(path, manifest), root)


def _checked_manifest(path: str, manifest: dict[str, Any]) -> dict[str, Any]:
    index, count = manifest.get("index"), manifest.get("count")
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
            ("plan", "targets or settings (the configuration)"),
            ("versions", "versions"),
            ("targets", "targets"),
        ]:
            a, b = first.manifest[key], other.manifest[key]
            if a != b:
                detail = f" ({a} and {b})" if key in ("count", "seed") else ""
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
        merged.report = _merge_reports(reports, order)
        merged.rows = [_row(t) for t in merged.report["targets"]]
        comparison = merged.report.get("baseline")
        if comparison:
            merged.regressions = [r["target"] for r in comparison["regressions"]]
    if baselines:
        merged.baseline = _merge_baselines(baselines, order)
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


def _placed(files: Sequence[ShardFile], items: Any) -> list[Any]:
    """The items of every shard (``items(file)``, in the shard's order) in the run's
    order, by the positions its manifest records."""
    placed: list[tuple[int, Any]] = []
    for f in files:
        own = list(items(f))
        positions = f.manifest["positions"]
        if len(own) != len(positions):
            raise MergeError(
                f"{f.path}: holds {len(own)} targets where its manifest places {len(positions)}"
            )
        placed += zip(positions, own)
    return [item for _, item in sorted(placed, key=lambda pair: pair[0])]


def _merge_reports(files: Sequence[ShardFile], order: dict[str, int]) -> dict[str, Any]:
    targets = _placed(files, lambda f: f.document["targets"])
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


def _merge_baselines(files: Sequence[ShardFile], order: dict[str, int]) -> dict[str, Any]:
    first = files[0].document
    entries = [(name, entry) for f in files for name, entry in f.document["targets"].items()]
    document = {k: v for k, v in first.items() if k not in ("shard", "targets")}
    document["targets"] = dict(_in_order(entries, order, lambda pair: pair[0]))
    return document


def _merge_junit(files: Sequence[ShardFile], manifest: dict[str, Any]) -> tuple[bytes, int]:
    cases = _placed(files, lambda f: f.document.iter("testcase"))
    suites = [s for f in files for s in f.document.iter("testsuite")]
    name = suites[0].get("name", "gradcheck") if suites else "gradcheck"
    failures = sum(int(s.get("failures", "0")) for s in suites)
    root = ET.Element("testsuites", name=name)
    suite = ET.SubElement(
        root,
        "testsuite",
        name=name,
        tests=str(len(cases)),
        failures=str(failures),
        errors=str(sum(int(s.get("errors", "0")) for s in suites)),
        skipped=str(sum(int(s.get("skipped", "0")) for s in suites)),
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
