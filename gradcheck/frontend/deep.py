"""Deep runs (``gradcheck verify --seeds S``): one target's search spread over S seeds,
each a job of its own (so that ``--jobs``, ``--executor dask`` and ``--shard`` spread
them), and their results combined into the target's one verdict.

The combined result is what one long search would report: it fails when any seed
failed, with the shrunk failure, seed and replay of the first failing seed (in seed
order, so the report does not depend on which job finished first); its examples,
skipped examples and seconds are the seeds' sums, its errors the largest seen.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from gradcheck.checking.vocabulary import Verdict
from gradcheck.search.verifier import VerifyResult

__all__ = ["combine", "combine_seeds", "seed_of"]

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


def combine(results: Sequence[VerifyResult]) -> VerifyResult:
    """One target's results over its seeds (in seed order) as one result."""
    first = results[0]
    if len(results) == 1:
        return first
    verdicts = {r.verdict for r in results}
    verdict = next((v for v in _PRECEDENCE if v in verdicts), Verdict.INCONCLUSIVE)
    deciding = next((r for r in results if r.verdict == verdict), first)
    skipped: Counter[str] = Counter()
    for r in results:
        skipped.update(r.skipped)
    seeds = f"{len(results)} seeds ({first.seed}..{results[-1].seed})"
    if verdict == Verdict.FAILED:
        note = f"{seeds}: seed {deciding.seed} failed"
    else:
        note = f"{seeds}"
    if deciding.note:
        note += f"; {deciding.note}"
    return replace(
        deciding,
        passed=verdict == Verdict.PASSED,
        verdict=verdict,
        examples=sum(r.examples for r in results),
        rejected=sum(r.rejected for r in results),
        skipped=dict(skipped),
        max_abs_error=_worst([r.max_abs_error for r in results]),
        max_rel_error=_worst([r.max_rel_error for r in results]),
        error_ratio=_worst([r.error_ratio for r in results]),
        seconds=sum(r.seconds for r in results),
        note=note,
    )


def combine_seeds(results: Sequence[VerifyResult], seeds: int) -> list[VerifyResult]:
    """The results of a deep run, ``seeds`` consecutive ones per target, combined."""
    return [combine(results[i : i + seeds]) for i in range(0, len(results), seeds)]
