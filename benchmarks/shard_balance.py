"""How well ``--shard K/N`` balances a large run: a simulation.

10,000 synthetic targets with a heavy-tailed duration distribution, like a real op
library (most under a second, a few minutes long), are split into 8, 64 and 256 shards
by gradcheck's own split (:func:`gradcheck.frontend.shards.split`), for a run of one
seed per target and for deep runs (``--seeds S``).

What it models. A target's duration is the seconds one seed of it takes (its search
at the run's examples). In a deep run each of its S seeds is a task of its own whose
seconds are the target's times a log-normal factor (``--seed-noise``, 20% by default:
other seeds draw other examples); a target's seeds are what ``--shard`` splits, so
a target of minutes no longer has to fit in one shard, but one seed of it cannot be
split further. Balancing:

- by recorded durations: each target's seconds in an earlier run of the same kind
  (all its seeds' together, as a deep run's report records them; ``--shard`` divides
  them among the seeds), each off from this run's by a log-normal factor
  (``--noise``, 20% by default), as a run's timings are never exactly the last run's;
- without durations: every seed counts the same, dealt out evenly in hash order.

For each, the makespan (the largest shard's seconds, what a CI matrix waits for) is
compared with the ideal, total / N, and with the lower bound no split can beat,
max(total / N, the longest task: one seed of the longest target).

    python benchmarks/shard_balance.py [--targets 10000] [--seeds 1 8 32] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gradcheck.frontend.shards import split


def durations(count: int, rng: random.Random, *, long_tail: float) -> list[float]:
    """Seconds per target: 94% short (log-normal around 0.3 s), 5.9% a few seconds,
    and ``long_tail`` of them minutes long (0.1%: 10 of 10,000)."""
    out = []
    for _ in range(count):
        u = rng.random()
        if u < long_tail:
            out.append(rng.uniform(60.0, 180.0))
        elif u < 0.06:
            out.append(rng.lognormvariate(1.2, 0.6))  # ~3 s
        else:
            out.append(rng.lognormvariate(-1.2, 0.7))  # ~0.3 s
    return out


def simulate(
    names: list[str], shards: int, seed_seconds: list[list[float]], recorded: dict | None
) -> float:
    """The makespan of the split: the largest shard's seconds."""
    seeds = len(seed_seconds[0])
    parts = split(names, shards, recorded, seeds)
    return max(sum(sum(seed_seconds[t.position][t.first : t.stop]) for t in p) for p in parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=10_000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise", type=float, default=0.2)
    parser.add_argument("--seed-noise", type=float, default=0.2)
    parser.add_argument("--long-tail", type=float, default=0.001)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    seconds = durations(args.targets, rng, long_tail=args.long_tail)
    names = [f"lib.ops:Op{i}" for i in range(args.targets)]
    median = sorted(seconds)[len(seconds) // 2]
    short = sum(s < 1 for s in seconds) / len(seconds)
    print(
        f"{args.targets} targets, {sum(seconds):,.0f} s in all at one seed each; median "
        f"{median:.2f} s, {short:.1%} under 1 s, longest {max(seconds):.0f} s; recorded "
        f"durations off by log-normal noise sigma={args.noise}, seeds of one target by "
        f"sigma={args.seed_noise}"
    )
    print(
        "seeds  shards  ideal s  longest task s  bound s  "
        "with durations: s, /ideal, /bound  without: s, /ideal, /bound"
    )
    for seeds in args.seeds:
        noise = args.seed_noise if seeds > 1 else 0.0
        seed_seconds = [[s * rng.lognormvariate(0.0, noise) for _ in range(seeds)] for s in seconds]
        recorded = {
            n: sum(parts) * rng.lognormvariate(0.0, args.noise)
            for n, parts in zip(names, seed_seconds)
        }
        total = sum(map(sum, seed_seconds))
        longest = max(map(max, seed_seconds))
        for shards in (8, 64, 256):
            ideal = total / shards
            bound = max(ideal, longest)
            with_d = simulate(names, shards, seed_seconds, recorded)
            without = simulate(names, shards, seed_seconds, None)
            print(
                f"{seeds:>5}  {shards:>6}  {ideal:>7.1f}  {longest:>14.1f}  {bound:>7.1f}  "
                f"{with_d:>15.1f} {with_d / ideal:>6.3f}x {with_d / bound:>6.3f}x  "
                f"{without:>9.1f} {without / ideal:>6.3f}x {without / bound:>6.3f}x"
            )


if __name__ == "__main__":
    main()
