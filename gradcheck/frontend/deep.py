"""Deep runs (``gradcheck verify --seeds S``): one target's search spread over S seeds,
each a job of its own (so that ``--jobs``, ``--executor dask`` and ``--shard`` spread
them), and their results combined into the target's one verdict.

The combined result is what one long search would report: it fails when any seed
failed, with the shrunk failure, seed and replay of the first failing seed (in seed
order, so the report does not depend on which job finished first); its examples,
skipped examples and seconds are the seeds' sums, its errors the largest seen.

The same rule combines the entries of the JSON reports and baselines of the shards
that each checked a range of one target's seeds (``gradcheck merge``,
:func:`combine_entries`): combining ranges in seed order gives what combining all the
seeds gives, since the first range with the deciding verdict holds the first seed
with it, sums add up and maxima of maxima are maxima.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gradcheck.checking.vocabulary import Verdict

if TYPE_CHECKING:
    from gradcheck.search.verifier import VerifyResult

__all__ = [
    "combine",
    "combine_entries",
    "combine_seeds",
    "deciding",
    "respan_note",
    "seed_of",
    "seeds_note",
]

#: Seeds are unsigned 32-bit numbers (as ``--seed`` and Hypothesis's derandomized runs).
SEED_SPACE = 1 << 32

# The verdict of a target whose seeds disagree: the first of these any seed has.
_PRECEDENCE = [Verdict.FAILED, Verdict.TIMED_OUT, Verdict.NOT_RUN, Verdict.PASSED]


def seed_of(base: int, i: int) -> int:
    """The ``i``-th seed of a deep run from ``base``.

    >>> seed_of(7, 0), seed_of(7, 2), seed_of(2**32 - 1, 1)
    (7, 9, 0)
    """
    return (base + i) % SEED_SPACE


def _worst(values: Sequence[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return max(finite) if finite else math.nan


def _worst_at(seen: Sequence[tuple[float, str | None, Any]], chosen: int) -> str:
    """Which example had the largest of the values ``seen`` (value, which example of
    its seeds, its seed), one per seed (or range of seeds) in seed order: that part's
    own words where it is the ``chosen`` one (whose report is shown), else with its
    seed (``"example 3 of the search with seed 12"``)."""
    values = [v for v, _, _ in seen]
    if not any(v == v for v in values):  # (nan: nothing measured)
        return ""
    k = values.index(_worst(values))
    _, at, seed = seen[k]
    if k == chosen or not at or " with seed " in at:
        return at or ""
    return f"{at.replace('the reported example', 'the shrunk failure')} with seed {seed}"


def deciding(verdicts: Sequence[str]) -> tuple[str, int]:
    """The verdict of seeds (in seed order) with these verdicts, and the index of the
    first seed that has it (whose report the combined one is).

    >>> deciding(["passed", "failed", "inconclusive", "failed"])
    ('failed', 1)
    >>> deciding(["inconclusive", "passed"])
    ('passed', 1)
    """
    present = set(verdicts)
    verdict = next((v for v in _PRECEDENCE if v in present), Verdict.INCONCLUSIVE)
    return verdict, next((i for i, v in enumerate(verdicts) if v == verdict), 0)


def seeds_note(
    count: int, first: int, last: int, failed: int | None, note: str | None
) -> str | None:
    """The note of a target combined from ``count`` seeds, ``first`` to ``last``:
    ``failed``, the seed that failed (None when none did), and ``note``, that seed's
    own note; a single seed's note is its own.

    >>> seeds_note(4, 9, 12, 10, "stopped at the time budget")
    '4 seeds (9..12): seed 10 failed; stopped at the time budget'
    """
    if count == 1:
        return note
    text = f"{count} seeds ({first}..{last})"
    if failed is not None:
        text += f": seed {failed} failed"
    return f"{text}; {note}" if note else text


def respan_note(
    note: str | None,
    part: tuple[int, int, int],
    whole: tuple[int, int, int],
    *,
    failed: bool,
) -> str | None:
    """The note :func:`seeds_note` made for a range of a target's seeds (``part``:
    its count, first and last seed) made again for all of them (``whole``), where
    that range decides the combined verdict (``failed``: by failing).

    >>> respan_note("2 seeds (9..10): seed 10 failed", (2, 9, 10), (6, 9, 14), failed=True)
    '6 seeds (9..14): seed 10 failed'
    >>> respan_note(None, (1, 11, 11), (6, 9, 14), failed=True)
    '6 seeds (9..14): seed 11 failed'
    """
    count, first, last = part
    if count == 1:
        return seeds_note(*whole, first if failed else None, note)
    head = f"{count} seeds ({first}..{last})"
    if note is None or not note.startswith(head):
        return note
    return f"{whole[0]} seeds ({whole[1]}..{whole[2]})" + note.removeprefix(head)


def combine(results: Sequence[VerifyResult]) -> VerifyResult:
    """One target's results over its seeds (in seed order) as one result."""
    first = results[0]
    if len(results) == 1:
        return first
    verdict, at = deciding([r.verdict for r in results])
    chosen = results[at]
    skipped: Counter[str] = Counter()
    for r in results:
        skipped.update(r.skipped)
    failed = chosen.seed if verdict == Verdict.FAILED else None
    return replace(
        chosen,
        passed=verdict == Verdict.PASSED,
        verdict=verdict,
        examples=sum(r.examples for r in results),
        rejected=sum(r.rejected for r in results),
        skipped=dict(skipped),
        max_abs_error=_worst([r.max_abs_error for r in results]),
        max_rel_error=_worst([r.max_rel_error for r in results]),
        max_abs_error_at=_worst_at(
            [(r.max_abs_error, r.max_abs_error_at, r.seed) for r in results], at
        ),
        max_rel_error_at=_worst_at(
            [(r.max_rel_error, r.max_rel_error_at, r.seed) for r in results], at
        ),
        error_ratio=_worst([r.error_ratio for r in results]),
        seconds=sum(r.seconds for r in results),
        note=seeds_note(len(results), first.seed, results[-1].seed, failed, chosen.note) or "",
    )


def combine_seeds(
    results: Sequence[VerifyResult], sizes: int | Sequence[int]
) -> list[VerifyResult]:
    """The results of a deep run, ``sizes[i]`` consecutive ones (a target's seeds, or
    a shard's range of them) for its ``i``-th entry, each group combined (``sizes``
    a number: that many for every entry)."""
    if isinstance(sizes, int):
        sizes = [sizes] * (len(results) // sizes)
    out, start = [], 0
    for size in sizes:
        out.append(combine(results[start : start + size]))
        start += size
    return out


# Fields of a JSON report's or baseline's target entry that add up over seeds, and
# those whose largest value is the combined one ("nan" where nothing was measured).
_SUMS = ("examples", "rejected", "seconds")
_WORST = ("max_abs_error", "max_rel_error", "error_ratio")


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float | str) else math.nan


def _as_json(value: float) -> float | str:
    return value if math.isfinite(value) else str(value)


def combine_entries(
    parts: Sequence[Mapping[str, Any]], seeds: Sequence[tuple[int, int, int]]
) -> dict[str, Any]:
    """One target's entries of JSON reports or baselines (``parts``, each of a range
    of its seeds, in seed order: ``seeds[i]`` is ``(count, first seed, last seed)`` of
    ``parts[i]``) as the entry of the run of all of them."""
    verdict, at = deciding([str(p.get("verdict")) for p in parts])
    chosen = parts[at]
    out = dict(chosen)
    if len(parts) == 1:
        return out
    out["verdict"] = verdict
    out["passed"] = verdict == Verdict.PASSED
    for key in _SUMS:
        if key in chosen:
            out[key] = sum(p.get(key) or 0 for p in parts)
    for key in _WORST:
        if key in chosen:
            out[key] = _as_json(_worst([_number(p.get(key)) for p in parts]))
        if f"{key}_at" in chosen:
            seen = [(_number(p.get(key)), p.get(f"{key}_at"), p.get("seed")) for p in parts]
            out[f"{key}_at"] = _worst_at(seen, at) or None
    if isinstance(chosen.get("skipped"), dict):
        skipped: Counter[str] = Counter()
        for p in parts:
            skipped.update(p.get("skipped") or {})
        out["skipped"] = dict(skipped)
    if "note" in chosen:
        whole = (sum(s[0] for s in seeds), seeds[0][1], seeds[-1][2])
        note = chosen.get("note")
        out["note"] = respan_note(note, seeds[at], whole, failed=verdict == Verdict.FAILED)
    return out
