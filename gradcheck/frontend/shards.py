"""Splitting one ``gradcheck verify`` run across CI jobs (``--shard K/N``).

**The split.** Every shard plans the whole run (the same targets, settings and seeds
as the unsharded run) and then keeps its own part of it, so the union of the N shards
is exactly the unsharded run. The parts are balanced by recorded durations where a
durations source has them (``--durations FILE``: a JSON report, a baseline, or an
object of seconds by target; else the ``--baseline`` file's), with the greedy
longest-processing-time rule: targets in order of decreasing duration, each to the
shard with the least work so far (Graham's LPT, which pytest-split calls
"least duration"). A target without a recorded duration counts as the mean of the
recorded ones (1 second when none is recorded), and ties are broken by a stable hash
of the name, so with no durations at all the targets are dealt out evenly in hash
order. The split depends only on the names, the durations, the seeds and N: every
job of a CI matrix computes the same one.

**Deep runs** (``--seeds S``). The unit of work is one seed of one target: a target's
recorded duration is divided among its S seeds, and the seeds, longest first, go to
the least-loaded shard like whole targets do, so the seeds of a target that takes
longer than a shard's share spread over several shards. Each shard then checks, of
each target it has seeds of, one contiguous range of them (:class:`Task`): the seeds
of one target cost the same, so only how many of them each shard gets matters to the
balance, and contiguous ranges keep every shard's part of a target one entry of its
reports, which ``gradcheck merge`` combines into the target's one verdict.

**The manifest.** Each shard writes, into every output it produces (the JSON report,
the baseline, the JUnit file), what ``gradcheck merge`` needs to put the run back
together and to refuse shards that do not belong together: ``K/N``, the run's seed,
the versions its numbers depend on, a digest of the planned targets and their
settings, the names of all planned targets, and, for each of its entries, the target's
place in that list and the range of its seeds the shard checked.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_SHARDS",
    "Shard",
    "Task",
    "assign",
    "split",
    "durations_of",
    "manifest",
    "parse_shard",
    "plan_digest",
]

#: The most shards a run may be split into.
MAX_SHARDS = 10_000


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (counted from 1) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``"K/N"`` as a :class:`Shard`.

    >>> parse_shard("2/4")
    Shard(index=2, count=4)
    >>> parse_shard("5/4")
    Traceback (most recent call last):
    ...
    ValueError: --shard 5/4: K must be between 1 and N (4)
    """
    parts = text.strip().split("/")
    try:
        index, count = (int(p) for p in parts) if len(parts) == 2 else (0, 0)
    except ValueError:
        index = count = 0
    if count < 1:
        raise ValueError(f"--shard {text}: expected K/N, two whole numbers such as 2/4")
    if count > MAX_SHARDS:
        raise ValueError(f"--shard {text}: at most {MAX_SHARDS} shards")
    if not 1 <= index <= count:
        raise ValueError(f"--shard {text}: K must be between 1 and N ({count})")
    return Shard(index, count)


def _stable_hash(name: str) -> int:
    # Python's hash() of a str changes with every process (PYTHONHASHSEED).
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big")


@dataclass(frozen=True)
class Task:
    """Seeds ``first`` to ``stop - 1`` (counted from 0, as ``--seeds`` counts them
    from the target's seed) of the target at ``position`` in the run's order."""

    position: int
    first: int
    stop: int


def assign(
    names: Sequence[str], count: int, durations: Mapping[str, float] | None = None
) -> list[list[int]]:
    """The indices into ``names`` of each of ``count`` shards (each list in the
    order of ``names``), balanced by ``durations`` (seconds by name): :func:`split`
    of a run of one seed per target.

    >>> assign(["a", "b", "c", "d"], 2, {"a": 10.0, "b": 1.0, "c": 1.0, "d": 8.0})
    [[0], [1, 2, 3]]
    >>> sorted(len(part) for part in assign([f"t{i}" for i in range(10)], 3))
    [3, 3, 4]
    """
    return [[task.position for task in part] for part in split(names, count, durations)]


def split(
    names: Sequence[str],
    count: int,
    durations: Mapping[str, float] | None = None,
    seeds: int = 1,
) -> list[list[Task]]:
    """The tasks of each of ``count`` shards (each list in the order of ``names``) for
    a run of ``seeds`` seeds per target, balanced by ``durations`` (seconds by name,
    a target's divided among its seeds).

    >>> first, second = split(["long", "short"], 2, {"long": 9.0, "short": 1.0}, seeds=3)
    >>> first
    [Task(position=0, first=0, stop=2)]
    >>> second
    [Task(position=0, first=2, stop=3), Task(position=1, first=0, stop=3)]
    """
    durations = durations or {}
    known = [
        float(durations[n])
        for n in names
        if n in durations and math.isfinite(durations[n]) and durations[n] >= 0
    ]
    fallback = sum(known) / len(known) if known else 1.0

    def cost(name: str) -> float:
        value = durations.get(name)
        if value is None or not math.isfinite(value) or value < 0:
            return fallback
        return float(value)

    order = sorted(range(len(names)), key=lambda i: (-cost(names[i]), _stable_hash(names[i]), i))
    # The least-loaded shard (the lowest index among equals) at the top of a heap;
    # taken[i][shard]: how many seeds of target i the shard checks.
    heap = [(0.0, shard) for shard in range(count)]
    taken: list[dict[int, int]] = [{} for _ in names]
    for i in order:
        each = cost(names[i]) / seeds
        for _ in range(seeds):
            load, shard = heapq.heappop(heap)
            taken[i][shard] = taken[i].get(shard, 0) + 1
            heapq.heappush(heap, (load + each, shard))
    parts: list[list[Task]] = [[] for _ in range(count)]
    for i, shares in enumerate(taken):
        first = 0
        for shard in sorted(shares):  # contiguous ranges, in the order of the shards
            parts[shard].append(Task(i, first, first + shares[shard]))
            first += shares[shard]
    return parts


def durations_of(document: Any) -> dict[str, float]:
    """Seconds by target from a JSON report (``targets``: a list of objects with
    ``target`` and ``seconds``), a baseline (``targets``: an object of entries with
    ``seconds``), or a plain object of seconds by target; entries without a usable
    number are left out.

    >>> durations_of({"targets": [{"target": "m:A", "seconds": 2.5}]})
    {'m:A': 2.5}
    >>> durations_of({"targets": {"m:A": {"seconds": 1.0}, "m:B": {"verdict": "passed"}}})
    {'m:A': 1.0}
    >>> durations_of({"m:A": 3})
    {'m:A': 3.0}
    """
    if not isinstance(document, dict):
        return {}
    targets = document.get("targets", document)
    pairs: list[tuple[Any, Any]] = []
    if isinstance(targets, list):
        pairs = [(t.get("target"), t.get("seconds")) for t in targets if isinstance(t, dict)]
    elif isinstance(targets, dict):
        pairs = [
            (name, entry.get("seconds") if isinstance(entry, dict) else entry)
            for name, entry in targets.items()
        ]
    out = {}
    for name, seconds in pairs:
        if (
            isinstance(name, str)
            and isinstance(seconds, int | float)
            and not isinstance(seconds, bool)
            and math.isfinite(seconds)
            and seconds >= 0
        ):
            out[name] = float(seconds)
    return out


def plan_digest(plan: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """A digest of a run's planned targets and their settings (seeds included), in
    order: two shards of the same run have the same one."""
    text = json.dumps([[name, settings] for name, settings in plan], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def manifest(
    shard: Shard,
    *,
    seed: int,
    names: Sequence[str],
    digest: str,
    versions: Mapping[str, str],
    tasks: Sequence[Task],
    seeds: int = 1,
    bases: Sequence[int] | None = None,
) -> dict[str, Any]:
    """What a shard writes into its outputs for ``gradcheck merge``: ``positions`` are
    the places of the shard's own targets in ``names`` (the run's order, which names
    alone do not give where one target is planned twice), ``ranges`` the seeds of each
    it checked (``[first, stop, seed]``: of the run's ``seeds`` per target, counted from
    the target's own seed, ``bases``)."""
    bases = bases if bases is not None else [0] * len(tasks)
    return {
        "index": shard.index,
        "count": shard.count,
        "positions": [task.position for task in tasks],
        "seeds": seeds,
        "ranges": [[task.first, task.stop, base] for task, base in zip(tasks, bases)],
        "seed": seed,
        "plan": digest,
        "versions": dict(versions),
        "targets": list(names),
    }
